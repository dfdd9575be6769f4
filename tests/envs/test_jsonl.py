"""`envs.jsonl` (read with file:line errors, resume, append, atomic write) and
`envs.concurrency` (the one bounded gather)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from envs.concurrency import bounded_gather
from envs.jsonl import append_line, complete_lines, numbered_records, read_objects, write_atomic


def test_a_bad_line_is_named_by_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2}\nnot json\n', encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{path}:4: invalid record: "):
        read_objects(path, "record")
    good = tmp_path / "g.jsonl"
    good.write_text('{"a": 1}\n\n{"a": 2}\n', encoding="utf-8")
    assert numbered_records(good, json.loads, "record") == [(1, {"a": 1}), (3, {"a": 2})]


def test_a_cut_last_line_is_dropped_and_trimmed_only_when_resuming(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text('{"id": 1}\n{"id"', encoding="utf-8")
    assert complete_lines(path, trim=False) == ['{"id": 1}']
    assert path.read_text(encoding="utf-8").endswith('{"id"')  # a writer's line is left
    assert complete_lines(path) == ['{"id": 1}']
    append_line(path, {"id": 2})
    assert read_objects(path) == [{"id": 1}, {"id": 2}]
    assert complete_lines(tmp_path / "none.jsonl") == []


def test_an_atomic_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "state.json"
    write_atomic(path, "old\n")

    def chunks() -> list[str]:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomic(path, (c for c in chunks()))
    assert path.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in path.parent.iterdir()] == ["state.json"]
    write_atomic(path, iter(["a\n", "b\n"]))
    assert path.read_text(encoding="utf-8") == "a\nb\n"


def test_bounded_gather_keeps_order_and_its_limit() -> None:
    running = peak = 0

    async def job(i: int) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.001 * (5 - i))
        running -= 1
        return i

    assert asyncio.run(bounded_gather((job(i) for i in range(5)), 2)) == [0, 1, 2, 3, 4]
    assert peak == 2


def test_bounded_gather_raises_the_failure_and_cancels_the_rest() -> None:
    finished: list[int] = []

    async def job(i: int) -> int:
        if i == 0:
            raise ValueError("boom")
        await asyncio.sleep(0.05)
        finished.append(i)
        return i

    async def run() -> None:
        with pytest.raises(ValueError, match="boom"):
            await bounded_gather([job(i) for i in range(3)], 3)
        await asyncio.sleep(0.1)

    asyncio.run(run())
    assert finished == []
