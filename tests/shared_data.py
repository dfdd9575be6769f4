"""Where the tests find benchmark data: `../shared/data` beside the checkout.

The product downloads its data or is pointed at it (`TAU2_DATA_DIR`); tests read the
small local copies instead, and skip with a reason where they are absent. One place for
the paths, so every suite agrees on them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
#: the τ² release files: `TAU2_DATA_DIR` when the caller set it, else the shared copy
TAU2_DATA = Path(os.environ.get("TAU2_DATA_DIR") or SHARED_DATA / "tau2")

needs_tau2 = pytest.mark.skipif(not (TAU2_DATA / "domains").is_dir(),
                                reason=f"τ² release data not found at {TAU2_DATA}")


def use_tau2_data() -> None:
    """Point the τ² loader at the test copy (for code that reads `TAU2_DATA_DIR`)."""
    os.environ.setdefault("TAU2_DATA_DIR", str(TAU2_DATA))
