"""Fixtures every suite may use (the shared-data ones live in `tests/shared_data.py`)."""

from tests.shared_data import (  # noqa: F401  (registers the fixtures)
    use_mcp_atlas_data,
    use_tau2_data,
    use_vitabench_data,
)
