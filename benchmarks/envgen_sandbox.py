"""EnvGen sandbox: each attack's verdict and time, and the sandbox's cost per run.

    python benchmarks/envgen_sandbox.py [--quick] [--repeats N]

Runs every attack the sandbox must stop (infinite loop, sleeping past the wall limit,
memory bomb, fork bomb, network call, writes outside to the repo and to a world-writable
directory) plus trivial commands, through `synthesis.envgen.sandbox.run_sandboxed`, and
prints each verdict with its wall and CPU time. The overhead is the median wall time of
`python -c pass` and of a two-test pytest run, sandboxed vs a bare `subprocess.run`
(the same interpreter and arguments, interleaved, `--repeats` pairs), wall and CPU (the
machine may be shared: CPU is the steadier figure); the one-off namespace probe is timed
apart. Ends with one JSON line; exits 1 when a verdict is not the
expected one. `--quick` (CI) skips the CPU and wall-limit cases, which take a second
each by construction, and repeats 3 times.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from synthesis.envgen.sandbox import SandboxLimits, run_sandboxed  # noqa: E402
from synthesis.envgen.sandbox_isolation import probe_namespaces  # noqa: E402

console = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)
LIMITS = SandboxLimits(cpu_seconds=1, wall_seconds=30, memory_mb=256, max_processes=8)
TINY_TESTS = textwrap.dedent("""
    from envs.base import Environment

    def test_import():
        assert Environment

    def test_sum():
        assert sum([1, 2]) == 3
""")
PYTEST = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_tiny.py"]


def attacks(open_dir: Path, quick: bool) -> list[tuple[str, str, str, SandboxLimits]]:
    """(case, expected verdict, Python code, limits)."""
    repo_target = ROOT / f".envgen-bench-{uuid.uuid4().hex}"
    cases = [
        ("trivial", "ok", "pass", LIMITS),
        ("memory_bomb", "memory_limit",
         "hoard = []\nwhile True:\n    hoard.append(bytearray(10_000_000))", LIMITS),
        ("fork_bomb", "process_limit", "import os\nwhile True:\n    os.fork()", LIMITS),
        ("network", "network_blocked",
         "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=5)", LIMITS),
        ("write_repo", "write_blocked", f"open({str(repo_target)!r}, 'w').write('x')", LIMITS),
        ("write_world_writable", "write_blocked",
         f"open({str(open_dir / 'x')!r}, 'w').write('x')", LIMITS),
    ]
    if not quick:
        cases += [
            ("infinite_loop", "cpu_limit", "while True:\n    pass", LIMITS),
            ("sleep_forever", "timeout", "import time\ntime.sleep(3600)",
             LIMITS.model_copy(update={"wall_seconds": 1})),
        ]
    return cases


def _timed(fn: Callable[[], float | None]) -> tuple[float, float]:
    """Wall and CPU seconds of `fn`, which returns the CPU seconds of the process it ran
    (a sandbox result's `cpu_s`), or None to take this process's children's."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    cpu = fn()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (cpu if cpu is not None else after.ru_utime - before.ru_utime
                  + after.ru_stime - before.ru_stime)


def paired(bare: Callable[[], float | None], boxed: Callable[[], float | None],
           repeats: int) -> dict[str, float]:
    """Median wall/CPU of a bare and a sandboxed run, interleaved so that both see the
    same load on a shared machine."""
    runs: dict[str, list[float]] = {"bare": [], "bare_cpu": [], "boxed": [], "boxed_cpu": []}
    for _ in range(repeats):
        for name, fn in (("bare", bare), ("boxed", boxed)):
            wall, cpu = _timed(fn)
            runs[name].append(wall)
            runs[f"{name}_cpu"].append(cpu)
    return {k: statistics.median(v) for k, v in runs.items()}


def bare_run(argv: list[str], work: Path) -> None:
    """The same command without the sandbox (CPU taken from this process's children)."""
    subprocess.run(argv, cwd=work, capture_output=True, check=True,
                   env={"PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"})


