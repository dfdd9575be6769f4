"""The MCP-Atlas task end to end through `inspect eval`, on the real servers.

- The oracle (`envfactory/oracle`) replays each runnable sample task's reference run
  through the servers started for it, and a scripted judge that checks claims against
  the answer string gives coverage 1; the results the servers gave equal what the
  reference run recorded (calculator exactly; the CSVs up to line endings: the release's
  files have LF, the reference runs were recorded on CRLF copies).
- Negative controls: an empty answer scores 0 without a judge call; a refusal is judged
  and scores 0.
- Upstream's loop rules: the tool-call limit ends the run and the calls past it never
  run; a server's error reaches the model as the environment's error body, with
  upstream's `/data` paths; undecodable arguments are answered with Node's JSON error.
- Availability: the tasks that cannot run are listed with reasons, never scored.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessageAssistant, Model

from tasks._mcp_atlas.dataset import AtlasTask
from tasks._mcp_atlas.oracle import reference_results
from tasks._mcp_atlas.servers import availability
from tasks.mcp_atlas.mcp_atlas import mcp_atlas
from testkit.scripted import Answer, Request, call, message, scripted
from tests.shared_data import needs_mcp_atlas

pytestmark = [needs_mcp_atlas, pytest.mark.usefixtures("use_mcp_atlas_data")]

#: sample tasks needing only calculator / filesystem / memory (hand-read from the CSV)
LOCAL_TASKS = {"4b5c6d7e8f": ("calculator",), "5c6d7e8f9a": ("filesystem", "calculator"),
               "c6d7e8f9a0": ("memory", "filesystem")}


def _needs(*servers: str) -> None:
    for server in servers:
        status = availability(server)
        if not status.ok:
            pytest.skip(f"{server} cannot start here: {status.reason} "
                        "(`make install-mcp-atlas`)")


def claim_judge(calls: list[str] | None = None) -> Model:
    """Fulfilled iff the claim's text is in the response (the prompt's two fields are
    read back by their headings in upstream's template)."""

    def reply(request: Request) -> Answer:
        prompt = request.messages[-1].text
        claim = prompt.split("CLAIM TO EVALUATE:\n", 1)[1].split(
            "\nMODEL RESPONSE TO ANALYZE:", 1)[0]
        response = prompt.split("MODEL RESPONSE TO ANALYZE:\n", 1)[1].split(
            "\nINSTRUCTIONS:", 1)[0]
        if calls is not None:
            calls.append(claim)
        outcome = "fulfilled" if claim.strip() in response else "not_fulfilled"
        return json.dumps({
            "claim_text": claim, "coverage_outcome": outcome, "justification": "scripted",
            "confidence_level": 1.0})

    return scripted(reply)


def agent(script: Callable[[int], ChatMessageAssistant]) -> Model:
    """A scripted agent: the n-th generation of a sample (0-based) is `script(n)`."""
    count: dict[str, int] = {}

    def reply(request: Request) -> Answer:
        key = request.messages[0].text
        n = count.get(key, 0)
        count[key] = n + 1
        return script(n)

    return scripted(reply)


def run(model: str | Model, tmp_path: Path, sample_ids: list[str], judge: Model,
        **options: Any) -> EvalLog:
    (log,) = inspect_eval(mcp_atlas(judge=judge, **options), model=model,
                          sample_id=sample_ids, log_dir=str(tmp_path / "logs"),
                          display="none", max_samples=2)
    assert log.status == "success", log.error
    return log


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


@pytest.mark.parametrize("task_id", sorted(LOCAL_TASKS))
def test_oracle_replays_the_reference_run_through_the_real_servers(
        task_id: str, tmp_path: Path) -> None:
    _needs(*LOCAL_TASKS[task_id])
    log = run("envfactory/oracle", tmp_path, [task_id], claim_judge())
    (sample,) = log.samples or []
    score = sample.scores["mcp_atlas_scorer"]
    assert score.value == 1.0 and score.metadata["passed"] is True
    assert score.metadata["termination"] == "turns_done"
    task = AtlasTask.model_validate(sample.metadata["task"])
    reference = reference_results(task)
    ours = [(m.function, m.text) for m in sample.messages if m.role == "tool"]
    assert [name for name, _ in ours] == [name for name, _ in reference]
    for (name, expected), (_, got) in zip(reference, ours, strict=True):
        if name.endswith("list_directory"):  # the reference runs' /data varied over time
            assert "[FILE] Top Movies.csv" in got and "/tmp" not in got
        else:
            assert _lf(got) == _lf(expected), name


