"""Harness time per τ² conversation step, with a zero-latency scripted agent and user.

    TAU2_DATA_DIR=/work/shared/data/tau2 python benchmarks/tau2_overhead.py \
        [--domains airline,retail,telecom] [--limit N] [--quick]

Runs each domain's tasks through Inspect with `envfactory/oracle` in both roles (no
model latency at all), so all measured time is harness: the episode loop, the
environments, Inspect's bookkeeping and the reward (after a one-task warm-up per domain
that pays imports and data loading). Then re-scores the same log with the task's own
scorer (`inspect_ai.score`) to show what the reward costs. CPU time (this process) is
reported beside wall time, and the marginal CPU per step: the N-task eval less the
one-task warm-up eval of the same domain, over the extra steps, with the sustainable
steps/s per core it implies (1000 / marginal ms). The comparison with the official
`tau2 run` CLI is not here yet (it needs tau2-bench's venv and a server that plays
agent and user for it). `--quick`
runs 5 tasks per domain (CI). Without τ² data (`TAU2_DATA_DIR`, or `../shared/data/tau2`
beside the checkout) it skips with the reason in its JSON line.

Prints a table and ends with one JSON line of the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data" / "tau2"
if "TAU2_DATA_DIR" not in os.environ and SHARED.is_dir():
    os.environ["TAU2_DATA_DIR"] = str(SHARED)

DOMAINS = ("airline", "retail", "telecom")


def measure(domain: str, limit: int | None) -> dict[str, Any]:
    from inspect_ai import eval as inspect_eval
    from inspect_ai import score

    from tasks.tau2 import tau2

    task = getattr(tau2, f"tau2_{domain}")()
    with tempfile.TemporaryDirectory() as logs:
        start, cpu_start = time.perf_counter(), time.process_time()
        (log,) = inspect_eval(task, model="envfactory/oracle",
                              model_roles={"user": "envfactory/oracle"}, limit=limit,
                              log_dir=logs, display="none", max_samples=16)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        if log.status != "success":
            raise RuntimeError(f"{domain}: eval did not succeed: {log.error}")
        samples = list(log.samples or [])  # read (lazily) before the folder goes
        start = time.perf_counter()
        score(log, task.scorer, display="none", action="overwrite", copy=False)
        reward_time = time.perf_counter() - start
    calls = sum(1 for s in samples for e in s.events if e.event == "model")
    # conversation steps (τ²'s step count, from the score metadata)
    steps = sum(int((next(iter(s.scores.values())).metadata or {}).get("steps", 0))
                for s in samples if s.scores)
    n = max(len(samples), 1)
    return {"conversations": len(samples), "steps": steps, "model_calls": calls,
            "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "ms_per_step": round(1000 * wall / max(steps, 1), 2),
            "ms_per_conversation": round(1000 * wall / n, 1),
            "reward_ms_per_conversation": round(1000 * reward_time / n, 1),
            "reward_share": round(reward_time / wall, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--domains", default=",".join(DOMAINS))
    parser.add_argument("--limit", type=int, default=None, help="tasks per domain")
    parser.add_argument("--quick", action="store_true", help="5 tasks per domain (CI)")
    args = parser.parse_args()
    if args.quick:
        args.limit = 5
    data = os.environ.get("TAU2_DATA_DIR")
    if not data or not Path(data, "domains").is_dir():
        print(json.dumps({"skipped": f"no τ² data: TAU2_DATA_DIR={data!r} has no domains/ "
                          f"(and no {SHARED})"}))
        return

    from rich.console import Console
    from rich.table import Table

    domains = args.domains.split(",")
    # warm-up: imports and data loading; a second one-task eval is the marginal's base
    first = {}
    for d in domains:
        measure(d, 1)
        first[d] = measure(d, 1)
    figures = {d: measure(d, args.limit) for d in domains}
    for d, f in figures.items():
        extra = f["steps"] - first[d]["steps"]
        marginal = 1000 * (f["cpu_s"] - first[d]["cpu_s"]) / extra if extra > 0 else None
        f["marginal_cpu_ms_per_step"] = None if marginal is None else round(marginal, 2)
        f["steps_per_s_per_core"] = (round(1000 / marginal, 1) if marginal and marginal > 0
                                     else None)
    table = Table(title="τ² harness overhead (zero-latency oracle agent and user)")
    for col in ("domain", "conversations", "steps", "model calls", "wall s", "CPU s",
                "ms/step", "ms/conversation", "reward ms/conv", "reward share",
                "marginal CPU ms/step", "steps/s/core"):
        table.add_column(col, justify="right")
    for d, f in figures.items():
        table.add_row(d, *(str(v) for v in f.values()))
    Console(stderr=True, width=None if sys.stderr.isatty() else 160).print(table)
    print(json.dumps({**figures, "load_average": [round(x, 2) for x in os.getloadavg()]}))


if __name__ == "__main__":
    main()
