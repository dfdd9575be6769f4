"""Harness time per model call of `bfcl_multiturn` with a zero-latency model.

    python benchmarks/harness_overhead.py [--limit N] [--categories base,...] [--profile]
    python benchmarks/harness_overhead.py --quick      # 20 samples (CI)

`envfactory/oracle` answers instantly with the gold calls, so all the time the eval
takes is harness: Inspect (model plumbing, transcript, realtime buffer, sample log), our
solver, the BFCL environment, the official executor and the official checker. Measured
in this process, after a 4-sample warm-up that pays the one-time imports, with Inspect's
default settings (`max_samples` 50, quiet display, log to a temporary folder):

* wall and CPU time of the eval, model calls (model events in the log), harness
  milliseconds per model call (`ms_per_model_call`, the figure tracked from run to run)
  and per sample, and the oracle's accuracy (1.0 expected);
* the floor: bfcl-eval's `multi_turn_checker` alone on the gold calls of the same
  entries (what scoring costs; the official pipeline pays it too);
* with `--profile`, where the CPU goes: a CPU-time stack sampler (SIGPROF, 2 ms) on
  the eval charges each sample to the innermost frame of ours (harness/, tasks/,
  envs/), bfcl-eval or Inspect (by sub-package: log, model, _eval, solver, ...),
  skipping the libraries they call into (pydantic, json, asyncio, ...).

For the speed settings a user can choose and the comparison with the official
`bfcl generate`, see `benchmarks/bfcl_vs_official.py`. Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from envs.bfcl.categories import MULTI_TURN_CATEGORIES  # noqa: E402
from envs.jsonl import read_objects  # noqa: E402

MODEL = "envfactory/oracle"
CATEGORIES = MULTI_TURN_CATEGORIES


def data_file(category: str, answers: bool = False) -> Path:
    import bfcl_eval

    data = Path(bfcl_eval.__file__).parent / "data"
    name = f"BFCL_v3_multi_turn_{category}.json"
    return data / "possible_answer" / name if answers else data / name


def select_ids(categories: list[str], limit: int | None) -> list[str]:
    """The first entries of each category, `limit` in all (spread evenly), or all."""
    ids = [[entry["id"] for entry in read_objects(data_file(c))] for c in categories]
    if limit is None:
        return [i for group in ids for i in group]
    share, extra = divmod(limit, len(categories))
    return [i for n, group in enumerate(ids) for i in group[: share + (n < extra)]]


def run_eval(ids: list[str], categories: list[str], max_samples: int) -> dict[str, Any]:
    from inspect_ai import eval as inspect_eval

    from tasks.bfcl_multiturn.bfcl_multiturn import bfcl_multiturn

    with tempfile.TemporaryDirectory(prefix="harness_overhead_") as log_dir:
        task = bfcl_multiturn(category=",".join(categories))
        wall0, cpu0 = time.perf_counter(), time.process_time()
        (log,) = inspect_eval(task, model=MODEL, sample_id=ids, log_dir=log_dir,
                              display="none", max_samples=max_samples)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        if log.status != "success":
            raise RuntimeError(f"eval did not succeed: {log.status} {log.error}")
        samples = list(log.samples or [])  # read (lazily) before the folder goes
        calls = sum(1 for s in samples for e in s.events if e.event == "model")
    metric = log.results.scores[0].metrics.get("overall") if log.results else None
    return {"samples": len(samples), "model_calls": calls, "wall_s": wall, "cpu_s": cpu,
            "accuracy": None if metric is None else metric.value}


def checker_floor(ids: list[str], categories: list[str]) -> dict[str, Any]:
    """bfcl-eval's `multi_turn_checker` on the gold calls (one step per non-empty turn)."""
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    wanted, work = set(ids), []
    for c in categories:
        pairs = zip(read_objects(data_file(c)), read_objects(data_file(c, answers=True)),
                    strict=True)
        for entry, answer in pairs:
            if entry["id"] in wanted:
                work.append((entry, answer["ground_truth"], f"multi_turn_{c}"))
    valid = 0
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for n, (entry, gold, category) in enumerate(work):
        decoded = [[turn] if turn else [] for turn in gold]
        result = multi_turn_checker(decoded, gold, entry, category, f"floor_{n}")
        valid += bool(result["valid"])
    return {"entries": len(work), "valid": valid, "wall_s": time.perf_counter() - wall0,
            "cpu_s": time.process_time() - cpu0}


