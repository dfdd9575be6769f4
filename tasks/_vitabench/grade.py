"""`envfactory vitabench grade`: re-grade recorded conversations with the task's own judge.

Input: JSONL, one conversation per line (other fields ignored), or canonical `Trajectory`
records of VitaBench runs (`envfactory trajectories LOG`)::

    {"task_id": "...", "set": "delivery"|"instore"|"ota"|"cross", "language": "zh"|"en",
     "termination_reason": "...", "messages": [{"role", "content", "tool_calls", "tool_call_id"}]}

Output: one JSON line per input line, in order: `task_id`, `set`, `language`, `reward`,
`met_fraction`, per-rubric `rubrics`, per-window `windows`, the judge and the release.
The judge is `tasks._vitabench.judge.judge_conversation`, the Inspect scorer's code.

With `out`, results are appended line by line as they finish, so an interrupted run picks
up where it stopped: the lines already there are checked against the input (same task
ids, in order) and kept; a line cut off mid-write is dropped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from inspect_ai.model import Model
from pydantic import BaseModel, ConfigDict, Field

from envs.jsonl import read_records
from envs.vitabench.release import DEFAULT_REVISION, Language, release
from harness.judge import judge_model
from harness.results_file import done_prefix, write_in_order
from harness.trajectory import Message, Trajectory
from tasks._vitabench.dataset import task_by_id
from tasks._vitabench.judge import judge_conversation

__all__ = ["Conversation", "conversation", "grade_file", "read_conversations"]


class Conversation(BaseModel):
    """One record of a `vitabench grade` input file."""

    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True,
                              populate_by_name=True)
    task_id: str
    task_set: Literal["delivery", "instore", "ota", "cross"] = Field(alias="set")
    language: Language
    termination_reason: str
    messages: list[Message]


def conversation(record: dict[str, Any]) -> Conversation:
    """A grade input record: a plain conversation (the issue's format), or a canonical
    `Trajectory` as `envfactory trajectories` writes it from a VitaBench log (task id,
    set, language and termination from the record)."""
    if "provenance" in record and "turns" in record:
        trajectory = Trajectory.model_validate(record)
        meta = trajectory.metadata
        return Conversation.model_validate({
            "task_id": trajectory.id, "set": meta.get("task_set"),
            "language": meta.get("language"),
            "termination_reason": trajectory.termination or "limit",
            "messages": [m.model_dump() for m in trajectory.messages]})
    return Conversation.model_validate(record)


def read_conversations(path: Path) -> list[Conversation]:
    """Every record of `path`; a bad line is reported with its line number."""
    return read_records(path, lambda line: conversation(json.loads(line)),
                        "conversation record")


async def grade_file(path: Path, judge: str | Model, out: Path | None = None, *,
                     revision: str = DEFAULT_REVISION, max_concurrent: int = 1,
                     limit: int | None = None,
                     on_result: Callable[[int, int], None] | None = None
                     ) -> list[dict[str, Any]]:
    """Grade every conversation of `path` with `judge`; the results of this call, in order.

    With `out`, results already there are kept and only the rest graded (appended as they
    finish, in input order); without, each result line goes to stdout. `max_concurrent`
    conversations are judged at once (each one's windows in turn, as upstream).
    `on_result(done, total)` is called after each result (and once at the start).

    Raises:
        ValueError: no records, a bad record, a task not in the release, or an `out` file
            that is not a prefix of this input's results.
    """
    records = read_conversations(path)[:limit]
    if not records:
        raise ValueError(f"{path}: holds no conversation records to grade")
    rel = release(revision)
    tasks = []
    for i, record in enumerate(records, 1):
        try:
            tasks.append(task_by_id(rel, record.task_set, record.language, record.task_id))
        except KeyError as e:
            raise ValueError(f"{path}: conversation {i}: {e.args[0]}") from None
    model = judge_model(judge)
    start = (done_prefix(out, [r.task_id for r in records], "conversation")
             if out is not None else 0)

    async def grade(i: int) -> dict[str, Any]:
        record = records[i]
        result = await judge_conversation(record.messages, tasks[i], record.language,
                                          model, record.termination_reason,
                                          revision=revision)
        return {"task_id": record.task_id, "set": record.task_set,
                "language": record.language, **result.model_dump(mode="json"),
                "judge": str(model), **rel.provenance()}

    return await write_in_order(grade, len(records), start, out, on_result,
                                max_concurrency=max_concurrent)
