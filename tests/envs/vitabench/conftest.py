"""Shared fixtures of the VitaBench environment tests.

`vita_data`: `tests.shared_data.use_vitabench_data` — a `VITABENCH_DATA_DIR` holding the
shared task snapshot plus the tool objects and tables recorded from the official code,
with an empty cache, so no test derives or downloads anything.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.shared_data import VITABENCH_DATA

OFFICIAL = Path(__file__).resolve().parents[2] / "data" / "vitabench" / "official"


@pytest.fixture
def vita_data(use_vitabench_data: Path) -> Path:
    """The shared `use_vitabench_data` folder, under the name these tests use."""
    return use_vitabench_data


@cache
def delivery_tasks(language: str) -> dict[str, dict[str, Any]]:
    """The shared snapshot's delivery tasks by id (callers skip when it is absent)."""
    name = "tasks.json" if language == "zh" else "tasks_en.json"
    tasks = json.loads((VITABENCH_DATA / "domains" / "delivery" / name).read_text())
    return {task["id"]: task for task in tasks}
