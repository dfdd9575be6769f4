"""Shared fixtures of the VitaBench environment tests.

`vita_data`: a `VITABENCH_DATA_DIR` holding the shared task snapshot (`domains/`,
`prompts/`, `models.yaml`, linked) plus the tool objects and tables recorded from the
official code (`tests/data/vitabench/official/{tools,tables}`), with an empty cache, so
no test derives or downloads anything.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.shared_data import VITABENCH_DATA

OFFICIAL = Path(__file__).resolve().parents[2] / "data" / "vitabench" / "official"


@pytest.fixture
def vita_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "vitabench-data"
    root.mkdir()
    for name in ("domains", "prompts", "models.yaml"):
        if (VITABENCH_DATA / name).exists():
            (root / name).symlink_to(VITABENCH_DATA / name)
    for name in ("tools", "tables"):
        (root / name).symlink_to(OFFICIAL / name)
    monkeypatch.setenv("VITABENCH_DATA_DIR", str(root))
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path / "cache"))
    yield root


@cache
def delivery_tasks(language: str) -> dict[str, dict[str, Any]]:
    """The shared snapshot's delivery tasks by id (callers skip when it is absent)."""
    name = "tasks.json" if language == "zh" else "tasks_en.json"
    tasks = json.loads((VITABENCH_DATA / "domains" / "delivery" / name).read_text())
    return {task["id"]: task for task in tasks}