# Where a stack sample goes: the innermost frame of ours, bfcl-eval or Inspect (by
# sub-package; Inspect's `_util` helpers count for their caller).
OURS = {f"{ROOT}/{folder}/": f"ours: {folder}/" for folder in ("harness", "tasks", "envs")}


def owner(frame: FrameType | None) -> str:
    while frame is not None:
        path = frame.f_code.co_filename
        for prefix, name in OURS.items():
            if path.startswith(prefix):
                return name
        if "/bfcl_eval/" in path:
            return "bfcl-eval (executor, checker)"
        if "/inspect_ai/" in path:
            sub = path.split("/inspect_ai/", 1)[1].split("/", 1)[0]
            if sub != "_util":
                return f"inspect: {sub.removesuffix('.py')}"
        frame = frame.f_back
    return "other (event loop, threads)"


def profiled_eval(ids: list[str], categories: list[str], max_samples: int
                  ) -> tuple[dict[str, Any], dict[str, float]]:
    """The eval under a CPU-time SIGPROF sampler of the main thread (2 ms)."""
    counts: Counter[str] = Counter()
    old = signal.signal(signal.SIGPROF, lambda _s, frame: counts.update([owner(frame)]))
    signal.setitimer(signal.ITIMER_PROF, 0.002, 0.002)
    try:
        run = run_eval(ids, categories, max_samples)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, old)
    total = sum(counts.values()) or 1
    return run, {k: round(v / total, 4) for k, v in counts.most_common()}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--limit", type=int, default=None,
                    help="samples, spread evenly over the categories (default: all 800)")
    ap.add_argument("--categories", default=",".join(CATEGORIES))
    ap.add_argument("--max-samples", type=int, default=50)
    ap.add_argument("--profile", action="store_true", help="add the CPU breakdown")
    ap.add_argument("--quick", action="store_true", help="20 samples, no profile (CI)")
    args = ap.parse_args(argv)
    if args.quick:
        args.limit, args.profile = 20, False
    categories = args.categories.split(",")
    ids = select_ids(categories, args.limit)

    from rich.console import Console
    from rich.table import Table

    console = Console(stderr=True, width=None if sys.stderr.isatty() else 120)
    console.print("[dim]warm-up eval (one-time imports)...[/dim]")
    run_eval(select_ids(categories, len(categories)), categories, args.max_samples)
    console.print(f"[dim]eval: {len(ids)} samples{' (profiled)' if args.profile else ''}"
                  "...[/dim]")
    if args.profile:
        run, breakdown = profiled_eval(ids, categories, args.max_samples)
    else:
        run, breakdown = run_eval(ids, categories, args.max_samples), {}
    floor = checker_floor(ids, categories)

    calls, n = max(run["model_calls"], 1), max(run["samples"], 1)
    fig: dict[str, Any] = {
        "samples": run["samples"], "model_calls": run["model_calls"],
        "oracle_accuracy": run["accuracy"], "max_samples": args.max_samples,
        "eval_wall_s": round(run["wall_s"], 3), "eval_cpu_s": round(run["cpu_s"], 3),
        "ms_per_model_call": round(1000 * run["wall_s"] / calls, 3),
        "cpu_ms_per_model_call": round(1000 * run["cpu_s"] / calls, 3),
        "ms_per_sample": round(1000 * run["wall_s"] / n, 3),
        "checker_floor_ms_per_sample": round(1000 * floor["wall_s"] / n, 3),
        "checker_floor_valid": floor["valid"],
        "checker_share": round(floor["cpu_s"] / run["cpu_s"], 3) if run["cpu_s"] else None,
        "profiled": args.profile, "breakdown": breakdown,
    }
    table = Table(title=f"bfcl_multiturn harness overhead ({MODEL}, zero-latency model, "
                  f"Inspect defaults, max_samples {args.max_samples})")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key in ("samples", "model_calls", "oracle_accuracy", "eval_wall_s", "eval_cpu_s",
                "ms_per_model_call", "cpu_ms_per_model_call", "ms_per_sample",
                "checker_floor_ms_per_sample", "checker_floor_valid", "checker_share"):
        table.add_row(key, str(fig[key]))
    for name, share in breakdown.items():
        table.add_row(f"CPU share: {name}", f"{100 * share:.1f}%")
    console.print(table)
    print(json.dumps(fig), flush=True)
    return fig


if __name__ == "__main__":
    main()
