"""τ² conversation rules on the wire, against what the official v0.2.0 CLI sends.

Expected values are from requests the official `tau2 run` (v0.2.0, default options,
`--seed 300`) sent to a recording OpenAI-compatible server, and from its source:
`run_tasks` seeds `random` with the run seed and draws `randint(0, 1000000)` once per
trial (trial 0: 626729, trial 1: 373753); every agent and user request carries
`temperature: 0.0` and that seed; the agent's first request is [system, user] (its
greeting is not in its history) while the user's is [system, user: greeting]; tool errors
are never counted (no TOO_MANY_ERRORS); a user message with a stop token and a tool call
runs the call and asks the user again; `validate()` fails a message with neither text
nor tool calls; limits are checked after every step, a pending tool call included.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.model import (
    get_model,
)

from harness.logs import trajectory_of
from tasks.tau2.tau2 import tau2_airline, tau2_telecom
from testkit.scripted import ScriptedModel, by_own_turns, call, constant, message
from tests.shared_data import needs_tau2

pytestmark = [needs_tau2, pytest.mark.usefixtures("use_tau2_data")]

GREETING = "Hi! How can I help you today?"
#: upstream's per-request seeds for trials 0 and 1 under `--seed 300` (recorded)
SEED_TRIAL_0, SEED_TRIAL_1 = 626729, 373753
TELECOM_TASK = "[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]"


#: a reply: text, or (text or None, [(tool, arguments)])
Entry = str | tuple[str | None, list[tuple[str, dict[str, Any]]]]


def scripted_turns(script: list[Entry]) -> ScriptedModel:
    """A speaker answering from a script: entry k is its reply to a request holding k of
    its own (assistant-role) messages."""
    return by_own_turns([entry if isinstance(entry, str) else
                         message(entry[0] or "", [call(n, a) for n, a in entry[1]])
                         for entry in script])


def seen(model: ScriptedModel) -> list[dict[str, Any]]:
    """What each request of `model` carried: roles, texts, temperature and seed."""
    return [{"roles": [m.role for m in r.messages], "texts": [m.text for m in r.messages],
             "temperature": r.config.temperature, "seed": r.config.seed}
            for r in model.requests]


def run(task: Any, agent: ScriptedModel, user: ScriptedModel, ids: list[str], log_dir: Path,
        **eval_args: Any) -> EvalLog:
    patterns = [re.sub(r"([\[\]*?])", r"[\1]", i) for i in ids]
    (log,) = inspect_eval(task, model=agent.model, model_roles={"user": user.model},
                          sample_id=patterns, log_dir=str(log_dir), display="none",
                          max_samples=1, **eval_args)
    assert log.status == "success", log.error
    return log


def only_sample(log: EvalLog) -> EvalSample:
    (sample,) = log.samples or []
    return sample


def score_of(sample: EvalSample) -> Any:
    return next(iter((sample.scores or {}).values()))


def test_first_requests_sampling_and_greeting_follow_upstream(tmp_path: Path) -> None:
    agent = scripted_turns(["Sure, let me help."])
    user = scripted_turns(["I want to change my flight.", "###STOP###"])
    log = run(tau2_airline(epochs=2), agent, user, ["0"], tmp_path)
    # the agent never sees its greeting; the user sees it as its first (user-role) input
    assert seen(agent)[0]["roles"] == ["system", "user"]
    assert seen(agent)[0]["texts"][1] == "I want to change my flight."
    assert seen(user)[0]["roles"] == ["system", "user"]
    assert seen(user)[0]["texts"][1] == GREETING
    assert seen(user)[1]["roles"] == ["system", "user", "assistant", "user"]
    # temperature 0.0 and the trial's seed on every request of both roles
    seeds = sorted({r["seed"] for r in seen(agent) + seen(user)})
    assert seeds == sorted([SEED_TRIAL_0, SEED_TRIAL_1])
    assert {r["temperature"] for r in seen(agent) + seen(user)} == {0.0}
    # recorded: task metadata, each sample's sampling; the greeting stays in the log
    assert log.eval.metadata and log.eval.metadata["seed"] == 300
    assert log.eval.metadata["temperature"] == 0.0 and log.eval.metadata["max_errors"] is None
    by_epoch = {s.epoch: s for s in log.samples or []}
    assert by_epoch[1].metadata["sampling"] == {
        "assistant": {"temperature": 0.0, "seed": SEED_TRIAL_0},
        "user": {"temperature": 0.0, "seed": SEED_TRIAL_0}}
    assert by_epoch[2].metadata["sampling"]["user"]["seed"] == SEED_TRIAL_1
    assert by_epoch[1].messages[1].text == GREETING
    assert trajectory_of(by_epoch[1]).messages[0].content == GREETING


def test_sampling_options_override_upstream_defaults(tmp_path: Path) -> None:
    # -T seed / -T temperature: upstream's --seed semantics (derived per trial)
    agent, user = scripted_turns(["Hello."]), scripted_turns(["###STOP###"])
    run(tau2_airline(seed=7, temperature=0.5), agent, user, ["0"], tmp_path / "t")
    derived = random.Random(7).randint(0, 1000000)
    assert {(r["temperature"], r["seed"]) for r in seen(agent) + seen(user)} == {
        (0.5, derived)}
    # Inspect's --temperature / --seed win over the task's defaults, for both roles
    agent, user = scripted_turns(["Hello."]), scripted_turns(["###STOP###"])
    run(tau2_airline(), agent, user, ["0"], tmp_path / "cli", temperature=0.2, seed=11)
    assert {(r["temperature"], r["seed"]) for r in seen(agent) + seen(user)} == {
        (0.2, 11)}


def storm(n: int) -> ScriptedModel:
    return scripted_turns(
        [(None, [("get_reservation_details", {"reservation_id": f"ZZZ{i:03d}"})])
         for i in range(n)] + ["None of those exist."])


def test_an_error_storm_does_not_end_the_conversation(tmp_path: Path) -> None:
    """12 failing calls: v0.2.0 never counts them; the conversation goes on."""
    user = scripted_turns(["Find my reservation.", "###STOP###"])
    sample = only_sample(run(tau2_airline(), storm(12), user, ["0"], tmp_path / "a"))
    score = score_of(sample)
    assert score.metadata["termination_reason"] == "user_stop"
    assert score.metadata["tool_errors"] == 12
    # -T max_errors=10 enforces the limit of later releases: ends there, reward 0
    user = scripted_turns(["Find my reservation.", "###STOP###"])
    sample = only_sample(run(tau2_airline(max_errors=10), storm(12), user, ["0"],
                             tmp_path / "b"))
    score = score_of(sample)
    assert score.metadata["termination_reason"] == "too_many_errors" and score.value == 0.0
    assert score.metadata["tool_errors"] == 10


def test_a_stop_token_with_a_tool_call_runs_the_call(tmp_path: Path) -> None:
    agent = scripted_turns(["Please turn airplane mode off.", "Is it working now?"])
    user = scripted_turns(["My data does not work.",
                           ("###STOP###", [("toggle_airplane_mode", {})]),
                           "Done, I toggled it.", "###STOP###"])
    sample = only_sample(run(tau2_telecom(), agent, user, [TELECOM_TASK], tmp_path))
    record = trajectory_of(sample).messages
    tool = [m for m in record if m.role == "tool"]
    assert len(tool) == 1 and tool[0].requestor == "user" and not tool[0].error
    # asked again after the call, with the result; then the plain stop ends the run
    assert seen(user)[2]["roles"][-2:] == ["assistant", "tool"]
    assert score_of(sample).metadata["termination_reason"] == "user_stop"
    assert record[-1].content == "###STOP###"


@pytest.mark.parametrize("side", ["assistant", "user"])
def test_an_empty_message_fails_the_simulation(side: str, tmp_path: Path) -> None:
    """v0.2.0's `validate()` raises: the simulation aborts and has no reward. Here the
    episode ends as agent_error / user_error and scores 0, saying so in the metadata."""
    agent = scripted_turns([""] if side == "assistant" else ["How can I help?"])
    user = scripted_turns(["Hello.", "###STOP###"] if side == "assistant" else [""])
    sample = only_sample(run(tau2_airline(), agent, user, ["0"], tmp_path))
    score = score_of(sample)
    reason = "agent_error" if side == "assistant" else "user_error"
    assert score.value == 0.0 and score.metadata["termination_reason"] == reason
    assert "records no reward" in score.metadata["simulation_failed"]
    assert f"empty {side} message" in score.metadata["detail"]
    assert len(seen(agent)) == (1 if side == "assistant" else 0)


def test_max_steps_is_checked_with_a_call_pending(tmp_path: Path) -> None:
    """Step 1 the user speaks, step 2 the agent calls a tool: at max_steps=2 v0.2.0 stops
    before the environment runs it."""
    agent = scripted_turns([(None, [("get_user_details", {"user_id": "mia_li_3668"})])])
    user = scripted_turns(["Look me up."])
    sample = only_sample(run(tau2_airline(max_steps=2), agent, user, ["0"], tmp_path))
    score = score_of(sample)
    assert score.metadata["termination_reason"] == "max_steps" and score.value == 0.0
    assert not [m for m in trajectory_of(sample).messages if m.role == "tool"]


def test_undecodable_arguments_fail_the_simulation(tmp_path: Path) -> None:
    """Upstream `json.loads` the raw arguments string and raises: the simulation fails."""
    from harness.episode import json_decode
    from harness.trajectory import Message, MessageCall

    def decoded(raw: str) -> str | None:
        call = MessageCall(id="1", name="get_user_details", arguments={"user_id": "x"},
                           raw_arguments=raw, requestor="assistant")
        return json_decode(Message(role="assistant", tool_calls=[call]))[0].parse_error

    assert decoded('{"user_id": "x"}') is None
    assert decoded("{user_id: x}") is not None  # YAML, which Inspect's own parse accepts
    assert decoded('["x"]') is not None and decoded("") is not None

    undecodable = constant([call("get_user_details", id="c1",
                                 parse_error="Expecting ',' delimiter: line 1 column 26 "
                                             "(char 25)")])
    user = scripted_turns(["Look me up.", "###STOP###"])
    (log,) = inspect_eval(tau2_airline(), model=undecodable,
                          model_roles={"user": user.model}, sample_id=["0"],
                          log_dir=str(tmp_path), display="none")
    sample = only_sample(log)
    assert sample.error is None, sample.error
    score = score_of(sample)
    assert score.value == 0.0 and score.metadata["termination_reason"] == "agent_error"
    assert "undecodable arguments" in score.metadata["detail"]
    assert not [m for m in trajectory_of(sample).messages if m.role == "tool"]


def test_wire_requests_equal_the_recorded_upstream_ones(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    """Stop-with-call in telecom through Inspect's `openai/` provider (chat completions)
    against a recording server. Expected: the bodies `tau2 run` v0.2.0 sent for the same
    script (recorded; ids renumbered; upstream's tool calls also carry a non-standard
    top-level `name`, which servers ignore)."""
    from testkit.recording_server import RecordingServer, Reply, ReplyCall

    task_id = "[mobile_data_issue]airplane_mode_on|bad_network_preference[PERSONA:Hard]"
    user_script = [Reply(content="Hello, I need some help."),
                   Reply(content="###STOP###", tool_calls=[ReplyCall(name="toggle_airplane_mode")]),
                   Reply(content="Done, airplane mode toggled."), Reply(content="###STOP###")]
    agent_script = [Reply(content="Please turn airplane mode off."),
                    Reply(content="Is it working now?")]

    def responder(api: str, body: Any) -> Reply:
        messages = body["messages"]
        own = sum(m["role"] == "assistant" for m in messages)
        script = agent_script if messages[0]["content"].startswith("<instructions>") \
            else user_script
        return script[min(own, len(script) - 1)]

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with RecordingServer(responder) as server:
        model = get_model("openai/gpt-4.1", base_url=server.url, responses_api=False,
                          memoize=False)
        (log,) = inspect_eval(tau2_telecom(), model=model, model_roles={"user": model},
                              sample_id=[re.sub(r"([\[\]*?])", r"[\1]", task_id)],
                              log_dir=str(tmp_path), display="none", max_retries=1)
    assert log.status == "success", log.error
    bodies = [r.body for r in server.requests]
    agent = [b for b in bodies if b["messages"][0]["content"].startswith("<instructions>")]
    user = [b for b in bodies if b not in agent]
    for body in bodies:
        assert (body["temperature"], body["seed"], body["tool_choice"]) == (0.0, SEED_TRIAL_0,
                                                                            "auto")
    assert [len(agent[0]["tools"]), len(user[0]["tools"])] == [13, 30]
    assert agent[0]["messages"][1:] == [{"role": "user", "content": "Hello, I need some help."}]
    assert agent[1]["messages"][1:] == [
        {"role": "user", "content": "Hello, I need some help."},
        {"role": "assistant", "content": "Please turn airplane mode off."},
        {"role": "user", "content": "Done, airplane mode toggled."}]
    third = user[2]["messages"][1:]
    call_id = third[3]["tool_calls"][0]["id"]
    assert third == [
        {"role": "user", "content": GREETING},
        {"role": "assistant", "content": "Hello, I need some help."},
        {"role": "user", "content": "Please turn airplane mode off."},
        {"role": "assistant", "content": "###STOP###", "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "toggle_airplane_mode", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": call_id,
         "content": "Airplane Mode is now OFF.\nStatus Bar: \U0001f4f6\u00b9 Poor | 2G | "
                    "\U0001f4f1 Data Enabled | \U0001f50b 80%"}]
    assert len(user) == 4 and len(agent) == 2
