"""Harness overhead of `bfcl_multiturn` with a zero-latency model (`envfactory/oracle`).

    python benchmarks/harness_overhead.py [--limit N] [--categories base,miss_func,...]

The oracle answers instantly, so everything the full Inspect eval spends is harness
time: Inspect (model plumbing, transcript, realtime buffer, log writing), our solver
and environment, the official executor and the official checker. Measured:

1. the full eval, in process (`inspect_ai.eval`, quiet display, log to a temp dir),
   after a 4-sample warm-up that pays the one-time imports: wall and CPU time, model
   calls (counted at the provider and cross-checked against the log's model events),
   milliseconds of harness time per model call and per sample;
2. the floor: bfcl-eval's `multi_turn_checker` alone (`score_decoded`) on the gold
   calls of the same entries, and a "bare loop" (our per-sample work without Inspect:
   tool conversion, `BfclWorld`, official executor on the gold steps, checker);
3. a breakdown on a subset (`--profile-limit`, default 100): a CPU-time stack sampler
   (SIGPROF) on the eval thread attributes time to components (Inspect tool copying,
   transcript and realtime buffer, sample-log writing, our solver, executor, checker,
   ...), plus cross-cutting costs (pydantic, deepcopy, JSON, sqlite) and the top
   cumulative functions; CPython's cyclic GC is measured apart (`gc.callbacks`),
   the sampler charges it to whichever frame allocated;
4. optionally (`--sweep`), the knobs a user can set (`log_realtime`, `log_samples`,
   `max_samples`, `gc.set_threshold`) on a subset, interleaved, best of `--repeat`.

The machine is shared, so wall time is noisy; CPU time of this process is printed
next to it. Prints rich tables, then exactly one JSON line with the figures.
Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import gc
import json
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

MODEL = "envfactory/oracle"
TARGET_MS_PER_CALL = 5.0
console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)


# -- sample selection ------------------------------------------------------------------


def select_ids(categories: Sequence[str], limit: int | None) -> list[str]:
    """Entry ids spread evenly over the categories (the first of each), in task order."""
    from tasks._bfcl.multiturn import _entries

    per_category = [[e["id"] for e, _ in _entries(c)] for c in categories]
    if limit is None:
        return [i for ids in per_category for i in ids]
    chosen: list[str] = []
    share, extra = divmod(limit, len(categories))
    for n, ids in enumerate(per_category):
        chosen.extend(ids[: share + (1 if n < extra else 0)])
    return chosen


def entries_for(ids: Sequence[str]) -> list[tuple[dict[str, Any], list[list[str]]]]:
    from tasks._bfcl.multiturn import CATEGORIES, _entries

    wanted = set(ids)
    found = {e["id"]: (e, gt) for c in CATEGORIES for e, gt in _entries(c) if e["id"] in wanted}
    return [found[i] for i in ids]


# -- the full eval ---------------------------------------------------------------------


@dataclass
class EvalRun:
    samples: int
    wall_s: float
    cpu_s: float
    model_calls: int
    model_events: int | None
    accuracy: float | None
    failed: list[str]
    settings: dict[str, Any]
    gc_s: float = 0.0
    gc_collections: dict[int, int] = field(default_factory=dict)
    gc_threshold: tuple[int, ...] | None = None

    @property
    def ms_per_call(self) -> float:
        return 1000 * self.wall_s / max(self.model_calls, 1)

    @property
    def cpu_ms_per_call(self) -> float:
        return 1000 * self.cpu_s / max(self.model_calls, 1)

    @property
    def gc_ms_per_call(self) -> float:
        return 1000 * self.gc_s / max(self.model_calls, 1)

    @property
    def ms_per_sample(self) -> float:
        return 1000 * self.wall_s / max(self.samples, 1)

    @property
    def cpu_ms_per_sample(self) -> float:
        return 1000 * self.cpu_s / max(self.samples, 1)


@contextmanager
def counting_generate() -> Iterator[list[int]]:
    """Count calls into the scripted provider (one per model call, no other effect)."""
    from harness.providers.scripted import ScriptedModelAPI

    counter = [0]
    original = ScriptedModelAPI.generate

    async def generate(self: Any, *args: Any, **kwargs: Any) -> Any:
        counter[0] += 1
        return await original(self, *args, **kwargs)

    ScriptedModelAPI.generate = generate  # type: ignore[method-assign]
    try:
        yield counter
    finally:
        ScriptedModelAPI.generate = original  # type: ignore[method-assign]


@contextmanager
def gc_accounting(threshold: tuple[int, ...] | None = None) -> Iterator[dict[str, Any]]:
    """CPU seconds spent in CPython's cyclic GC, and collections per generation.

    `threshold` (e.g. (10000, 10, 10)) replaces `gc.set_threshold` for the block.
    The sampler cannot see the collector (it runs inside whatever allocation triggers
    it), so its time is measured here, through `gc.callbacks`.
    """
    acc: dict[str, Any] = {"seconds": 0.0, "collections": Counter()}
    started: list[float] = []

    def callback(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(time.process_time())
        elif started:
            acc["seconds"] += time.process_time() - started.pop()
            acc["collections"][info.get("generation", -1)] += 1

    old = gc.get_threshold()
    if threshold is not None:
        gc.set_threshold(*threshold)
    gc.callbacks.append(callback)
    try:
        yield acc
    finally:
        gc.callbacks.remove(callback)
        gc.set_threshold(*old)


def run_eval(ids: Sequence[str], settings: dict[str, Any],
             gc_threshold: tuple[int, ...] | None = None) -> EvalRun:
    """One in-process eval of `ids` with the oracle; log written to a temp dir."""
    from inspect_ai import eval as inspect_eval

    from tasks.bfcl_multiturn.bfcl_multiturn import bfcl_multiturn

    with tempfile.TemporaryDirectory(prefix="harness_overhead_") as log_dir:
        task = bfcl_multiturn()
        gc.collect()
        with counting_generate() as counter, gc_accounting(gc_threshold) as gc_acc:
            wall0, cpu0 = time.perf_counter(), time.process_time()
            logs = inspect_eval(
                task, model=MODEL, sample_id=list(ids), log_dir=log_dir,
                display="none", **settings,
            )
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        log = logs[0]
        if log.status != "success":
            raise RuntimeError(f"eval did not succeed: {log.status} {log.error}")
        events = failed = None
        if log.samples is not None:
            events = sum(1 for s in log.samples for e in s.events if e.event == "model")
            failed = sorted(
                str(s.id) for s in log.samples
                if not s.scores or any(v.value != "C" for v in s.scores.values())
            )
        accuracy = None
        if log.results and log.results.scores:
            metric = log.results.scores[0].metrics.get("overall")
            accuracy = metric.value if metric else None
    return EvalRun(len(ids), wall, cpu, counter[0], events, accuracy, failed or [], settings,
                   gc_acc["seconds"], dict(sorted(gc_acc["collections"].items())), gc_threshold)


# -- floors ----------------------------------------------------------------------------


def gold_decoded(ground_truth: list[list[str]]) -> list[list[list[str]]]:
    """The gold calls as the oracle plays them: one step per non-empty turn."""
    return [[turn] if turn else [] for turn in ground_truth]


def checker_floor(ids: Sequence[str]) -> dict[str, Any]:
    """The official `multi_turn_checker` alone on the gold calls of `ids`."""
    from tasks._bfcl.multiturn import score_decoded

    entries = entries_for(ids)
    score_decoded(gold_decoded(entries[0][1]), entries[0][1], entries[0][0])  # imports
    valid = 0
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for entry, ground_truth in entries:
        valid += bool(score_decoded(gold_decoded(ground_truth), ground_truth, entry)["valid"])
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return {"wall_s": wall, "cpu_s": cpu, "valid": valid, "entries": len(entries)}


def bare_loop(ids: Sequence[str]) -> dict[str, Any]:
    """Our per-sample work without Inspect: official tools, `BfclWorld`, the official
    executor on every gold step (with held-out functions revealed), then the checker.
    An approximation of the solver's own work, for comparison only."""
    from envs.bfcl.environment import BfclWorld
    from tasks._bfcl.common import official_tools
    from tasks._bfcl.multiturn import _functions_for, score_decoded

    entries = entries_for(ids)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    steps = 0
    for entry, ground_truth in entries:
        category = entry["id"].rsplit("_", 1)[0]
        classes = entry["involved_classes"]
        holdout = entry.get("missed_function", {})
        held = {n for names in holdout.values() for n in names}
        docs = _functions_for(classes)
        functions = [d for d in docs if d["name"] not in held]
        official_tools(functions, category, in_place=True)
        world = BfclWorld(entry["id"], entry["initial_config"], classes,
                          long_context="long_context" in category)
        for turn_idx, calls in enumerate(ground_truth):
            if str(turn_idx) in holdout:
                functions.extend(d for d in docs if d["name"] in holdout[str(turn_idx)])
                official_tools(functions, category, in_place=True)
            if calls:
                world.execute(list(calls))
                steps += 1
        score_decoded(gold_decoded(ground_truth), ground_truth, entry)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return {"wall_s": wall, "cpu_s": cpu, "steps": steps, "entries": len(entries)}


