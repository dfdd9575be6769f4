"""Environment throughput: episodes per second in process (and, optionally, over MCP).

    python benchmarks/env_throughput.py [--quick] [--envs a,b] [--episodes N]
        [--mcp-episodes M] [--specs DIR]

One episode = `env.restore(snapshot)` + 10 tool calls + `env.snapshot()`, for every pool
environment (`envs.pool.pool_classes()`). The 10 calls are the environment's gold calls
from the single-environment task specs (`tasks/envfactory/specs/*.json`), cycled to 10;
an environment without specs is skipped. Figures are CPU time of this single-threaded
process (best of 3 blocks), i.e. the one-core cost; the machine may be shared.

Two in-process figures per environment:

* `eps`: the plain episode loop (nobody outside the tools touches `env.state`, so a
  write takes no undo copy: see `Environment._checkpoint`);
* `shared_eps`: the same episodes with `env.state` read before every call, which makes
  every write take an undo dump (what code that inspects or edits the state pays).

With `--mcp-episodes M`, M episodes per environment also run through `envfactory env
serve NAME` over stdio, one server process per episode (what `transport="mcp"` does).
Every variant must end in the same final state, or the script exits with status 1.

Prints a table and ends with one JSON line (`in_process_eps`: a uniform mix over the
pool, 1 / mean ms per episode). `--quick` (CI) runs in a few seconds.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from envs.base import Environment  # noqa: E402
from envs.pool import pool_classes  # noqa: E402

CALLS_PER_EPISODE = 10
TARGET_EPS = 5_000
SPECS_DIR = ROOT / "tasks" / "envfactory" / "specs"
console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)

Call = tuple[str, dict[str, Any]]


def gold_calls(specs_dir: Path) -> dict[str, list[Call]]:
    """Gold calls of single-environment tasks, per environment, in spec order."""
    out: dict[str, list[Call]] = {}
    for path in sorted(specs_dir.glob("*.json")):
        for task in json.loads(path.read_text(encoding="utf-8")):
            envs = task.get("environments", [])
            if len(envs) != 1:
                continue
            for turn in task.get("turns", []):
                for c in turn.get("gold_calls", []):
                    if c.get("env", envs[0]) == envs[0]:
                        out.setdefault(envs[0], []).append(
                            (c["name"], dict(c.get("arguments") or {})))
    return out


def episodes(env: Environment, snap: Mapping[str, Any], calls: Sequence[Call], n: int,
             *, touch_state: bool = False) -> dict[str, Any]:
    """Run n episodes; returns the last final snapshot."""
    final: dict[str, Any] = {}
    for _ in range(n):
        env.restore(snap)
        for name, args in calls:
            if touch_state:
                _ = env.state
            env.call(name, args)
        final = env.snapshot()
    return final


def cpu_ms(run: Callable[[int], Any], n: int, blocks: int = 3) -> float:
    """Best-of-`blocks` CPU milliseconds per episode."""
    run(max(2, n // 10))  # warm-up
    per = max(1, n // blocks)
    best = math.inf
    for _ in range(blocks):
        t0 = time.process_time()
        run(per)
        best = min(best, (time.process_time() - t0) / per)
    return best * 1e3


def mcp_stdio(name: str, snap: Mapping[str, Any], calls: Sequence[Call],
              n: int) -> tuple[float, dict[str, Any]]:
    """Wall ms per episode with one `envfactory env serve NAME` process per episode."""
    import os

    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "envfactory", "env", "serve", name],
                                   cwd=str(ROOT))

    async def run() -> dict[str, Any]:
        saved: dict[str, Any] = {}
        with open(os.devnull, "w") as devnull:
            for _ in range(n):
                async with stdio_client(params, errlog=devnull) as (r, w), \
                        ClientSession(r, w) as session:
                    await session.initialize()
                    await session.call_tool("load_scenario", {"scenario": dict(snap)})
                    for tool, args in calls:
                        await session.call_tool(tool, args)
                    result = await session.call_tool("save_scenario", {})
                    saved = json.loads("".join(getattr(c, "text", "")
                                               for c in result.content))
        return saved

    t0 = time.perf_counter()
    saved = anyio.run(run)
    return (time.perf_counter() - t0) / n * 1e3, saved


def mix(ms: Sequence[float]) -> float:
    """Episodes/s of a uniform mix: 1 / mean ms per episode."""
    return 1e3 / statistics.fmean(ms) if ms else 0.0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="few episodes, no MCP (CI)")
    p.add_argument("--envs", help="comma-separated environment names (default: all pool)")
    p.add_argument("--episodes", type=int, default=600, help="in-process episodes per env")
    p.add_argument("--mcp-episodes", type=int, default=0,
                   help="MCP stdio episodes per env, one server process each (default 0)")
    p.add_argument("--specs", type=Path, default=SPECS_DIR)
    args = p.parse_args(argv)
    if args.quick:
        args.episodes, args.mcp_episodes = min(args.episodes, 60), 0

    classes = pool_classes()
    names = [n.strip() for n in args.envs.split(",")] if args.envs else list(classes)
    unknown = [n for n in names if n not in classes]
    if unknown:
        console.print(f"[red]unknown environment(s): {', '.join(unknown)}[/red]")
        return 2
    gold = gold_calls(args.specs) if args.specs.is_dir() else {}

    rows: dict[str, dict[str, Any]] = {}
    agree = True
    for name in names:
        if not gold.get(name):
            console.print(f"[yellow]{name}: no gold calls in {args.specs}; skipped[/yellow]")
            continue
        cls = classes[name]
        calls = [gold[name][i % len(gold[name])] for i in range(CALLS_PER_EPISODE)]
        snap = cls().snapshot()
        env = cls(snap)
        results = [env.call(n, a) for n, a in calls]
        want = episodes(cls(snap), snap, calls, 1)
        row: dict[str, Any] = {
            "calls_ok": sum(r.ok for r in results),
            "writes": sum(cls._tools[n].write for n, _ in calls if n in cls._tools),
            "ms": cpu_ms(lambda k, e=env, c=calls, s=snap: episodes(e, s, c, k),
                         args.episodes),
            "shared_ms": cpu_ms(lambda k, e=env, c=calls, s=snap: episodes(
                e, s, c, k, touch_state=True), args.episodes),
        }
        same = [episodes(cls(snap), snap, calls, 1, touch_state=True) == want]
        if args.mcp_episodes:
            row["mcp_ms"], saved = mcp_stdio(name, snap, calls, args.mcp_episodes)
            same.append(saved == json.loads(json.dumps(want)))
        row["same_final_state"] = all(same)
        agree &= row["same_final_state"]
        rows[name] = row

    table = Table(title=f"Episodes/s on one core (episode = restore + {CALLS_PER_EPISODE} "
                  f"calls + snapshot; target {TARGET_EPS:,}/s)")
    for col in ("env", "ok/10", "writes", "eps", "CPU ms", "eps, state shared",
                "MCP stdio eps (wall)", "same final state"):
        table.add_column(col, justify="left" if col == "env" else "right")
    for name, r in rows.items():
        table.add_row(name, str(r["calls_ok"]), str(r["writes"]), f"{1e3 / r['ms']:,.0f}",
                      f"{r['ms']:.3f}", f"{1e3 / r['shared_ms']:,.0f}",
                      f"{1e3 / r['mcp_ms']:.2f}" if "mcp_ms" in r else "-",
                      str(r["same_final_state"]))
    console.print(table)
    eps = mix([r["ms"] for r in rows.values()])
    shared = mix([r["shared_ms"] for r in rows.values()])
    console.print(f"Uniform mix over {len(rows)} environments: {eps:,.0f} episodes/s "
                  f"({shared:,.0f} with the state shared); target {TARGET_EPS:,}.")
    payload = {
        "benchmark": "env_throughput", "quick": args.quick, "episodes": args.episodes,
        "calls_per_episode": CALLS_PER_EPISODE, "target_eps": TARGET_EPS,
        "in_process_eps": round(eps, 1), "in_process_shared_state_eps": round(shared, 1),
        "mcp_stdio_eps": round(mix([r["mcp_ms"] for r in rows.values() if "mcp_ms" in r]),
                               3) if args.mcp_episodes else None,
        "same_final_states": agree,
        "envs": {n: {"eps": round(1e3 / r["ms"], 1),
                     "shared_state_eps": round(1e3 / r["shared_ms"], 1),
                     "calls_ok": r["calls_ok"], "writes": r["writes"]}
                 for n, r in rows.items()},
    }
    print(json.dumps(payload, separators=(",", ":")))
    return 0 if agree and rows else 1


if __name__ == "__main__":
    raise SystemExit(main())
