"""The output of a re-grading command: one JSON line per input record, in input order,
resumable.

`envfactory vitabench grade` and `envfactory mcp-atlas grade` judge records concurrently
but write results in input order, line by line as they finish, so an interrupted run with
an output file picks up where it stopped: the lines already there must be a prefix of
this input's results (same task ids, in order) and are kept; a line cut off mid-write is
dropped. Without an output file, result lines go to stdout.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from envs.concurrency import bounded
from envs.jsonl import complete_lines

__all__ = ["done_prefix", "write_in_order"]


def done_prefix(out: Path, task_ids: Sequence[str], unit: str) -> int:
    """How many results `out` already holds (a prefix of the input), trimming a cut line.
    `unit` names an input record in errors ("conversation", "response")."""
    lines = complete_lines(out)
    if len(lines) > len(task_ids):
        raise ValueError(f"{out} holds {len(lines)} results for {len(task_ids)} {unit}s")
    for i, line in enumerate(lines):
        try:
            task_id = json.loads(line)["task_id"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise ValueError(f"{out}:{i + 1}: not a result line; remove the file to "
                             "start over") from None
        if task_id != task_ids[i]:
            raise ValueError(f"{out}:{i + 1}: result for task {task_id!r}, but {unit} "
                             f"{i + 1} is task {task_ids[i]!r}: not this input's results")
    return len(lines)


async def write_in_order(grade: Callable[[int], Awaitable[dict[str, Any]]], total: int,
                         start: int, out: Path | None,
                         on_result: Callable[[int, int], None] | None = None,
                         write: Callable[[dict[str, Any]], None] | None = None, *,
                         max_concurrency: int) -> list[dict[str, Any]]:
    """Run `grade(i)` for records `start..total-1`, `max_concurrency` at once, and append
    each result to `out` (or stdout) in input order; the results, in order.
    `on_result(done, total)` is called once at the start and after each result; `write`,
    when given, stores each result instead of `out` (a caller with several files)."""
    if on_result:
        on_result(start, total)
    pending = bounded((grade(i) for i in range(start, total)), max_concurrency)
    results = []
    try:
        sink = out.open("a", encoding="utf-8") if out is not None else sys.stdout
        try:
            for n, task in enumerate(pending, start + 1):
                result = await task
                if write is not None:
                    write(result)
                else:
                    sink.write(json.dumps(result, ensure_ascii=False) + "\n")
                    sink.flush()
                results.append(result)
                if on_result:
                    on_result(n, total)
        finally:
            if sink is not sys.stdout:
                sink.close()
    finally:
        for task in pending:
            task.cancel()
    return results