# -- profile: a stack sampler on the eval thread ---------------------------------------


# Components, highest priority first: a sample goes to the first component that has a
# frame anywhere on its stack. (path fragment, function names or None for any)
Rule = tuple[str, frozenset[str] | None]
COMPONENTS: list[tuple[str, list[Rule]]] = [
    ("official checker (scorer)", [
        ("multi_turn_checker.py", None), ("tasks/_bfcl/multiturn.py", frozenset({"score_decoded"})),
    ]),
    ("official executor + backends (solver tool calls)", [
        ("envs/bfcl/environment.py", None), ("multi_turn_eval/multi_turn_utils.py", None),
    ]),
    ("oracle provider (ours)", [("harness/providers/", None)]),
    ("tool conversion + docs copy (ours)", [
        ("tasks/_bfcl/common.py", frozenset({"official_tools"})),
        ("tasks/_bfcl/multiturn.py", frozenset({
            "_functions_for", "gold_script", "_positional_order"})),
    ]),
    ("raw-argument lookup + decoding (ours)", [
        ("tasks/_bfcl/common.py", None),
        ("tasks/_bfcl/multiturn.py", frozenset({"decode_step"})),
    ]),
    ("inspect: tool copy/prepare per call", [
        ("inspect_ai/model/_call_tools.py", frozenset({
            "prepare_tools", "copy_tools_info", "snapshot_tools_for_event",
            "_tool_info_from_tdef"})),
    ]),
    ("inspect: transcript events + realtime buffer", [
        ("inspect_ai/log/_transcript.py", None), ("inspect_ai/log/_recorders/buffer/", None),
        ("inspect_ai/event/", None), ("inspect_ai/agent/_acp/", None),
    ]),
    ("inspect: sample log (condense, serialize, write)", [
        ("inspect_ai/log/_condense.py", None), ("inspect_ai/_eval/task/log.py", None),
        ("inspect_ai/log/_recorders/", None),
        ("inspect_ai/_eval/task/run.py", frozenset({"log_sample"})),
    ]),
    ("inspect: model.generate (other)", [("inspect_ai/model/", None)]),
    ("our solver (other)", [("tasks/_bfcl/multiturn.py", None)]),
    ("inspect: task/sample runner, scorer plumbing", [("inspect_ai/", None)]),
]
IDLE = "event loop idle / waiting"
OTHER = "other"

