"""Environment throughput: episodes per second, in process and through MCP.

    python benchmarks/env_throughput.py [--envs a,b] [--episodes N] [--mcp-episodes M]
        [--http-episodes K] [--profile-env NAME] [--specs DIR] [--data DIR]
        [--no-mcp] [--no-experiments]

One episode = reset from a snapshot + 10 tool calls + snapshot, measured for every
pool environment (`envs.pool.pool_classes()`, whatever exists when this runs) three ways:

1. in process, one process on one core: `env.restore(snap)`, 10 `env.call`s,
   `env.snapshot()`; episodes/s from the CPU time of this single-threaded process
   (best of 3 blocks of N/3 episodes), wall-clock figure next to it;
2. MCP stdio, one server process per episode (EnvFactory's approach, and what our
   `transport="mcp"` harness does): spawn `python -m envfactory env serve NAME`,
   initialize, `load_scenario`, 10 calls, `save_scenario`, close;
3. MCP, one long-lived streamable-HTTP server per environment and a new session per
   episode: initialize, `load_scenario`, 10 calls, `save_scenario`, close the session
   (and, for comparison, the same episodes all in one session).

MCP figures are wall clock (client and server run concurrently); their CPU time
(client + server processes, from /proc and getrusage) is printed too, so that the
in-process / MCP ratios are given both ways.

The 10 calls are realistic where possible: the environment's gold calls from
single-environment task specs (`tasks/envfactory/specs/*.json`, else the built
`tasks/envfactory/data/*.jsonl`), cycled to 10. Without tasks, they are derived from
the read tools' schemas: each read tool is probed with simple arguments (enum values,
the `e.g. "..."` examples of the descriptions, ids and dates of the seeded state) and
the calls that succeed are cycled to 10; an environment where none succeeds is skipped.

Then: a profiler-free phase breakdown per environment (restore, snapshot, argument
validation, undo-record dumps, the rest of the calls = tool logic), a cProfile of the
slowest environment with hotspots grouped, and experiments that are *not* part of
`envs/` (subclasses built here): restore alternatives, skipping a reset when nothing
was written, journal-replay rollback instead of an undo dump per write, field-level
restore of what changed, smaller states, and fresh-instance cost (what an MCP session
pays). Every experiment is checked to give the same results and final states.

The machine is shared, so wall time is noisy (CPU time much less so; differences
under ~10% between runs are noise). Prints rich tables, then exactly one
JSON line with the figures. Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import itertools
import json
import math
import os
import pickle
import pstats
import re
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pydantic_core import to_jsonable_python  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from envs.base import Environment, ToolError, ToolResult  # noqa: E402
from envs.pool import pool_classes  # noqa: E402

CALLS_PER_EPISODE = 10
TARGET_EPS = 5_000
SPECS_DIR = ROOT / "tasks" / "envfactory" / "specs"
DATA_DIR = ROOT / "tasks" / "envfactory" / "data"
console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)

Call = tuple[str, dict[str, Any]]


# -- the 10 calls of an episode ------------------------------------------------------


@dataclass
class CallSet:
    env: str
    source: str  # "gold (specs)", "gold (data)", "derived (read tools)"
    calls: list[Call]  # exactly CALLS_PER_EPISODE
    distinct: int  # distinct calls before cycling
    ok: int = 0  # calls that succeed in one episode from the start state
    writes: int = 0  # write-tool calls among the 10


def cycle(calls: Sequence[Call], n: int = CALLS_PER_EPISODE) -> list[Call]:
    return [calls[i % len(calls)] for i in range(n)]


def gold_from_specs(specs_dir: Path) -> dict[str, list[Call]]:
    """Gold calls of single-environment tasks, per environment, in spec order."""
    out: dict[str, list[Call]] = {}
    for path in sorted(specs_dir.glob("*.json")):
        try:
            tasks = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            console.print(f"[yellow]skipping spec file {path.name}: {e}[/yellow]")
            continue
        for task in tasks if isinstance(tasks, list) else []:
            envs = task.get("environments") if isinstance(task, dict) else None
            if not isinstance(envs, list) or len(envs) != 1:
                continue
            for turn in task.get("turns", []):
                for c in turn.get("gold_calls", []):
                    if c.get("env", envs[0]) == envs[0] and isinstance(c.get("name"), str):
                        out.setdefault(envs[0], []).append((c["name"],
                                                            dict(c.get("arguments") or {})))
    return out


def gold_from_data(data_dir: Path) -> dict[str, list[Call]]:
    from harness.trajectory import read_jsonl

    out: dict[str, list[Call]] = {}
    for path in sorted(data_dir.glob("*.jsonl")):
        try:
            tasks = read_jsonl(path)
        except Exception as e:  # noqa: BLE001 - a broken file only loses its calls
            console.print(f"[yellow]skipping task file {path.name}: {e}[/yellow]")
            continue
        for task in tasks:
            if len(task.environments) == 1:
                env = task.environments[0]
                out.setdefault(env, []).extend(
                    (c.name, dict(c.arguments)) for c in task.gold_calls() if c.env == env)
    return out


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def state_index(snapshot: Mapping[str, Any]) -> dict[str, list[str]]:
    """Strings of a state by the key they sit under (record ids also under
    `<collection singular>_id`: customers -> customer_id), in first-seen order."""
    found: dict[str, dict[str, None]] = {}

    def add(key: str, value: str) -> None:
        if 0 < len(value) <= 64:
            found.setdefault(key, {})[value] = None

    def walk(value: Any, ctx: str) -> None:
        if isinstance(value, Mapping):
            rid = value.get("id")
            if isinstance(rid, str) and ctx:
                add(f"{_singular(ctx)}_id", rid)
            for k, v in value.items():
                if not isinstance(k, str):
                    continue
                is_record = isinstance(v, Mapping) and v.get("id") == k
                if isinstance(v, str):
                    add(k, v)
                walk(v, ctx if is_record else k)
        elif isinstance(value, list):
            for v in value:
                if isinstance(v, str):
                    add(_singular(ctx), v)
                walk(v, ctx)

    walk(snapshot, "")
    return {k: list(v) for k, v in found.items()}


def _examples(description: str) -> list[str]:
    return re.findall(r'"([^"]{1,64})"', description or "")


def _now(snapshot: Mapping[str, Any]) -> date:
    for key in ("now", "today", "current_date", "date"):
        value = snapshot.get(key)
        if isinstance(value, str) and re.match(r"\d{4}-\d{2}-\d{2}", value):
            return date.fromisoformat(value[:10])
    return date(2026, 3, 9)


def candidates(param: str, schema: Mapping[str, Any], index: Mapping[str, list[str]],
               today: date) -> list[Any]:
    """A few simple, plausibly valid values for one parameter, best first."""
    for branch in schema.get("anyOf", []):
        if branch.get("type") != "null":
            merged = {**branch, "description": schema.get("description", "")}
            return candidates(param, merged, index, today)
    if "enum" in schema:
        return list(schema["enum"])[:3]
    kind = schema.get("type")
    desc = schema.get("description", "") or ""
    if kind == "array":
        items = candidates(_singular(param), {**schema.get("items", {}), "description": desc},
                           index, today)
        return [[v] for v in items[:3]]
    if kind == "integer":
        return [1, 2, 5]
    if kind == "number":
        return [10.0, 25.0]
    if kind == "boolean":
        return [True, False]
    if kind != "string":
        return [{}]
    out: list[Any] = []
    for hint in (param, _singular(param)):
        keys = [hint] if hint in index else sorted(
            (k for k in index if len(k) >= 3 and hint.endswith(k)), key=len)[-1:]
        for k in keys:
            out += index[k][:3]
    out += _examples(desc)
    if "YYYY-MM-DD" in desc or param.endswith(("date", "_from", "_to", "check_in",
                                                "check_out", "day")):
        out += [(today + timedelta(days=d)).isoformat() for d in (0, 1, 7)]
    elif "YYYY-MM" in desc or param == "month":
        out += [today.isoformat()[:7]]
    if "HH:MM" in desc or param.endswith("time"):
        out += ["10:00", "11:00"] if "start" in param or "end" not in param else ["11:00"]
    if not out:
        out = ["a"]
    return list(dict.fromkeys(out))


def derive_calls(cls: type[Environment], snapshot: Mapping[str, Any], *, write: bool = False,
                 tries: int = 24) -> list[Call]:
    """Calls of the read (or write) tools that succeed from `snapshot`, one per tool."""
    index = state_index(snapshot)
    today = _now(snapshot)
    env = cls(snapshot)
    found: list[Call] = []
    for spec in cls.tool_specs():
        if spec.write != write:
            continue
        props = spec.parameters.get("properties", {})
        required = [p for p in spec.parameters.get("required", []) if p in props]
        options = [candidates(p, props[p], index, today) or [None] for p in required]
        for combo in itertools.islice(itertools.product(*options), tries):
            args = dict(zip(required, combo, strict=True))
            if write:
                env.restore(snapshot)
            if env.call(spec.name, args).ok:
                found.append((spec.name, args))
                break
    return found


def call_sets(names: Iterable[str], specs_dir: Path, data_dir: Path) -> dict[str, CallSet]:
    classes = pool_classes()
    gold_specs = gold_from_specs(specs_dir) if specs_dir.is_dir() else {}
    gold_data = {} if gold_specs else (gold_from_data(data_dir) if data_dir.is_dir() else {})
    out: dict[str, CallSet] = {}
    for name in names:
        cls = classes[name]
        snap = cls().snapshot()
        if gold_specs.get(name):
            source, calls = "gold (specs)", gold_specs[name]
        elif gold_data.get(name):
            source, calls = "gold (data)", gold_data[name]
        else:
            source, calls = "derived (read tools)", derive_calls(cls, snap)
        if not calls:
            console.print(f"[yellow]{name}: no gold calls and no read tool call succeeded "
                          "with simple arguments; skipped[/yellow]")
            continue
        cs = CallSet(name, source, cycle(calls), distinct=len(calls[:CALLS_PER_EPISODE]))
        env = cls(snap)
        cs.ok = sum(env.call(n, a).ok for n, a in cs.calls)
        cs.writes = sum(cls._tools[n].write for n, _ in cs.calls if n in cls._tools)
        out[name] = cs
    return out


# -- in process ------------------------------------------------------------------------


def episodes(env: Environment, snap: Mapping[str, Any], calls: Sequence[Call], n: int) -> None:
    for _ in range(n):
        env.restore(snap)
        for name, args in calls:
            env.call(name, args)
        env.snapshot()


@dataclass
class Rate:
    """Best of 3 blocks, by CPU time of this (single-threaded) process and by wall time.
    On a shared machine the CPU figure is the one-core cost; wall adds the waiting."""

    ms: float  # CPU ms per episode
    wall_ms: float  # wall ms per episode

    @property
    def eps(self) -> float:
        return 1e3 / self.ms

    @property
    def wall_eps(self) -> float:
        return 1e3 / self.wall_ms

    def as_dict(self) -> dict[str, float]:
        return {"eps": round(self.eps, 1), "ms_per_episode": round(self.ms, 4),
                "wall_eps": round(self.wall_eps, 1), "wall_ms_per_episode":
                round(self.wall_ms, 4)}


def measure(run: Callable[[int], None], n: int, blocks: int = 3) -> Rate:
    run(max(2, n // 20))  # warm-up
    per = max(1, n // blocks)
    best_cpu = best_wall = math.inf
    for _ in range(blocks):
        c0, t0 = time.process_time(), time.perf_counter()
        run(per)
        best_wall = min(best_wall, (time.perf_counter() - t0) / per)
        best_cpu = min(best_cpu, (time.process_time() - c0) / per)
    return Rate(ms=best_cpu * 1e3, wall_ms=best_wall * 1e3)


def _runner(env: Environment, snap: Mapping[str, Any],
            calls: Sequence[Call]) -> Callable[[int], None]:
    return lambda k: episodes(env, snap, calls, k)


def _reset_and_snapshot(env: Environment, snap: Mapping[str, Any]) -> Callable[[], Any]:
    def run() -> Any:
        env.restore(snap)
        return env.snapshot()

    return run


def time_per(fn: Callable[[], Any], n: int) -> float:
    """Best-of-3 CPU seconds per call of fn."""
    fn()
    per = max(1, n // 3)
    best = math.inf
    for _ in range(3):
        t0 = time.process_time()
        for _ in range(per):
            fn()
        best = min(best, (time.process_time() - t0) / per)
    return best


def phase_breakdown(cls: type[Environment], snap: Mapping[str, Any], calls: Sequence[Call],
                    n: int) -> dict[str, float]:
    """ms per episode of each phase, timed separately without a profiler."""
    env = cls(snap)
    restore = time_per(lambda: env.restore(snap), n)
    snapshot = time_per(env.snapshot, n)

    def run_calls() -> None:
        env.restore(snap)
        for name, args in calls:
            env.call(name, args)

    calls_total = time_per(run_calls, n) - restore
    models = [(cls._tools[name].arguments_model, args) for name, args in calls
              if name in cls._tools]
    args_validation = time_per(lambda: [m.model_validate(dict(a)) for m, a in models], n)
    n_writes = sum(cls._tools[name].write for name, _ in calls if name in cls._tools)
    dump = time_per(env.state.model_dump, n) if n_writes else 0.0
    undo = dump * n_writes
    return {k: round(v * 1e3, 4) for k, v in {
        "restore": restore, "snapshot": snapshot, "calls": calls_total,
        "args_validation": args_validation, "undo_dumps": undo,
        "tool_logic_and_rest": max(0.0, calls_total - args_validation - undo),
    }.items()}


# -- profile ---------------------------------------------------------------------------


def profile(cls: type[Environment], snap: Mapping[str, Any], calls: Sequence[Call],
            n: int) -> dict[str, Any]:
    """cProfile n episodes; group time by what it is spent on (via the caller graph)."""
    env = cls(snap)
    episodes(env, snap, calls, 3)
    prof = cProfile.Profile()
    prof.enable()
    episodes(env, snap, calls, n)
    prof.disable()
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in stats.values())
    base_file = str(ROOT / "envs" / "base.py")
    env_file = sys.modules[cls.__module__].__file__ or ""

    def find(file: str, name: str) -> tuple[Any, ...] | None:
        for key in stats:
            if key[0] == file and key[2] == name:
                return key
        return None

    def ct(key: Any) -> float:
        return stats[key][3] if key in stats else 0.0

    k_restore, k_snapshot = find(base_file, "restore"), find(base_file, "snapshot")
    k_call, k_rollback = find(base_file, "call"), find(base_file, "_rollback")
    groups = {
        "restore: pydantic validation of the snapshot": ct(k_restore),
        "snapshot: model_dump(mode='json')": ct(k_snapshot),
    }
    inner = {"argument validation (model_validate)": 0.0, "undo record (model_dump per write)":
             0.0, "rollback of failed writes (model_validate)": 0.0,
             "environment's own tool logic": 0.0, "result to JSON (to_jsonable_python)": 0.0,
             "ToolResult construction": 0.0, "other callees of call()": 0.0}
    for key, (_, _, _, _, callers) in stats.items():
        if k_call not in callers:
            continue
        edge = callers[k_call][3]
        fname = key[2]
        if key == k_rollback:
            inner["rollback of failed writes (model_validate)"] += edge
        elif fname == "model_validate":
            inner["argument validation (model_validate)"] += edge
        elif fname == "model_dump":
            inner["undo record (model_dump per write)"] += edge
        elif "to_jsonable_python" in fname:
            inner["result to JSON (to_jsonable_python)"] += edge
        elif fname == "__init__" and "pydantic" in key[0]:
            inner["ToolResult construction"] += edge
        elif key[0] == env_file or (key[0] != base_file and "site-packages" not in key[0]
                                    and not key[0].startswith("~")):
            inner["environment's own tool logic"] += edge
        else:
            inner["other callees of call()"] += edge
    call_ct = ct(k_call)
    inner["call() itself (dispatch, kwargs)"] = max(0.0, call_ct - sum(inner.values()))
    groups.update(inner)
    groups["episode loop"] = max(0.0, total - sum(groups.values()))
    hot = sorted(stats.items(), key=lambda kv: kv[1][2], reverse=True)[:15]
    hotspots = [{"function": f"{Path(k[0]).name}:{k[1]}({k[2]})" if k[0] != "~"
                 else k[2], "calls": v[1], "tottime_ms_per_episode": v[2] / n * 1e3,
                 "share": v[2] / total} for k, v in hot]
    # the tool logic's own hotspots (functions defined in the environment's module)
    own = sorted(((k, v) for k, v in stats.items() if k[0] == env_file),
                 key=lambda kv: kv[1][3], reverse=True)[:6]
    return {
        "env": cls.name, "episodes": n, "profiled_ms_per_episode": total / n * 1e3,
        "groups_ms_per_episode": {g: t / n * 1e3 for g, t in groups.items()},
        "groups_share": {g: t / total for g, t in groups.items()},
        "hotspots": hotspots,
        "tool_functions": [{"function": f"{k[2]}", "calls_per_episode": v[1] / n,
                            "cumtime_ms_per_episode": v[3] / n * 1e3} for k, v in own],
    }


# -- experiments (not in envs/: subclasses built here) ------------------------------------


def experimental(cls: type[Environment], *, skip_clean: bool = False, journal: bool = False,
                 partial: bool = False) -> type[Environment]:
    """`cls` with cheaper resets, snapshots or rollbacks (same observable behaviour):

    skip_clean: restore() from the snapshot last restored is a no-op when no write has
      succeeded since, and snapshot() then returns that snapshot (no dump);
    journal: a write takes no undo dump; a failed write re-validates the last restored
      snapshot and replays the writes that succeeded since (environments are
      deterministic), falling back to the dump when nothing was restored yet;
    partial: snapshot() notes which top-level fields differ from the restored snapshot,
      and the next restore() from it re-validates only those fields.
    """

    class Experimental(cls):  # type: ignore[valid-type, misc]
        def __init__(self, state: Any = None) -> None:
            super().__init__(state)
            self._from: Mapping[str, Any] | None = None
            self._dirty = True
            self._changed: list[str] | None = None
            self._journal: list[tuple[str, Mapping[str, Any]]] = []

        def restore(self, snapshot: Mapping[str, Any]) -> None:
            same = snapshot is self._from
            if skip_clean and same and not self._dirty:
                return
            if partial and same and self._changed is not None:
                validator = self.State.__pydantic_validator__
                for f in self._changed:
                    validator.validate_assignment(self.state, f, snapshot[f])
            else:
                super().restore(snapshot)
            self._from, self._dirty, self._changed = snapshot, False, None
            self._journal = []

        def snapshot(self) -> dict[str, Any]:
            if skip_clean and not self._dirty and self._from is not None:
                return self._from  # type: ignore[return-value]
            dump = super().snapshot()
            if partial and self._from is not None:
                self._changed = [f for f in dump if dump[f] != self._from.get(f)]
            return dump

        def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
            bound = self._tools.get(name) if isinstance(name, str) else None
            if not (journal and bound is not None and bound.write and self._from is not None
                    and isinstance(arguments, Mapping | None)):
                result = super().call(name, arguments)
                if result.ok and bound is not None and bound.write:
                    self._dirty, self._changed = True, None
                return result
            result = self._write(name, arguments or {})
            if result.ok:
                self._journal.append((name, dict(arguments or {})))
                self._dirty, self._changed = True, None
            return result

        def _write(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
            from pydantic import ValidationError

            from envs.base import _format_validation_error

            bound = self._tools[name]
            try:
                parsed = bound.arguments_model.model_validate(dict(arguments))
            except ValidationError as e:
                return ToolResult(ok=False, error=_format_validation_error(name, e))
            kwargs = {f: getattr(parsed, f) for f in type(parsed).model_fields}
            try:
                content = to_jsonable_python(getattr(self, bound.method_name)(**kwargs))
            except ToolError as e:
                self._replay()
                return ToolResult(ok=False, error=str(e))
            except Exception as e:  # noqa: BLE001 - never raise
                self._replay()
                return ToolResult(ok=False, error=f"Tool {name!r} failed: "
                                  f"{type(e).__name__}: {e}")
            return ToolResult(ok=True, content=content)

        def _replay(self) -> None:
            assert self._from is not None
            self.state = self.State.model_validate(self._from)
            for name, args in self._journal:
                assert self._write(name, args).ok, "replay diverged"

    Experimental.__name__ = Experimental.__qualname__ = f"{cls.__name__}Experimental"
    return Experimental


def episode_trace(env: Environment, snap: Mapping[str, Any], calls: Sequence[Call],
                  n: int = 3) -> list[Any]:
    """Results and final snapshot of n consecutive episodes (to check experiments)."""
    out: list[Any] = []
    for _ in range(n):
        env.restore(snap)
        out.append([env.call(name, args).model_dump() for name, args in calls])
        out.append(json.loads(json.dumps(env.snapshot())))
    return out


def trim(snapshot: Mapping[str, Any], keep: float) -> dict[str, Any]:
    """Every top-level collection cut to a fraction of its entries."""
    out = dict(snapshot)
    for k, v in snapshot.items():
        if isinstance(v, dict) and len(v) > 4:
            out[k] = dict(list(v.items())[: max(1, int(len(v) * keep))])
        elif isinstance(v, list) and len(v) > 4:
            out[k] = v[: max(1, int(len(v) * keep))]
    return out


VARIANTS: dict[str, dict[str, bool]] = {
    "skip_clean": {"skip_clean": True},
    "journal_rollback": {"journal": True},
    "partial_restore": {"partial": True},
    "all_three": {"skip_clean": True, "journal": True, "partial": True},
}


def experiments(classes: Mapping[str, type[Environment]], sets: Mapping[str, CallSet],
                baseline: Mapping[str, Rate], n: int) -> dict[str, Any]:
    return {name: experiment_row(classes[name], cs, baseline[name], n)
            for name, cs in sets.items()}


def experiment_row(cls: type[Environment], cs: CallSet, base: Rate, n: int) -> dict[str, Any]:
    """Every experiment on one environment (checked against the plain class)."""
    snap = cls().snapshot()
    row: dict[str, Any] = {"baseline_eps": round(base.eps, 1)}
    reference = episode_trace(cls(snap), snap, cs.calls)
    # read-only call sets also run with one write found by probing, so that resets
    # have work to do ("mixed"); call sets with writes are their own mixed set
    writes = [] if cs.writes else derive_calls(cls, snap, write=True)
    mixed = cs.calls[:-1] + writes[:1] if writes else cs.calls
    runs = [("", cs.calls, reference)]
    if mixed is not cs.calls:
        runs.append(("mixed_", mixed, episode_trace(cls(snap), snap, mixed)))
        env = cls(snap)
        row["mixed_baseline_eps"] = round(measure(_runner(env, snap, mixed), n).eps, 1)
    row["mixed_calls_writes"] = sum(cls._tools[c].write for c, _ in mixed)
    for label, kw in VARIANTS.items():
        exp_cls = experimental(cls, **kw)
        for suffix, calls, ref in runs:
            exp = exp_cls(snap)
            same = episode_trace(exp, snap, calls) == ref
            exp = exp_cls(snap)
            rate = measure(_runner(exp, snap, calls), n)
            row[f"{suffix}{label}_eps"] = round(rate.eps, 1)
            row[f"{suffix}{label}_same_results"] = same
    row["mixed_distinct"] = mixed is not cs.calls
    if mixed is cs.calls:  # the same runs
        row["mixed_baseline_eps"] = row["baseline_eps"]
        for label in VARIANTS:
            row[f"mixed_{label}_eps"] = row[f"{label}_eps"]
    # state size: restore + snapshot cost of the full and of a trimmed state
    size_kb = len(json.dumps(snap)) / 1024
    env = cls(snap)
    full = time_per(_reset_and_snapshot(env, snap), n)
    row["state_kb"] = round(size_kb, 1)
    row["restore_snapshot_ms"] = round(full * 1e3, 4)
    try:
        small = trim(snap, 0.25)
        env.restore(small)
        part = time_per(_reset_and_snapshot(env, small), n)
        row["trimmed_kb"] = round(len(json.dumps(small)) / 1024, 1)
        row["trimmed_restore_snapshot_ms"] = round(part * 1e3, 4)
    except Exception as e:  # noqa: BLE001 - a state whose rules forbid trimming
        row["trimmed_error"] = f"{type(e).__name__}: {str(e)[:80]}"
    # restore alternatives (full copies of the whole state)
    js = json.dumps(snap)
    py = cls(snap).state.model_dump()
    pk = pickle.dumps(cls(snap).state, protocol=pickle.HIGHEST_PROTOCOL)
    state_obj = cls(snap).state
    row["restore_ms"] = {
        "model_validate(json dict)": time_per(lambda: cls.State.model_validate(snap), n),
        "model_validate_json(str)": time_per(lambda: cls.State.model_validate_json(js), n),
        "model_validate(python dump)": time_per(lambda: cls.State.model_validate(py), n),
        "pickle.loads": time_per(lambda: pickle.loads(pk), n),
        "model_copy(deep=True)": time_per(lambda: state_obj.model_copy(deep=True),
                                          max(3, n // 10)),
    }
    row["restore_ms"] = {k: round(v * 1e3, 4) for k, v in row["restore_ms"].items()}
    # fresh instance: what every MCP session pays before load_scenario
    row["new_instance_seeded_ms"] = round(time_per(cls, max(3, n // 10)) * 1e3, 3)
    row["new_instance_from_snapshot_ms"] = round(time_per(lambda: cls(snap), n) * 1e3, 3)
    return row


# -- MCP -----------------------------------------------------------------------------


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def _session_episode(session: Any, snap: Mapping[str, Any], calls: Sequence[Call],
                           marks: dict[str, float]) -> tuple[int, dict[str, Any]]:
    t = time.perf_counter()
    loaded = await session.call_tool("load_scenario", {"scenario": dict(snap)})
    if loaded.isError:
        raise RuntimeError(f"load_scenario failed: {_text(loaded)}")
    marks["load_scenario"] += time.perf_counter() - t
    t = time.perf_counter()
    ok = 0
    for name, args in calls:
        ok += not (await session.call_tool(name, args)).isError
    marks["calls"] += time.perf_counter() - t
    t = time.perf_counter()
    saved = json.loads(_text(await session.call_tool("save_scenario", {})))
    marks["save_scenario"] += time.perf_counter() - t
    return ok, saved


async def mcp_per_process(name: str, snap: Mapping[str, Any], calls: Sequence[Call],
                          n: int) -> dict[str, Any]:
    """n episodes, each with its own `envfactory env serve NAME` stdio process."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "envfactory", "env", "serve", name],
                                   cwd=str(ROOT))
    marks = dict.fromkeys(("spawn_initialize", "load_scenario", "calls", "save_scenario",
                           "close"), 0.0)
    ok, saved = 0, {}  # type: tuple[int, dict[str, Any]]
    cpu0 = time.process_time() + _children_cpu()
    t_all = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        for _ in range(n):
            t0 = time.perf_counter()
            async with stdio_client(params, errlog=devnull) as (r, w):
                async with ClientSession(r, w) as session:
                    await session.initialize()
                    marks["spawn_initialize"] += time.perf_counter() - t0
                    ok, saved = await _session_episode(session, snap, calls, marks)
                    t_close = time.perf_counter()
            marks["close"] += time.perf_counter() - t_close
    wall = time.perf_counter() - t_all
    cpu = time.process_time() + _children_cpu() - cpu0
    return {"episodes": n, "eps": n / wall, "ms_per_episode": wall / n * 1e3,
            "cpu_ms_per_episode": cpu / n * 1e3,
            "phases_ms": {k: round(v / n * 1e3, 2) for k, v in marks.items()},
            "calls_ok": ok, "final_state": saved}


