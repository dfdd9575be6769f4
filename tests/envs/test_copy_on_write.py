"""Copy-on-write state (`envs.base._Baseline`): what it may never change.

The fast path puts back only the top-level fields write tools touched since the
episode's start; these tests hold it to the whole-state paths it replaces. Expected
values come from the whole-state path (an instance whose state is exposed, which takes
it) or from JSON the test wrote by hand, never from the fast path itself.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from benchmarks.env_throughput import gold_calls
from envs.base import Environment, ToolError, tool
from envs.pool import pool_classes
from tests.envs.ledger import Ledger

SPECS = Path(__file__).resolve().parents[2] / "tasks" / "envfactory" / "specs"


class Clock(BaseModel):
    now: str = "2026-01-01T00:00"
    notes: list[str] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)


class Assigner(Environment):
    """Writes that assign a field without reading it, or reach the instance dict."""

    name = "test/assigner"
    State = Clock

    @tool(write=True)
    def set_now(self, value: str, fail: bool = False) -> str:
        """Set the clock.

        Args:
            value: The new time.
            fail: Raise after the assignment.
        """
        self.state.now = value
        if fail:
            raise ToolError("refused after the write")
        return value

    @tool(write=True)
    def note_via_dict(self, text: str, fail: bool = False) -> int:
        """Append a note through the instance dict.

        Args:
            text: The note.
            fail: Raise after the write.
        """
        notes = vars(self.state)["notes"]
        notes.append(text)
        if fail:
            raise ToolError("refused after the write")
        return len(notes)

    @tool(write=True)
    def count(self, key: str, fail: bool = False) -> int:
        """Count one more of key (writes two fields), optionally failing afterwards.

        Args:
            key: What to count.
            fail: Raise after both writes.
        """
        self.state.counts[key] = self.state.counts.get(key, 0) + 1
        self.state.notes.append(key)
        if fail:
            raise ToolError("refused after the write")
        return self.state.counts[key]


def fast(env: Environment) -> bool:
    """Whether `env` is on the copy-on-write path (baseline kept, state not exposed)."""
    return env._base is not None and env._base.tracked and not env._exposed


def test_a_write_keeps_a_tracked_baseline() -> None:
    env = Ledger()
    env.restore(env.snapshot())
    assert env._base is None  # nothing written yet: no copy taken
    env.call("open_account", {"owner": "ada"})
    assert fast(env)


def gold(name: str) -> list[tuple[str, dict[str, Any]]]:
    calls = gold_calls(SPECS).get(name, [])
    return [calls[i % len(calls)] for i in range(10)] if calls else []


@pytest.mark.parametrize("name", sorted(pool_classes()))
def test_pool_episodes_match_the_whole_state_path(name: str) -> None:
    """Three episodes (restore + the gold calls + snapshot) on one instance: every result
    and every snapshot equals an instance that takes the whole-state paths."""
    cls = pool_classes()[name]
    calls = gold(name)
    if not calls:
        pytest.skip(f"{name}: no gold calls")
    start = cls().snapshot()
    text = json.dumps(start)
    env, ref = cls(start), cls(start)
    for _ in range(3):
        env.restore(start)
        ref.restore(start)
        assert json.dumps(env.snapshot()) == text
        for tool_name, args in calls:
            _ = ref.state  # exposed: undo dumps, full restores
            got, want = env.call(tool_name, args), ref.call(tool_name, args)
            assert got == want
            assert env.snapshot() == ref.snapshot()
        assert fast(env) and not fast(ref)
        assert json.dumps(env.snapshot()) == json.dumps(ref.snapshot())
    assert json.dumps(start) == text  # restoring never wrote into the caller's snapshot


def test_a_snapshot_round_trips_exactly_after_writes() -> None:
    env = Ledger()
    start = env.snapshot()
    env.call("open_account", {"owner": "ada", "deposit": 5})
    mid = env.snapshot()
    env.restore(start)
    assert env.snapshot() == start == {"accounts": {}, "next_id": 1,
                                       "now": "2026-01-01T00:00:00"}
    env.restore(mid)
    assert env.snapshot() == mid
    env.restore(start)  # back to a baseline that is no longer the instance's own
    assert env.snapshot() == start


def test_mutating_a_snapshot_after_taking_it_changes_nothing_else() -> None:
    env = Ledger()
    env.call("open_account", {"owner": "ada", "deposit": 5})
    start = env.snapshot()
    env.restore(start)
    env.call("open_account", {"owner": "bob"})
    start["accounts"]["A1"]["balance"] = 999  # the caller's copy, edited afterwards
    start["accounts"]["A1"]["tags"].append("x")
    env.restore(start)  # not the baseline's bytes any more: validated as given
    assert env.snapshot()["accounts"] == {
        "A1": {"owner": "ada", "balance": 999, "tags": ["x"]}}
    later = env.snapshot()
    later["accounts"]["A1"]["balance"] = 1
    assert env.snapshot()["accounts"]["A1"]["balance"] == 999


def test_restore_twice_then_write_sees_no_earlier_write() -> None:
    env = Assigner()
    start = env.snapshot()
    for _ in range(3):
        env.restore(start)
        env.restore(start)
        assert env.call("count", {"key": "k"}).content == 1  # never 2: no shared dict
        assert env.call("note_via_dict", {"text": "t"}).content == 2
        assert env.snapshot() == {"now": "2026-01-01T00:00", "notes": ["k", "t"],
                                  "counts": {"k": 1}}
    env.restore(start)
    assert env.snapshot() == start


def test_the_restored_state_does_not_alias_the_callers_snapshot() -> None:
    env = Assigner()
    start = env.snapshot()
    env.call("count", {"key": "k"})
    env.restore(start)  # the fast path
    start["notes"].append("edited by the caller")
    start["counts"]["z"] = 5
    assert env.snapshot() == {"now": "2026-01-01T00:00", "notes": [], "counts": {}}


def test_two_instances_never_share_mutable_state() -> None:
    start = Assigner().snapshot()
    a, b = Assigner(start), Assigner(start)
    for env in (a, b):
        env.call("count", {"key": "x"})
        env.restore(start)
    a.call("count", {"key": "a"})
    a.call("set_now", {"value": "later"})
    assert b.snapshot() == start
    b.call("count", {"key": "b"})
    assert a.snapshot() == {"now": "later", "notes": ["a"], "counts": {"a": 1}}
    assert b.snapshot() == {"now": "2026-01-01T00:00", "notes": ["b"], "counts": {"b": 1}}


@pytest.mark.parametrize("call", [
    ("set_now", {"value": "x", "fail": True}),
    ("note_via_dict", {"text": "x", "fail": True}),
    ("count", {"key": "x", "fail": True}),
])
def test_a_failed_write_leaves_no_half_applied_change(call: tuple[str, dict[str, Any]]) -> None:
    env = Assigner()
    start = env.snapshot()
    env.call("count", {"key": "first"})  # a journaled write before the failure
    env.call("set_now", {"value": "t1"})
    before = env.snapshot()
    result = env.call(*call)
    assert not result.ok and result.error == "refused after the write"
    assert env.snapshot() == before
    env.restore(start)
    assert env.snapshot() == start
    assert fast(env)


def test_assignment_and_instance_dict_writes_are_put_back_on_restore() -> None:
    env = Assigner()
    start = env.snapshot()
    env.call("set_now", {"value": "later"})  # assigned, never read
    env.call("note_via_dict", {"text": "n"})  # through vars(state)
    env.restore(start)
    assert env.snapshot() == {"now": "2026-01-01T00:00", "notes": [], "counts": {}}


def test_outside_edits_take_the_whole_state_path() -> None:
    env = Ledger()
    start = env.snapshot()
    env.call("open_account", {"owner": "ada", "deposit": 5})
    env.restore(start)
    env.call("open_account", {"owner": "ada", "deposit": 5})
    held = env.state  # someone outside keeps a reference and edits through it
    held.next_id = 40
    held.accounts["A1"].balance = 7
    assert not fast(env)
    env.restore(start)
    assert env.snapshot() == start
    held.accounts.clear()  # the old reference is no longer the live state
    env.call("open_account", {"owner": "bob"})
    assert env.snapshot()["accounts"] == {"A1": {"owner": "bob", "balance": 0, "tags": []}}


def test_a_baseline_is_private_to_its_instance() -> None:
    env = Assigner()
    env.call("count", {"key": "k"})
    assert env._base is not None
    values = copy.deepcopy(env._base.values)
    for _ in range(2):
        env.restore(Assigner().snapshot())
        env.call("count", {"key": "k"})
        env.call("note_via_dict", {"text": "n"})
    assert env._base.values == values == {"now": "2026-01-01T00:00", "notes": [],
                                          "counts": {}}


def test_a_world_built_from_states_is_those_states() -> None:
    from envs.base import StateError
    from envs.world import World

    start = World(["bank_ledger", "calendar"]).snapshot()
    start["bank_ledger"]["now"] = "2026-03-10T09:00"
    world = World(["bank_ledger", "calendar"], start)
    assert world.snapshot() == start
    bad = {"bank_ledger": {**start["bank_ledger"], "unknown_field": 1}}
    with pytest.raises(StateError, match="unknown_field"):
        World(["bank_ledger"], bad)


def test_verl_sessions_record_the_worlds_state_after_every_call() -> None:
    """Whether or not a call re-dumps the world (`World.may_have_changed`), what the
    trajectory has recorded is the world's state after that call."""
    from envs.world import World
    from training.verl.session import STATE_KEY, RolloutSessions, row_tools_kwargs

    calls = [(f"bank_ledger-{n}", a) for n, a in gold("bank_ledger")]
    calls += [("bank_ledger-no_such_tool", {}), ("bank_ledger-transfer_funds", {"x": 1}),
              ("bank_ledger-freeze_account", {"account_id": "AC0000", "reason": "r"})]
    kwargs = row_tools_kwargs(["bank_ledger"])
    sessions, fields = RolloutSessions(), {}  # type: dict[str, Any]
    sessions_world: World | None = None
    skipped = 0
    for name, args in calls:
        before = fields.get(STATE_KEY)
        sessions.call("r1", name, args, kwargs, fields)
        sessions_world = sessions._worlds["r1"]
        skipped += fields[STATE_KEY] is before
        assert fields[STATE_KEY] == sessions_world.snapshot(), name
    assert skipped >= 3  # reads, an unknown tool and rejected calls kept the record
