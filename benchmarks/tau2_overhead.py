"""Harness time per τ² conversation step, with a zero-latency scripted agent and user.

Runs each domain's tasks through Inspect with `envfactory/oracle` in both roles (no
model latency at all), so all measured time is harness: the orchestrator, the
environments, Inspect's bookkeeping and the reward. Also times the reward alone (the
evaluator re-grading the same conversations) to show what the scorer costs.

    python benchmarks/tau2_overhead.py [--domains airline,retail,telecom] [--limit N]

Prints a table and ends with one JSON line of the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "tau2"
os.environ.setdefault("TAU2_DATA_DIR", str(SHARED))

from inspect_ai import eval as inspect_eval  # noqa: E402

from envs.tau2.tasks import Task  # noqa: E402
from tasks._tau2.evaluator import evaluate  # noqa: E402
from tasks._tau2.messages import T2Message, TerminationReason  # noqa: E402
from tasks._tau2.orchestrator import TERMINATION_KEY, TRAJECTORY_KEY  # noqa: E402
from tasks.tau2.tau2 import tau2_airline, tau2_retail, tau2_telecom  # noqa: E402

TASKS = {"airline": tau2_airline, "retail": tau2_retail, "telecom": tau2_telecom}


def measure(domain: str, limit: int | None) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as logs:
        start = time.perf_counter()
        (log,) = inspect_eval(TASKS[domain](), model="envfactory/oracle",
                              model_roles={"user": "envfactory/oracle"}, limit=limit,
                              log_dir=logs, display="none", max_samples=16)
        wall = time.perf_counter() - start
        samples = list(log.samples or [])  # read before the log folder goes away
    steps = sum(int(next(iter(s.scores.values())).metadata["steps"]) for s in samples)

    async def regrade() -> float:
        t0 = time.perf_counter()
        for s in samples:
            await evaluate(Task.model_validate(s.metadata["task"]), domain,
                           [T2Message.model_validate(m) for m in s.store[TRAJECTORY_KEY]],
                           TerminationReason(s.store[TERMINATION_KEY]))
        return time.perf_counter() - t0

    reward_time = asyncio.run(regrade())
    n = len(samples)
    return {"conversations": n, "steps": steps, "wall_s": round(wall, 2),
            "ms_per_step": round(1000 * wall / steps, 2),
            "ms_per_conversation": round(1000 * wall / n, 1),
            "reward_ms_per_conversation": round(1000 * reward_time / n, 1),
            "reward_share": round(reward_time / wall, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", default="airline,retail,telecom")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    figures = {d: measure(d, args.limit) for d in args.domains.split(",")}
    table = Table(title="τ² harness overhead (zero-latency oracle agent and user)")
    for col in ("domain", "conversations", "steps", "wall s", "ms/step", "ms/conversation",
                "reward ms/conv", "reward share"):
        table.add_column(col, justify="right")
    for d, f in figures.items():
        table.add_row(d, str(f["conversations"]), str(f["steps"]), str(f["wall_s"]),
                      str(f["ms_per_step"]), str(f["ms_per_conversation"]),
                      str(f["reward_ms_per_conversation"]), str(f["reward_share"]))
    Console(stderr=True).print(table)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
