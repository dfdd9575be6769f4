"""VitaBench on Inspect: negative controls, termination rules, retries, required roles,
options, and what every log records.

The models are scripted (`testkit.scripted`: functions of the request). The judge here
is an *evidence* judge: it marks a rubric met only if its window shows an order being
created (a `create_..._order` call), which is what the official judge's rules demand of
any order rubric ("an order must actually be created").
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

from harness.task_options import TaskOptionError
from tasks.vitabench.vitabench import vitabench_delivery, vitabench_instore
from testkit.scripted import Answer, Request, call, scripted
from tests.shared_data import VITABENCH_DATA, needs_vitabench

pytestmark = [needs_vitabench, pytest.mark.usefixtures("use_vitabench_data")]

SETS = {("delivery", "zh"): vitabench_delivery, ("delivery", "en"): vitabench_delivery,
        ("instore", "en"): vitabench_instore}


def said(request: Request) -> int:
    return sum(m.role == "assistant" for m in request.messages)


def chatting_agent(request: Request) -> Answer:
    return "Could you tell me more about what you would like?"


def looping_agent(request: Request) -> Answer:
    return [call("get_user_all_orders", id=f"c{len(request.messages)}")]


def user(request: Request) -> Answer:
    return "I need some food delivered." if said(request) < 2 else "That's all. ###STOP###"


class EvidenceJudge:
    """Marks a rubric met iff the window shows a `create_..._order` call; counts calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: Request) -> Answer:
        self.calls += 1
        text = request.messages[-1].text
        found = re.search(r"<current_rubrics>\s*(.*?)\s*</current_rubrics>", text, re.S)
        states = json.loads(found.group(1)) if found else []
        created = re.search(r"\bcreate_\w+_order\(", text) is not None
        return json.dumps([{**s, "justification": "window evidence",
                            "meetExpectation": created} for s in states])


def run(task: Any, agent: Any, judge: Any, log_dir: Path, limit: int | None = None,
        sample_id: str | None = None, roles: dict[str, Any] | None = None) -> EvalLog:
    model_roles = roles if roles is not None else {
        "user": scripted(user), "judge": scripted(judge)}
    (log,) = inspect_eval(task, model=scripted(agent),
                          model_roles=model_roles, limit=limit, sample_id=sample_id,
                          log_dir=str(log_dir), display="none", max_samples=16)
    return log


def scores(log: EvalLog) -> dict[str, Any]:
    return {str(s.id): next(iter((s.scores or {}).values())) for s in log.samples or []}


def first_task(task_set: str, language: str) -> str:
    name = "tasks.json" if language == "zh" else "tasks_en.json"
    tasks = json.loads((VITABENCH_DATA / "domains" / task_set / name).read_text())
    return str(tasks[0]["id"])


@pytest.mark.parametrize(("task_set", "language"), list(SETS))
def test_an_agent_that_only_chats_scores_zero(task_set: str, language: str,
                                              tmp_path: Path) -> None:
    judge = EvidenceJudge()
    log = run(SETS[task_set, language](language=language), chatting_agent, judge, tmp_path,
              limit=4)
    assert log.status == "success", log.error
    results = scores(log)
    assert len(results) == 4
    for score in results.values():
        assert score.value == 0.0
        assert score.metadata["termination_reason"] == "user_stop"
        assert score.metadata["rubrics"], "every task has rubrics"
        assert not any(r["met"] for r in score.metadata["rubrics"])
    assert judge.calls >= 4  # judged, and found wanting


@pytest.mark.slow
@pytest.mark.parametrize(("task_set", "language"), list(SETS))
def test_an_agent_that_only_chats_scores_zero_on_every_task(
        task_set: str, language: str, tmp_path: Path) -> None:
    log = run(SETS[task_set, language](language=language), chatting_agent, EvidenceJudge(),
              tmp_path)
    assert log.status == "success", log.error
    results = scores(log)
    assert len(results) == 100
    assert {s.value for s in results.values()} == {0.0}


def test_a_max_steps_run_scores_zero_without_a_judge_call(tmp_path: Path) -> None:
    class GenerousJudge(EvidenceJudge):  # would pass everything, if it were asked
        def __call__(self, request: Request) -> Answer:
            self.calls += 1
            return "[]"

    judge = GenerousJudge()
    log = run(vitabench_delivery(language="en", max_steps=6), looping_agent, judge, tmp_path,
              sample_id=first_task("delivery", "en"))
    assert log.status == "success", log.error
    (score,) = scores(log).values()
    assert score.value == 0.0
    assert score.metadata["termination_reason"] == "max_steps"
    assert score.metadata["steps"] == 6
    assert judge.calls == 0


def test_the_agents_stop_token_ends_the_run_and_is_judged(tmp_path: Path) -> None:
    def ordering_agent(request: Request) -> Answer:
        # the judge sees a create call in the window, whatever the tool answered
        if said(request) == 0:
            return [call("create_delivery_order", {"user_id": "nobody"}, id="c1")]
        return "All done. ###STOP###"

    judge = EvidenceJudge()
    log = run(vitabench_delivery(language="en"), ordering_agent, judge, tmp_path,
              sample_id=first_task("delivery", "en"))
    (score,) = scores(log).values()
    assert score.metadata["termination_reason"] == "agent_stop"
    assert score.value == 1.0
    assert score.metadata["met_fraction"] == 1.0
    assert judge.calls == 1


