"""τ² on Inspect: oracle, negative controls, termination rules, pass^k, and the grade CLI
agreeing with the Inspect scorer (one evaluator, two entry points)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.scorer import Score
from typer.testing import CliRunner

from envs.tau2 import data
from envs.tau2.tasks import Action, Task
from envs.tau2.world import Tau2World
from harness.gold import GoldMessage, Position
from harness.logs import trajectory_of
from harness.metrics import pass_hat_k
from harness.trajectory import Trajectory
from tasks.tau2.tau2 import tau2_airline, tau2_retail, tau2_telecom
from testkit.oracle import edited_oracle
from testkit.scripted import Request, by_own_turns, constant, scripted
from tests.shared_data import needs_tau2

pytestmark = [needs_tau2, pytest.mark.usefixtures("use_tau2_data")]

TASKS = {"airline": tau2_airline, "retail": tau2_retail, "telecom": tau2_telecom}


def run(domain: str, model: Any, user: Any, log_dir: Path, ids: list[str] | None = None,
        **task_args: Any) -> EvalLog:
    # Inspect matches sample ids as glob patterns: telecom ids contain brackets
    patterns = [re.sub(r"([\[\]*?])", r"[\1]", i) for i in ids] if ids else None
    (log,) = inspect_eval(TASKS[domain](**task_args), model=model, model_roles={"user": user},
                          sample_id=patterns, log_dir=str(log_dir), display="none",
                          max_samples=32)
    assert log.status == "success", log.error
    return log


def rewards(log: EvalLog) -> dict[str, float]:
    return {str(s.id): float(next(iter(s.scores.values())).value)  # type: ignore[arg-type]
            for s in log.samples or []}


def first_ids(domain: str, n: int) -> list[str]:
    return [t["id"] for t in data.load_tasks(domain)][:n]


def quick_user() -> Any:
    """States the scenario once, then stops the conversation."""
    return by_own_turns(["Here is my problem.", "###STOP###"]).model


def needs_change(domain: str, task: Task) -> bool:
    """Does the task's reward need the agent to change something?"""
    initial, gold = Tau2World(domain), Tau2World(domain)
    initial.initialize(task.initial_state)
    gold.initialize(task.initial_state)
    for action in (task.evaluation_criteria.actions or []) if task.evaluation_criteria else []:
        gold.execute(action.requestor, action.name, action.arguments)
    if gold.db_hashes() != initial.db_hashes():
        return True
    criteria = task.evaluation_criteria
    return bool(criteria and criteria.env_assertions and not all(
        initial.env(a.env_type).run_function(a.func_name, a.arguments) == a.assert_value
        for a in criteria.env_assertions))


@pytest.mark.parametrize("domain", list(TASKS))
def test_oracle_scores_one_on_a_sample(domain: str, tmp_path: Path) -> None:
    log = run(domain, "envfactory/oracle", "envfactory/oracle", tmp_path,
              first_ids(domain, 6))
    assert set(rewards(log).values()) == {1.0}
    assert log.eval.metadata and log.eval.metadata["tau2_release"] == "v0.2.0"
    sample = (log.samples or [])[0]
    assert sample.messages[1].text == "Hi! How can I help you today?"


@pytest.mark.slow
@pytest.mark.parametrize("domain", list(TASKS))
def test_oracle_scores_one_on_every_task(domain: str, tmp_path: Path) -> None:
    r = rewards(run(domain, "envfactory/oracle", "envfactory/oracle", tmp_path))
    assert len(r) == {"airline": 50, "retail": 114, "telecom": 114}[domain]
    assert {k: v for k, v in r.items() if v != 1.0} == {}


@pytest.mark.parametrize("domain", list(TASKS))
def test_chat_only_agent_fails_every_task_that_needs_a_change(domain: str,
                                                              tmp_path: Path) -> None:
    ids = first_ids(domain, 12)
    r = rewards(run(domain, constant("I'm sorry, I can only chat."), quick_user(), tmp_path,
                    ids))
    tasks = {t["id"]: Task.model_validate(t) for t in data.load_tasks(domain)}
    changing = [i for i in ids if needs_change(domain, tasks[i])]
    assert changing and all(r[i] == 0.0 for i in changing)


def test_one_wrong_write_argument_fails_the_db_check(tmp_path: Path) -> None:
    """The gold path with one cancellation reason swapped: the call succeeds, the DB
    differs, the reward is 0."""
    swap = {"no longer needed": "ordered by mistake", "ordered by mistake": "no longer needed"}

    def perturb(gold: GoldMessage, position: Position) -> GoldMessage:
        for call in gold.calls:
            if call.function == "cancel_pending_order":
                call.arguments["reason"] = swap[call.arguments["reason"]]
        return gold

    ids = [t["id"] for t in data.load_tasks("retail")
           if any(a["name"] == "cancel_pending_order"
                  for a in t["evaluation_criteria"]["actions"])][:6]
    log = run("retail", edited_oracle(perturb), "envfactory/oracle", tmp_path, ids)
    for sample in log.samples or []:
        score = next(iter(sample.scores.values()))
        assert score.value == 0.0 and score.metadata["db_match"] is False, sample.id


