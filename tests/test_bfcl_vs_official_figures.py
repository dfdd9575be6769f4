"""`benchmarks/bfcl_vs_official.py`'s arithmetic and profiler: the marginal per request
(hand-computed figures), who owns a profiled function, and that the child profiler
records the worker threads (where the official handler does its work)."""

from __future__ import annotations

import pstats
import subprocess
import sys
from pathlib import Path

from benchmarks.bfcl_vs_official import ROOT, owner_of, per_request, profiler_code


def test_marginal_is_the_long_run_less_the_one_entry_run() -> None:
    run = {"requests": 100, "wall_s": 20.0, "cpu_s": 10.0}
    first = {"requests": 10, "wall_s": 5.0, "cpu_s": 4.0, "cpu_spread_s": 0.09}
    f = per_request(run, first)
    # (10 - 4) s over 90 extra requests; spread 0.09 s over 90 requests
    assert f["marginal_cpu_ms_per_request"] == 66.67
    assert f["marginal_uncertainty_ms"] == 1.0
    assert f["marginal_stable"] is True
    assert f["requests_per_s_per_core"] == 15.0
    assert f["cpu_ms_per_request"] == 100.0  # start-up included
    unstable = per_request(run, {**first, "cpu_spread_s": 0.9})  # 10 ms ± on 66.67
    assert unstable["marginal_stable"] is False


def test_no_marginal_without_a_shorter_run() -> None:
    run = {"requests": 100, "wall_s": 20.0, "cpu_s": 10.0}
    assert "marginal_cpu_ms_per_request" not in per_request(run, None)
    same = {"requests": 100, "wall_s": 20.0, "cpu_s": 9.0, "cpu_spread_s": 0.0}
    assert "marginal_cpu_ms_per_request" not in per_request(run, same)


def test_owner_of_a_profiled_file() -> None:
    site = "/x/.venv/lib/python3.11/site-packages"
    assert owner_of(f"{ROOT}/harness/episode.py") == "ours: harness/"
    assert owner_of(f"{ROOT}/tasks/_bfcl/common.py") == "ours: tasks/"
    assert owner_of(f"{site}/inspect_ai/log/_condense.py") == "inspect: log"
    assert owner_of(f"{site}/inspect_ai/_util/json.py") == "inspect: _util"
    assert owner_of(f"{site}/bfcl_eval/model_handler/utils.py") == "bfcl-eval"
    assert owner_of(f"{site}/pydantic/main.py") == "pydantic"
    assert owner_of("/usr/lib/python3.11/copy.py") == "copy (deepcopy)"


def test_child_profiler_records_worker_threads(tmp_path: Path) -> None:
    out = tmp_path / "child.prof"
    code = profiler_code(out) + (
        "import threading\n"
        "def spin():\n"
        "    sum(i * i for i in range(20000))\n"
        "threads = [threading.Thread(target=spin) for _ in range(3)]\n"
        "[t.start() for t in threads]\n"
        "[t.join() for t in threads]\n")
    subprocess.run([sys.executable, "-c", code], check=True)
    stats = pstats.Stats(str(out)).stats  # type: ignore[attr-defined]
    calls = sum(v[1] for (_file, _line, name), v in stats.items() if name == "spin")
    assert calls == 3  # each worker thread's own profile, merged
