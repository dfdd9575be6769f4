"""The environment contract, for every environment kind: schemas from type hints,
never-raise calls, atomic writes, JSON results, exact snapshot round-trips.

One suite: the Ledger tests pin the base class's behaviour and the bugs it once had;
`test_contract_*` fuzz (hypothesis, strategies in tests/envs/fuzz.py) every kind: each
pool environment, the τ² toolkits (when the release data is present), BFCL backends
and an EnvFactory-format server. `FUZZ_SCALE=10` for a longer hunt.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, field_serializer

from envs.base import Environment, ErrorKind, StateError, ToolError, ToolResult, tool
from envs.bfcl.environment import BfclEnvironment
from envs.envfactory_format import EnvFactoryFormatEnvironment
from envs.pool import pool_classes
from envs.world import World
from tests.envs import fuzz
from tests.envs.ledger import Ledger
from tests.shared_data import HAVE_TAU2

ROOT = Path(__file__).resolve().parents[2]


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


# -- bugs the base class once had ------------------------------------------------------


class Counter(BaseModel):
    value: int = 0
    label: str = ""

    @field_serializer("label")
    def _label(self, label: str) -> str:
        if label == "unserializable":
            raise ValueError("cannot serialize this label")
        return label


class CounterState(BaseModel):
    counters: dict[str, Counter] = Field(default_factory=lambda: {"c": Counter()})
    by_number: dict[int, str] = Field(default_factory=dict)


class Counters(Environment):
    name = "test/counters"
    State = CounterState

    @tool(write=True)
    def set_raw(self, value: float) -> None:
        """Store a value without validation (a tool bug: a float in an int field)."""
        self.state.counters["c"].value = value  # type: ignore[assignment]

    @tool(write=True)
    def bump_then_fail(self) -> None:
        """Change the state, then fail."""
        self.state.counters["c"].value += 1
        self.state.by_number[7] = "seven"
        raise ToolError("refused after a change")

    @tool(write=True)
    def label(self, text: str) -> None:
        """Set the label."""
        self.state.counters["c"].label = text

    @tool(write=True)
    def number(self, key: int, text: str) -> None:
        """Name a number."""
        self.state.by_number[key] = text


@pytest.mark.parametrize("shared", [False, True], ids=["private", "shared"])
def test_rollback_after_an_invalid_write_does_not_raise(shared: bool) -> None:
    """Before: the undo dump was re-validated, so the float made the rollback raise
    ValidationError out of call()."""
    env = Counters()
    assert env.call("set_raw", {"value": 2.5}).ok
    if shared:
        _ = env.state
    result = env.call("bump_then_fail", {})
    assert result == ToolResult.failure(ErrorKind.REFUSED, "refused after a change")
    assert env._state.counters["c"].value == 2.5  # type: ignore[attr-defined]
    assert 7 not in env._state.by_number  # type: ignore[attr-defined]


def test_a_failing_undo_record_is_an_error_not_an_exception() -> None:
    """Before: the undo dump was taken outside the try, so its failure escaped call()."""
    env = Counters()
    _ = env.state  # shared: every write dumps the state first
    assert env.call("label", {"text": "unserializable"}).ok
    result = env.call("label", {"text": "fine"})
    assert not result.ok and "was not run" in (result.error or "")
    assert env._state.counters["c"].label == "unserializable"  # type: ignore[attr-defined]


def test_envfactory_format_snapshot_failure_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: envfactory_format's call() took its backup outside the try."""
    env = EnvFactoryFormatEnvironment(ROOT / "tests" / "data" / "envfactory_format" / "NotesAPI.py")
    monkeypatch.setattr(env.api, "save_scenario", lambda: ["not", "a", "dict"])
    result = env.call("create_note", {"title": "t"})
    assert not result.ok and "was not run" in (result.error or "")


def test_untyped_state_fields_are_refused() -> None:
    """Before: a `dict[Any, Any]` field came back with str keys after a round trip."""
    class Loose(BaseModel):
        data: dict[Any, Any] = Field(default_factory=dict)

    with pytest.raises(TypeError, match="field data is untyped"):
        type("LooseEnv", (Environment,), {"State": Loose, "name": "t/loose"})