def ms(seconds: float) -> float:
    return round(seconds * 1e3, 1)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="skip the 1 s limit cases (CI)")
    p.add_argument("--repeats", type=int, default=10, help="runs per overhead figure")
    args = p.parse_args(argv)
    repeats = 3 if args.quick else args.repeats

    started = time.perf_counter()
    missing = probe_namespaces()
    probe_s = time.perf_counter() - started
    open_dir = Path(tempfile.mkdtemp(prefix="envgen-bench-open-"))
    open_dir.chmod(0o777)
    rows: dict[str, dict[str, Any]] = {}
    isolation = ""
    try:
        for name, expected, code, limits in attacks(open_dir, args.quick):
            t0 = time.perf_counter()
            result = run_sandboxed(["python", "-c", code], files={}, limits=limits,
                                   python_path=[ROOT])
            rows[name] = {"verdict": result.verdict, "expected": expected,
                          "wall_s": round(time.perf_counter() - t0, 3),
                          "cpu_s": round(result.cpu_s, 3)}
            isolation = result.detail.rsplit("(isolation: ", 1)[-1].rstrip(").")
        t0 = time.perf_counter()
        tiny = run_sandboxed(["python", *PYTEST], files={"test_tiny.py": TINY_TESTS},
                             python_path=[ROOT])  # default limits: pytest needs ~1 s CPU
        rows["pytest_tiny"] = {"verdict": tiny.verdict, "expected": "ok",
                               "wall_s": round(time.perf_counter() - t0, 3),
                               "cpu_s": round(tiny.cpu_s, 3)}
    finally:
        shutil.rmtree(open_dir)

    python = paired(
        lambda: bare_run([sys.executable, "-c", "pass"], Path.cwd()),
        lambda: run_sandboxed(["python", "-c", "pass"], files={}).cpu_s, repeats)
    bare_dir = Path(tempfile.mkdtemp(prefix="envgen-bench-bare-"))
    try:
        (bare_dir / "test_tiny.py").write_text(TINY_TESTS)
        tests = paired(lambda: bare_run([sys.executable, *PYTEST], bare_dir), lambda: run_sandboxed(
            ["python", *PYTEST], files={"test_tiny.py": TINY_TESTS}, python_path=[ROOT]).cpu_s,
            repeats)
    finally:
        shutil.rmtree(bare_dir)

    table = Table(title=f"EnvGen sandbox ({isolation or missing})")
    for col in ("case", "verdict", "expected", "wall s", "CPU s"):
        table.add_column(col, justify="left" if col in ("case", "verdict", "expected")
                         else "right")
    for name, r in rows.items():
        style = "" if r["verdict"] == r["expected"] else "[red]"
        table.add_row(name, f"{style}{r['verdict']}", r["expected"], f"{r['wall_s']:.2f}",
                      f"{r['cpu_s']:.2f}")
    console.print(table)
    overhead = Table(title=f"Sandbox overhead (median of {repeats}; machine may be shared)")
    for col in ("command", "bare wall ms", "sandboxed wall ms", "bare CPU ms",
                "sandboxed CPU ms"):
        overhead.add_column(col, justify="left" if col == "command" else "right")
    for label, figures in (("python -c pass", python), ("pytest, 2 tests", tests)):
        overhead.add_row(label, *(f"{figures[k] * 1e3:.0f}"
                                  for k in ("bare", "boxed", "bare_cpu", "boxed_cpu")))
    console.print(overhead)
    console.print(f"namespace probe (once per process): {probe_s * 1e3:.0f} ms")
    all_expected = all(r["verdict"] == r["expected"] for r in rows.values())
    payload = {
        "benchmark": "envgen_sandbox", "quick": args.quick, "repeats": repeats,
        "kernel_layers": missing is None, "isolation": isolation or missing,
        "cases": rows, "all_expected": all_expected,
        "probe_ms": round(probe_s * 1e3, 1),
        "bare_python_ms": ms(python["bare"]), "sandboxed_python_ms": ms(python["boxed"]),
        "overhead_ms": ms(python["boxed"] - python["bare"]),
        "overhead_ratio": round(python["boxed"] / python["bare"], 2),
        "bare_python_cpu_ms": ms(python["bare_cpu"]),
        "sandboxed_python_cpu_ms": ms(python["boxed_cpu"]),
        "bare_pytest_ms": ms(tests["bare"]), "sandboxed_pytest_ms": ms(tests["boxed"]),
        "pytest_overhead_ms": ms(tests["boxed"] - tests["bare"]),
        "bare_pytest_cpu_ms": ms(tests["bare_cpu"]),
        "sandboxed_pytest_cpu_ms": ms(tests["boxed_cpu"]),
    }
    print(json.dumps(payload, separators=(",", ":")))
    return 0 if all_expected else 1


if __name__ == "__main__":
    raise SystemExit(main())
