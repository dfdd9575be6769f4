"""The composite reward: hand-computed examples for every term."""

from __future__ import annotations

import pytest

from harness.rewards import (
    RewardConfig,
    calls_match,
    composite_reward,
    r_state,
    r_traj,
    strip_paths,
)
from harness.trajectory import Call


def c(name: str, env: str = "bank", masked: list[str] | None = None, **arguments: object) -> Call:
    return Call(env=env, name=name, arguments=dict(arguments), masked_arguments=masked or [])


def test_calls_match_rules() -> None:
    gold = c("transfer", amount=10.0, note="rent", masked=["note"])
    assert calls_match(gold, c("transfer", amount=10.000001, note="x", extra=1))  # tol, mask, extra
    assert not calls_match(gold, c("transfer", amount=10.1))
    assert not calls_match(gold, c("transfer", note="rent"))  # missing argument
    assert not calls_match(gold, c("transfer", env="other", amount=10.0))
    assert not calls_match(c("f", flag=True), c("f", flag=1))  # bools are not numbers


def test_r_traj_is_one_to_one_and_order_insensitive() -> None:
    a, b = c("get", id="1"), c("get", id="2")
    assert r_traj([a, b], [b, a]) == 1.0
    assert r_traj([a, a], [a]) == 0.0  # two gold calls cannot share one solution call
    assert r_traj([a, a], [a, a, b]) == 1.0
    assert r_traj([], []) == 1.0 and r_traj([a], []) == 0.0
    # greedy would pair the loose gold call with the only exact match first
    loose = c("get", masked=["id"], id="?")
    assert r_traj([loose, a], [a, b]) == 1.0


def test_strip_paths_wildcards() -> None:
    state = {"msgs": {"m1": {"body": "x", "to": "a"}, "m2": {"body": "y", "to": "b"}},
             "log": [{"t": 1, "v": 2}, {"t": 3, "v": 4}]}
    assert strip_paths(state, ["msgs.*.body", "log.*.t"]) == {
        "msgs": {"m1": {"to": "a"}, "m2": {"to": "b"}}, "log": [{"v": 2}, {"v": 4}]}
    assert state["msgs"]["m1"]["body"] == "x"  # the input is not modified


def test_r_state_counts_only_changed_environments() -> None:
    initial = {"bank": {"x": 1}, "cal": {"y": 1}}
    gold = {"bank": {"x": 2}, "cal": {"y": 1}}  # cal is only read by the gold calls
    # the agent did nothing: no credit for the read-only environment (official code: 0.5)
    assert r_state(["bank", "cal"], initial, gold, initial)[0] == 0.0
    assert r_state(["bank", "cal"], initial, gold, gold)[0] == 1.0
    # an irrelevant field is ignored
    agent = {"bank": {"x": 2, "ts": 9}, "cal": {"y": 1}}
    gold_ts = {"bank": {"x": 2, "ts": 5}, "cal": {"y": 1}}
    assert r_state(["bank"], {"bank": {"x": 1, "ts": 0}}, gold_ts, agent,
                   {"bank": ["ts"]})[0] == 1.0


def test_r_state_read_only_task_never_passes_silently() -> None:
    s = {"bank": {"x": 1}}
    assert r_state(["bank"], s, s, s, traj_score=0.0)[0] == 0.0  # did nothing
    assert r_state(["bank"], s, s, s, traj_score=1.0)[0] == 1.0  # read what was asked
    assert r_state(["bank"], s, s, {"bank": {"x": 9}}, traj_score=1.0)[0] == 0.0  # wrote


def test_composite_hand_computed() -> None:
    gold = [c("transfer", amount=5), c("get", id="1")]
    initial, final = {"bank": {"b": 10}}, {"bank": {"b": 5}}
    # perfect
    r = composite_reward(gold, gold, initial, final, final)
    assert (r.reward, r.r_traj, r.r_state, r.p_length, r.p_format) == (1.0, 1.0, 1.0, 0.0, 0.0)
    # right state, wrong trajectory (missing the read), 3 extra calls: 0.5*0 + 0.5*1 - 0.0
    sol = [c("transfer", amount=5)] + [c("noop")] * 2
    r = composite_reward(gold, sol, initial, final, final)
    assert r.r_traj == 0.0 and r.p_length == pytest.approx(0.05) and r.reward == pytest.approx(0.45)
    # right calls plus 4 extra, wrong state, 2 unparseable: 0.5 - 0.2 - 0.1 = 0.2
    sol = gold + [c("noop")] * 4
    r = composite_reward(gold, sol, initial, final, {"bank": {"b": 0}}, unparseable_calls=2)
    assert r.reward == pytest.approx(0.5 - 0.2 - 0.1)
    # penalties cap at 0.5 each and the reward floors at 0
    sol = gold + [c("noop")] * 40
    r = composite_reward(gold, sol, initial, final, final, unparseable_calls=40)
    assert r.p_length == 0.5 and r.p_format == 0.5 and r.reward == 0.0
    # skipping the last turn: no calls at all
    r = composite_reward(gold, [], initial, final, initial)
    assert r.reward == 0.0 and r.p_length == 0.0


def test_alpha_is_configurable() -> None:
    gold = [c("transfer", amount=5)]
    initial, final = {"bank": {"b": 10}}, {"bank": {"b": 5}}
    r = composite_reward(gold, [c("transfer", amount=6)], initial, final, final,
                         config=RewardConfig(alpha=0.8))
    assert r.reward == pytest.approx(0.2)
