"""`envfactory tau2 grade`: re-grade recorded conversations with the task's own reward."""
# Records are canonical Trajectories or plain conversation records (see `conversation`).

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from envs.jsonl import numbered_records
from envs.tau2 import data
from envs.tau2.tasks import Task
from harness.episode import Termination
from harness.results_file import done_prefix, write_in_order
from harness.trajectory import Trajectory
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


async def grade_file(path: Path, judge: Judge | None = None, out: Path | None = None, *,
                     max_concurrent: int = 1, limit: int | None = None,
                     on_result: Callable[[int, int], None] | None = None
                     ) -> list[dict[str, Any]]:
    """Grade the first `limit` records of `path` (all by default); this call's results, in
    order: task_id, domain, reward and the per-component results.

    The shape of every `grade` (`harness.results_file`): with `out`, results already there
    are kept and only the rest graded (appended as they finish, in input order); without,
    each result line goes to stdout. `max_concurrent` records are graded at once;
    `on_result(done, total)` is called after each result (and once at the start).

    Raises:
        ValueError: no records, a bad record, an unknown domain, a task not in the
            release, or an `out` file that is not a prefix of this input's results.
    """
    records = _records(path)[:limit]
    if not records:
        raise ValueError(f"{path}: holds no conversation records to grade")
    tasks = []
    for lineno, record in records:
        if record.domain not in data.DOMAINS:
            raise ValueError(f"{path}:{lineno}: unknown τ² domain {record.domain!r}; use "
                             f"one of {', '.join(data.DOMAINS)}")
        task = _tasks(record.domain).get(record.task_id)
        if task is None:
            raise ValueError(f"{path}:{lineno}: no task {record.task_id!r} in τ² "
                             f"{record.domain} ({data.RELEASE} tasks.json)")
        tasks.append(task)
    start = (done_prefix(out, [r.task_id for _, r in records], "conversation")
             if out is not None else 0)

    async def grade(i: int) -> dict[str, Any]:
        record = records[i][1]
        info = await evaluate(tasks[i], record.domain, record.messages,
                              record.termination_reason, judge=judge)
        return {"task_id": record.task_id, "domain": record.domain,
                **info.model_dump(mode="json")}

    return await write_in_order(grade, len(records), start, out, on_result,
                                max_concurrency=max_concurrent)
