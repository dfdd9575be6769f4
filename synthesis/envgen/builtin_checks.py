"""EnvGen's own checks of an environment (copied into the sandbox as a test file).

They need no model, and they are the one validator of both EnvGen's own outputs and the
environments it did not write (`envgen verify`: the release's servers, the pool). The
starting states come from `states.json` (the default state, and for a release server each
checkpoint scenario that expects `pass`; scenarios that expect `validation_error` are
listed apart, to be refused). Test names carry their criterion as a prefix:

* interface: tool names, parameter names, required sets, JSON types and enums against the
  description; declared read/write flags; the default state is a valid state; every
  `pass` scenario loads.
* executability: the module imports; every tool, called on every starting state with
  arguments drawn from that state and the schema, returns or refuses without crashing
  and within the per-call time limit (`call_seconds`: a hanging tool fails its own test).
* state: load -> save equals the loaded scenario under the module's scenario schema; the
  snapshot round-trips before and after calls; reads change nothing; a successful call of
  a tool whose name says it must change something (`MUST_CHANGE`; with the state's
  arguments, else, when those were refused, the schema's) changes the state; a refused
  call leaves the state as it was.
* behaviour: bad arguments (a missing id, a negative number, an empty list) get a refusal
  or an answer, never a crash or a half-applied write; scenarios that expect
  `validation_error` are refused by `load_scenario`.

Calls go to the tool itself (`_execute`), not through `Environment.call`, whose rollback
would hide a half-applied write. Each failure also appends its evidence (tool, arguments,
starting state, what happened) to `evidence.jsonl`, which comes back with the report.
The fixtures come from the sandbox `conftest.py` (`sandbox_conftest.py`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest
from conftest import (  # type: ignore[import-not-found]  # the sandbox's conftest
    CallTimeout,
    call_limit,
    load_factory,
)
from pydantic import BaseModel

DESCRIPTION = json.loads(Path("description.json").read_text(encoding="utf-8"))
TOOLS = {t["name"]: t for t in DESCRIPTION["tools"]}
_STATES_FILE = Path("states.json")
STATES_DOC: dict[str, Any] = (
    json.loads(_STATES_FILE.read_text(encoding="utf-8")) if _STATES_FILE.exists()
    else {"states": [{"id": "default", "data": None}], "refused": []})
#: starting state id -> scenario data (None: the environment's default state)
STATES: dict[str, Any] = {s["id"]: s["data"] for s in STATES_DOC["states"]}
REFUSED: dict[str, Any] = {s["id"]: s["data"] for s in STATES_DOC.get("refused", [])}
EVIDENCE = Path("evidence.jsonl")
#: exceptions that mean the code is broken, not that a call was refused
CRASHES = (TypeError, AttributeError, NameError, ImportError, AssertionError,
           ZeroDivisionError, RecursionError, UnboundLocalError, NotImplementedError,
           TimeoutError)
#: name prefixes of tools that must change the state when they succeed (the release's
#: format has no read/write flag, and "update"/"set" with only their required arguments
#: may rightly change nothing)
MUST_CHANGE = ("create", "add", "delete", "remove", "cancel", "book", "insert", "register",
               "post", "send", "submit", "place", "reserve", "append", "purchase", "buy",
               "enroll", "upload")
#: parameter-name endings that name an existing thing (drawn from the state for writes)
_IDENTIFIERS = ("id", "ids", "_key", "_code", "_number", "symbol", "username", "email", "path")
_JSON_TYPES = {"string": (str,), "integer": (int,), "number": (int, float),
               "boolean": (bool,), "array": (list,), "object": (dict,), "null": (type(None),)}
_BAD = {"string": "__verify_nonexistent__", "integer": -1, "number": -1.0, "array": [],
        "object": {}}


def _types(schema: dict[str, Any]) -> set[str]:
    """The JSON types a schema admits (anyOf/oneOf flattened; enums typed by their values)."""
    kinds: set[str] = set()
    declared = schema.get("type")
    if isinstance(declared, str):
        kinds.add(declared)
    elif isinstance(declared, list):
        kinds.update(declared)
    for sub in [*schema.get("anyOf", []), *schema.get("oneOf", [])]:
        kinds |= _types(sub)
    if not kinds and "enum" in schema:
        kinds = {next(k for k, t in _JSON_TYPES.items() if isinstance(v, t)) for v in
                 schema["enum"]}
    if "integer" in kinds:
        kinds.add("number")
    return kinds


def _kind(schema: dict[str, Any]) -> str:
    """The first non-null JSON type of a schema ('string' when it names none)."""
    return next((k for k in sorted(_types(schema)) if k != "null"), "string")


def _example(schema: dict[str, Any]) -> Any:
    """A value of the schema: its default, first enum value, or a plain one of its type."""
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    for sub in [*schema.get("anyOf", []), *schema.get("oneOf", [])]:
        if sub.get("type") != "null":
            return _example(sub)
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
    return {"string": "example", "integer": 1, "number": 1.5, "boolean": False, "array": [],
            "object": {}}.get(kind or "string", "example")


def arguments(tool: dict[str, Any]) -> dict[str, Any]:
    """Arguments for every required parameter of a described tool (from the schema)."""
    props = tool["parameters"].get("properties") or {}
    return {name: _example(props.get(name) or {}) for name in
            tool["parameters"].get("required") or []}


def _leaves(data: Any, out: dict[str, list[Any]], keys: dict[str, list[str]]) -> None:
    """Scalar values by field name, and the keys of every mapping of objects by its name."""
    if isinstance(data, dict):
        for k, v in data.items():
            if isinstance(v, dict) and v and all(isinstance(x, dict) for x in v.values()):
                keys.setdefault(str(k), []).extend(str(x) for x in v)
            if isinstance(v, (dict, list)):
                _leaves(v, out, keys)
            else:
                out.setdefault(str(k), []).append(v)
    elif isinstance(data, list):
        for item in data:
            _leaves(item, out, keys)


def _fits(value: Any, schema: dict[str, Any]) -> bool:
    kinds = _types(schema) or {"string"}
    if isinstance(value, bool):
        return "boolean" in kinds
    if schema.get("enum") and value not in schema["enum"]:
        return False
    return any(isinstance(value, _JSON_TYPES[k]) for k in kinds if k in _JSON_TYPES)


def drawn_arguments(tool: dict[str, Any], state: Any) -> dict[str, Any]:
    """Arguments built from a starting state where it has a value for a parameter (the
    same field name, or `x_id` -> a key of the mapping named `x...`), else from the schema.
    For a write, only identifier-like parameters come from the state, so an update is
    not handed the values it would overwrite."""
    props = tool["parameters"].get("properties") or {}
    values: dict[str, list[Any]] = {}
    keys: dict[str, list[str]] = {}
    _leaves(state if isinstance(state, dict) else {}, values, keys)
    out = {}
    for name in tool["parameters"].get("required") or []:
        schema = props.get(name) or {}
        identifier = name.lower().endswith(_IDENTIFIERS)
        chosen: Any = None
        if identifier or not tool.get("write"):
            singular = name[:-1] if name.endswith("s") and _kind(schema) == "array" else name
            found = [v for v in values.get(singular, []) if v is not None]
            if not found and singular.lower().endswith("_id"):
                stem = singular[:-3].lower()
                found = next((ks for field, ks in keys.items()
                              if field.lower().startswith(stem)), [])
            if _kind(schema) == "array" and found:
                chosen = found[:1]
            else:
                chosen = next((v for v in found if _fits(v, schema)), None)
        out[name] = chosen if chosen is not None else _example(schema)
    return out


def bad_arguments(tool: dict[str, Any]) -> dict[str, Any]:
    """Required parameters with a wrong-but-well-typed value (what a model gets wrong)."""
    props = tool["parameters"].get("properties") or {}
    out = {}
    for name in tool["parameters"].get("required") or []:
        schema = props.get(name) or {}
        kind = _kind(schema)
        out[name] = _BAD.get(kind, _example(schema))
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return json.loads(json.dumps(value, default=str))


def _test_id() -> str:
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    return current.rpartition("::")[2].rsplit(" (", 1)[0]


def fail(what: str, *, tool: str = "", args: Any = None, state: str = "") -> NoReturn:
    """Record the evidence of one failure and fail the test with `what`."""
    record = {"test": _test_id(), "tool": tool, "arguments": args, "starting_state": state,
              "what": what[:2000]}
    with EVIDENCE.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record, default=str) + "\n")
    raise AssertionError(what)


def start(make_env: Callable[[], Any], state_id: str) -> Any:
    """A fresh instance in a starting state (skips the test when it does not load: the
    interface check `test_interface_scenario_loads` reports that)."""
    env = make_env()
    data = STATES[state_id]
    if data is not None:
        try:
            env.restore(data)
        except Exception as e:  # noqa: BLE001 - reported by its own check
            pytest.skip(f"starting state {state_id} does not load: {type(e).__name__}")
    return env


@dataclass
class Outcome:
    """One call of a tool on a fresh instance in a starting state."""

    args: dict[str, Any]
    before: Any
    after: Any
    result: Any = None
    error: BaseException | None = None
    elapsed: float = 0.0
    parse_error: str = ""

    @property
    def crashed(self) -> bool:
        return isinstance(self.error, CRASHES)

    @property
    def what(self) -> str:
        if self.error is None:
            return "returned " + json.dumps(self.result, default=str)[:300]
        return f"raised {type(self.error).__name__}: {self.error}"[:600]


_OUTCOMES: dict[tuple[str, str, str], Outcome] = {}


def outcome(make_env: Callable[[], Any], state_id: str, name: str, *,
            kind: str = "drawn") -> Outcome:
    """The (memoised) outcome of calling `name` on `state_id` with arguments drawn from the
    state (`drawn`), built from the schema alone (`schema`: a create refused for an id the
    state already has gets a fresh one) or wrong on purpose (`bad`)."""
    key = (state_id, name, kind)
    if key in _OUTCOMES:
        return _OUTCOMES[key]
    env = start(make_env, state_id)
    args = (bad_arguments(TOOLS[name]) if kind == "bad" else arguments(TOOLS[name])
            if kind == "schema" else drawn_arguments(TOOLS[name], env.snapshot()))
    before = env.snapshot()
    tool = env._lookup(name)
    got = Outcome(args=args, before=before, after=before)
    try:
        if tool is None:
            raise LookupError(f"tool {name!r} is missing")
        kwargs = env._parse(tool, args)
    except Exception as e:  # noqa: BLE001 - refused before the tool ran (the interface's)
        got.parse_error = (str(e).splitlines() or [type(e).__name__])[0]
        _OUTCOMES[key] = got
        return got
    started = time.perf_counter()
    try:
        with call_limit():
            got.result = _jsonable(env._execute(tool, kwargs))
    except CallTimeout as e:
        got.error = e
    except Exception as e:  # noqa: BLE001 - classified by the tests
        got.error = e
    got.elapsed = time.perf_counter() - started
    if not isinstance(got.error, CallTimeout):
        try:
            got.after = env.snapshot()
        except Exception as e:  # noqa: BLE001 - the state broke
            got.after = {"<snapshot failed>": f"{type(e).__name__}: {e}"}
    _OUTCOMES[key] = got
    return got


def _specs(env: Any) -> dict[str, Any]:
    return {s.name: s for s in env.tools()}


def _normalized(env: Any, data: Any) -> Any:
    """A scenario as the module's own schema reads it (its last `Scenario_Schema` model, or
    our contract's `State`), as JSON."""
    module = getattr(env, "module", None)
    models = getattr(module, "Scenario_Schema", None)
    root = (models[-1] if isinstance(models, list) and models
            else getattr(type(env), "State", None))
    if isinstance(root, type) and issubclass(root, BaseModel):
        return root.model_validate(data).model_dump(mode="json")
    return json.loads(json.dumps(data, default=str))


