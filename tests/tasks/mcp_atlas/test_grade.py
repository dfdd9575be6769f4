"""`mcp-atlas grade`: recorded responses graded with the scorer's code, in order, resumable,
claims from the dataset (the sample tasks) or a given table."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tasks._mcp_atlas.grade import grade_file
from tests.shared_data import needs_mcp_atlas
from tests.tasks.mcp_atlas.official import (
    ScriptedJudge,
    digest,
    recorded,
    verdict,
)

TASKS = {"t1": "['The answer is forty-two.', 'The tool was a calculator.']",
         "t2": "['Paris is the capital of France.']"}


pytestmark = pytest.mark.usefixtures("official_source")


def judge() -> ScriptedJudge:
    """Fulfilled iff the response (after the prompt's response heading) says RIGHT."""
    return ScriptedJudge(lambda prompt: verdict(
        "fulfilled" if "RIGHT" in prompt.split("MODEL RESPONSE", 1)[1] else "not_fulfilled"))


def write_input(path: Path) -> None:
    records: list[dict[str, Any] | None] = [
        {"task_id": "t1", "response": "RIGHT: 42 by calculator", "model": "ignored"},
        None,  # a blank line
        {"task_id": "t2", "response": "wrong city"},
        {"task_id": "t1", "response": ""},
        {"task_id": "t1", "response": None},
        {"task_id": "t2", "response": "RIGHT, Paris"},
        {"task_id": "t1", "response": "ERROR: HTTP 500: boom"},
    ]
    path.write_text("".join((json.dumps(r) if r else "") + "\n" for r in records),
                    encoding="utf-8")


EXPECTED = [("t1", 1.0, True, None), ("t2", 0.0, False, None), ("t1", 0.0, False, "empty"),
            ("t1", 0.0, False, "empty"), ("t2", 1.0, True, None), ("t1", 0.0, False, "error")]


def summary(results: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r["task_id"], r["coverage"], r["pass"], r["skipped"]) for r in results]


def test_grade_file_in_order(tmp_path: Path) -> None:
    source, out = tmp_path / "responses.jsonl", tmp_path / "results.jsonl"
    write_input(source)
    scripted = judge()
    results = asyncio.run(grade_file(source, scripted.model, out, tasks=TASKS,
                                     max_concurrent=3))
    assert summary(results) == EXPECTED
    assert [json.loads(line) for line in out.read_text().splitlines()] == results
    first = results[0]
    assert [v["claim"] for v in first["verdicts"]] == ["The answer is forty-two.",
                                                      "The tool was a calculator."]
    assert first["judge"] == "mockllm/model"
    assert first["total_claims"] == 2 and first["mcp_atlas_commit"].startswith("5b6220c")
    assert len(scripted.prompts) == 2 + 1 + 1  # t1, t2, t2 judged; the rest skipped


def test_interrupted_run_resumes(tmp_path: Path) -> None:
    source, full = tmp_path / "responses.jsonl", tmp_path / "full.jsonl"
    write_input(source)
    asyncio.run(grade_file(source, judge().model, full, tasks=TASKS))
    first, second, *_ = full.read_text().splitlines(keepends=True)
    out = tmp_path / "results.jsonl"
    out.write_text(first + second[:30], encoding="utf-8")  # killed while writing line 2
    scripted = judge()
    progress: list[tuple[int, int]] = []
    results = asyncio.run(grade_file(source, scripted.model, out, tasks=TASKS,
                                     on_result=lambda d, t: progress.append((d, t))))
    assert summary(results) == EXPECTED[1:]
    assert out.read_text() == full.read_text()
    assert progress == [(1, 6), (2, 6), (3, 6), (4, 6), (5, 6), (6, 6)]
    assert len(scripted.prompts) == 2  # line 1's two claims were not judged again
    assert asyncio.run(grade_file(source, judge().model, out, tasks=TASKS)) == []


def test_results_of_another_input_are_refused(tmp_path: Path) -> None:
    source, out = tmp_path / "responses.jsonl", tmp_path / "results.jsonl"
    write_input(source)
    out.write_text(json.dumps({"task_id": "t2"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not this input's results"):
        asyncio.run(grade_file(source, judge().model, out, tasks=TASKS))


def test_bad_lines_and_unknown_tasks_name_file_and_line(tmp_path: Path) -> None:
    source = tmp_path / "responses.jsonl"
    source.write_text('{"task_id": "t1", "response": "x"}\n{"task_id": "t1"}\n',
                      encoding="utf-8")
    with pytest.raises(ValueError, match=r"responses.jsonl:2: invalid response record"):
        asyncio.run(grade_file(source, judge().model, tasks=TASKS))
    source.write_text('{"task_id": "t1", "response": "x"}\nnot json\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"responses.jsonl:2: invalid response record"):
        asyncio.run(grade_file(source, judge().model, tasks=TASKS))
    source.write_text('\n{"task_id": "nope", "response": "x"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"responses.jsonl:2: no task 'nope'"):
        asyncio.run(grade_file(source, judge().model, tasks=TASKS))


@needs_mcp_atlas
def test_claims_come_from_the_dataset(tmp_path: Path, use_mcp_atlas_data: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    import csv
    import sys

    csv.field_size_limit(sys.maxsize)
    with (use_mcp_atlas_data / "sample_tasks.csv").open(encoding="utf-8", newline="") as f:
        row = next(csv.DictReader(f))
    source = tmp_path / "responses.jsonl"
    source.write_text(json.dumps({"task_id": row["TASK"], "response": "RIGHT"}) + "\n",
                      encoding="utf-8")
    results = asyncio.run(grade_file(source, judge().model))  # no `out`: stdout
    claims = [v["claim"] for v in results[0]["verdicts"]]
    # upstream's claims for the task, recorded as count and sha256
    expected = recorded("claims")["sample_tasks"][row["TASK"]]
    assert {"count": len(claims), "sha256": digest(claims)} == expected
    assert results[0]["coverage"] == 1.0
    assert json.loads(capsys.readouterr().out) == results[0]
