"""`envfactory vitabench grade`: the judge's results for recorded conversations, in order,
resumable, through the CLI — with a scripted judge and a release folder built from the
official recordings (expected results are the official evaluator's)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from tasks._vitabench.grade import grade_file
from testkit.scripted import answers
from tests.tasks.vitabench.test_judge import TEMPLATE, official

RECORDS = ["judge_delivery_en.json", "judge_instore_en.json", "judge_delivery_zh.json"]


@pytest.fixture
def release_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A VITABENCH_DATA_DIR holding the recorded tasks and a stand-in judge template."""
    root = tmp_path / "release"
    (root / "prompts").mkdir(parents=True)
    (root / "prompts" / "sliding_window_eval_template.yaml").write_text(
        json.dumps(TEMPLATE), encoding="utf-8")
    files: dict[Path, list[dict[str, Any]]] = {}
    for name in RECORDS:
        record = official(name)
        file = root / "domains" / record["set"] / (
            "tasks.json" if record["language"] == "zh" else "tasks_en.json")
        files.setdefault(file, []).append(
            {**record["task"], "user_scenario": {"user_profile": {}}})
    for file, tasks in files.items():
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setenv("VITABENCH_DATA_DIR", str(root))
    yield root


def conversation(name: str, **changes: Any) -> dict[str, Any]:
    record = official(name)
    return {"task_id": record["task"]["id"], "set": record["set"],
            "language": record["language"], "termination_reason": "agent_stop",
            "messages": record["messages"], "note": "ignored", **changes}


def write_input(path: Path) -> list[str]:
    """Four conversations (one cut by MAX_STEPS, never judged); the replies they get."""
    lines = [conversation(RECORDS[0]), conversation(RECORDS[1]),
             conversation(RECORDS[0], termination_reason="max_steps"),
             conversation(RECORDS[2])]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n\n" for r in lines),
                    encoding="utf-8")
    return [*official(RECORDS[0])["replies"], *official(RECORDS[1])["replies"],
            *official(RECORDS[2])["replies"]]


def check_results(results: list[dict[str, Any]]) -> None:
    expected = [official(RECORDS[0]), official(RECORDS[1]), None, official(RECORDS[2])]
    assert [r["task_id"] for r in results] == ["10721002", "10826004", "10721002", "10721002"]
    assert [r["language"] for r in results] == ["en", "en", "en", "zh"]
    for result, record in zip(results, expected, strict=True):
        if record is None:
            assert (result["reward"], result["windows"], result["termination"]) == (
                0.0, [], "max_steps")
            continue
        assert result["reward"] == record["reward"]
        assert result["met_fraction"] == pytest.approx(record["met_fraction"])
        assert [{"nl_rubric": r["rubric"], "met": r["met"], "justification": r["justification"]}
                for r in result["rubrics"]] == record["nl_rubrics"]
        assert result["judge"] == "mockllm/model"
        assert result["vitabench_revision"] == "2025-11"


def test_grade_file_with_a_scripted_judge(tmp_path: Path, release_dir: Path) -> None:
    source = tmp_path / "conversations.jsonl"
    replies = write_input(source)
    judge = answers(*replies)
    out = tmp_path / "results.jsonl"
    results = asyncio.run(grade_file(source, judge.model, out))
    check_results(results)
    assert [json.loads(line) for line in out.read_text().splitlines()] == results
    assert len(judge.requests) == len(replies)  # every scripted reply used


def test_interrupted_run_resumes(tmp_path: Path, release_dir: Path) -> None:
    source = tmp_path / "conversations.jsonl"
    replies = write_input(source)
    full = tmp_path / "full.jsonl"
    asyncio.run(grade_file(source, answers(*replies).model, full))
    first, second, *_ = full.read_text().splitlines(keepends=True)
    out = tmp_path / "results.jsonl"
    out.write_text(first + second[:40], encoding="utf-8")  # killed while writing line 2
    judge = answers(*replies[3:])  # conversation 1 took three windows
    progress: list[tuple[int, int]] = []
    results = asyncio.run(grade_file(source, judge.model, out,
                                     on_result=lambda d, t: progress.append((d, t))))
    assert [r["task_id"] for r in results] == ["10826004", "10721002", "10721002"]
    assert out.read_text() == full.read_text()
    assert progress == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert len(judge.requests) == len(replies) - 3  # every scripted reply used
    # a finished file: nothing left to grade
    assert asyncio.run(grade_file(source, answers().model, out)) == []


def test_results_of_another_input_are_refused(tmp_path: Path, release_dir: Path) -> None:
    source = tmp_path / "conversations.jsonl"
    write_input(source)
    out = tmp_path / "results.jsonl"
    out.write_text(json.dumps({"task_id": "10826004"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not this input's results"):
        asyncio.run(grade_file(source, answers().model, out))


def test_concurrent_grading_keeps_input_order(tmp_path: Path, release_dir: Path) -> None:
    source = tmp_path / "conversations.jsonl"
    source.write_text("".join(
        json.dumps(conversation(RECORDS[1], termination_reason=t)) + "\n"
        for t in ("max_steps", "user_stop", "too_many_errors")), encoding="utf-8")
    judge = answers(*official(RECORDS[1])["replies"])
    results = asyncio.run(grade_file(source, judge.model, tmp_path / "out.jsonl",
                                     max_concurrent=3))
    assert [(r["termination"], r["reward"]) for r in results] == [
        ("max_steps", 0.0), ("user_stop", 1.0), ("too_many_errors", 0.0)]


def test_unknown_task_is_reported_before_any_judging(tmp_path: Path, release_dir: Path
                                                     ) -> None:
    source = tmp_path / "conversations.jsonl"
    source.write_text(json.dumps(conversation(RECORDS[1], task_id="nope")) + "\n",
                      encoding="utf-8")
    with pytest.raises(ValueError, match="conversation 1: .*no task 'nope'"):
        asyncio.run(grade_file(source, answers().model))


def test_cli(tmp_path: Path, release_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "conversations.jsonl"
    judge = answers(*write_input(source))
    asked: list[tuple[str, str | None, dict[str, Any]]] = []

    def get_model(name: str, base_url: str | None = None, config: Any = None,
                  **args: Any) -> Any:
        asked.append((name, base_url, {**args, "temperature": config.temperature}))
        return judge.model

    monkeypatch.setattr("envfactory.cli.options.get_model", get_model)
    out = tmp_path / "results.jsonl"
    result = CliRunner().invoke(app, ["vitabench", "grade", str(source), "--judge",
                                      "openai/judge-x", "--judge-base-url", "http://judge/v1",
                                      "--judge-model-arg", "max_retries=2",
                                      "--judge-model-arg", "org=a=b",
                                      "--judge-temperature", "0.5",
                                      "--results", str(out)])
    assert result.exit_code == 0, result.output
    assert asked == [("openai/judge-x", "http://judge/v1", {"max_retries": 2, "org": "a=b",
                                                         "temperature": 0.5})]
    check_results([json.loads(line) for line in out.read_text().splitlines()])

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "1", "set": "hotel"}\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["vitabench", "grade", str(bad), "--judge", "x/y"])
    assert result.exit_code == 1
    assert "bad.jsonl:1: invalid conversation record" in result.output
