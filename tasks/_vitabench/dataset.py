"""VitaBench tasks as Inspect samples (ids are the official task ids).

A sample carries what identifies its task (set, language, revision, id) and the task's
rubrics and instructions, not its database: per-task environments are up to megabytes,
and the solver and the scorer read the task from the release (parsed once per process).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample

from envs.vitabench.release import Language, Release

__all__ = ["load_dataset", "load_tasks", "task_by_id"]


def load_tasks(release: Release, task_set: str, language: Language
               ) -> tuple[dict[str, Any], ...]:
    """The task file of one set and language, as upstream's JSON objects."""
    return _parse(release.tasks_path(task_set, language))


def task_by_id(release: Release, task_set: str, language: Language,
               task_id: str) -> dict[str, Any]:
    index = _index(release.tasks_path(task_set, language))
    if task_id not in index:
        raise KeyError(f"VitaBench {task_set} ({language}) has no task {task_id!r}")
    return index[task_id]


@cache
def _parse(path: Path) -> tuple[dict[str, Any], ...]:
    """Parsed once per file (keyed by path: pointing `VITABENCH_DATA_DIR` elsewhere
    reads the other file)."""
    try:
        tasks = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a JSON task file ({e})") from e
    if not isinstance(tasks, list):
        raise ValueError(f"{path}: expected a list of tasks")
    for i, task in enumerate(tasks):
        missing = [k for k in ("id", "domain", "environment", "user_scenario",
                               "instructions", "evaluation_criteria") if k not in task]
        if missing:
            raise ValueError(f"{path}: task #{i} ({task.get('id', 'no id')}) lacks "
                             f"{', '.join(missing)}")
    return tuple(tasks)


@cache
def _index(path: Path) -> dict[str, dict[str, Any]]:
    return {str(t["id"]): t for t in _parse(path)}


def load_dataset(release: Release, task_set: str, language: Language) -> MemoryDataset:
    samples = [
        Sample(id=str(t["id"]), input=str(t["instructions"]),
               metadata={"task_set": task_set, "language": language,
                         "revision": release.revision.name, "domain": t["domain"],
                         "environments": [f"vitabench/{d.strip()}"
                                          for d in str(t["domain"]).split(",")]})
        for t in load_tasks(release, task_set, language)
    ]
    return MemoryDataset(samples, name=f"vitabench_{task_set}_{language}")