# Cross-cutting libraries: share of samples with any such frame on the stack.
CROSS_CUTTING: list[tuple[str, list[Rule]]] = [
    ("pydantic (validate/copy/serialize)", [("/pydantic/", None)]),
    ("copy.deepcopy", [("/copy.py", frozenset({"deepcopy"}))]),
    ("JSON encode (json, to_json_safe)", [
        ("/json/", None), ("inspect_ai/_util/json.py", None)]),
    ("sqlite realtime buffer", [("inspect_ai/log/_recorders/buffer/database.py", None)]),
]


def _matches(code: CodeType, rules: list[Rule]) -> bool:
    path = code.co_filename.replace("\\", "/")
    return any(frag in path and (names is None or code.co_name in names)
               for frag, names in rules)


class StackSampler:
    """CPU-time stack sampler of the main thread (`ITIMER_PROF` + SIGPROF).

    The handler runs in the main thread at the next bytecode boundary, so time spent
    inside a C call (sqlite, pydantic-core, zlib) is charged to the Python frame that
    made the call; samples are weighted by the CPU time of this process, which keeps
    the breakdown meaningful on a shared, loaded machine.
    """

    def __init__(self, interval: float = 0.002) -> None:
        self.interval = interval
        self.stacks: Counter[tuple[CodeType, ...]] = Counter()

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        stack = []
        while frame is not None:
            stack.append(frame.f_code)
            frame = frame.f_back
        if stack:
            self.stacks[tuple(stack)] += 1  # leaf first

    def __enter__(self) -> StackSampler:
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("the stack sampler needs the main thread")
        self._old = signal.signal(signal.SIGPROF, self._handler)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, self._old)


