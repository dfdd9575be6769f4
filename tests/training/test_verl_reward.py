"""verl's side of GRPO without verl: the rollout sessions and `compute_score`.

An oracle rollout (the gold calls, run through the same session the verl tools use) scores
1 on every shipped training row in both variants; a model that calls nothing, a wrong
argument, an extra unknown call and a malformed block each lose exactly what the reward's
rules say (R = 0.5·R_traj + 0.5·R_state − 0.05·extra − 0.05·malformed, by hand). The
release variant (the default, what the paper preset passes) reads the calls from the text
as the release's `extract_tool_calls` does and the state of the environments called.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.trajectory import read_jsonl
from tasks.envfactory.envfactory import DATA_DIR
from training.rl_export import rl_rows
from training.verl.reward import compute_score, parse_tool_calls, release_tool_calls
from training.verl.session import CALLS_KEY, STATE_KEY, RolloutSessions

ROWS = [row for traj in read_jsonl(DATA_DIR / "train.jsonl") for row in rl_rows(traj, "train")]


def block(name: str, arguments: dict[str, Any]) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def rollout(row: dict[str, Any], calls: list[dict[str, Any]],
            sessions: RolloutSessions | None = None, request_id: str = "r1",
            extra_text: str = "", **reward_kwargs: Any) -> dict[str, Any]:
    """What verl's tool loop would do with a model that writes `calls` in order."""
    sessions = sessions or RolloutSessions()
    info = dict(row["extra_info"])
    fields: dict[str, Any] = {}
    for c in calls:
        if c["name"] in info["tool_selection"]:  # verl answers unknown names itself
            sessions.call(request_id, c["name"], c["arguments"], info["tools_kwargs"], fields)
    text = "\n".join(block(c["name"], c["arguments"]) for c in calls) + extra_text
    return compute_score(row["data_source"], text, row["reward_model"]["ground_truth"],
                         {**info, **fields}, **reward_kwargs)


def gold(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": g["name"], "arguments": g["arguments"]}
            for g in json.loads(row["reward_model"]["ground_truth"])]


@pytest.mark.parametrize("variant", ["release", "strict"])
def test_the_oracle_scores_one_on_every_shipped_training_row(variant: str) -> None:
    assert len(ROWS) == 258
    scores = [rollout(row, gold(row), variant=variant)["score"] for row in ROWS]
    assert scores == [1.0] * len(ROWS)


def write_row() -> dict[str, Any]:
    return next(r for r in ROWS if any(
        g["name"] == "bank_ledger-add_payee" for g in gold(r)))


@pytest.mark.parametrize("variant", ["release", "strict"])
def test_calling_nothing_earns_nothing_on_a_write_turn(variant: str) -> None:
    out = rollout(write_row(), [], variant=variant)
    assert (out["r_traj"], out["r_state"], out["score"]) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("variant", ["release", "strict"])
def test_a_wrong_argument_loses_trajectory_and_state(variant: str) -> None:
    calls = gold(write_row())
    payee = next(c for c in calls if c["name"] == "bank_ledger-add_payee")
    payee["arguments"] = {**payee["arguments"], "name": "Someone Else"}
    out = rollout(write_row(), calls, variant=variant)
    assert (out["r_traj"], out["r_state"], out["score"]) == (0.0, 0.0, 0.0)


def test_extra_unknown_call_and_malformed_block_are_penalised() -> None:
    calls = [*gold(write_row()), {"name": "nowhere-do", "arguments": {}}]
    bad = "<tool_call>{not json}</tool_call>"
    # strict: 0.5*1 + 0.5*1 - 0.05 (one extra) - 0.05 (one malformed) = 0.9
    out = rollout(write_row(), calls, extra_text=bad, variant="strict")
    assert (out["r_traj"], out["r_state"], out["p_length"], out["p_format"]) == (
        1.0, 1.0, 0.05, 0.05)
    assert out["score"] == pytest.approx(0.9)
    # release: the same (the block has the braces its pattern needs)
    out = rollout(write_row(), calls, extra_text=bad)
    assert (out["r_traj"], out["r_state"], out["p_length"], out["p_format"]) == (
        1.0, 1.0, 0.05, 0.05)
    # a block without a closing brace is no block at all to the release: 1 - 0.05
    out = rollout(write_row(), calls, extra_text="<tool_call>{not json</tool_call>")
    assert (out["p_format"], out["score"]) == (0.0, pytest.approx(0.95))


