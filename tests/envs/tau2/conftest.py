"""τ² domain tests read the release files from the shared data folder (no download).

`TAU2_DATA_DIR` is set for the session unless the caller already set it; without the
files the tests are skipped, not failed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "tau2"


@pytest.fixture(scope="session", autouse=True)
def tau2_data_dir() -> Iterator[Path]:
    root = Path(os.environ.get("TAU2_DATA_DIR") or SHARED_DATA)
    if not (root / "domains").is_dir():
        pytest.skip(f"τ² release data not found at {root}")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TAU2_DATA_DIR", str(root))
        yield root
