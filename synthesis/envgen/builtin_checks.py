"""EnvGen's own checks of a generated environment (copied into the sandbox as a test file).

They need no model: interface consistency against the description (tool names, parameter
names, required sets, JSON types and enums, declared read/write flags, a default state
that validates), executability (the module imports; every tool, called with arguments
built from the description's schema, returns or refuses without crashing) and state
transitions that hold for every environment (snapshot round-trip before and after calls;
read tools change nothing). Test names carry their criterion as a prefix. The fixtures
come from the sandbox `conftest.py` (`sandbox_conftest.py`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from conftest import load_factory  # type: ignore[import-not-found]  # the sandbox's conftest
from pydantic import ValidationError

DESCRIPTION = json.loads(open("description.json", encoding="utf-8").read())  # noqa: SIM115
TOOLS = {t["name"]: t for t in DESCRIPTION["tools"]}
#: exceptions that mean the code is broken, not that a call was refused
CRASHES = (TypeError, AttributeError, NameError, ImportError, AssertionError,
           ZeroDivisionError, RecursionError, UnboundLocalError, NotImplementedError,
           TimeoutError)
_JSON_TYPES = {"string": (str,), "integer": (int,), "number": (int, float),
               "boolean": (bool,), "array": (list,), "object": (dict,), "null": (type(None),)}


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
    """Arguments for every required parameter of a described tool."""
    props = tool["parameters"].get("properties") or {}
    return {name: _example(props.get(name) or {}) for name in
            tool["parameters"].get("required") or []}


def _specs(env: Any) -> dict[str, Any]:
    return {s.name: s for s in env.tools()}


def test_exec_import() -> None:
    """The module imports and defines one environment (our contract or EnvFactory format)."""
    factory = load_factory()
    assert factory() is not None


def test_interface_tool_names(env: Any) -> None:
    have, want = set(_specs(env)), set(TOOLS)
    assert have == want, (f"tool names differ from the description: missing "
                          f"{sorted(want - have)}, unexpected {sorted(have - want)}")


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_interface_parameters(env: Any, name: str) -> None:
    spec = _specs(env).get(name)
    assert spec is not None, f"tool {name!r} is missing"
    want = TOOLS[name]["parameters"]
    have_props = spec.parameters.get("properties") or {}
    want_props = want.get("properties") or {}
    assert set(have_props) == set(want_props), (
        f"{name}: parameters {sorted(have_props)}, the description has {sorted(want_props)}")
    have_req, want_req = set(spec.parameters.get("required") or []), set(want.get("required")
                                                                          or [])
    assert have_req == want_req, (f"{name}: required {sorted(have_req)}, the description "
                                  f"requires {sorted(want_req)}")
    for param, schema in want_props.items():
        wanted, got = _types(schema), _types(have_props[param])
        if wanted and got:
            assert wanted & got, (f"{name}.{param}: type {sorted(got)}, the description "
                                  f"says {sorted(wanted)}")
        if schema.get("enum"):
            enum = have_props[param].get("enum") or [
                v for sub in have_props[param].get("anyOf", []) for v in sub.get("enum", [])]
            assert sorted(map(str, enum)) == sorted(map(str, schema["enum"])), (
                f"{name}.{param}: allowed values {enum}, the description allows "
                f"{schema['enum']}")


def test_interface_write_flags(env: Any) -> None:
    """Read/write flags where the description declares them (metadata only guesses)."""
    specs = _specs(env)
    wrong = [f"{n} (write={specs[n].write}, described write={t['write']})"
             for n, t in TOOLS.items() if t.get("write_source") == "declared" and n in specs
             and bool(specs[n].write) != bool(t["write"])]
    assert not wrong, "read/write flags differ: " + "; ".join(wrong)


def test_interface_default_state_validates(make_env: Callable[[], Any]) -> None:
    env = make_env()
    snapshot = env.snapshot()
    json.dumps(snapshot)
    fresh = make_env()
    fresh.restore(snapshot)  # raises if the default state is not a valid state


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_exec_tool_callable(env: Any, name: str) -> None:
    """The tool runs on arguments built from its schema: a result or a refusal, no crash."""
    tool = env._lookup(name)
    assert tool is not None, f"tool {name!r} is missing"
    try:
        kwargs = env._parse(tool, arguments(TOOLS[name]))
    except ValidationError:
        return  # the interface tests report the schema mismatch
    try:
        result = env._execute(tool, kwargs)
    except CRASHES as e:
        raise AssertionError(f"{name}({arguments(TOOLS[name])}) crashed: "
                             f"{type(e).__name__}: {e}") from e
    except Exception:  # noqa: BLE001 - a refusal (ToolError, ValueError, KeyError...)
        return
    json.dumps(result if not hasattr(result, "model_dump") else result.model_dump(mode="json"),
               default=str)


def test_state_snapshot_round_trip(make_env: Callable[[], Any]) -> None:
    env = make_env()
    first = env.snapshot()
    env.restore(json.loads(json.dumps(first)))
    assert env.snapshot() == first
    other = make_env()
    other.restore(first)
    assert other.snapshot() == first


def test_state_round_trip_after_calls(make_env: Callable[[], Any]) -> None:
    env = make_env()
    for name in sorted(TOOLS):
        env.call(name, arguments(TOOLS[name]))
    after = env.snapshot()
    copy = make_env()
    copy.restore(json.loads(json.dumps(after)))
    assert copy.snapshot() == after


@pytest.mark.parametrize("name", sorted(n for n, t in TOOLS.items() if not t["write"]))
def test_state_read_tool_changes_nothing(make_env: Callable[[], Any], name: str) -> None:
    env = make_env()
    before = env.snapshot()
    env.call(name, arguments(TOOLS[name]))
    assert env.snapshot() == before, f"read tool {name!r} changed the state"