def read_row() -> dict[str, Any]:
    """A turn whose gold calls change nothing."""
    return next(r for r in ROWS if r["extra_info"]["gold_final_state"]
                == r["extra_info"]["tools_kwargs"]["envfactory"]["start_state"])


def test_the_release_scores_written_calls_and_the_environments_called() -> None:
    row = read_row()
    # strict: nobody changed anything, so R_state is R_traj = 0
    out = rollout(row, [], variant="strict")
    assert (out["r_traj"], out["r_state"], out["score"]) == (0.0, 0.0, 0.0)
    # release: nothing called, nothing saved: the gold's servers mismatch -> 0
    out = rollout(row, [])
    assert (out["r_traj"], out["r_state"], out["score"]) == (0.0, 0.0, 0.0)
    # the gold calls written once more after the oracle ran them: the second copies
    # never run (the text is what the release reads): R_traj 1, R_state 1, P_length
    # 0.05 per extra copy
    calls = gold(row)
    out = rollout(row, calls, extra_text="\n".join(block(c["name"], c["arguments"])
                                                   for c in calls))
    assert out["p_length"] == pytest.approx(min(0.05 * len(calls), 0.5))
    assert out["score"] == pytest.approx(1 - min(0.05 * len(calls), 0.5))


def test_release_tool_calls_follows_the_release_pattern() -> None:
    assert release_tool_calls(block("x-a", {"k": 1})) == ([{"name": "x-a",
                                                            "arguments": {"k": 1}}], 0)
    assert release_tool_calls("<tool_call>not json</tool_call>") == ([], 0)  # no braces
    assert release_tool_calls('<tool_call>{"name": "x-a"}</tool_call>') == ([], 1)
    assert release_tool_calls("<tool_call>{bad}</tool_call>") == ([], 1)
    # an unclosed `{` runs on to the next block's closing brace: one failed block
    assert release_tool_calls("<tool_call>{oops</tool_call>\n" + block("x-b", {})) == ([], 1)
    # arguments of any JSON type are taken as written
    assert release_tool_calls('<tool_call>{"name": "x-a", "arguments": "s"}</tool_call>'
                              ) == ([{"name": "x-a", "arguments": "s"}], 0)


def test_an_evicted_world_is_rebuilt_from_the_recorded_state() -> None:
    row = write_row()
    calls = gold(row)
    small = RolloutSessions(max_worlds=1)
    info = dict(row["extra_info"])
    a: dict[str, Any] = {}
    b: dict[str, Any] = {}
    for c in calls:  # two trajectories interleaved: each call evicts the other's world
        small.call("a", c["name"], c["arguments"], info["tools_kwargs"], a)
        small.call("b", c["name"], c["arguments"], info["tools_kwargs"], b)
    fresh: dict[str, Any] = {}
    for c in calls:
        RolloutSessions().call("c", c["name"], c["arguments"], info["tools_kwargs"], fresh)
    assert a[STATE_KEY] == b[STATE_KEY] == fresh[STATE_KEY]
    assert [c["ok"] for c in a[CALLS_KEY]] == [True] * len(calls)


def test_parse_tool_calls_counts_malformed_blocks() -> None:
    text = (block("x-a", {"k": 1}) + "<tool_call>[1, 2]</tool_call>"
            + "<tool_call>{oops</tool_call>" + block("x-b", {}))
    assert parse_tool_calls(text) == ([{"name": "x-a", "arguments": {"k": 1}},
                                       {"name": "x-b", "arguments": {}}], 2)
