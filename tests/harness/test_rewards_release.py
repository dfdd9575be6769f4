"""The `release` composite reward against the released function's rules.

Every expected value is worked out by hand from RolandXMR/verl@8068d50c
`EnvFactory/reward/tool_reward_fcn.py` as written (notes/envfactory.md §16): its
`_check_value_match` (`==`, then `math.isclose(rel_tol=1e-6)` for two numbers), the greedy
first-unused match in gold order (`_compute_trace_score`), R_state over the gold's servers
that have a gold final state (`_compute_state_score`), P_length only when both lists are
non-empty, P_format 0.05 a block, R = max(0, τ·R_traj + (1−τ)·R_state − P_length − P_format).
Each case that the `strict` variant scores differently says what strict gives, so the
difference classes of issue 26 (extra calls, bool/int, shuffled calls, wrong arguments,
empty gold, numeric tolerance, masked arguments) are each pinned on both sides.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from harness.rewards import (
    RewardBreakdown,
    RewardSettings,
    composite_reward,
    opened_states,
    release_r_state,
    release_r_traj,
    release_values_match,
)
from harness.trajectory import Call

RELEASE = RewardSettings()
STRICT = RewardSettings(variant="strict")
States = dict[str, Any]
BEFORE: States = {"bank": {"b": 10}}
AFTER: States = {"bank": {"b": 5}}


def c(name: str, env: str = "bank", masked: list[str] | None = None, **arguments: object) -> Call:
    return Call(env=env, name=name, arguments=dict(arguments), masked_arguments=masked or [])


def both(gold: list[Call], solution: list[Call], agent_final: States,
         initial: States | None = None, gold_final: States | None = None,
         ) -> tuple[RewardBreakdown, RewardBreakdown]:
    """(release, strict) on one episode (states default to the bank's 10 -> 5)."""
    release, strict = (composite_reward(gold, solution, initial or BEFORE,
                                        gold_final or AFTER, agent_final, settings=s)
                       for s in (RELEASE, STRICT))
    return release, strict


def parts(r: RewardBreakdown) -> tuple[float, float, float, float, float]:
    return (r.reward, r.r_traj, r.r_state, r.p_length, r.p_format)


def test_settings_default_to_the_release_and_are_recorded() -> None:
    assert RELEASE.model_dump() == {"variant": "release", "alpha": 0.5, "gamma": 0.05}
    assert RELEASE.label() == "release α=0.5 γ=0.05"
    r = composite_reward([c("pay")], [c("pay")], BEFORE, AFTER, AFTER, settings=RELEASE)
    assert (r.variant, r.alpha, r.gamma) == ("release", 0.5, 0.05)
    with pytest.raises(ValidationError):
        RewardSettings(variant="paper")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        RewardSettings(alpha=1.5)


def test_value_match_is_equality_then_number_tolerance() -> None:
    assert release_values_match(True, 1) and release_values_match(1, True)  # True == 1
    assert release_values_match(1, 1.0)
    # |100 - 100.00005| = 5e-5 <= 1e-6 * 100.00005: within tolerance
    assert release_values_match(100.0, 100.00005)
    # 2e-4 > 1e-6 * 100.0002
    assert not release_values_match(100.0, 100.0002)
    # bools are ints in isclose: |1 - 1.0000001| = 1e-7 <= 1e-6
    assert release_values_match(True, 1.0000001)
    assert not release_values_match("5", 5)
    # containers: plain == (no tolerance inside), which still equates 1 and True
    assert not release_values_match([1.0], [1.0000001])
    assert release_values_match({"a": [1, True]}, {"a": [1.0, 1]})


def test_extra_calls() -> None:
    gold = [c("transfer", amount=5)]
    sol = [*gold, c("get"), c("get"), c("get")]
    # both: 0.5*1 + 0.5*1 - 0.05*3 = 0.85
    release, strict = both(gold, sol, AFTER)
    assert parts(release) == pytest.approx((0.85, 1, 1, 0.15, 0))
    assert parts(strict) == pytest.approx((0.85, 1, 1, 0.15, 0))
    # γ = 0.1: 1 - 0.1*3 = 0.7; the cap: γ = 1 -> min(3, 0.5) -> 0.5
    r = composite_reward(gold, sol, BEFORE, AFTER, AFTER, settings=RewardSettings(gamma=0.1))
    assert (r.p_length, r.reward) == pytest.approx((0.3, 0.7))
    r = composite_reward(gold, sol, BEFORE, AFTER, AFTER, settings=RewardSettings(gamma=1))
    assert (r.p_length, r.reward) == (0.5, 0.5)
    # a call the environment rejected still matches in the release (it never looks):
    # R_traj 1, R_state 0 (nothing changed) -> 0.5; strict: the rejected call matches
    # nothing -> 0
    rejected = gold[0].model_copy(update={"ok": False})
    release, strict = both(gold, [rejected], BEFORE)
    assert parts(release) == (0.5, 1, 0, 0, 0)
    assert parts(strict) == (0, 0, 0, 0, 0)


def test_bool_and_int() -> None:
    gold = [c("set", flag=True, n=1)]
    sol = [c("set", flag=1, n=True)]
    # release: True == 1 and 1 == True -> R_traj 1; R = 0.5 + 0.5 = 1
    release, strict = both(gold, sol, AFTER)
    assert parts(release) == (1, 1, 1, 0, 0)
    # strict: bools are not numbers -> R_traj 0; R = 0.5*1 = 0.5
    assert parts(strict) == (0.5, 0, 1, 0, 0)


def test_shuffled_calls() -> None:
    a, b = c("get", id="1"), c("get", id="2")
    assert release_r_traj([a, b], [b, a]) == 1.0  # order does not matter
    assert release_r_traj([a, a], [a]) == 0.0  # one solution call serves one gold call
    # greedy in gold order: the masked gold call takes sol[0] (id 1, first unused and it
    # matches anything); then gold `a` (id 1) finds only sol[1] (id 2) -> R_traj 0
    loose = c("get", masked=["id"], id="?")
    release, strict = both([loose, a], [a, b], AFTER)
    assert parts(release) == (0.5, 0, 1, 0, 0)  # 0.5*0 + 0.5*1
    assert parts(strict) == (1, 1, 1, 0, 0)  # the matching pairs loose with b
    # listed the other way round the greedy pass finds it: a -> sol[0], loose -> sol[1]
    assert release_r_traj([a, loose], [a, b]) == 1.0


def test_wrong_arguments() -> None:
    gold = [c("transfer", amount=5, to="x")]
    # a wrong value, a missing argument: no match in either (R = 0.5*0 + 0.5*0)
    for sol in ([c("transfer", amount=5, to="y")], [c("transfer", amount=5)]):
        release, strict = both(gold, sol, BEFORE)
        assert parts(release) == parts(strict) == (0, 0, 0, 0, 0)
    # an extra argument is allowed in both: 1
    release, strict = both(gold, [c("transfer", amount=5, to="x", memo="m")], AFTER)
    assert release.reward == strict.reward == 1
    # another environment's tool of the same name does not match
    assert release_r_traj(gold, [c("transfer", env="cal", amount=5, to="x")]) == 0.0
    # a nested number is compared with == in the release: [5.0000001] != [5] -> 0.5;
    # strict compares element-wise within 1e-6 -> 1
    release, strict = both([c("split", parts=[5])], [c("split", parts=[5.0000001])], AFTER)
    assert (release.reward, strict.reward) == (0.5, 1)


def test_empty_gold() -> None:
    # no solution: R_traj 0 (checked before the empty gold), no server -> R_state 0: 0
    # strict: nothing to match and nothing changed -> 1
    release, strict = both([], [], BEFORE, gold_final=BEFORE)
    assert parts(release) == (0, 0, 0, 0, 0)
    assert parts(strict) == (1, 1, 1, 0, 0)
    # one read: R_traj 1, no server -> R_state 0, no P_length (gold empty): 0.5
    # strict: R_state = R_traj = 1, P_length 0.05 -> 0.95
    release, strict = both([], [c("get")], BEFORE, gold_final=BEFORE)
    assert parts(release) == (0.5, 1, 0, 0, 0)
    assert parts(strict) == pytest.approx((0.95, 1, 1, 0.05, 0))
    # a destructive call costs nothing extra in the release: still 0.5 (strict 0.45)
    release, strict = both([], [c("withdraw", amount=10)], {"bank": {"b": 0}},
                           gold_final=BEFORE)
    assert (release.reward, strict.reward) == pytest.approx((0.5, 0.45))


def test_numeric_tolerance() -> None:
    gold = [c("transfer", amount=100.0)]
    # 100.00005 is within 1e-6 relative: both 1
    release, strict = both(gold, [c("transfer", amount=100.00005)], AFTER)
    assert release.reward == strict.reward == 1
    # 100.0002 is not: both 0.5*0 + 0.5*1 = 0.5
    release, strict = both(gold, [c("transfer", amount=100.0002)], AFTER)
    assert release.reward == strict.reward == 0.5
    # an int gold and a float solution: 1 == 1.0
    assert release_r_traj([c("f", n=1)], [c("f", n=1.0)]) == 1.0


def test_masked_arguments() -> None:
    gold = [c("transfer", amount=5, memo="rent", masked=["memo"])]
    # a masked argument may differ or be absent: 1 in both
    for sol in ([c("transfer", amount=5, memo="other")], [c("transfer", amount=5)]):
        release, strict = both(gold, sol, AFTER)
        assert release.reward == strict.reward == 1
    # the unmasked one still counts: 0.5*0 + 0.5*1
    release, _ = both(gold, [c("transfer", amount=6, memo="rent")], AFTER)
    assert release.reward == 0.5


def test_state_counts_only_the_gold_servers_that_have_a_gold_state() -> None:
    initial: States = {"bank": {"b": 10}, "cal": {"events": ["x"]}, "mail": {"inbox": [1]}}
    gold_final: States = {"bank": {"b": 5}, "cal": {"events": ["x"]}, "mail": {"inbox": [1]}}
    gold = [c("transfer", amount=5), c("list_events", env="cal")]
    # the agent also clears cal and wipes mail: the release compares bank and cal (the
    # gold's servers) -> 1/2; mail is not the gold's, so wiping it is free.
    # R = 0.5*1 + 0.5*0.5 - 0.05*2 = 0.65
    wrecked: States = {"bank": {"b": 5}, "cal": {"events": []}, "mail": {"inbox": []}}
    sol = [*gold, c("clear", env="cal"), c("wipe", env="mail")]
    r = composite_reward(gold, sol, initial, gold_final, wrecked, settings=RELEASE)
    assert parts(r) == pytest.approx((0.65, 1, 0.5, 0.1, 0))
    assert r.state_matches == {"bank": True, "cal": False}
    # the gold only reads cal and the agent does nothing, with a whole snapshot as the
    # agent's state: cal equals the gold's -> R_state 1/2, R = 0.25 (AWM's false positive)
    r = composite_reward(gold, [], initial, gold_final, initial, settings=RELEASE)
    assert parts(r) == (0.25, 0, 0.5, 0, 0)
    # what the release's rollout saves: only the servers the agent called
    assert opened_states(initial, []) == {}
    assert opened_states(wrecked, [c("x", env="cal")]) == {"cal": {"events": []}}
    assert release_r_state(gold, gold_final, opened_states(gold_final, gold[:1])) == (
        0.5, {"bank": True, "cal": False})  # cal never called: no state, a mismatch
    # a gold server without a gold final state does not count; none at all -> 0
    assert release_r_state(gold, {"bank": {"b": 5}}, {"bank": {"b": 5}}) == (
        1.0, {"bank": True})
    assert release_r_state(gold, {}, {"bank": {"b": 5}}) == (0.0, {})
    # ignore_paths are not the release's: a differing field is a mismatch -> 0.5*1 + 0
    r = composite_reward([gold[0]], [gold[0]], BEFORE, AFTER, {"bank": {"b": 5, "ts": 1}},
                         settings=RELEASE, ignore_paths={"bank": ["ts"]})
    assert (r.r_state, r.reward) == (0, 0.5)
    # a solution state received as a JSON string is parsed first
    assert release_r_state([gold[0]], AFTER, {"bank": '{"b": 5}'})[0] == 1.0


def test_format_penalty_alpha_and_floor() -> None:
    gold = [c("transfer", amount=5)]
    # 3 unparseable blocks: 1 - 0.15 = 0.85; 20 -> capped 0.5 -> 0.5
    r = composite_reward(gold, gold, BEFORE, AFTER, AFTER, settings=RELEASE,
                         unparseable_calls=3)
    assert (r.p_format, r.reward) == pytest.approx((0.15, 0.85))
    r = composite_reward(gold, gold, BEFORE, AFTER, AFTER, settings=RELEASE,
                         unparseable_calls=20)
    assert (r.p_format, r.reward) == (0.5, 0.5)
    # α = 0.3, a wrong amount but the right state: 0.3*0 + 0.7*1 = 0.7
    r = composite_reward(gold, [c("transfer", amount=6)], BEFORE, AFTER, AFTER,
                         settings=RewardSettings(alpha=0.3))
    assert r.reward == pytest.approx(0.7)
    # wrong call, wrong state, 15 extra and 20 bad blocks: max(0, 0 - 0.5 - 0.5) = 0
    sol = [c("transfer", amount=6)] * 16
    r = composite_reward(gold, sol, BEFORE, AFTER, BEFORE, settings=RELEASE,
                         unparseable_calls=20)
    assert parts(r) == (0, 0, 0, 0.5, 0.5)