def test_a_crashed_simulation_runs_again_from_scratch(tmp_path: Path) -> None:
    attempts = {"n": 0}

    def flaky_user(request: Request) -> Answer:
        if said(request) == 0:  # a new conversation
            attempts["n"] += 1
            if attempts["n"] == 1:
                return ""  # upstream's message validation raises
        return user(request)

    judge = EvidenceJudge()
    log = run(vitabench_delivery(language="en"), chatting_agent, judge, tmp_path,
              sample_id=first_task("delivery", "en"),
              roles={"user": scripted(flaky_user), "judge": scripted(judge)})
    (sample,) = log.samples or []
    assert sample.metadata["attempts"] == 2
    assert sample.metadata["crashes"] == [
        "user_error: empty user message: neither text nor tool calls (1 attempt(s))"]
    (score,) = scores(log).values()
    assert score.metadata["termination_reason"] == "user_stop"
    # the record is the second conversation's, from the greeting on
    assert sample.messages[1].role == "assistant"
    assert sample.messages[1].text == "Hello, how can I help you?"


def test_an_empty_agent_message_is_generated_three_times(tmp_path: Path) -> None:
    calls = {"n": 0}

    def mute_agent(request: Request) -> Answer:
        calls["n"] += 1
        return "  "

    log = run(vitabench_delivery(language="en"), mute_agent, EvidenceJudge(), tmp_path,
              sample_id=first_task("delivery", "en"))
    (score,) = scores(log).values()
    assert calls["n"] == 3
    assert score.value == 0.0
    assert score.metadata["termination_reason"] == "invalid_agent_message"


def test_the_judge_role_must_be_set(tmp_path: Path) -> None:
    log = run(vitabench_delivery(language="en"), chatting_agent, None, tmp_path,
              sample_id=first_task("delivery", "en"),
              roles={"user": scripted(user)})
    assert log.status == "error"
    assert "--model-role judge=" in str(log.error)


def test_every_log_records_revision_language_and_judge(tmp_path: Path) -> None:
    log = run(vitabench_instore(language="en"), chatting_agent, EvidenceJudge(), tmp_path,
              sample_id=first_task("instore", "en"))
    meta = log.eval.task_args | (log.eval.metadata or {})
    assert meta["vitabench_revision"] == "2025-11"
    assert meta["vitabench_commit"] == "96f3b8529d8ea38d330de2405af7e32a1454f6cd"
    assert meta["language"] == "en"
    assert meta["json_repair"]
    (score,) = scores(log).values()
    assert score.metadata["judge_model"] == "mockllm/model"
    assert score.metadata["json_repair"] == meta["json_repair"]
    (sample,) = log.samples or []
    assert sample.metadata["sampling"]["assistant"] == {"temperature": 0.0}
    assert "user" in (log.eval.model_roles or {}) and "judge" in (log.eval.model_roles or {})
    assert log.results is not None
    reported = {name for score in log.results.scores for name in score.metrics}
    assert {"avg_reward", "avg@1", "pass^1", "pass@1"} <= reported


@pytest.mark.parametrize(("option", "value"), [("language", "fr"), ("revision", "1999"),
                                               ("max_steps", 0), ("temperature", -1.0)])
def test_bad_options_name_the_option(option: str, value: Any) -> None:
    with pytest.raises(TaskOptionError, match=option):
        vitabench_delivery(**{option: value})


def test_grading_the_logs_trajectories_agrees_with_the_scorer(tmp_path: Path) -> None:
    """One judge, two entry points: `envfactory trajectories` of a run, re-graded by
    `vitabench grade` with the same judge, gives each sample's reward and rubrics."""
    import asyncio

    from harness.logs import trajectories
    from harness.trajectory import write_jsonl
    from tasks._vitabench.grade import grade_file

    def agent(request: Request) -> Answer:
        if said(request) == 0 and "noodle" not in request.messages[-1].text:
            return [call("create_delivery_order", {"user_id": "nobody"}, id="c1")]
        return "Done. ###STOP###"

    judge = EvidenceJudge()
    log = run(vitabench_delivery(language="zh"), agent, judge, tmp_path / "logs", limit=3)
    assert log.status == "success", log.error
    records = list(trajectories(log.location))
    assert {r.metadata["language"] for r in records} == {"zh"}
    file = tmp_path / "runs.jsonl"
    write_jsonl(file, records)
    graded = asyncio.run(grade_file(file, scripted(judge),
                                    out=tmp_path / "graded.jsonl"))
    by_id = scores(log)
    assert len(graded) == 3
    for result in graded:
        score = by_id[result["task_id"]]
        assert result["reward"] == score.value == 1.0
        assert [r["met"] for r in result["rubrics"]] == [
            r["met"] for r in score.metadata["rubrics"]]
