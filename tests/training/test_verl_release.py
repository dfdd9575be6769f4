"""verl sessions on the EnvFactory release's environments: a trajectory's world built from
`release/Airline@scenario_002` (the release's Airline server at eff3b22 with its
checkpoint's second scenario), its calls under the release's own `Airline-<tool>` names,
scored by `compute_score`.

Gold states and answers come from the release's own code: the server file imported as a
plain module, its `api` (the `AirlineAPI` every MCP wrapper calls) loading the scenario,
running the calls and saving, as the release's rollout (`save_and_close_clients`) would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.shared_data import ENVFACTORY_RELEASE as RELEASE
from tests.shared_data import release_api
from training.verl.reward import compute_score
from training.verl.session import CALLS_KEY, STATE_KEY, RolloutSessions, row_tools_kwargs

SERVER = RELEASE / "envs" / "tools" / "Airline.py"
ENV = "release/Airline@scenario_002"
GOLD: list[dict[str, Any]] = [
    {"name": "Airline-get_reservation_details", "arguments": {"reservation_id": "RES_001"}},
    {"name": "Airline-cancel_reservation", "arguments": {"reservation_id": "RES_001"}}]

pytestmark = pytest.mark.skipif(not SERVER.is_file(),
                                reason=f"no EnvFactory release copy at {RELEASE}")


@pytest.fixture(autouse=True)
def _release_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVFACTORY_RELEASE_DIR", str(RELEASE))


def release_run(calls: list[dict[str, Any]]) -> tuple[dict[str, Any], list[Any],
                                                      dict[str, Any]]:
    """(start state, answers, final state) of `calls` on the release's own `api`."""
    api = release_api("Airline", "scenario_002")
    start = json.loads(json.dumps(api.save_scenario()))
    answers = [getattr(api, c["name"].removeprefix("Airline-"))(**c["arguments"])
               for c in calls]
    return start, answers, json.loads(json.dumps(api.save_scenario()))


def release_row() -> dict[str, Any]:
    """An RL row as `training.rl_export` writes one, on the release environment: its start
    state is the scenario's own (`row_tools_kwargs` without a state snapshots it)."""
    _, _, final = release_run(GOLD)
    return {"data_source": "envfactory", "reward_model": {"ground_truth": json.dumps(
                [{**g, "masked_arguments": []} for g in GOLD])},
            "extra_info": {"environments": [ENV], "tools_kwargs": row_tools_kwargs([ENV]),
                           "gold_final_state": json.dumps({ENV: final}),
                           "ignore_state_paths": "{}"}}


def rollout(row: dict[str, Any], calls: list[dict[str, Any]], sessions: RolloutSessions,
            request_id: str) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    """(texts the policy saw, extra fields, reward) of one trajectory playing `calls`."""
    info = row["extra_info"]
    fields: dict[str, Any] = {}
    texts = [sessions.call(request_id, c["name"], c["arguments"], info["tools_kwargs"],
                           fields) for c in calls]
    solution = "".join(f"<tool_call>\n{json.dumps(c)}\n</tool_call>" for c in calls)
    score = compute_score(row["data_source"], solution, row["reward_model"]["ground_truth"],
                          {**info, **fields})
    return texts, fields, score


def test_the_row_starts_from_the_scenario_loaded_by_the_server() -> None:
    start, _, _ = release_run([])
    row = release_row()
    assert json.loads(row["extra_info"]["tools_kwargs"]["envfactory"]["start_state"]) == {
        ENV: start}


def test_an_oracle_rollout_on_a_release_environment_scores_one() -> None:
    row = release_row()
    _, answers, final = release_run(GOLD)
    texts, fields, score = rollout(row, GOLD, RolloutSessions(), "oracle")
    assert [json.loads(t) for t in texts] == answers  # the release's own answers
    assert answers[1] == {"reservation_id": "RES_001", "status": "cancelled",
                          "refund_amount": 760.0}
    assert fields[STATE_KEY] == {ENV: final}
    assert [c["ok"] for c in fields[CALLS_KEY]] == [True, True]
    assert (score["score"], score["r_traj"], score["r_state"]) == (1.0, 1.0, 1.0)


def test_a_negative_rollout_scores_zero_and_trajectories_do_not_share_a_world() -> None:
    row = release_row()
    sessions = RolloutSessions()
    start, _, _ = release_run([])
    # interleaved: the oracle cancels in its world while the other one only reads
    _, oracle_fields, oracle = rollout(row, GOLD, sessions, "a")
    _, reader_fields, reader = rollout(row, GOLD[:1], sessions, "b")
    assert oracle["score"] == 1.0
    assert reader_fields[STATE_KEY] == {ENV: start}  # RES_001 still confirmed
    assert (reader["r_traj"], reader["r_state"], reader["score"]) == (0.0, 0.0, 0.0)
    _, _, nothing = rollout(row, [], sessions, "c")
    assert nothing["score"] == 0.0


def test_an_evicted_release_world_is_rebuilt_from_the_recorded_state() -> None:
    row = release_row()
    tools_kwargs = row["extra_info"]["tools_kwargs"]
    small = RolloutSessions(max_worlds=1)
    a: dict[str, Any] = {}
    b: dict[str, Any] = {}
    for call in GOLD:  # each call evicts the other trajectory's world
        small.call("a", call["name"], call["arguments"], tools_kwargs, a)
        small.call("b", call["name"], call["arguments"], tools_kwargs, b)
    _, _, final = release_run(GOLD)
    assert a[STATE_KEY] == b[STATE_KEY] == {ENV: final}


@pytest.mark.train
def test_verls_tool_object_runs_a_release_call() -> None:
    """`EnvTool` (what verl's tool loop instantiates from our tools YAML) on the release
    environment, with the trajectory's `AgentData` fields as verl passes them."""
    pytest.importorskip("verl")
    import asyncio
    from types import SimpleNamespace

    from training.verl import tools

    row = release_row()
    tool = tools.EnvTool({"function": {
        "name": GOLD[1]["name"], "description": "Cancel a reservation.",
        "parameters": {"type": "object", "properties": {"reservation_id": {"type": "string"}},
                       "required": ["reservation_id"]}}})
    agent = SimpleNamespace(request_id="verl-1", extra_fields={},
                            tools_kwargs=row["extra_info"]["tools_kwargs"])
    response, step_reward, _ = asyncio.run(tool.execute("i", GOLD[1]["arguments"],
                                                        agent_data=agent))
    assert json.loads(response.text)["status"] == "cancelled" and step_reward == 0.0
    assert agent.extra_fields[STATE_KEY][ENV]["reservations"]["RES_001"]["status"] == "cancelled"
    tools.SESSIONS.release("verl-1")


def test_a_row_naming_a_validation_error_scenario_is_refused(tmp_path: Path) -> None:
    """scenario_004 expects a validation error: no world starts from it."""
    with pytest.raises(KeyError, match="expects a validation error"):
        row_tools_kwargs(["release/Airline@scenario_004"])
