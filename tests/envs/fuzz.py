"""Hypothesis strategies for the contract suite (tests/envs/test_contract.py).

Every environment kind (`KINDS` there) registers a factory; for each:

* junk calls: unknown or non-string tool names, non-dict arguments, missing, extra and
  wrongly typed arguments, nested junk, huge (100k-character) strings, NaN/inf;
* well-typed calls generated from each tool's JSON schema, with string values drawn
  mostly from the seeded state's strings under the matching key (`from_account_id`
  gets account ids, `date` gets dates), so that calls get past "not found" and run the
  business rules and the writes (roughly a third of typed calls succeed);

and asserts that no exception escapes `call()`, every result is strict JSON, a
rejected call (`ok` false) or a read tool leaves `snapshot()` unchanged, the snapshot
round-trips exactly (through JSON, into a fresh instance) after a random sequence of
calls, and replaying the same calls from the same state is deterministic.

Budget: a few seconds per environment (`FUZZ_SCALE=10 pytest ...` for a longer hunt).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping
from functools import cache
from types import MappingProxyType
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from envs.base import Environment, ToolResult

#: kind name -> factory of a fresh instance in its start state (filled by the suite)
FACTORIES: dict[str, Callable[[], Environment]] = {}
SCALE = float(os.environ.get("FUZZ_SCALE", "1"))

FUZZ = settings(
    deadline=None,
    database=None,  # failures print their example; no cross-run state in CI
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
)


def examples(n: int) -> settings:
    return settings(FUZZ, max_examples=max(1, int(n * SCALE)))


# -- per-environment fixtures (built once per environment) ---------------------------


@cache
def pristine(name: str) -> dict[str, Any]:
    """The start state as a snapshot."""
    return FACTORIES[name]().snapshot()


@cache
def specs(name: str) -> tuple[Any, ...]:
    return tuple(FACTORIES[name]().tools())


@cache
def state_strings(name: str) -> tuple[str, ...]:
    """Short strings of the seeded state (ids, names, dates, enum values, dict keys)."""
    return tuple(sorted({v for vs in keyed_strings(name).values() for v in vs})) or ("x",)


def singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


@cache
def keyed_strings(name: str) -> dict[str, tuple[str, ...]]:
    """Strings of the seeded state by the key they sit under; ids of records also under
    `<collection singular>_id` (customers -> customer_id), so that `from_account_id`
    gets account ids."""
    found: dict[str, set[str]] = {}

    def add(key: str, value: str) -> None:
        if 0 < len(value) <= 64:
            found.setdefault(key, set()).add(value)

    def walk(value: Any, ctx: str) -> None:
        if isinstance(value, Mapping):
            rid = value.get("id")
            if isinstance(rid, str) and ctx:
                add(f"{singular(ctx)}_id", rid)
            for k, v in value.items():
                if not isinstance(k, str):
                    continue
                is_record = isinstance(v, Mapping) and v.get("id") == k
                if is_record and ctx:
                    add(f"{singular(ctx)}_id", k)
                if isinstance(v, str):
                    add(k, v)
                walk(v, ctx if is_record else k)
        elif isinstance(value, list):
            for v in value:
                if isinstance(v, str):
                    add(ctx, v)
                    add(singular(ctx), v)
                walk(v, ctx)

    walk(pristine(name), "")
    return {k: tuple(sorted(v)) for k, v in found.items()}


@cache
def strings_for(name: str, param: str) -> tuple[str, ...]:
    """Plausible values of a string parameter: strings under the same key, else under a
    key the parameter ends with (from_account_id -> account_id), else every string."""
    keyed = keyed_strings(name)
    for hint in (param, singular(param)):
        if hint in keyed:
            return keyed[hint]
        matches = sorted((k for k in keyed if len(k) >= 3 and hint.endswith(k)), key=len)
        if matches:
            return keyed[matches[-1]]
    return state_strings(name)


def fresh(name: str, snapshot: Mapping[str, Any] | None = None) -> Environment:
    """An instance in `snapshot` (default: the start state)."""
    env = FACTORIES[name]()
    env.restore(snapshot if snapshot is not None else pristine(name))
    return env


# -- junk -----------------------------------------------------------------------------

huge_strings = st.builds(lambda ch, n: ch * n, st.sampled_from(["a", " ", "é", "🙂", "\x00", "9"]),
                         st.sampled_from([1_000, 100_000]))
odd_strings = st.sampled_from(["", " ", "\n", "null", "None", "-1", "0", "1e309", "NaN",
                               "'; DROP TABLE x; --", "../../etc/passwd", "%s%s%n", "\ud800",
                               "2024-02-30", "9999-12-31", "0000-00-00", "25:61", "\u202e"])
scalar_junk = (st.none() | st.booleans()
               | st.integers() | st.sampled_from([0, -1, 2**31, 2**63, -(2**63), 10**30])
               | st.floats() | st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e308])
               | st.text(max_size=30) | odd_strings | huge_strings)
json_junk = st.recursive(
    scalar_junk,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12,
)
non_dict_arguments = (st.lists(json_junk, max_size=3) | st.text(max_size=20) | st.integers()
                      | st.floats() | st.booleans() | st.just(None) | huge_strings
                      | st.tuples(st.integers()) | st.sets(st.integers(), max_size=3)
                      | st.builds(object) | st.just(b"{}"))


# -- schema-driven values -----------------------------------------------------------


def mixture(*weighted: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """Pick a branch with the given weights (`one_of` drifts towards the branches with
    the most distinct values, starving a small pool of valid ids)."""
    branches = [s for w, s in weighted for _ in range(w)]
    return st.sampled_from(range(len(branches))).flatmap(lambda i: branches[i])


def from_schema(schema: Any, defs: Mapping[str, Any], env: str, hint: str = "",
                depth: int = 0) -> st.SearchStrategy[Any]:
    """Values that (mostly) satisfy a pydantic-generated JSON schema."""
    if not isinstance(schema, Mapping) or depth > 6:
        return json_junk
    if "$ref" in schema:
        target = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
        return from_schema(target, defs, env, hint, depth + 1)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return st.one_of([from_schema(s, defs, env, hint, depth + 1) for s in schema[key]])
    if "allOf" in schema and len(schema["allOf"]) == 1:
        return from_schema(schema["allOf"][0], defs, env, hint, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([from_schema({**schema, "type": k}, defs, env, hint, depth + 1)
                          for k in kind])
    if kind == "string":
        return mixture((6, st.sampled_from(strings_for(env, hint))),
                       (1, st.sampled_from(state_strings(env))),
                       (1, st.text(max_size=12)), (1, odd_strings))
    if kind == "integer":
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if lo is not None or hi is not None:
            return st.integers(min_value=lo, max_value=hi)
        return st.integers(-3, 30) | st.integers(-(10**6), 10**6) | st.sampled_from([0, 10**12])
    if kind == "number":
        return (st.integers(-3, 2_000) | st.floats(-1e6, 1e6, allow_nan=False)
                | st.sampled_from([0.0, 0.01, 1e9]))
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        items = from_schema(schema.get("items", {}), defs, env, singular(hint), depth + 1)
        return st.lists(items, max_size=4)
    if kind == "object":
        if "properties" in schema:
            return object_strategy(schema, defs, env, depth + 1)
        extra = schema.get("additionalProperties")
        values = from_schema(extra, defs, env, hint, depth + 1) if isinstance(extra, Mapping) \
            else json_junk
        keys = st.sampled_from(state_strings(env)) | st.text(max_size=8)
        return st.dictionaries(keys, values, max_size=3)
    return json_junk


def object_strategy(schema: Mapping[str, Any], defs: Mapping[str, Any], env: str,
                    depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    return st.fixed_dictionaries(
        {k: from_schema(v, defs, env, k, depth) for k, v in props.items() if k in required},
        optional={k: from_schema(v, defs, env, k, depth) for k, v in props.items()
                  if k not in required},
    )


@cache
def typed_call(name: str) -> st.SearchStrategy[tuple[str, Any]]:
    """A well-typed call of one of the environment's tools."""
    per_tool = []
    for spec in specs(name):
        args = object_strategy(spec.parameters, spec.parameters.get("$defs", {}), name)
        per_tool.append(st.tuples(st.just(spec.name), args))
    return st.one_of(per_tool)


