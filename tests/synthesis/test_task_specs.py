"""The task validator rejects each kind of broken task and accepts a sound one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.trajectory import Call
from synthesis.task_specs import (
    PATTERNS,
    SpecTurn,
    TaskSpec,
    _mentions,
    build,
    check,
    load_specs,
    split_of,
)

LEDGER = "tests.envs.ledger:Ledger"


def spec(*turns: tuple[str, list[tuple[str, dict[str, object]]]]) -> TaskSpec:
    return TaskSpec(id="t", environments=[LEDGER], turns=[
        SpecTurn(user=user, gold_calls=[Call(env=LEDGER, name=n, arguments=a) for n, a in calls])
        for user, calls in turns])


SOUND = spec(
    ("Open an account for Ada with 500 cents.", [("open_account", {"owner": "Ada",
                                                                    "deposit": 500})]),
    ("Now one for Bob, and move 120 from her account to his.",
     [("open_account", {"owner": "Bob"}),
      ("transfer", {"source": "A1", "target": "A2", "amount": 120})]),
)


def test_sound_task_is_valid() -> None:
    # "A1"/"A2" are not in the user's words but come from earlier results
    assert check(build(SOUND, "heldout", {})) == []


def test_failing_gold_call_is_rejected_at_build() -> None:
    broken = spec(("Move 5 from A1 to A2.", [("transfer", {"source": "A1", "target": "A2",
                                                           "amount": 5})]),
                  ("Then check A1.", [("get_balance", {"account_id": "A1"})]))
    with pytest.raises(ValueError, match="gold call .*transfer failed"):
        build(broken, "heldout", {})


def test_write_turn_without_state_change_is_rejected() -> None:
    task = build(spec(("Open an account for Ada.", [("open_account", {"owner": "Ada"})]),
                      ("Tag A1 with nothing.", [("tag", {"account_id": "A1", "labels": []})])),
                 "heldout", {})
    assert check(task) == ["turn 1: has write calls but the gold state does not change"]


def test_hidden_knowledge_is_rejected() -> None:
    task = build(spec(("Open an account please.", [("open_account", {"owner": "Zed"})]),
                      ("What's the balance of A1?", [("get_balance", {"account_id": "A1"})])),
                 "heldout", {})
    (problem,) = check(task)
    assert "argument owner='Zed' is neither in the user's words" in problem


def test_drift_from_replay_is_rejected() -> None:
    task = build(SOUND, "heldout", {})
    assert task.final_state is not None
    task.final_state[LEDGER]["accounts"]["A1"]["balance"] = 1
    assert check(task) == ["recorded gold final state drifts from replay"]


@pytest.mark.parametrize("value, text, stated", [
    (1850, "the invoice is $1,850.00", True),
    (2, "with 20% off", False),
    (18.4, "lunch was 18.40", True),
    (15, "2.15 hours", False),
    ("Ada", "open one for ada", True),
    (["a", "b"], "tags a and b", True),
])
def test_mentions(value: object, text: str, stated: bool) -> None:
    assert _mentions(value, text) is stated


TASK_DIR = Path(__file__).parents[2] / "tasks" / "envfactory"


def test_shipped_specs_name_refinement_patterns_and_stay_in_one_split() -> None:
    """Every hand-written task names at least one of the four refinement patterns and
    only those, ids are unique, and no task mixes held-out and training environments."""
    specs = load_specs(sorted((TASK_DIR / "specs").glob("*.json")))
    splits = json.loads((TASK_DIR / "splits.json").read_text(encoding="utf-8"))
    assert len({s.id for s in specs}) == len(specs)
    for s in specs:
        assert s.patterns and set(s.patterns) <= set(PATTERNS), s.id
        split_of(s, splits)  # raises on a task that mixes splits