def classify(stack: tuple[CodeType, ...]) -> str:
    for name, rules in COMPONENTS:
        if any(_matches(code, rules) for code in stack):
            return name
    leaf = stack[0]
    if leaf.co_filename.endswith(("selectors.py", "threading.py")) or leaf.co_name in (
        "select", "_run_once", "wait"):
        return IDLE
    return OTHER


def run_profile(ids: Sequence[str], settings: dict[str, Any], top: int,
                gc_threshold: tuple[int, ...] | None = None) -> dict[str, Any]:
    with StackSampler() as sampler:
        run = run_eval(ids, settings, gc_threshold)
    total = sum(sampler.stacks.values()) or 1
    components: Counter[str] = Counter()
    cross: Counter[str] = Counter()
    inclusive: Counter[tuple[str, str, int]] = Counter()
    for stack, n in sampler.stacks.items():
        components[classify(stack)] += n
        for name, rules in CROSS_CUTTING:
            if any(_matches(code, rules) for code in stack):
                cross[name] += n
        for code in set(stack):
            inclusive[(code.co_filename, code.co_name, code.co_firstlineno)] += n
    generic = ("/asyncio/", "/anyio/", "/threading.py", "/contextlib.py", str(Path(__file__)))
    hot = [(k, n) for k, n in inclusive.most_common()
           if n / total < 0.9 and not any(g in k[0] for g in generic)][:top]

    def short(path: str) -> str:
        for marker in ("site-packages/", str(ROOT) + "/", "/lib/python3"):
            if marker in path:
                return path.split(marker, 1)[1]
        return path

    return {
        "run": run,
        "samples_taken": total,
        "components": {k: n / total for k, n in components.most_common()},
        "cross_cutting": {k: cross[k] / total for k, _ in CROSS_CUTTING},
        "hotspots": [(f"{short(f)}:{line}({fn})", n / total) for (f, fn, line), n in hot],
    }


# -- sweep of knobs a user can set -----------------------------------------------------


RELAXED_GC = (10_000, 10, 10)

# (label, Inspect eval() settings, gc thresholds or None for CPython's default)
SWEEP: list[tuple[str, dict[str, Any], tuple[int, ...] | None]] = [
    ("default", {}, None),
    ("log_realtime=False", {"log_realtime": False}, None),
    ("log_samples=False", {"log_samples": False}, None),
    ("log_realtime=False, log_samples=False",
     {"log_realtime": False, "log_samples": False}, None),
    (f"gc.set_threshold{RELAXED_GC}", {}, RELAXED_GC),
    (f"gc.set_threshold{RELAXED_GC} + log_realtime=False", {"log_realtime": False}, RELAXED_GC),
    (f"gc.set_threshold{RELAXED_GC} + log_realtime=False, log_samples=False",
     {"log_realtime": False, "log_samples": False}, RELAXED_GC),
    ("max_samples=10", {"max_samples": 10}, None),
]