def test_an_empty_answer_scores_zero_without_asking_the_judge(tmp_path: Path) -> None:
    _needs("calculator")
    asked: list[str] = []
    log = run(agent(lambda n: ChatMessageAssistant(content="")), tmp_path, ["4b5c6d7e8f"],
              claim_judge(asked))
    score = (log.samples or [])[0].scores["mcp_atlas_scorer"]
    assert score.value == 0.0 and asked == []
    assert {v["score"] for v in score.metadata["verdicts"]} == {0.0}


def test_a_refusal_is_judged_and_scores_zero(tmp_path: Path) -> None:
    _needs("calculator")
    asked: list[str] = []
    log = run(agent(lambda n: ChatMessageAssistant(content="I cannot help with that.")),
              tmp_path, ["4b5c6d7e8f"], claim_judge(asked))
    score = (log.samples or [])[0].scores["mcp_atlas_scorer"]
    assert score.value == 0.0 and score.metadata["passed"] is False
    assert len(asked) == len(score.metadata["verdicts"]) == 10  # one claim per year, 1..10
    assert log.results is not None
    metrics = {k: m.value for s in log.results.scores for k, m in s.metrics.items()}
    assert metrics["pass@0.75"] == 0.0 and metrics["mean_coverage"] == 0.0


def _calls(*calls: tuple[str, dict[str, Any]]) -> ChatMessageAssistant:
    return message("", [call(name, arguments, id=f"c{i}")
                        for i, (name, arguments) in enumerate(calls)])


def test_the_tool_call_limit_ends_the_run_and_later_calls_never_run(tmp_path: Path) -> None:
    _needs("calculator")
    three = ("calculator_calculate", {"expression": "1+1"})

    def script(n: int) -> ChatMessageAssistant:
        return _calls(three, three, three) if n < 2 else ChatMessageAssistant(content="2")

    log = run(agent(script), tmp_path, ["4b5c6d7e8f"], claim_judge(), max_tool_calls=4)
    (sample,) = log.samples or []
    assert sample.scores["mcp_atlas_scorer"].metadata["termination"] == "max_tool_calls"
    results = [m for m in sample.messages if m.role == "tool"]
    assert [m.text for m in results] == ["2"] * 4
    assert [m.tool_call_id for m in results] == ["c0", "c1", "c2", "c0"]
    assert sample.messages[-1].role == "tool"  # no model call after the limit


def test_errors_reach_the_model_as_upstream_shows_them(tmp_path: Path) -> None:
    _needs("filesystem")

    def script(n: int) -> ChatMessageAssistant:
        if n == 0:
            return _calls(("filesystem_read_file", {"path": "/data/no such file.csv"}),
                          ("filesystem_read_file", {"path": "/etc/passwd"}))
        return ChatMessageAssistant(content="done")

    log = run(agent(script), tmp_path, ["5c6d7e8f9a"], claim_judge())
    missing, outside = [m.text for m in (log.samples or [])[0].messages if m.role == "tool"]
    detail = json.loads(missing)["detail"]
    assert detail.startswith("Failed to call tool 'filesystem_read_file': ")
    assert "/data/no such file.csv" in detail and "/tmp" not in detail
    assert "Access denied" in json.loads(outside)["detail"]
    assert "/tmp" not in outside


def test_subset_and_skips_are_in_the_log(tmp_path: Path) -> None:
    _needs("calculator", "filesystem", "memory")
    log = run("envfactory/oracle", tmp_path, ["4b5c6d7e8f"], claim_judge(), subset="all")
    meta = log.eval.metadata or {}
    assert meta["mcp_atlas_subset"] == "all" and meta["mcp_atlas_population"] == 10
    skipped = meta["mcp_atlas_skipped"]
    # the sample tasks that call web servers (hand-read from the CSV's trajectories)
    for task_id in ("8d9eaf0b1c", "3c4d5e6f7a", "7a8b9c0d1e", "2b3c4d5e6f"):
        if task_id in skipped:
            assert "ddg-search" in skipped[task_id] or "osm-mcp-server" in skipped[task_id]
    assert "storyteller" in skipped.get("e5f6d7c8b9", "storyteller")
    assert meta["mcp_atlas_runnable"] + len(skipped) == 10
    assert meta["mcp_atlas_commit"].startswith("5b6220c")


def test_unknown_subset_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="subset"):
        mcp_atlas(subset="keyless")