_CALLS = [(s, n) for s in STATES for n in sorted(TOOLS)]
_READS = [(s, n) for s, n in _CALLS if not TOOLS[n]["write"]]
_WRITES = [(s, n) for s, n in _CALLS if TOOLS[n]["write"] and (
    TOOLS[n].get("write_source") == "declared" or n.lower().startswith(MUST_CHANGE))]
_SCENARIOS = [s for s, data in STATES.items() if data is not None]


# -- interface ---------------------------------------------------------------------------

def test_exec_import() -> None:
    """The module imports and defines one environment (our contract or EnvFactory format)."""
    factory = load_factory()
    assert factory() is not None


def test_interface_tool_names(env: Any) -> None:
    have, want = set(_specs(env)), set(TOOLS)
    if have != want:
        fail(f"tool names differ from the description: missing {sorted(want - have)}, "
             f"unexpected {sorted(have - want)}")


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_interface_parameters(env: Any, name: str) -> None:
    spec = _specs(env).get(name)
    if spec is None:
        fail(f"tool {name!r} is missing", tool=name)
    want = TOOLS[name]["parameters"]
    have_props = spec.parameters.get("properties") or {}
    want_props = want.get("properties") or {}
    if set(have_props) != set(want_props):
        fail(f"{name}: parameters {sorted(have_props)}, the description has "
             f"{sorted(want_props)}", tool=name)
    have_req = set(spec.parameters.get("required") or [])
    want_req = set(want.get("required") or [])
    if have_req != want_req:
        fail(f"{name}: required {sorted(have_req)}, the description requires "
             f"{sorted(want_req)}", tool=name)
    for param, schema in want_props.items():
        wanted, got = _types(schema), _types(have_props[param])
        if wanted and got and not wanted & got:
            fail(f"{name}.{param}: type {sorted(got)}, the description says {sorted(wanted)}",
                 tool=name)
        if schema.get("enum"):
            enum = have_props[param].get("enum") or [
                v for sub in have_props[param].get("anyOf", []) for v in sub.get("enum", [])]
            if sorted(map(str, enum)) != sorted(map(str, schema["enum"])):
                fail(f"{name}.{param}: allowed values {enum}, the description allows "
                     f"{schema['enum']}", tool=name)


