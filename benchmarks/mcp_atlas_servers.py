"""MCP-Atlas's offline servers: start-up time, per-call latency, path-mapping overhead.

    python benchmarks/mcp_atlas_servers.py [--quick] [--starts N] [--calls N]
        [--servers a,b]

For every offline server installed here (`make install-mcp-atlas`), in a fresh
per-sample `Workspace`:

* start-up: `McpBackend` entered (process start, MCP handshake, `tools/list`) and left,
  wall ms, median of `--starts`;
* per call: one representative call (read a shipped CSV, compute, read the memory
  graph, `git log` of a scratch repo, `ls`, run Python reading a CSV), `--calls` times
  through `McpBackend` with the workspace's `/data` mapping, median and p90 wall ms;
* the mapping's cost: the same calls interleaved on the same server without the
  rewrite (real paths given directly), and `Workspace.arguments` + `.text` alone on
  that call's arguments and result (µs, CPU).

The data files come from `MCP_ATLAS_DATA_DIR`, else `../shared/data/mcp_atlas` beside
the checkout, else the pinned release (downloaded). With no server installed it skips,
with the reason in its JSON line. Prints a table and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data" / "mcp_atlas"
if "MCP_ATLAS_DATA_DIR" not in os.environ and (SHARED / "mcp_server_template.json").is_file():
    os.environ["MCP_ATLAS_DATA_DIR"] = str(SHARED)

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

console = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)
REPO = "bench-repo"
#: one representative call per server, with upstream's `/data` paths
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "filesystem": ("read_file", {"path": "/data/Top Movies.csv"}),
    "calculator": ("calculate", {"expression": "(1234.5 * 0.075) + 2**10"}),
    "memory": ("read_graph", {}),
    "git": ("git_log", {"repo_path": f"/data/repos/{REPO}"}),
    "cli-mcp-server": ("run_command", {"command": "ls /data"}),
    "mcp-server-code-runner": ("run-code", {"languageId": "python", "code":
                                            "print(len(open('/data/Crime_records.csv')"
                                            ".read().splitlines()))"}),
    # these two cannot be installed here (their pinned versions are not on this npm
    # registry); their calls follow the packages' documented tools, unmeasured
    "desktop-commander": ("list_directory", {"path": "/data"}),
    "mcp-code-executor": ("execute_code", {"code": "print(open('/data/Top Movies.csv')"
                                           ".readline())", "filename": "bench"}),
}


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def make_repo(path: Path) -> None:
    path.mkdir(parents=True)
    git = ["git", "-C", str(path), "-c", "user.name=b", "-c", "user.email=b@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    for i in range(3):
        (path / "notes.txt").write_text(f"line {i}\n")
        subprocess.run([*git, "add", "."], check=True)
        subprocess.run([*git, "commit", "-q", "-m", f"commit {i}"], check=True)


async def measure(name: str, starts: int, calls: int) -> dict[str, Any]:
    from harness.tool_backends import McpBackend
    from tasks._mcp_atlas.workspace import Workspace, launch

    tool, arguments = CALLS[name]
    qualified = f"{name}_{tool}"
    repos = [REPO] if name == "git" else []
    with Workspace(repos=repos) as ws:
        start_ms = []
        mapped_ms, direct_ms = [], []
        real = ws.arguments(arguments)
        for i in range(starts):  # the last start-up serves the calls
            b = McpBackend([launch(name, ws)], separator="_", rewrite=ws)
            t0 = time.perf_counter()
            await b.__aenter__()
            tools = len(b.tools())
            start_ms.append((time.perf_counter() - t0) * 1e3)
            if i < starts - 1:
                await b.__aexit__(None, None, None)
        try:
            first = await b.call(qualified, arguments)
            if not first.ok:
                raise RuntimeError(f"{qualified}: {first.text[:300]}")
            for _ in range(calls):  # interleaved, so that drift hits both alike
                b.rewrite = ws
                t0 = time.perf_counter()
                await b.call(qualified, arguments)
                mapped_ms.append((time.perf_counter() - t0) * 1e3)
                b.rewrite = None
                t0 = time.perf_counter()
                raw = await b.call(qualified, real)
                direct_ms.append((time.perf_counter() - t0) * 1e3)
        finally:
            await b.__aexit__(None, None, None)
        rounds = 2000
        t0 = time.process_time()
        for _ in range(rounds):
            ws.arguments(arguments)
            ws.text(raw.text)
        mapping_us = (time.process_time() - t0) / rounds * 1e6
    return {"tools": tools, "call": qualified, "result_chars": len(first.text),
            "startup_ms": statistics.median(start_ms),
            "call_median_ms": statistics.median(mapped_ms),
            "call_p90_ms": percentile(mapped_ms, 0.9),
            "unmapped_median_ms": statistics.median(direct_ms),
            "mapping_us": mapping_us}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="1 start, 10 calls per server (CI)")
    p.add_argument("--starts", type=int, default=5, help="start-ups per server")
    p.add_argument("--calls", type=int, default=200, help="calls per server")
    p.add_argument("--servers", help="comma-separated server names (default: the offline set)")
    args = p.parse_args(argv)
    if args.quick:
        args.starts, args.calls = 1, 10
    # code runner prints a banner on stdout; the MCP client logs a traceback per line
    logging.getLogger("mcp.client.stdio").setLevel(logging.CRITICAL)

    from tasks._mcp_atlas.servers import OFFLINE, availability

    names = [n.strip() for n in args.servers.split(",")] if args.servers else list(OFFLINE)
    try:
        states = {n: availability(n) for n in names}
    except (FileNotFoundError, ValueError) as e:
        print(json.dumps({"benchmark": "mcp_atlas_servers", "skipped": str(e)}))
        return 0
    skipped = {n: s.reason for n, s in states.items() if not s.ok}
    ready = [n for n, s in states.items() if s.ok]
    for n, reason in skipped.items():
        console.print(f"[yellow]{n}: skipped ({reason})[/yellow]")
    if not ready:
        print(json.dumps({"benchmark": "mcp_atlas_servers", "quick": args.quick,
                          "skipped": "no offline MCP-Atlas server is installed "
                          "(make install-mcp-atlas)", "servers_skipped": skipped}))
        return 0

    from tasks._mcp_atlas.workspace import Workspace

    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as repos:
        os.environ["MCP_ATLAS_REPOS_DIR"] = repos
        make_repo(Path(repos) / REPO)
        t0 = time.perf_counter()
        for _ in range(5):
            with Workspace(repos=[REPO]):
                pass
        workspace_ms = (time.perf_counter() - t0) / 5 * 1e3
        for name in ready:
            rows[name] = asyncio.run(measure(name, args.starts, args.calls))

    table = Table(title=f"MCP-Atlas offline servers ({args.starts} start(s), "
                  f"{args.calls} calls each; wall ms)")
    for col in ("server", "tools", "call", "start-up", "call median", "call p90",
                "unmapped median", "mapping µs (CPU)"):
        table.add_column(col, justify="left" if col in ("server", "call") else "right")
    for name, r in rows.items():
        table.add_row(name, str(r["tools"]), r["call"], f"{r['startup_ms']:.0f}",
                      f"{r['call_median_ms']:.2f}", f"{r['call_p90_ms']:.2f}",
                      f"{r['unmapped_median_ms']:.2f}", f"{r['mapping_us']:.1f}")
    console.print(table)
    console.print(f"Workspace (fresh /data copy + one repo + HOME, removed): "
                  f"{workspace_ms:.1f} ms")
    payload = {
        "benchmark": "mcp_atlas_servers", "quick": args.quick, "starts": args.starts,
        "calls": args.calls, "workspace_ms": round(workspace_ms, 2),
        "servers": {n: {k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()}
                    for n, r in rows.items()},
        "servers_skipped": skipped,
    }
    print(json.dumps(payload, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