def test_typed_int_keys_round_trip_exactly() -> None:
    env = Counters()
    assert env.call("number", {"key": 3, "text": "three"}).ok
    other = Counters()
    other.restore(json.loads(json.dumps(env.snapshot())))
    assert other._state == env._state and other.snapshot() == env.snapshot()
    assert list(other._state.by_number) == [3]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("change", "named"), [
    (lambda s: {"garbage": 1}, "unknown field 'garbage'"),
    (lambda s: s | {"next_id": "5"}, "field 'next_id': Input should be a valid integer"),
    (lambda s: s | {"next_id": 2.5}, "field 'next_id'"),
    (lambda s: {**s, "accounts": {"A1": {**s["accounts"]["A1"], "colour": "red"}}},
     "unknown field 'accounts.A1.colour'"),
    (lambda s: {**s, "accounts": {"A1": {"owner": "ada", "balance": True}}},
     "field 'accounts.A1.balance'"),
    (lambda s: {**s, "accounts": {"A1": {"balance": 5}}}, "missing field 'accounts.A1.owner'"),
    (lambda s: [s], "Input should be an object"),
    (lambda s: s | {"next_id": float("nan")}, "not JSON"),
])
def test_restore_refuses_what_is_not_a_state_and_names_the_field(change: Any,
                                                                 named: str) -> None:
    env = seeded()
    before = env.snapshot()
    with pytest.raises(StateError) as refused:
        env.restore(change(json.loads(json.dumps(before))))
    message = str(refused.value)
    assert message.startswith("Invalid state of test/ledger: ") and named in message
    assert "\n" not in message
    assert env.snapshot() == before  # a refused load changes nothing
    assert env.call("get_balance", {"account_id": "A1"}).content == 500
    with pytest.raises(StateError):
        Ledger(change(json.loads(json.dumps(before))))


def test_state_errors_list_a_few_problems_and_count_the_rest() -> None:
    junk = {f"field{i}": i for i in range(8)}
    with pytest.raises(StateError) as refused:
        Ledger().restore(junk)
    assert str(refused.value).count("unknown field") == 5
    assert str(refused.value).endswith("; and 3 more.")


def test_a_lone_surrogate_in_a_state_round_trips_and_unknown_fields_stay_refused() -> None:
    """pydantic's JSON parser refuses "\\ud800"; a model can still send one."""
    env = Ledger()
    assert env.call("open_account", {"owner": "a\ud800"}).ok
    other = Ledger()
    other.restore(json.loads(json.dumps(env.snapshot())))
    assert other.snapshot() == env.snapshot()
    with pytest.raises(StateError, match="unknown field 'extra'"):
        other.restore(env.snapshot() | {"extra": 1})


class _Lax(BaseModel):
    count: int = 0


def test_a_lax_state_loads_as_its_own_model_does() -> None:
    """`strict_state = False` (τ²: upstream's data as upstream's models load it): the
    State's own config decides; errors are still StateErrors naming the field."""
    lax = type("LaxEnv", (Environment,), {"State": _Lax, "name": "t/lax",
                                           "strict_state": False})
    env = lax()
    env.restore({"count": "5", "ignored": 1})
    assert env.snapshot() == {"count": 5}
    with pytest.raises(StateError, match="field 'count'"):
        env.restore({"count": "five"})
    assert env.snapshot() == {"count": 5}


def test_world_restore_is_all_or_none() -> None:
    world = World(envs={"a": seeded(), "b": seeded()})
    before = world.snapshot()
    changed = json.loads(json.dumps(before))
    changed["a"]["accounts"]["A1"]["balance"] = 1
    with pytest.raises(StateError, match="unknown field 'garbage'"):
        world.restore({"a": changed["a"], "b": {"garbage": 1}})
    assert world.snapshot() == before
    with pytest.raises(StateError, match="Unknown environment"):
        world.restore({"a": changed["a"], "nope": {}})
    assert world.snapshot() == before
    world.restore(changed)
    assert world.snapshot() == changed


def test_outside_edits_survive_a_rollback() -> None:
    """The journal (no undo copy per write) must not lose edits made through env.state."""
    env = seeded()
    assert env.call("open_account", {"owner": "cy"}).ok
    env.state.accounts["A1"].balance = 999  # type: ignore[attr-defined]
    before = env.snapshot()
    assert not env.call("transfer", {"source": "A1", "target": "ZZ", "amount": 5}).ok
    assert env.snapshot() == before
    # and after a restore the private (journal) path rolls back exactly too
    env.restore(before)
    assert env.call("open_account", {"owner": "dee"}).ok
    mid = env.snapshot()
    assert not env.call("transfer", {"source": "A1", "target": "ZZ", "amount": 5}).ok
    assert env.snapshot() == mid