def run_sweep(ids: Sequence[str], base: dict[str, Any], repeat: int) -> list[dict[str, Any]]:
    """Each config `repeat` times, interleaved; the run with the least CPU is kept."""
    runs: dict[str, list[EvalRun]] = {label: [] for label, _, _ in SWEEP}
    for _ in range(repeat):
        for label, knobs, threshold in SWEEP:
            runs[label].append(run_eval(ids, {**base, **knobs}, threshold))
    rows = []
    for label, _, _ in SWEEP:
        best = min(runs[label], key=lambda r: r.cpu_s)
        wall = min(r.wall_s for r in runs[label])
        rows.append({"config": label, "samples": len(ids), "model_calls": best.model_calls,
                     "wall_s": wall, "cpu_s": best.cpu_s,
                     "ms_per_model_call": 1000 * wall / max(best.model_calls, 1),
                     "cpu_ms_per_model_call": best.cpu_ms_per_call,
                     "gc_ms_per_model_call": best.gc_ms_per_call})
    return rows


# -- output ----------------------------------------------------------------------------


def _f(x: float, digits: int = 2) -> str:
    return f"{x:,.{digits}f}"


def print_tables(fig: dict[str, Any], run: EvalRun, floor: dict[str, Any],
                 bare: dict[str, Any] | None, profile: dict[str, Any] | None,
                 sweep: list[dict[str, Any]] | None) -> None:
    gc_note = "" if run.gc_threshold is None else f", gc.set_threshold{run.gc_threshold}"
    t = Table(title=f"bfcl_multiturn harness overhead ({MODEL}, zero-latency model; "
              f"{fig['settings']}{gc_note})")
    t.add_column("figure")
    t.add_column("wall", justify="right")
    t.add_column("CPU (this process)", justify="right")
    t.add_row("samples / model calls", f"{run.samples}", f"{run.model_calls}"
              + ("" if run.model_events is None else f" ({run.model_events} model events)"))
    t.add_row("oracle accuracy (overall) / failing ids",
              "-" if run.accuracy is None else _f(run.accuracy, 4),
              ", ".join(run.failed[:5]) or "-")
    t.add_row("full eval (s)", _f(run.wall_s), _f(run.cpu_s))
    t.add_row("harness ms / model call", _f(run.ms_per_call), _f(run.cpu_ms_per_call))
    t.add_row("harness ms / sample", _f(run.ms_per_sample), _f(run.cpu_ms_per_sample))
    t.add_row("  of which cyclic GC, ms / model call", "",
              f"{_f(run.gc_ms_per_call)} ({100 * run.gc_s / max(run.cpu_s, 1e-9):.0f}%; "
              f"collections by generation {run.gc_collections})")
    t.add_row("checker floor ms / sample", _f(fig["checker_floor_ms_per_sample"], 3),
              _f(1000 * floor["cpu_s"] / max(floor["entries"], 1), 3))
    t.add_row("ratio harness / checker floor", _f(fig["ratio_vs_checker"], 1),
              _f(fig["cpu_ratio_vs_checker"], 1))
    if bare:
        t.add_row("bare loop ms / sample (ours, no Inspect)",
                  _f(fig["bare_loop_ms_per_sample"], 3),
                  _f(1000 * bare["cpu_s"] / max(bare["entries"], 1), 3))
        t.add_row("ratio harness / bare loop", _f(fig["ratio_vs_bare_loop"], 1), "")
    t.add_row(f"target: < {TARGET_MS_PER_CALL:g} ms / model call",
              "met" if run.ms_per_call < TARGET_MS_PER_CALL else "NOT met",
              "met" if run.cpu_ms_per_call < TARGET_MS_PER_CALL else "NOT met")
    console.print(t)

    if profile:
        prun: EvalRun = profile["run"]
        p = Table(title=f"where the CPU goes: {profile['samples_taken']} SIGPROF stack samples "
                  f"on {prun.samples} samples ({prun.model_calls} model calls, "
                  f"{_f(prun.cpu_ms_per_call)} CPU ms/call, of which GC "
                  f"{_f(prun.gc_ms_per_call)})")
        p.add_column("component (GC charged to the allocating frame)")
        p.add_column("share", justify="right")
        p.add_column("≈ CPU ms / model call", justify="right")
        for name, share in profile["components"].items():
            p.add_row(name, f"{100 * share:.1f}%", _f(share * prun.cpu_ms_per_call))
        for name, share in profile["cross_cutting"].items():
            p.add_row(f"[dim]cross-cutting: {name}[/dim]", f"[dim]{100 * share:.1f}%[/dim]",
                      f"[dim]{_f(share * prun.cpu_ms_per_call)}[/dim]")
        console.print(p)
        h = Table(title="top cumulative functions (share of stack samples)")
        h.add_column("function")
        h.add_column("share", justify="right")
        for name, share in profile["hotspots"]:
            h.add_row(name, f"{100 * share:.1f}%")
        console.print(h)

    if sweep:
        s = Table(title=f"knobs a user can set, on {sweep[0]['samples']} samples "
                  "(best CPU of the repeats)")
        for col in ("config", "wall s", "CPU s", "ms / call", "CPU ms / call",
                    "GC ms / call"):
            s.add_column(col, justify="left" if col == "config" else "right")
        for row in sweep:
            s.add_row(row["config"], _f(row["wall_s"]), _f(row["cpu_s"]),
                      _f(row["ms_per_model_call"]), _f(row["cpu_ms_per_model_call"]),
                      _f(row["gc_ms_per_model_call"]))
        console.print(s)