def test_interface_write_flags(env: Any) -> None:
    """Read/write flags where the description declares them (metadata only guesses)."""
    specs = _specs(env)
    wrong = [f"{n} (write={specs[n].write}, described write={t['write']})"
             for n, t in TOOLS.items() if t.get("write_source") == "declared" and n in specs
             and bool(specs[n].write) != bool(t["write"])]
    if wrong:
        fail("read/write flags differ: " + "; ".join(wrong))


def test_interface_default_state_validates(make_env: Callable[[], Any]) -> None:
    env = make_env()
    snapshot = env.snapshot()
    json.dumps(snapshot)
    fresh = make_env()
    try:
        fresh.restore(snapshot)
    except Exception as e:  # noqa: BLE001 - the evidence
        fail(f"the default state is not a valid state: load_scenario(save_scenario()) raised "
             f"{type(e).__name__}: {str(e)[:300]}", state="default")


@pytest.mark.parametrize("state", _SCENARIOS)
def test_interface_scenario_loads(make_env: Callable[[], Any], state: str) -> None:
    """A scenario that expects `pass` loads (the release's layer 1)."""
    try:
        make_env().restore(STATES[state])
    except Exception as e:  # noqa: BLE001 - the evidence
        fail(f"load_scenario refused a scenario that expects pass: {type(e).__name__}: "
             f"{str(e)[:300]}", state=state)


