"""`envfactory mcp-atlas grade`: re-grade recorded responses with the Inspect scorer's code.

Input: JSONL, one record per line (other fields ignored; a task may appear several times,
as in upstream's model-results files, and each record is graded)::

    {"task_id": "...", "response": "..."}

A null response counts as empty (upstream reads a missing CSV cell the same way). Claims
come from the task's `GTFA_CLAIMS` in the dataset (`tasks._mcp_atlas.dataset.load_tasks`).

Output: one JSON line per input line, in order: `task_id`, `coverage`, `pass`, the claim
counts, the mean judge confidence, why a response was not judged (`skipped`), per-claim
`verdicts`, the judge and the release. Scoring is `scoring.score_response`.

With `out`, results are appended line by line as they finish, so an interrupted run picks
up where it stopped: the lines already there are checked against the input (same task
ids, in order) and kept; a line cut off mid-write is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from inspect_ai.model import Model
from pydantic import BaseModel, ConfigDict

from envs.jsonl import numbered_records
from harness.judge import judge_model
from harness.results_file import done_prefix, write_in_order
from tasks._mcp_atlas.claims import extract_claims
from tasks._mcp_atlas.dataset import load_tasks
from tasks._mcp_atlas.release import release
from tasks._mcp_atlas.scoring import Coverage, judge_config, score_response

__all__ = ["GradeRecord", "grade_file", "read_responses", "result_line"]


class GradeRecord(BaseModel):
    """One record of a `mcp-atlas grade` input file."""

    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True)
    task_id: str
    response: str | None


def read_responses(path: Path) -> list[tuple[int, GradeRecord]]:
    """Every record of `path` with its line number; a bad line is reported as file:line."""
    return numbered_records(path, GradeRecord.model_validate_json, "response record")


def result_line(task_id: str, result: Coverage, judge: str) -> dict[str, Any]:
    """The output record for one graded response."""
    fields = result.model_dump(mode="json")
    return {"task_id": task_id, "coverage": fields.pop("coverage"), "pass": fields.pop("passed"),
            **fields, "judge": judge, **release().provenance()}


def _claims_by_task(tasks: Mapping[str, Any] | None, data_dir: str | None) -> Mapping[str, Any]:
    if tasks is not None:
        return tasks
    loaded, _ = load_tasks(data_dir)
    return {t.task_id: t.claims for t in loaded}


async def grade_file(path: Path, judge: str | Model, out: Path | None = None, *,
                     tasks: Mapping[str, Any] | None = None, data_dir: str | None = None,
                     max_concurrent: int = 4,
                     limit: int | None = None,
                     on_result: Callable[[int, int], None] | None = None
                     ) -> list[dict[str, Any]]:
    """Grade every response of `path` with `judge`; the results of this call, in order.

    `tasks` maps task ids to their `GTFA_CLAIMS`; by default they are the dataset's
    (`load_tasks(data_dir)`: `MCP_ATLAS_TASKS`, else the Hub). With `out`, results already
    there are kept and only the rest graded (appended as they finish, in input order);
    without, each result line goes to stdout. `max_concurrent` responses are judged at once
    (each one's claims together, as upstream). `on_result(done, total)` is called after
    each result (and once at the start).

    Raises:
        ValueError: no records, a bad record, a task not in the dataset, or an `out` file
            that is not a prefix of this input's results.
    """
    records = read_responses(path)[:limit]
    if not records:
        raise ValueError(f"{path}: holds no response records to grade")
    claims_by_task = _claims_by_task(tasks, data_dir)
    unknown = [(line, r.task_id) for line, r in records if r.task_id not in claims_by_task]
    if unknown:
        line, task_id = unknown[0]
        raise ValueError(f"{path}:{line}: no task {task_id!r} in the dataset"
                         + (f" ({len(unknown) - 1} more unknown)" if len(unknown) > 1 else ""))
    model = judge_model(judge)
    config = judge_config(model)
    ids = [r.task_id for _, r in records]
    start = done_prefix(out, ids, "response") if out is not None else 0

    async def grade(i: int) -> dict[str, Any]:
        record = records[i][1]
        result = await score_response(extract_claims(claims_by_task[record.task_id]),
                                      record.response or "", model, config)
        return result_line(record.task_id, result, str(model))

    return await write_in_order(grade, len(records), start, out, on_result,
                                max_concurrency=max_concurrent)