def _children_cpu() -> float:
    """CPU seconds of this process's finished (waited-for) children."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _pid_cpu(pid: int) -> float:
    """CPU seconds of a running process (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def http_server(name: str) -> Any:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "envfactory", "env", "serve", name,
                             "--transport", "http", "--port", str(port)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            if proc.poll() is not None:
                raise RuntimeError(f"{name}: HTTP server exited with {proc.returncode}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError(f"{name}: HTTP server did not start")
        yield f"http://127.0.0.1:{port}/mcp", proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def mcp_long_lived(name: str, snap: Mapping[str, Any], calls: Sequence[Call],
                         n: int) -> dict[str, Any]:
    """n episodes on one long-lived streamable-HTTP server, one new session each."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    with http_server(name) as (url, pid):
        async def one(marks: dict[str, float]) -> tuple[int, dict[str, Any]]:
            t0 = time.perf_counter()
            async with streamable_http_client(url) as (r, w, _):
                async with ClientSession(r, w) as session:
                    await session.initialize()
                    marks["connect_initialize"] += time.perf_counter() - t0
                    result = await _session_episode(session, snap, calls, marks)
                    t_close = time.perf_counter()
            marks["close"] += time.perf_counter() - t_close
            return result

        keys = ("connect_initialize", "load_scenario", "calls", "save_scenario", "close")
        warm = dict.fromkeys(keys, 0.0)
        for _ in range(2):
            await one(warm)
        marks = dict.fromkeys(keys, 0.0)
        cpu0 = time.process_time() + _pid_cpu(pid)
        t_all = time.perf_counter()
        ok, saved = 0, {}  # type: tuple[int, dict[str, Any]]
        for _ in range(n):
            ok, saved = await one(marks)
        wall = time.perf_counter() - t_all
        cpu = time.process_time() + _pid_cpu(pid) - cpu0
        # for comparison: the same episodes in ONE session (load_scenario resets it)
        reused = dict.fromkeys(keys, 0.0)
        async with streamable_http_client(url) as (r, w, _):
            async with ClientSession(r, w) as session:
                await session.initialize()
                await _session_episode(session, snap, calls, dict(warm))
                cpu1 = time.process_time() + _pid_cpu(pid)
                t1 = time.perf_counter()
                for _ in range(n):
                    await _session_episode(session, snap, calls, reused)
                wall1 = time.perf_counter() - t1
                cpu1 = time.process_time() + _pid_cpu(pid) - cpu1
    return {"episodes": n, "eps": n / wall, "ms_per_episode": wall / n * 1e3,
            "cpu_ms_per_episode": cpu / n * 1e3,
            "one_session": {"eps": n / wall1, "ms_per_episode": wall1 / n * 1e3,
                            "cpu_ms_per_episode": cpu1 / n * 1e3,
                            "phases_ms": {k: round(v / n * 1e3, 2) for k, v in reused.items()
                                          if v}},
            "phases_ms": {k: round(v / n * 1e3, 2) for k, v in marks.items()},
            "calls_ok": ok, "final_state": saved}


# -- main ----------------------------------------------------------------------------


@dataclass
class EnvResult:
    name: str
    calls: CallSet
    inproc: Rate
    phases: dict[str, float]
    state_kb: float
    per_process: dict[str, Any] | None = None
    long_lived: dict[str, Any] | None = None
    agree: dict[str, bool] = field(default_factory=dict)

    @property
    def ceiling_eps(self) -> float:
        """Episodes/s if resets, snapshots and undo records cost nothing."""
        ms = self.phases["args_validation"] + self.phases["tool_logic_and_rest"]
        return 1e3 / ms if ms > 0 else math.inf


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--envs", help="comma-separated environment names (default: all pool)")
    p.add_argument("--episodes", type=int, default=300, help="in-process episodes per env")
    p.add_argument("--mcp-episodes", type=int, default=5,
                   help="MCP episodes with one server process each, per env")
    p.add_argument("--http-episodes", type=int, default=30,
                   help="MCP episodes on the long-lived HTTP server, per env")
    p.add_argument("--profile-episodes", type=int, default=200)
    p.add_argument("--profile-env", help="environment to profile (default: the slowest)")
    p.add_argument("--specs", type=Path, default=SPECS_DIR)
    p.add_argument("--data", type=Path, default=DATA_DIR)
    p.add_argument("--no-mcp", action="store_true", help="in-process figures only")
    p.add_argument("--no-experiments", action="store_true")
    return p.parse_args(argv)


def _get(m: Mapping[str, Any] | None, key: str) -> float | None:
    return None if m is None else float(m[key])


def fmt(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    classes = pool_classes()
    names = list(classes)
    if args.envs:
        names = [n.strip() for n in args.envs.split(",") if n.strip()]
        unknown = [n for n in names if n not in classes]
        if unknown:
            console.print(f"[red]unknown environment(s): {', '.join(unknown)}; "
                          f"pool: {', '.join(classes)}[/red]")
            return 2
    console.print(f"[bold]env throughput[/bold]: {len(names)} pool environments, "
                  f"{CALLS_PER_EPISODE} calls per episode, python {sys.version.split()[0]}, "
                  f"{os.cpu_count()} CPUs, load average "
                  f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    sets = call_sets(names, args.specs, args.data)

    results: dict[str, EnvResult] = {}
    for name, cs in sets.items():
        cls = classes[name]
        snap = cls().snapshot()
        env = cls(snap)
        rate = measure(_runner(env, snap, cs.calls), args.episodes)
        results[name] = EnvResult(name, cs, rate,
                                  phase_breakdown(cls, snap, cs.calls, args.episodes),
                                  state_kb=len(json.dumps(snap)) / 1024)
        console.print(f"  in process: {name:<22} {rate.eps:>9,.0f} episodes/s "
                      f"({rate.ms:.3f} CPU ms, {rate.wall_ms:.3f} wall ms, {cs.source})")

    if not args.no_mcp:
        import anyio

        for name, res in results.items():
            cls = classes[name]
            snap = cls().snapshot()
            expected = cls(snap)
            episodes(expected, snap, res.calls.calls, 1)
            want = json.loads(json.dumps(expected.snapshot()))
            try:
                if args.mcp_episodes > 0:
                    res.per_process = anyio.run(mcp_per_process, name, snap, res.calls.calls,
                                                args.mcp_episodes)
                    res.agree["per_process"] = res.per_process.pop("final_state") == want
                if args.http_episodes > 0:
                    res.long_lived = anyio.run(mcp_long_lived, name, snap, res.calls.calls,
                                               args.http_episodes)
                    res.agree["long_lived"] = res.long_lived.pop("final_state") == want
            except Exception as e:  # noqa: BLE001 - report and go on with the next env
                console.print(f"[red]{name}: MCP measurement failed: {type(e).__name__}: "
                              f"{e}[/red]")
            pp, ll = res.per_process, res.long_lived
            console.print(f"  MCP: {name:<22} per-process {fmt(_get(pp, 'eps'), 2)} eps/s, "
                          f"long-lived {fmt(_get(ll, 'eps'), 1)} eps/s")

    # -- tables -------------------------------------------------------------------------
    table = Table(title=f"Episodes per second (episode = reset + {CALLS_PER_EPISODE} calls + "
                  f"snapshot; target in process: {TARGET_EPS:,}/s on one core)")
    for col in ("env", "calls: source, ok/10, writes", "state KB", "in-proc eps/s (CPU)",
                "CPU ms/ep", "eps/s (wall)", "MCP per-proc eps/s", "wall ms/ep", "CPU ms/ep",
                "MCP long-lived eps/s", "wall ms/ep", "CPU ms/ep",
                "in-proc / per-proc (wall, CPU)", "in-proc / long-lived (wall, CPU)"):
        table.add_column(col, justify="left" if col.startswith(("env", "calls")) else "right")

    def ratios(r: EnvResult, m: dict[str, Any] | None) -> str:
        if not m:
            return "-"
        return (f"{r.inproc.wall_eps / m['eps']:,.0f}x, "
                f"{m['cpu_ms_per_episode'] / r.inproc.ms:,.0f}x")

    for name, r in results.items():
        pp, ll = r.per_process, r.long_lived
        table.add_row(
            name, f"{r.calls.source}, {r.calls.ok}/10, {r.calls.writes}w",
            f"{r.state_kb:.0f}", fmt(r.inproc.eps, 0), fmt(r.inproc.ms, 3),
            fmt(r.inproc.wall_eps, 0),
            fmt(_get(pp, "eps"), 2), fmt(_get(pp, "ms_per_episode"), 0),
            fmt(_get(pp, "cpu_ms_per_episode"), 0),
            fmt(_get(ll, "eps"), 1), fmt(_get(ll, "ms_per_episode"), 1),
            fmt(_get(ll, "cpu_ms_per_episode"), 1), ratios(r, pp), ratios(r, ll))
    console.print(table)

    phase_table = Table(title="In-process phases, ms per episode (timed separately, "
                        "no profiler)")
    phase_cols = ("restore", "snapshot", "calls", "args_validation", "undo_dumps",
                  "tool_logic_and_rest")
    for col in ("env", *phase_cols, "restore+snapshot share"):
        phase_table.add_column(col, justify="left" if col == "env" else "right")
    for name, r in results.items():
        ph = r.phases
        whole = ph["restore"] + ph["snapshot"] + ph["calls"]
        phase_table.add_row(name, *(f"{ph[c]:.3f}" for c in phase_cols),
                            f"{(ph['restore'] + ph['snapshot']) / whole:.0%}" if whole else "-")
    console.print(phase_table)

    if any(r.per_process or r.long_lived for r in results.values()):
        mcp_table = Table(title="MCP phases, ms per episode")
        mcp_table.add_column("env")
        mcp_table.add_column("mode")
        phase_names = ("spawn_initialize", "connect_initialize", "load_scenario", "calls",
                       "save_scenario", "close")
        for col in (*phase_names, "calls ok", "state = in-proc"):
            mcp_table.add_column(col, justify="right")
        for name, r in results.items():
            for mode, m in (("per-process", r.per_process), ("long-lived", r.long_lived)):
                if not m:
                    continue
                key = "per_process" if mode == "per-process" else "long_lived"
                mcp_table.add_row(name, mode, *(fmt(m["phases_ms"].get(p), 1)
                                                for p in phase_names),
                                  f"{m['calls_ok']}/10", str(r.agree.get(key, "-")))
                if "one_session" in m:
                    one = m["one_session"]
                    mcp_table.add_row(
                        "", f"one session: {one['eps']:.1f} eps/s, "
                        f"{one['cpu_ms_per_episode']:.0f} CPU ms",
                        *(fmt(one["phases_ms"].get(p), 1) for p in phase_names), "", "")
        console.print(mcp_table)

    prof: dict[str, Any] | None = None
    if results:
        slowest = max(results.values(), key=lambda r: r.inproc.ms)
        if args.profile_env in results:
            slowest = results[args.profile_env]
        cls = classes[slowest.name]
        snap = cls().snapshot()
        prof = profile(cls, snap, slowest.calls.calls, args.profile_episodes)
        g = Table(title=f"cProfile of {slowest.name} in process, grouped: "
                  f"{prof['profiled_ms_per_episode']:.3f} ms/episode under the profiler")
        g.add_column("where the time goes")
        g.add_column("ms/episode", justify="right")
        g.add_column("share", justify="right")
        for k, v in sorted(prof["groups_ms_per_episode"].items(), key=lambda kv: -kv[1]):
            g.add_row(k, f"{v:.3f}", f"{prof['groups_share'][k]:.1%}")
        console.print(g)
        h = Table(title=f"Top hotspots (own time) in {slowest.name}")
        for col in ("function", "calls", "ms/episode", "share"):
            h.add_column(col, justify="left" if col == "function" else "right")
        for row in prof["hotspots"]:
            h.add_row(row["function"], str(row["calls"]),
                      f"{row['tottime_ms_per_episode']:.3f}", f"{row['share']:.1%}")
        console.print(h)
        if prof["tool_functions"]:
            console.print("  tool logic, cumulative ms/episode: " + ", ".join(
                f"{t['function']} {t['cumtime_ms_per_episode']:.3f}"
                for t in prof["tool_functions"]))

    exp: dict[str, Any] | None = None
    if not args.no_experiments and results:
        exp = experiments(classes, sets, {n: r.inproc for n, r in results.items()},
                          args.episodes)
        any_mixed = any(row["mixed_distinct"] for row in exp.values())
        et = Table(title="Experiments (not in envs/): episodes/s in process (CPU)" + (
            "; 'mixed' = read-only calls with one probed write" if any_mixed else ""))
        cols = ("baseline", "skip_clean", "journal_rollback", "partial_restore", "all_three")
        mixed_cols = ("mixed (writes)", *(f"mixed {c}" for c in cols[1:])) if any_mixed else ()
        for col in ("env", *cols, "calls-only ceiling", *mixed_cols, "same results"):
            et.add_column(col, justify="left" if col == "env" else "right")
        for name, row in exp.items():
            same = all(v for k, v in row.items() if k.endswith("_same_results"))
            mixed_cells = (f"{fmt(row['mixed_baseline_eps'], 0)} ({row['mixed_calls_writes']}w)",
                           *(fmt(row[f"mixed_{c}_eps"], 0) for c in cols[1:])) \
                if any_mixed and row["mixed_distinct"] else ("=",) * len(mixed_cols)
            et.add_row(name, fmt(row["baseline_eps"], 0),
                      *(fmt(row[f"{c}_eps"], 0) for c in cols[1:]),
                      fmt(results[name].ceiling_eps, 0), *mixed_cells, str(same))
        console.print(et)
        console.print("  skip_clean: no reset/dump when nothing was written; journal_rollback: "
                      "no undo dump per write, replay on failure; partial_restore: re-validate "
                      "only the top-level fields that changed; calls-only ceiling: 1 / (argument "
                      "validation + tool logic), i.e. if resets, snapshots and undo records were "
                      "free")
        s = Table(title="Restore: full-copy alternatives (ms), state size, fresh instances "
                  "(ms)")
        first = next(iter(exp.values()))
        rcols = list(first["restore_ms"])
        for col in ("env", "KB", *rcols, "restore+snapshot", "trimmed to 1/4: KB", "ms",
                    "new seeded instance", "new instance from snapshot"):
            s.add_column(col, justify="left" if col == "env" else "right")
        for name, row in exp.items():
            s.add_row(name, f"{row['state_kb']:.0f}", *(f"{row['restore_ms'][c]:.3f}"
                                                        for c in rcols),
                      f"{row['restore_snapshot_ms']:.3f}", fmt(row.get("trimmed_kb"), 0),
                      fmt(row.get("trimmed_restore_snapshot_ms"), 3),
                      f"{row['new_instance_seeded_ms']:.2f}",
                      f"{row['new_instance_from_snapshot_ms']:.3f}")
        console.print(s)

    # -- summary + JSON ----------------------------------------------------------------
    summary = aggregate(results, exp)
    for line in summary.pop("_lines"):
        console.print(line)
    payload = {
        "benchmark": "env_throughput", "calls_per_episode": CALLS_PER_EPISODE,
        "target_eps_in_process": TARGET_EPS, "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "envs": {n: {
            "calls_source": r.calls.source, "calls_ok": r.calls.ok, "writes": r.calls.writes,
            "state_kb": round(r.state_kb, 1),
            "in_process": r.inproc.as_dict(), "phases_ms": r.phases,
            "calls_only_ceiling_eps": round(r.ceiling_eps, 1),
            "mcp_per_process": _mcp_summary(r.per_process),
            "mcp_long_lived": _mcp_summary(r.long_lived),
            "ratio_in_process_per_process": _ratio(r.inproc, r.per_process),
            "ratio_in_process_long_lived": _ratio(r.inproc, r.long_lived),
            "mcp_state_agrees": r.agree,
        } for n, r in results.items()},
        "aggregate": summary,
        "profile": _round(prof) if prof else None,
        "experiments": _round(exp) if exp else None,
    }
    print(json.dumps(payload, separators=(",", ":")))
    return 0


def _mcp_summary(m: dict[str, Any] | None) -> dict[str, Any] | None:
    if not m:
        return None
    out = {"eps": round(m["eps"], 3), "ms_per_episode": round(m["ms_per_episode"], 1),
           "cpu_ms_per_episode": round(m["cpu_ms_per_episode"], 1),
           "episodes": m["episodes"], "calls_ok": m["calls_ok"], "phases_ms": m["phases_ms"]}
    if "one_session" in m:
        out["one_session"] = _round(m["one_session"])
    return out


def _ratio(rate: Rate, m: dict[str, Any] | None) -> dict[str, float] | None:
    """How many times faster in process is: by wall time, and by CPU time (all processes)."""
    if not m:
        return None
    return {"wall": round(rate.wall_eps / m["eps"], 1),
            "cpu": round(m["cpu_ms_per_episode"] / rate.ms, 1)}


def _round(obj: Any) -> Any:
    if isinstance(obj, float):
        return round(obj, 4)
    if isinstance(obj, dict):
        return {k: _round(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_round(v) for v in obj]
    return obj


def aggregate(results: Mapping[str, EnvResult], exp: Mapping[str, Any] | None) -> dict[str, Any]:
    """Across environments: a uniform mix's throughput (1 / mean ms), geometric means."""
    lines: list[str] = []
    out: dict[str, Any] = {"envs": len(results)}
    if not results:
        out["_lines"] = ["[yellow]no environment measured[/yellow]"]
        return out

    def mix(ms: list[float]) -> float:
        return 1e3 / statistics.fmean(ms)

    def geo(xs: list[float]) -> float:
        return math.exp(statistics.fmean(math.log(x) for x in xs))

    inproc = [r.inproc.ms for r in results.values()]
    out["in_process"] = {"eps_uniform_mix": round(mix(inproc), 1),
                         "eps_geomean": round(geo([r.inproc.eps for r in results.values()]), 1),
                         "eps_min": round(min(r.inproc.eps for r in results.values()), 1),
                         "eps_max": round(max(r.inproc.eps for r in results.values()), 1),
                         "meets_target_envs": sum(r.inproc.eps >= TARGET_EPS
                                                  for r in results.values()),
                         "calls_only_ceiling_eps_uniform_mix": round(mix(
                             [1e3 / r.ceiling_eps for r in results.values()]), 1),
                         "calls_only_ceiling_meets_target_envs": sum(
                             r.ceiling_eps >= TARGET_EPS for r in results.values())}
    phases = {k: statistics.fmean(r.phases[k] for r in results.values())
              for k in next(iter(results.values())).phases}
    whole = phases["restore"] + phases["snapshot"] + phases["calls"]
    out["phase_share_mean"] = {k: round(v / whole, 3) for k, v in phases.items()
                               if k in ("restore", "snapshot", "args_validation", "undo_dumps",
                                        "tool_logic_and_rest")}
    lines.append(f"In process: {out['in_process']['eps_uniform_mix']:,.0f} episodes/s for a "
                 f"uniform mix ({out['in_process']['eps_min']:,.0f}-"
                 f"{out['in_process']['eps_max']:,.0f} per env); "
                 f"{out['in_process']['meets_target_envs']}/{len(results)} envs reach "
                 f"{TARGET_EPS:,}/s. Mean shares: " + ", ".join(
                     f"{k} {v:.0%}" for k, v in out["phase_share_mean"].items())
                 + f". With free resets, snapshots and undo records (calls only): "
                 f"{out['in_process']['calls_only_ceiling_eps_uniform_mix']:,.0f} episodes/s, "
                 f"{out['in_process']['calls_only_ceiling_meets_target_envs']}/{len(results)} "
                 f"envs at target.")
    for key, label in (("per_process", "MCP per-process"), ("long_lived", "MCP long-lived")):
        measured = [r for r in results.values() if getattr(r, key)]
        if measured:
            ms = [getattr(r, key)["ms_per_episode"] for r in measured]
            cpu = [getattr(r, key)["cpu_ms_per_episode"] for r in measured]
            wall_in = statistics.fmean(r.inproc.wall_ms for r in measured)
            cpu_in = statistics.fmean(r.inproc.ms for r in measured)
            out[key] = {"eps_uniform_mix": round(mix(ms), 3),
                        "ms_per_episode_mean": round(statistics.fmean(ms), 1),
                        "cpu_ms_per_episode_mean": round(statistics.fmean(cpu), 1),
                        "ratio_in_process_wall": round(statistics.fmean(ms) / wall_in, 1),
                        "ratio_in_process_cpu": round(statistics.fmean(cpu) / cpu_in, 1)}
            lines.append(f"{label}: {out[key]['eps_uniform_mix']:,.2f} episodes/s, "
                         f"{out[key]['ms_per_episode_mean']:,.1f} ms/episode wall, "
                         f"{out[key]['cpu_ms_per_episode_mean']:,.1f} ms CPU (client + "
                         f"server); in process is {out[key]['ratio_in_process_wall']:,.0f}x "
                         f"faster by wall, {out[key]['ratio_in_process_cpu']:,.0f}x by CPU")
            one = [getattr(r, key)["one_session"] for r in measured
                   if "one_session" in getattr(r, key)]
            if one:
                out[f"{key}_one_session"] = {
                    "eps_uniform_mix": round(mix([o["ms_per_episode"] for o in one]), 3),
                    "cpu_ms_per_episode_mean": round(
                        statistics.fmean(o["cpu_ms_per_episode"] for o in one), 1)}
                lines.append(f"{label}, all episodes in ONE session: "
                             f"{out[f'{key}_one_session']['eps_uniform_mix']:,.2f} episodes/s, "
                             f"{out[f'{key}_one_session']['cpu_ms_per_episode_mean']:,.1f} "
                             "ms CPU per episode")
    if exp:
        any_mixed = any(row["mixed_distinct"] for row in exp.values())
        for label in VARIANTS:
            for suffix in ("", "mixed_") if any_mixed else ("",):
                base = "baseline_eps" if not suffix else "mixed_baseline_eps"
                gains = [row[f"{suffix}{label}_eps"] / row[base] for row in exp.values()]
                out[f"{suffix}{label}_speedup_geomean"] = round(geo(gains), 2)
        kb = [row["state_kb"] for row in exp.values()]
        rs = [row["restore_snapshot_ms"] for row in exp.values()]
        us_per_kb = sum(r * 1e3 for r in rs) / sum(kb)
        out["restore_snapshot_us_per_kb"] = round(us_per_kb, 2)
        trimmed = [(row["restore_snapshot_ms"], row["trimmed_restore_snapshot_ms"])
                   for row in exp.values() if "trimmed_restore_snapshot_ms" in row]
        if trimmed:
            out["trimmed_quarter_speedup_geomean"] = round(geo([a / b for a, b in trimmed]), 2)
        seeded = [row["new_instance_seeded_ms"] / row["new_instance_from_snapshot_ms"]
                  for row in exp.values()]
        out["new_instance_from_snapshot_speedup_geomean"] = round(geo(seeded), 1)
        lines.append(
            "Experiments, geomean speed-up on the 10 calls"
            + (" / on read-only calls with one write: " if any_mixed else ": ") + ", ".join(
                f"{k} {out[f'{k}_speedup_geomean']:.2f}x" + (
                    f" / {out[f'mixed_{k}_speedup_geomean']:.2f}x" if any_mixed else "")
                for k in VARIANTS)
            + f". restore+snapshot costs {us_per_kb:.1f} us per KB of state, so "
            f"{1e6 / TARGET_EPS:.0f} us per episode allows at most "
            f"~{1e6 / TARGET_EPS / us_per_kb:.0f} KB even with free tool calls.")
    out["_lines"] = lines
    return out


if __name__ == "__main__":
    raise SystemExit(main())