def test_max_steps_zeroes_the_reward(tmp_path: Path) -> None:
    long = [t["id"] for t in data.load_tasks("airline")
            if len(t["evaluation_criteria"]["actions"] or []) >= 3][:3]
    log = run("airline", "envfactory/oracle", "envfactory/oracle", tmp_path, long, max_steps=3)
    for sample in log.samples or []:
        score = next(iter(sample.scores.values()))
        assert score.value == 0.0 and score.metadata["termination_reason"] == "max_steps"


def test_pass_hat_k_is_the_official_formula() -> None:
    reduce = pass_hat_k()
    value = reduce([Score(value=v) for v in (1.0, 0.0, 1.0, 0.5)]).value
    assert value == {"pass^1": 0.5, "pass^2": pytest.approx(1 / 6), "pass^3": 0.0,
                     "pass^4": 0.0, "avg_reward": 0.625}


def test_action_matching_follows_upstream() -> None:
    action = Action(action_id="a", name="transfer_to_human_agents",
                    arguments={"summary": "x"}, compare_args=[])
    assert action.matches("transfer_to_human_agents", {"summary": "anything"})
    exact = Action(action_id="b", name="f", arguments={"x": 1, "y": 2})
    assert exact.matches("f", {"x": 1}) and not exact.matches("f", {"x": 1, "z": 3})
    assert not exact.matches("f", {"x": 2})


def test_grade_cli_agrees_with_the_inspect_scorer(tmp_path: Path) -> None:
    from envfactory.cli import app

    def perturb(gold: GoldMessage, position: Position) -> GoldMessage:
        for call in gold.calls:
            for key, value in call.arguments.items():
                if isinstance(value, str) and value.startswith("#W"):
                    call.arguments[key] = "#W0000000"
        return gold

    logs = [run("retail", model, "envfactory/oracle", tmp_path / str(i), first_ids("retail", 8))
            for i, model in enumerate(["envfactory/oracle", edited_oracle(perturb)])]
    records, expected = [], []
    for log in logs:
        for sample in log.samples or []:
            score = next(iter(sample.scores.values()))
            records.append(trajectory_of(sample).model_dump(mode="json"))
            expected.append(score.value)
    assert 0.0 in expected and 1.0 in expected
    path = tmp_path / "conversations.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = CliRunner().invoke(app, ["tau2", "grade", str(path)])
    assert result.exit_code == 0, result.output
    graded = [json.loads(line) for line in result.stdout.splitlines()]
    assert f"{len(expected)} graded ({len(expected)} new): {expected.count(1.0)} passed" in (
        result.stderr)
    assert [g["reward"] for g in graded] == expected
    assert [g["task_id"] for g in graded] == [r["id"] for r in records]
    assert all(Trajectory.model_validate(r).termination == "user_stop" for r in records)


def test_grade_cli_reports_bad_records(tmp_path: Path) -> None:
    from envfactory.cli import app

    path = tmp_path / "bad.jsonl"
    path.write_text('{"domain": "retail", "task_id": "nope", "termination_reason": '
                    '"user_stop", "messages": []}\n')
    result = CliRunner().invoke(app, ["tau2", "grade", str(path)])
    assert result.exit_code == 1 and "no task 'nope'" in result.output


@pytest.mark.parametrize("limit", [{"message_limit": 4}, {"token_limit": 6},
                                   {"time_limit": 1}])
def test_inspect_limits_leave_the_conversation_and_are_scored(limit: dict[str, int],
                                                              tmp_path: Path) -> None:
    """Any Inspect limit used to crash the scorer (`None is not a valid
    TerminationReason`); now the conversation so far is in the store, the reason is
    `limit` and the unfinished conversation scores 0, like MAX_STEPS."""
    import time

    def slow_user(request: Request) -> str:
        time.sleep(0.6)  # a blocking user: the time limit strikes mid-conversation
        return "Please help me with my booking."

    user = slow_user if "time_limit" in limit else "envfactory/oracle"
    ids = [t["id"] for t in data.load_tasks("airline")
           if len(t["evaluation_criteria"]["actions"] or []) >= 3][:1]
    (log,) = inspect_eval(tau2_airline(), model="envfactory/oracle",
                          model_roles={"user": scripted(user) if callable(user) else user},
                          sample_id=ids, log_dir=str(tmp_path), display="none", **limit)
    sample = (log.samples or [])[0]
    assert sample.error is None and sample.limit is not None
    score = next(iter(sample.scores.values()))
    assert score.value == 0.0 and score.metadata["termination_reason"] == "limit"
    record = trajectory_of(sample)
    assert record.termination == "limit" and record.messages
    assert record.messages[0].content == "Hi! How can I help you today?"


def test_calls_refused_for_parse_errors_are_not_replayed() -> None:
    """Live, a call whose arguments did not parse was refused; the reward used to replay
    it anyway (with `{}` arguments), which runs an argument-free phone action."""
    from harness.trajectory import Message, MessageCall
    from tasks._tau2.evaluator import _replay

    def replayed(parse_error: str | None) -> tuple[str, str | None]:
        world = Tau2World("telecom")
        call = MessageCall(id="1", name="toggle_airplane_mode", requestor="user",
                           parse_error=parse_error)
        _replay(world, [Message(role="user", tool_calls=[call], turn=0)])
        return world.db_hashes()

    untouched = Tau2World("telecom").db_hashes()
    assert replayed(None) != untouched  # the control: a call that ran changes the phone
    assert replayed("Expecting value: line 1 column 1 (char 0)") == untouched