# -- executability -----------------------------------------------------------------------

@pytest.mark.parametrize(("state", "name"), _CALLS)
def test_exec_tool_callable(make_env: Callable[[], Any], state: str, name: str) -> None:
    """The tool runs on arguments drawn from the state: a result or a refusal, in time."""
    got = outcome(make_env, state, name)
    if isinstance(got.error, CallTimeout):
        fail(f"no answer within the per-call limit ({got.error})", tool=name, args=got.args,
             state=state)
    if got.crashed:
        fail(f"crashed: {got.what}", tool=name, args=got.args, state=state)


# -- state -------------------------------------------------------------------------------

@pytest.mark.parametrize("state", _SCENARIOS)
def test_state_load_save_equals_scenario(make_env: Callable[[], Any], state: str) -> None:
    env = start(make_env, state)
    want = _normalized(env, STATES[state])
    have = json.loads(json.dumps(env.snapshot(), default=str))
    if have != want:
        differs = sorted(k for k in set(have) | set(want) if have.get(k) != want.get(k))
        fail(f"save_scenario() after load_scenario differs from the scenario in {differs}",
             state=state)


def _loads_again(make_env: Callable[[], Any], snapshot: Any) -> bool:
    try:
        make_env().restore(snapshot)
    except Exception:  # noqa: BLE001 - reported once, by the interface check
        return False
    return True


