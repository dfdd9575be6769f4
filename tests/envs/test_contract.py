"""The environment contract: schemas from type hints, never-raise calls, atomic writes,
exact snapshot round-trips (property-based with hypothesis)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from envs.base import ToolResult
from tests.envs.ledger import Ledger


def seeded() -> Ledger:
    env = Ledger()
    env.call("open_account", {"owner": "ada", "deposit": 500})
    env.call("open_account", {"owner": "bob", "deposit": 100})
    return env


def test_schema_comes_from_type_hints_and_docstrings() -> None:
    specs = {s.name: s for s in Ledger.tool_specs()}
    assert set(specs) == {"get_balance", "open_account", "transfer", "tag"}
    transfer = specs["transfer"]
    assert transfer.write and not specs["get_balance"].write
    assert transfer.description == "Move money between two accounts."
    assert transfer.parameters["required"] == ["source", "target", "amount"]
    assert transfer.parameters["properties"]["amount"] == {
        "type": "integer", "description": "Amount in cents, positive."}
    assert "deposit" not in specs["open_account"].parameters["required"]
    assert specs["tag"].parameters["properties"]["labels"]["type"] == "array"


def test_success_and_business_rule_failure() -> None:
    env = seeded()
    assert env.call("transfer", {"source": "A1", "target": "A2", "amount": 50}) == ToolResult(
        ok=True, content={"A1": 450, "A2": 150})
    r = env.call("transfer", {"source": "A2", "target": "A1", "amount": 1000})
    assert not r.ok and r.error == "insufficient funds in A2"
    assert r.text() == "Error: insufficient funds in A2"


def test_bad_calls_name_the_problem() -> None:
    env = seeded()
    assert "Unknown tool 'nope'" in (env.call("nope", {}).error or "")
    missing = env.call("transfer", {"source": "A1"}).error or ""
    assert "missing required argument 'target'" in missing and "'transfer'" in missing
    assert "unexpected argument 'colour'" in (
        env.call("get_balance", {"account_id": "A1", "colour": 1}).error or "")
    assert "argument 'amount'" in (
        env.call("transfer", {"source": "A1", "target": "A2", "amount": "lots"}).error or "")
    assert "must be an object" in (env.call("get_balance", ["A1"]).error or "")  # type: ignore[arg-type]


def test_failed_writes_leave_state_unchanged() -> None:
    env = seeded()
    before = env.snapshot()
    # debits before failing: must be rolled back
    assert not env.call("transfer", {"source": "A2", "target": "A1", "amount": 101}).ok
    # KeyError after the debit (unknown target): rolled back, reported with its type
    r = env.call("transfer", {"source": "A1", "target": "ZZ", "amount": 5})
    assert not r.ok and "KeyError" in (r.error or "")
    # exception half-way through a loop of appends
    assert not env.call("tag", {"account_id": "A1", "labels": ["vip", ""]}).ok
    assert env.snapshot() == before


def test_instances_are_isolated() -> None:
    a, b = seeded(), seeded()
    a.call("open_account", {"owner": "cy"})
    assert "A3" in a.state.accounts and "A3" not in b.state.accounts  # type: ignore[attr-defined]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)
tool_names = st.sampled_from(["get_balance", "open_account", "transfer", "tag", "nope", ""])
arg_names = st.sampled_from(["account_id", "owner", "deposit", "source", "target", "amount",
                             "labels", "extra"])


@settings(max_examples=300, deadline=None)
@given(calls=st.lists(st.tuples(tool_names, st.dictionaries(arg_names, json_values, max_size=4)
                                | json_values), max_size=8))
def test_call_never_raises_and_rejected_calls_change_nothing(calls: list[tuple[str, Any]]) -> None:
    env = seeded()
    for name, arguments in calls:
        before = env.snapshot()
        result = env.call(name, arguments)
        assert isinstance(result, ToolResult)
        json.dumps(result.model_dump())  # results are plain JSON
        if not result.ok:
            assert result.error
            assert env.snapshot() == before


@settings(max_examples=200, deadline=None)
@given(ops=st.lists(st.tuples(st.sampled_from(["ada", "bob", "cy"]),
                              st.integers(min_value=0, max_value=10_000)), max_size=10),
       labels=st.lists(st.text(min_size=1, max_size=10), max_size=5))
def test_snapshot_round_trips_exactly(ops: list[tuple[str, int]], labels: list[str]) -> None:
    env = seeded()
    for owner, deposit in ops:
        env.call("open_account", {"owner": owner, "deposit": deposit})
    env.call("tag", {"account_id": "A1", "labels": labels})
    snap = env.snapshot()
    restored = Ledger()
    restored.restore(json.loads(json.dumps(snap)))
    assert restored.snapshot() == snap
    assert restored.state == env.state
    # and the restored world behaves identically
    call = {"source": "A1", "target": "A2", "amount": 7}
    assert restored.call("transfer", call) == env.call("transfer", call)
