"""τ² domain tests read the release files from the shared data folder (no download).

`TAU2_DATA_DIR` is set for the session unless the caller already set it; without the
files the tests are skipped, not failed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.shared_data import TAU2_DATA


@pytest.fixture(scope="session", autouse=True)
def tau2_data_dir() -> Iterator[Path]:
    root = TAU2_DATA
    if not (root / "domains").is_dir():
        pytest.skip(f"τ² release data not found at {root}")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TAU2_DATA_DIR", str(root))
        yield root