# -- main ------------------------------------------------------------------------------


def _threshold(text: str) -> tuple[int, ...]:
    values = tuple(int(v) for v in text.split(","))
    if not 1 <= len(values) <= 3:
        raise argparse.ArgumentTypeError("expected 1 to 3 comma-separated integers")
    return values


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from tasks._bfcl.multiturn import CATEGORIES

    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--limit", type=int, default=None,
                   help="samples, spread evenly over the categories (default: all 800)")
    p.add_argument("--categories", default=",".join(CATEGORIES),
                   help="comma-separated subset of " + ", ".join(CATEGORIES))
    p.add_argument("--max-samples", type=int, default=50,
                   help="Inspect max_samples for the timed eval (default 50)")
    p.add_argument("--log-realtime", action=argparse.BooleanOptionalAction, default=None,
                   help="Inspect log_realtime (default: Inspect's default, on)")
    p.add_argument("--log-samples", action=argparse.BooleanOptionalAction, default=None,
                   help="Inspect log_samples (default: Inspect's default, on)")
    p.add_argument("--gc-threshold", type=_threshold, default=None, metavar="N[,N[,N]]",
                   help="gc.set_threshold for the timed evals (default: CPython's)")
    p.add_argument("--profile-limit", type=int, default=100,
                   help="samples for the stack-sampled breakdown (0: skip)")
    p.add_argument("--top", type=int, default=15, help="cumulative hotspots to list")
    p.add_argument("--no-bare-loop", action="store_true", help="skip the bare-loop floor")
    p.add_argument("--sweep", action="store_true",
                   help="also time the knobs (log_realtime, log_samples, gc thresholds, "
                   "max_samples)")
    p.add_argument("--sweep-limit", type=int, default=200, help="samples for --sweep")
    p.add_argument("--repeat", type=int, default=2, help="repeats per --sweep config")
    args = p.parse_args(argv)
    args.categories = [c.strip() for c in args.categories.split(",") if c.strip()]
    unknown = [c for c in args.categories if c not in CATEGORIES]
    if unknown or not args.categories:
        p.error(f"unknown categories {unknown}; use a subset of {', '.join(CATEGORIES)}")
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    ids = select_ids(args.categories, args.limit)
    settings: dict[str, Any] = {"max_samples": args.max_samples}
    if args.log_realtime is not None:
        settings["log_realtime"] = args.log_realtime
    if args.log_samples is not None:
        settings["log_samples"] = args.log_samples

    def status(msg: str) -> None:
        console.print(f"[dim]{msg}[/dim]")

    status("warm-up eval (one-time imports)...")
    warm0 = time.perf_counter()
    run_eval(select_ids(args.categories, len(args.categories)), settings)
    warmup_s = time.perf_counter() - warm0

    status(f"full eval: {len(ids)} samples...")
    run = run_eval(ids, settings, args.gc_threshold)
    status("checker floor...")
    floor = checker_floor(ids)
    bare = None if args.no_bare_loop else bare_loop(ids)
    profile = None
    if args.profile_limit:
        status(f"stack-sampled eval: {args.profile_limit} samples...")
        profile = run_profile(select_ids(args.categories, args.profile_limit), settings,
                              args.top, args.gc_threshold)
    sweep = None
    if args.sweep:
        sweep_ids = select_ids(args.categories, args.sweep_limit)
        status(f"knob sweep: {len(sweep_ids)} samples x {len(SWEEP)} configs x "
               f"{args.repeat}...")
        sweep = run_sweep(sweep_ids, settings, args.repeat)

    floor_ms = 1000 * floor["wall_s"] / max(floor["entries"], 1)
    floor_cpu_ms = 1000 * floor["cpu_s"] / max(floor["entries"], 1)
    fig: dict[str, Any] = {
        "samples": run.samples,
        "model_calls": run.model_calls,
        "model_events": run.model_events,
        "oracle_accuracy": run.accuracy,
        "oracle_failed": run.failed,
        "settings": settings,
        "gc_threshold": list(args.gc_threshold) if args.gc_threshold else None,
        "warmup_s": round(warmup_s, 3),
        "eval_wall_s": round(run.wall_s, 3),
        "eval_cpu_s": round(run.cpu_s, 3),
        "ms_per_model_call": round(run.ms_per_call, 3),
        "cpu_ms_per_model_call": round(run.cpu_ms_per_call, 3),
        "ms_per_sample": round(run.ms_per_sample, 3),
        "cpu_ms_per_sample": round(run.cpu_ms_per_sample, 3),
        "gc_ms_per_model_call": round(run.gc_ms_per_call, 3),
        "gc_share_of_cpu": round(run.gc_s / run.cpu_s, 4) if run.cpu_s else None,
        "gc_collections": {str(k): v for k, v in run.gc_collections.items()},
        "checker_floor_s": round(floor["wall_s"], 3),
        "checker_floor_ms_per_sample": round(floor_ms, 4),
        "checker_floor_valid": floor["valid"],
        "ratio_vs_checker": round(run.ms_per_sample / floor_ms, 2) if floor_ms else None,
        "cpu_ratio_vs_checker": round(run.cpu_ms_per_sample / floor_cpu_ms, 2)
        if floor_cpu_ms else None,
        "target_ms_per_model_call": TARGET_MS_PER_CALL,
        "target_met": run.ms_per_call < TARGET_MS_PER_CALL,
    }
    if bare:
        bare_ms = 1000 * bare["wall_s"] / max(bare["entries"], 1)
        fig["bare_loop_ms_per_sample"] = round(bare_ms, 4)
        fig["ratio_vs_bare_loop"] = round(run.ms_per_sample / bare_ms, 2) if bare_ms else None
    if profile:
        fig["profile_samples"] = profile["run"].samples
        fig["profile_cpu_ms_per_model_call"] = round(profile["run"].cpu_ms_per_call, 3)
        fig["breakdown"] = {k: round(v, 4) for k, v in profile["components"].items()}
        fig["cross_cutting"] = {k: round(v, 4) for k, v in profile["cross_cutting"].items()}
    if sweep:
        fig["sweep"] = [{k: (round(v, 3) if isinstance(v, float) else v)
                         for k, v in row.items()} for row in sweep]

    print_tables(fig, run, floor, bare, profile, sweep)
    print(json.dumps(fig), flush=True)
    return fig


if __name__ == "__main__":
    main()