def test_unknown_tool_errors_read_the_same_everywhere() -> None:
    envs: list[Environment] = [
        seeded(), BfclEnvironment("MathAPI"),
        EnvFactoryFormatEnvironment(ROOT / "tests" / "data" / "envfactory_format" / "NotesAPI.py")]
    for env in envs:
        names = ", ".join(sorted(s.name for s in env.tools()))
        assert env.call("nope", {}).error == f"Unknown tool 'nope'. Available tools: {names}."


# -- the contract, fuzzed over every environment kind -----------------------------------

NOTES = ROOT / "tests" / "data" / "envfactory_format" / "NotesAPI.py"
FS_SCENARIO = {"root": {"u": {"type": "directory", "contents": {
    "a.txt": {"type": "file", "content": "hello"}, "d": {"type": "directory", "contents": {}}}}}}

fuzz.FACTORIES.update({f"pool/{n}": cls for n, cls in pool_classes().items()})
fuzz.FACTORIES.update({
    "bfcl/GorillaFileSystem": lambda: BfclEnvironment("GorillaFileSystem", FS_SCENARIO),
    "bfcl/TradingBot": lambda: BfclEnvironment("TradingBot"),
    "envfactory/NotesAPI": lambda: EnvFactoryFormatEnvironment(NOTES),
})
TAU2 = ["tau2/airline", "tau2/retail", "tau2/telecom", "tau2/telecom_user"]
if HAVE_TAU2:
    from envs import registry

    fuzz.FACTORIES.update({n: (lambda n=n: registry.create(n)) for n in TAU2})
    pytestmark = pytest.mark.usefixtures("use_tau2_data")  # the factories read it

KINDS = sorted(fuzz.FACTORIES)
#: τ² databases are large (each checked call snapshots twice): fewer examples
WEIGHT = {n: 0.2 for n in TAU2}
PURE_READS = {n: not n.startswith("bfcl/") and not n.startswith("envfactory/") for n in KINDS}


def budget(kind: str, n: int) -> int:
    return max(2, int(n * WEIGHT.get(kind, 1.0)))


@pytest.mark.parametrize("kind", KINDS)
def test_contract_junk_calls_never_raise_and_change_nothing(kind: str) -> None:
    @fuzz.examples(budget(kind, 60))
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        env = fuzz.fresh(kind)
        for name, arguments in data.draw(st.lists(fuzz.junk_call(kind), min_size=1,
                                                  max_size=3)):
            fuzz.checked_call(env, name, arguments, PURE_READS[kind])

    run()


@pytest.mark.parametrize("kind", KINDS)
def test_contract_typed_call_sequences_round_trip(kind: str) -> None:
    @fuzz.examples(budget(kind, 40))
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        env = fuzz.fresh(kind)
        calls = data.draw(st.lists(fuzz.mixture((3, fuzz.typed_call(kind)),
                                                (1, fuzz.junk_call(kind))),
                                   min_size=1, max_size=5))
        for name, arguments in calls:
            fuzz.checked_call(env, name, arguments, PURE_READS[kind])
        fuzz.assert_round_trips(env, kind)

    run()


@pytest.mark.parametrize("kind", [k for k in KINDS if k.startswith("pool/")])
def test_contract_replay_is_deterministic(kind: str) -> None:
    """Rollback replays journaled writes: tools must be deterministic."""
    @fuzz.examples(10)
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        calls = data.draw(st.lists(fuzz.typed_call(kind), min_size=2, max_size=8))
        cut = data.draw(st.integers(0, len(calls)))
        a, b = fuzz.fresh(kind), fuzz.fresh(kind)
        assert [a.call(t, x) for t, x in calls] == [b.call(t, x) for t, x in calls]
        assert a.snapshot() == b.snapshot()
        c = fuzz.fresh(kind)
        for t, x in calls[:cut]:
            c.call(t, x)
        d = fuzz.fresh(kind, json.loads(json.dumps(fuzz.assert_round_trips(c, kind))))
        assert [c.call(t, x) for t, x in calls[cut:]] == [d.call(t, x) for t, x in calls[cut:]]
        assert c.snapshot() == d.snapshot()

    run()


def test_every_kind_is_fuzzed() -> None:
    assert {k.split("/")[0] for k in KINDS} >= {"pool", "bfcl", "envfactory"}
    assert len([k for k in KINDS if k.startswith("pool/")]) == len(pool_classes())