@st.composite
def mutated_call(draw: st.DrawFn, name: str) -> tuple[str, Any]:
    """A well-typed call with one defect: a missing, extra or wrongly typed argument."""
    tool, args = draw(typed_call(name))
    args = dict(args)
    how = draw(st.sampled_from(["drop", "extra", "retype", "retype"]))
    if how == "drop" and args:
        args.pop(draw(st.sampled_from(sorted(args))))
    elif how == "extra":
        args[draw(st.text(max_size=10) | st.sampled_from(["self", "__class__", "state"]))] = \
            draw(json_junk)
    elif args:
        args[draw(st.sampled_from(sorted(args)))] = draw(json_junk)
    return tool, args


@cache
def junk_call(name: str) -> st.SearchStrategy[tuple[Any, Any]]:
    tools = st.sampled_from(sorted(spec.name for spec in specs(name)))
    bad_names = (st.text(max_size=20) | odd_strings | huge_strings | st.none() | st.integers()
                 | st.sampled_from(["call", "snapshot", "restore", "_rollback", "__init__",
                                    "tools", "default_state"]))
    junk_dicts = st.dictionaries(st.text(max_size=10) | st.integers() | st.none(), json_junk,
                                 max_size=4)
    return st.one_of(
        mutated_call(name),
        st.tuples(tools, non_dict_arguments),
        st.tuples(tools, junk_dicts),
        st.tuples(tools, typed_call(name).map(lambda c: MappingProxyType(c[1]))),
        st.tuples(bad_names, junk_dicts | non_dict_arguments),
    )


# -- the checks ----------------------------------------------------------------------


def checked_call(env: Environment, tool: Any, arguments: Any,
                 pure_reads: bool = True) -> ToolResult:
    """One call with the contract asserted around it (`pure_reads`: a successful read
    tool must not change the snapshot either; BFCL's reads may advance its RNG)."""
    before = env.snapshot()
    result = env.call(tool, arguments)  # must not raise
    assert isinstance(result, ToolResult), type(result)
    # strict JSON: what an MCP client or a trajectory file receives
    json.dumps(result.model_dump(mode="json"), allow_nan=False)
    assert isinstance(result.text(), str)
    if not result.ok:
        assert result.error, f"rejected call without an error message: {tool!r}"
        assert env.snapshot() == before, f"rejected call {tool!r} changed the state"
    elif pure_reads:
        spec = {s.name: s for s in env.tools()}.get(tool) if isinstance(tool, str) else None
        if spec is not None and not spec.write:
            assert env.snapshot() == before, f"read tool {tool!r} changed the state"
    return result


def assert_round_trips(env: Environment, name: str) -> dict[str, Any]:
    snap = env.snapshot()
    text = json.dumps(snap, allow_nan=False)
    other = fresh(name)
    other.restore(json.loads(text))
    assert other.snapshot() == snap
    return snap