def test_state_snapshot_round_trip(make_env: Callable[[], Any]) -> None:
    env = make_env()
    first = env.snapshot()
    if not _loads_again(make_env, first):
        pytest.skip("the default state is not a valid state "
                    "(test_interface_default_state_validates)")
    env.restore(json.loads(json.dumps(first)))
    if env.snapshot() != first:
        fail("the default state does not round-trip through JSON", state="default")
    other = make_env()
    other.restore(first)
    if other.snapshot() != first:
        fail("the default state does not round-trip into a fresh instance", state="default")


@pytest.mark.parametrize("state", list(STATES))
def test_state_round_trip_after_calls(make_env: Callable[[], Any], state: str) -> None:
    env = start(make_env, state)
    if STATES[state] is None and not _loads_again(make_env, env.snapshot()):
        pytest.skip("the default state is not a valid state "
                    "(test_interface_default_state_validates)")
    for name in sorted(TOOLS):
        with call_limit():
            env.call(name, drawn_arguments(TOOLS[name], env.snapshot()))
    after = env.snapshot()
    copy = make_env()
    try:
        copy.restore(json.loads(json.dumps(after, default=str)))
    except Exception as e:  # noqa: BLE001 - the evidence
        fail(f"the state after calling every tool does not load again: {type(e).__name__}: "
             f"{str(e)[:300]}", state=state)
    if copy.snapshot() != after:
        fail("the state after calling every tool does not round-trip", state=state)


@pytest.mark.parametrize(("state", "name"), _READS)
def test_state_read_tool_changes_nothing(make_env: Callable[[], Any], state: str,
                                         name: str) -> None:
    got = outcome(make_env, state, name)
    if got.after != got.before and not isinstance(got.error, CallTimeout):
        fail(f"read tool {name!r} changed the state ({got.what})", tool=name, args=got.args,
             state=state)


@pytest.mark.parametrize(("state", "name"), _WRITES)
def test_state_successful_write_changes_state(make_env: Callable[[], Any], state: str,
                                              name: str) -> None:
    got = outcome(make_env, state, name)
    if got.error is not None or got.parse_error:
        got = outcome(make_env, state, name, kind="schema")
    if got.error is None and not got.parse_error and got.after == got.before:
        fail(f"{name} succeeded but the state did not change ({got.what})", tool=name,
             args=got.args, state=state)


@pytest.mark.parametrize(("state", "name"), _CALLS)
def test_state_refused_call_changes_nothing(make_env: Callable[[], Any], state: str,
                                            name: str) -> None:
    got = outcome(make_env, state, name)
    if (got.error is not None and not isinstance(got.error, CallTimeout)
            and got.after != got.before):
        fail(f"{name} was refused ({got.what}) but changed the state", tool=name,
             args=got.args, state=state)


# -- behaviour ---------------------------------------------------------------------------

@pytest.mark.parametrize(("state", "name"),
                         [(s, n) for s, n in _CALLS if TOOLS[n]["parameters"].get("required")])
def test_behaviour_bad_arguments_refused(make_env: Callable[[], Any], state: str,
                                         name: str) -> None:
    """Wrong-but-well-typed arguments: a refusal or an answer, no crash, no half write."""
    got = outcome(make_env, state, name, kind="bad")
    if isinstance(got.error, CallTimeout):
        fail(f"no answer within the per-call limit ({got.error})", tool=name, args=got.args,
             state=state)
    if got.crashed:
        fail(f"crashed on bad arguments: {got.what}", tool=name, args=got.args, state=state)
    if got.error is not None and got.after != got.before:
        fail(f"refused bad arguments ({got.what}) but changed the state", tool=name,
             args=got.args, state=state)


@pytest.mark.parametrize("scenario", sorted(REFUSED))
def test_behaviour_invalid_scenario_refused(make_env: Callable[[], Any], scenario: str) -> None:
    """A scenario that expects `validation_error` is refused by load_scenario."""
    env = make_env()
    try:
        env.restore(REFUSED[scenario])
    except Exception:  # noqa: BLE001 - refused, as expected
        return
    fail("load_scenario accepted a scenario that expects validation_error", state=scenario)
