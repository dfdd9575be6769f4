"""`envfactory tau2 grade`: re-grade recorded conversations with the task's own reward."""
# Records are canonical Trajectories or plain conversation records (see `conversation`).

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from envs.tau2 import data
from envs.tau2.tasks import Task
from harness.episode import Termination
from harness.trajectory import Trajectory, numbered_records
from tasks._tau2.evaluator import Judge, evaluate
from tasks._tau2.messages import Conversation

__all__ = ["grade_file"]


@cache
def _tasks(domain: str) -> dict[str, Task]:
    return {t["id"]: Task.model_validate(t) for t in data.load_tasks(domain)}


def conversation(record: dict[str, Any]) -> Conversation:
    """A grade input record: a canonical `Trajectory` (`harness.logs` writes them from
    Inspect logs; environments `["tau2/<domain>"]`, id = task id) or a plain
    `{domain, task_id, termination_reason, messages}` record."""
    if "environments" in record:
        trajectory = Trajectory.model_validate(record)
        domains = [e.removeprefix("tau2/") for e in trajectory.environments
                   if e.startswith("tau2/")]
        if len(domains) != 1 or trajectory.termination is None:
            raise ValueError("a τ² trajectory names one 'tau2/<domain>' environment and "
                             "its termination")
        return Conversation(domain=domains[0], task_id=trajectory.id,
                            termination_reason=Termination(trajectory.termination),
                            messages=trajectory.messages)
    return Conversation.model_validate(record)


def _records(path: Path) -> list[tuple[int, Conversation]]:
    return numbered_records(path, lambda line: conversation(json.loads(line)),
                            "conversation record")


async def grade_file(path: Path, judge: Judge | None = None) -> list[dict[str, Any]]:
    """One result per record: task_id, reward and the per-component results."""
    results = []
    for lineno, record in _records(path):
        task = _tasks(record.domain).get(record.task_id)
        if task is None:
            raise ValueError(f"{path}:{lineno}: no task {record.task_id!r} in τ² "
                             f"{record.domain} ({data.RELEASE})")
        info = await evaluate(task, record.domain, record.messages, record.termination_reason,
                              judge=judge)
        results.append({"task_id": record.task_id, "domain": record.domain,
                        **info.model_dump(mode="json")})
    return results


def write_results(results: list[dict[str, Any]], out: Path | None) -> None:
    lines = "".join(json.dumps(r) + "\n" for r in results)
    if out is None:
        print(lines, end="")
    else:
        out.write_text(lines, encoding="utf-8")
