"""The `strict` composite reward: hand-computed examples for every term (the release's
variant: test_rewards_release.py)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.rewards import (
    RewardBreakdown,
    RewardSettings,
    calls_match,
    composite_reward,
    r_state,
    r_traj,
    strip_paths,
)
from harness.trajectory import Call

STRICT = RewardSettings(variant="strict")


def strict(*args: object, settings: RewardSettings = STRICT, **kwargs: object) -> RewardBreakdown:
    return composite_reward(*args, settings=settings, **kwargs)  # type: ignore[arg-type]


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
    state: dict[str, Any] = {
        "msgs": {"m1": {"body": "x", "to": "a"}, "m2": {"body": "y", "to": "b"}},
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
    r = strict(gold, gold, initial, final, final)
    assert (r.reward, r.r_traj, r.r_state, r.p_length, r.p_format) == (1.0, 1.0, 1.0, 0.0, 0.0)
    # right state, wrong trajectory (missing the read), 3 extra calls: 0.5*0 + 0.5*1 - 0.0
    sol = [c("transfer", amount=5)] + [c("noop")] * 2
    r = strict(gold, sol, initial, final, final)
    assert r.r_traj == 0.0 and r.p_length == pytest.approx(0.05) and r.reward == pytest.approx(0.45)
    # right calls plus 4 extra, wrong state, 2 unparseable: 0.5 - 0.2 - 0.1 = 0.2
    sol = gold + [c("noop")] * 4
    r = strict(gold, sol, initial, final, {"bank": {"b": 0}}, unparseable_calls=2)
    assert r.reward == pytest.approx(0.5 - 0.2 - 0.1)
    # penalties cap at 0.5 each and the reward floors at 0
    sol = gold + [c("noop")] * 40
    r = strict(gold, sol, initial, final, final, unparseable_calls=40)
    assert r.p_length == 0.5 and r.p_format == 0.5 and r.reward == 0.0
    # skipping the last turn: no calls at all
    r = strict(gold, [], initial, final, initial)
    assert r.reward == 0.0 and r.p_length == 0.0


def test_alpha_is_configurable() -> None:
    gold = [c("transfer", amount=5)]
    initial, final = {"bank": {"b": 10}}, {"bank": {"b": 5}}
    r = strict(gold, [c("transfer", amount=6)], initial, final, final,
                         settings=RewardSettings(variant="strict", alpha=0.8))
    assert r.reward == pytest.approx(0.2)


def rejected(call: Call) -> Call:
    """`call` as the environment answered it: rejected (bad arguments, a failed check)."""
    return call.model_copy(update={"ok": False})


def test_empty_gold_is_not_a_free_pass() -> None:
    world = {"bank": {"b": 10}}
    # doing nothing is exactly right: R_traj 1 (nothing to match), R_state = R_traj
    assert strict([], [], world, world, world).reward == 1.0
    # one destructive call: R_traj 1, R_state 0 (bank changed, the gold left it), one
    # extra call -> 0.5*1 + 0.5*0 - 0.05 (before the fix: 1.0)
    r = strict([], [c("withdraw", amount=10)], world, world, {"bank": {"b": 0}})
    assert (r.r_traj, r.r_state) == (1.0, 0.0)
    assert r.p_length == pytest.approx(0.05) and r.reward == pytest.approx(0.45)
    assert r.state_matches == {"bank": False}
    # two harmless reads are two extra calls: 1 - 0.1 (before the fix: 1.0)
    r = strict([], [c("get"), c("get")], world, world, world)
    assert r.r_state == 1.0 and r.reward == pytest.approx(0.9)


def test_damage_outside_the_gold_written_environments_costs_state() -> None:
    initial = {"bank": {"b": 10}, "cal": {"events": ["x"]}, "mail": {"inbox": [1]}}
    gold_final = {"bank": {"b": 5}, "cal": {"events": ["x"]}, "mail": {"inbox": [1]}}
    gold = [c("transfer", amount=5), c("list_events", env="cal")]
    # the gold only reads cal; the agent also clears it: bank right, cal wrong -> R_state 1/2,
    # so 0.5*1 + 0.5*0.5 - 0.05 (before the fix: 0.95)
    wrecked_cal = {**gold_final, "cal": {"events": []}}
    r = strict(gold, [*gold, c("clear", env="cal")], initial, gold_final, wrecked_cal)
    assert r.r_traj == 1.0 and r.r_state == 0.5 and r.reward == pytest.approx(0.70)
    assert r.state_matches == {"bank": True, "cal": False}
    # mail is in the episode but no gold call names it: wiping it costs the same
    wiped_mail = {**gold_final, "mail": {"inbox": []}}
    r = strict(gold, [*gold, c("wipe", env="mail")], initial, gold_final, wiped_mail)
    assert r.r_state == 0.5 and r.reward == pytest.approx(0.70)
    assert r.state_matches == {"bank": True, "mail": False}
    # a field the task declares irrelevant is not damage
    touched = {**gold_final, "cal": {"events": ["x"], "seen": True}}
    r = strict(gold, gold, initial, gold_final, touched,
                         ignore_paths={"cal": ["seen"]})
    assert r.r_state == 1.0 and r.reward == 1.0


def test_rejected_calls_do_not_match_gold_calls() -> None:
    pay = c("transfer", amount=5)
    assert r_traj([pay], [rejected(pay)]) == 0.0  # before the fix: 1.0
    assert r_traj([pay, pay], [rejected(pay), pay]) == 0.0  # before the fix: 1.0
    assert r_traj([pay], [pay.model_copy(update={"ok": True})]) == 1.0
    initial, final = {"bank": {"b": 10}}, {"bank": {"b": 5}}
    # rejected, so nothing changed either: 0 (before the fix: 0.5)
    assert strict([pay], [rejected(pay)], initial, final, initial).reward == 0.0
    # a retry that the environment accepted matches; the rejected try is an extra call
    r = strict([pay], [rejected(pay), pay], initial, final, final)
    assert r.r_traj == 1.0 and r.reward == pytest.approx(0.95)


def test_a_missing_state_is_an_error_not_a_match() -> None:
    s = {"bank": {"b": 1}}
    with pytest.raises(ValueError, match="'cal'"):
        strict([c("get", env="cal")], [], s, s, s)


def test_gamma_weighs_each_extra_call() -> None:
    gold = [c("transfer", amount=5)]
    initial, final = {"bank": {"b": 10}}, {"bank": {"b": 5}}
    sol = [*gold, c("get"), c("get")]
    # 0.5*1 + 0.5*1 - min(0.2*2, 0.5) = 0.6
    r = strict(gold, sol, initial, final, final,
               settings=RewardSettings(variant="strict", gamma=0.2))
    assert r.p_length == pytest.approx(0.4) and r.reward == pytest.approx(0.6)
    assert (r.variant, r.alpha, r.gamma) == ("strict", 0.5, 0.2)
    # the cap holds for any γ: 0.5*1 + 0.5*1 - 0.5
    r = strict(gold, sol, initial, final, final,
               settings=RewardSettings(variant="strict", gamma=1.0))
    assert r.p_length == 0.5 and r.reward == pytest.approx(0.5)
