"""BFCL multi-turn speed: our Inspect task vs the official `bfcl generate`, side by side.

    python benchmarks/bfcl_vs_official.py [--limit 200] [--categories base] [--quick] [--profile]

Both harnesses talk to ONE instant, deterministic OpenAI-compatible server on 127.0.0.1
(started by this script in its own process, so its CPU is nobody's): for a request it
finds the BFCL entry by the conversation's first user message and answers the current
turn with that entry's gold calls as one parallel tool-call message; after tool results
(or on a turn without gold calls) it answers with text, which ends the turn. Same
conversation in, same answer out, whichever harness asks; it counts the requests.
(Two base entries share an opener, so one of them gets the other's gold: our accuracy
column reads 0.99 on the 200 base entries, the same answers for both harnesses.)

* official: bfcl-eval's own `bfcl generate` CLI with its Chat Completions FC handler
  (`OpenAICompletionsHandler`, registered under a local model name the way BFCL's
  CONTRIBUTING adds a model), pointed at the server with `OPENAI_BASE_URL`, `--run-ids`
  on the same entries, `--num-threads` = Inspect's default connection count. It runs
  in its own venv, created once from PyPI and cached (`--official-venv`).
* ours: `inspect eval tasks/bfcl_multiturn --model openai-api/local/...` on the same
  entries, first with Inspect's defaults, then with the speed settings a user can pick
  from `inspect eval --help` (display, realtime event buffer, sample logging).

Each harness is a child process on a pseudo-terminal (what a user sees, progress
display included); wall time and CPU time (user + system, from `wait4`, its children
included) are per run. The headline is the MARGINAL CPU per request: a run of N entries
less a one-entry run of the same harness and settings (start-up, imports, the first
entry), divided by the extra requests; start-up would otherwise hide the per-request gap
(it is ~2-4 s for either harness). Sustainable requests/s per core = 1000 / marginal CPU
ms. The one-entry runs are repeated (`--startup-repeat`, least CPU kept) and the
spread of their CPU over the extra requests is printed as the marginal's uncertainty;
`marginal_stable` says whether it is under 10% of the marginal. `--repeat N` interleaves
N runs of each and keeps the one with the least CPU; `--try` measures any other
`inspect eval` options. The machine may be shared: CPU time is the steadier figure, and
ratios are only comparable within one run. `--quick` (CI): 40 entries (the official's
marginal is ~1 s of CPU over its ~5 s start-up: fewer entries leave it unstable),
defaults, the documented settings (`--display none --no-log-realtime`: the log keeps
every sample) and the fast ones (also `--no-log-samples`); if the official venv cannot
be made it reports ours only and says why.
`--profile` runs the N-entry and one-entry run of each harness under cProfile (every
thread) and prints where the marginal CPU goes, by owner: ours (harness/, tasks/, envs/),
Inspect (by sub-package), bfcl-eval, the HTTP stack, pydantic, and the rest.
Ends with one JSON line: `marginal_cpu_ratio_vs_official` (Inspect defaults),
`documented_marginal_cpu_ratio_vs_official` and `fast_marginal_cpu_ratio_vs_official`
as the headline, the
start-up-inclusive `cpu_ratio_vs_official`/`wall_ratio_vs_official`, requests/s per
core, requests, versions, load average, every run.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import pty
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from envs.bfcl.categories import MULTI_TURN_CATEGORIES  # noqa: E402
from envs.jsonl import read_objects  # noqa: E402
from envs.release_registry import BENCH_VENVS  # noqa: E402

BFCL_VERSION = "2025.8.6.2"
CATEGORIES = MULTI_TURN_CATEGORIES
OFFICIAL_VENV = BENCH_VENVS.path() / "bfcl-official-venv"
MODEL = "bench-instant-FC"  # "-FC": the official handler strips it before sending
THREADS = 10  # Inspect's default max_connections for openai-api; official default is 1

# Ours: label -> extra `inspect eval` options (all documented in `inspect eval --help`).
SETTINGS: dict[str, list[str]] = {
    "defaults": [],
    "display none": ["--display", "none"],
    "display none, no realtime": ["--display", "none", "--no-log-realtime"],
    "display none, no realtime, no samples": [
        "--display", "none", "--no-log-realtime", "--no-log-samples"],
}
FAST = "display none, no realtime, no samples"  # the log keeps results, not samples
#: the settings the README documents: the log keeps every sample (`inspect view` after
#: the run, `harness.logs` exports); only the live view of running samples is lost
DOCUMENTED = "display none, no realtime"

# `bfcl generate` with one extra model entry, registered as BFCL's CONTRIBUTING describes.
OFFICIAL_LAUNCHER = f"""
import sys
from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING, ModelConfig
from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler
MODEL_CONFIG_MAPPING[{MODEL!r}] = ModelConfig(
    model_name={MODEL!r}, display_name={MODEL!r}, url="", org="", license="",
    model_handler=OpenAICompletionsHandler, input_price=None, output_price=None,
    is_fc_model=True, underscore_to_dot=True)
from bfcl_eval.__main__ import cli
sys.argv[0] = "bfcl"
cli()
"""


# -- the instant server -----------------------------------------------------------------


def bfcl_data() -> Path:
    import bfcl_eval

    return Path(bfcl_eval.__file__).parent / "data"


def select_entries(categories: list[str], limit: int) -> list[dict[str, Any]]:
    """The first entries of each category, `limit` in all, spread evenly."""
    share, extra = divmod(limit, len(categories))
    chosen = []
    for n, cat in enumerate(categories):
        name = f"BFCL_v3_multi_turn_{cat}.json"
        entries = read_objects(bfcl_data() / name)
        gold = read_objects(bfcl_data() / "possible_answer" / name)
        for entry, answer in list(zip(entries, gold, strict=True))[: share + (n < extra)]:
            entry["ground_truth"] = answer["ground_truth"]
            chosen.append(entry)
    return chosen


def param_order() -> dict[str, list[str]]:
    """Parameter names of every multi-turn function, in schema order (positional gold)."""
    order = {}
    for doc in (bfcl_data() / "multi_turn_func_doc").glob("*.json"):
        for f in read_objects(doc):
            order[f["name"]] = list(f["parameters"].get("properties", {}))
    return order


def gold_call(text: str, order: dict[str, list[str]]) -> tuple[str, str]:
    """`mv(source='a', destination='b')` -> ("mv", '{"source": "a", ...}')."""
    call = ast.parse(text, mode="eval").body
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Name), text
    positional = [ast.literal_eval(a) for a in call.args]
    args = dict(zip(order.get(call.func.id, []), positional, strict=False))
    args.update({k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg})
    return call.func.id, json.dumps(args)


def text_of(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


class Policy:
    """Gold calls of the current turn after a user message; text after tool results."""

    def __init__(self, entries: list[dict[str, Any]]) -> None:
        order = param_order()
        self.by_opener: dict[str, list[tuple[set[str], list[list[tuple[str, str]]]]]] = {}
        for e in entries:
            opener = next(m["content"] for m in e["question"][0] if m["role"] == "user")
            turns = [[gold_call(c, order) for c in turn] for turn in e["ground_truth"]]
            names = {name for turn in turns for name, _ in turn}
            self.by_opener.setdefault(opener, []).append((names, turns))

    def reply(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
              n: int) -> dict[str, Any]:
        users = [text_of(m.get("content")) for m in messages if m.get("role") == "user"]
        candidates = self.by_opener.get(users[0] if users else "", [])
        offered = {t.get("function", {}).get("name") for t in tools}
        # same opener in two entries: prefer the one whose gold uses only offered tools
        turns = next((t for names, t in candidates if names <= offered),
                     candidates[0][1] if candidates else [])
        turn = len(users) - 1
        if messages and messages[-1].get("role") == "user" and turn < len(turns) \
                and turns[turn]:
            calls = [{"id": f"call_{n}_{i}", "type": "function",
                      "function": {"name": name, "arguments": args}}
                     for i, (name, args) in enumerate(turns[turn])]
            return {"role": "assistant", "content": None, "tool_calls": calls}
        return {"role": "assistant", "content": "Done."}


def serve(port: int, entries_file: str) -> None:
    policy = Policy(json.loads(Path(entries_file).read_text()))
    lock, count = threading.Lock(), [0]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def send(self, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # /stats: requests served since the last reset
            with lock:
                self.send({"requests": count[0]})

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path.endswith("/reset"):
                with lock:
                    count[0] = 0
                return self.send({})
            with lock:
                count[0] += 1
                n = count[0]
            message = policy.reply(request.get("messages", []), request.get("tools", []), n)
            self.send({
                "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0,
                "model": request.get("model", MODEL),
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": "tool_calls" if message.get("tool_calls")
                             else "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            })

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


class Server:
    def __init__(self, entries: list[dict[str, Any]], workdir: Path) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        path = workdir / "entries.json"
        path.write_text(json.dumps(entries))
        self.proc = subprocess.Popen([sys.executable, __file__, "--serve", str(self.port),
                                      str(path)])
        for _ in range(200):
            try:
                self.requests()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the instant server did not start")

    def requests(self) -> int:
        with urllib.request.urlopen(f"{self.url}/stats", timeout=5) as r:
            return int(json.load(r)["requests"])

    def reset(self) -> None:
        urllib.request.urlopen(urllib.request.Request(f"{self.url}/reset", b"{}"), timeout=5)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait()


# -- running a harness ------------------------------------------------------------------

def profiler_code(out: Path) -> str:
    """Prepended to a child's `-c` code under `--profile`: one cProfile per thread (the
    official handler works in a thread pool; thread CPU time), merged into `out` at exit."""
    return f"""
import atexit as _atexit, cProfile as _cprofile, threading as _threading, time as _time
_profiles = []
def _profile_thread(*_args):
    _p = _cprofile.Profile(_time.thread_time); _profiles.append(_p); _p.enable()
_threading.setprofile(_profile_thread)
_profile_thread()
def _dump_profiles():
    import pstats
    pstats.Stats(*_profiles).dump_stats({str(out)!r})
_atexit.register(_dump_profiles)
"""


#: the `inspect` console script, as `-c` code (so that `profiler_code` can go in front)
INSPECT_LAUNCHER = """
import sys
from inspect_ai._cli.main import main
sys.argv[0] = "inspect"
sys.exit(main())
"""


def run_timed(cmd: list[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """Run `cmd` on a pseudo-terminal; wall and CPU (user + sys, children included)."""
    master, slave = pty.openpty()
    output = bytearray()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            output.extend(chunk)
            del output[:-20000]

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env={**os.environ, "COLUMNS": "120", "LINES": "40", **env},
                            cwd=cwd, stdin=slave, stdout=slave, stderr=slave,
                            start_new_session=True)
    os.close(slave)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join(timeout=5)
    os.close(master)
    return {"rc": proc.returncode, "wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "tail": output.decode(errors="replace")[-3000:]}


def official_venv(path: Path) -> tuple[Path | None, str]:
    """The official harness's own venv (created from PyPI once, then reused)."""
    python = path / "bin" / "python"
    if (path / ".complete").exists():
        return python, "cached"
    print(f"creating {path} (pip install bfcl-eval=={BFCL_VERSION}, about a minute)...",
          file=sys.stderr)
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(path)], check=True)
        # soundfile: qwen-agent imports it without declaring it (`bfcl` fails otherwise)
        subprocess.run([str(python), "-m", "pip", "install", "-q",
                        f"bfcl-eval=={BFCL_VERSION}", "soundfile"], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([str(python), "-c", "import bfcl_eval.__main__"], check=True,
                       env={**os.environ, "BFCL_PROJECT_ROOT": tempfile.mkdtemp()})
    except (subprocess.CalledProcessError, OSError) as e:
        return None, f"official venv could not be created: {e}"
    (path / ".complete").write_text(BFCL_VERSION)
    return python, "created"


def run_official(python: Path, entries: list[dict[str, Any]], server: Server,
                 workdir: Path, profile: Path | None = None) -> dict[str, Any]:
    project = Path(tempfile.mkdtemp(dir=workdir, prefix="official_"))
    ids: dict[str, list[str]] = {}
    for e in entries:
        ids.setdefault(e["id"].rsplit("_", 1)[0], []).append(e["id"])
    (project / "test_case_ids_to_generate.json").write_text(json.dumps(ids))
    code = (profiler_code(profile) if profile else "") + OFFICIAL_LAUNCHER
    cmd = [str(python), "-c", code, "generate", "--model", MODEL,
           "--run-ids", "--num-threads", str(THREADS), "--result-dir", "result", "-o"]
    env = {"BFCL_PROJECT_ROOT": str(project), "OPENAI_BASE_URL": server.url,
           "OPENAI_API_KEY": "bench"}
    server.reset()
    run = run_timed(cmd, env, project)
    run["requests"] = server.requests()
    results = list((project / "result").rglob("*_result.json"))
    run["entries_done"] = sum(len(p.read_text().splitlines()) for p in results)
    return run


def run_ours(options: list[str], entries: list[dict[str, Any]], server: Server,
             workdir: Path, profile: Path | None = None) -> dict[str, Any]:
    log_dir = Path(tempfile.mkdtemp(dir=workdir, prefix="ours_"))
    categories = sorted({e["id"].rsplit("_", 1)[0].removeprefix("multi_turn_")
                         for e in entries})
    launcher = ([sys.executable, "-c", profiler_code(profile) + INSPECT_LAUNCHER] if profile
                else [str(Path(sys.executable).parent / "inspect")])
    cmd = [*launcher, "eval", "tasks/bfcl_multiturn",
           "--model", f"openai-api/local/{MODEL}", "--model-base-url", server.url,
           "-T", f"category={','.join(categories)}",
           "--sample-id", ",".join(e["id"] for e in entries), "--log-dir", str(log_dir),
           *options]
    server.reset()
    run = run_timed(cmd, {"LOCAL_API_KEY": "bench"}, ROOT)
    run["requests"] = server.requests()
    run["accuracy"] = accuracy(log_dir)
    return run


def accuracy(log_dir: Path) -> float | None:
    from inspect_ai.log import list_eval_logs, read_eval_log

    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info, header_only=True)
        if log.results and log.results.scores:
            metric = log.results.scores[0].metrics.get("overall")
            return None if metric is None else round(metric.value, 4)
    return None


# -- profile: where the marginal CPU goes -------------------------------------------------

OURS = {f"{ROOT}/{folder}/": f"ours: {folder}/" for folder in ("harness", "tasks", "envs")}
LIBS = {"pydantic": "pydantic", "pydantic_core": "pydantic", "httpx": "http client",
        "httpcore": "http client", "h11": "http client", "openai": "openai SDK",
        "anyio": "event loop", "asyncio": "event loop", "selectors": "event loop",
        "ssl": "http client", "socket": "http client", "json": "json", "rich": "rich",
        "threading": "threads", "concurrent": "threads", "queue": "threads",
        "copy": "copy (deepcopy)", "tenacity": "retry (tenacity)", "zipfile": "zip (log)",
        "zlib": "zip (log)", "typing": "typing", "logging": "logging",
        "tqdm": "progress (tqdm)", "jsonlines": "json"}


def owner_of(path: str) -> str:
    """Who a function belongs to, by its file."""
    for prefix, name in OURS.items():
        if path.startswith(prefix):
            return name
    if "/bfcl_eval/" in path:
        return "bfcl-eval"
    if "/inspect_ai/" in path:
        return "inspect: " + path.split("/inspect_ai/", 1)[1].split("/", 1)[0].removesuffix(".py")
    parts = Path(path).parts
    anchor = "site-packages" if "site-packages" in parts else None
    if anchor:
        top = parts[parts.index(anchor) + 1].removesuffix(".py")
    elif len(parts) >= 2 and parts[-2].startswith("python3"):
        top = parts[-1].removesuffix(".py")
    else:
        top = parts[-2] if len(parts) >= 2 and "/lib/python3" in path else Path(path).stem
    top = top.split(".", 1)[0]
    return LIBS.get(top, f"other: {top}")


def profile_by_owner(path: Path) -> dict[str, float]:
    """Own time (s) per owner; a builtin's time goes to its callers' owners, split by
    how much of it each caller accounts for."""
    import pstats

    stats: dict[Any, Any] = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    totals: dict[str, float] = {}
    for (file, _line, _name), (_cc, _nc, tt, _ct, callers) in stats.items():
        if file != "~" or not callers:
            key = owner_of(file) if file != "~" else "builtins (no caller)"
            totals[key] = totals.get(key, 0.0) + tt
            continue
        weight = sum(c[3] for c in callers.values()) or 1.0
        for (cfile, _cl, _cn), c in callers.items():
            key = owner_of(cfile) if cfile != "~" else "builtins (no caller)"
            totals[key] = totals.get(key, 0.0) + tt * c[3] / weight
    return totals


def marginal_profile(full: Path, first: Path, extra_requests: int) -> dict[str, float]:
    """Per owner, profiled CPU ms per request of the N-entry run less the one-entry run;
    owners under 2% of the total (imports, mostly: noise between the two runs) are
    folded into "rest"."""
    a, b = profile_by_owner(full), profile_by_owner(first)
    out = {k: 1000 * (a.get(k, 0.0) - b.get(k, 0.0)) / max(extra_requests, 1)
           for k in set(a) | set(b)}
    total = sum(out.values())
    kept = {k: v for k, v in out.items() if abs(v) >= 0.02 * total}
    kept["rest"] = total - sum(kept.values())
    ranked = sorted(kept.items(), key=lambda kv: -kv[1])
    return {"(profiled total)": round(total, 2), **{k: round(v, 2) for k, v in ranked}}


# -- report -----------------------------------------------------------------------------


def per_request(run: dict[str, Any], first: dict[str, Any] | None) -> dict[str, Any]:
    """Per request served; `marginal_*` leaves out a one-entry run (start-up)."""
    n = max(run["requests"], 1)
    f: dict[str, Any] = {
        "requests": run["requests"], "wall_s": round(run["wall_s"], 2),
        "cpu_s": round(run["cpu_s"], 2),
        "wall_ms_per_request": round(1000 * run["wall_s"] / n, 2),
        "cpu_ms_per_request": round(1000 * run["cpu_s"] / n, 2)}
    if first and run["requests"] > first["requests"] and run["cpu_s"] > first["cpu_s"]:
        extra = run["requests"] - first["requests"]
        marginal = 1000 * (run["cpu_s"] - first["cpu_s"]) / extra
        spread = 1000 * first["cpu_spread_s"] / extra
        f.update({
            "startup_cpu_s": round(first["cpu_s"], 2),
            "startup_requests": first["requests"],
            "marginal_cpu_ms_per_request": round(marginal, 2),
            "marginal_uncertainty_ms": round(spread, 2),
            "marginal_stable": spread < 0.1 * marginal,
            "requests_per_s_per_core": round(1000 / marginal, 1)})
    return f


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--limit", type=int, default=200, help="entries in all (default 200)")
    ap.add_argument("--categories", default="base",
                    help="comma-separated subset of " + ", ".join(CATEGORIES))
    ap.add_argument("--quick", action="store_true",
                    help="40 entries; defaults, the documented and the fast settings (CI)")
    ap.add_argument("--official-venv", type=Path, default=OFFICIAL_VENV)
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs of each harness, interleaved; the least CPU is kept")
    ap.add_argument("--startup-repeat", type=int, default=2,
                    help="one-entry runs of each harness (least CPU kept; their spread "
                    "is the marginal's uncertainty)")
    ap.add_argument("--settings", default=None,
                    help="|-separated labels of ours to run (default: all): "
                    + " | ".join(SETTINGS))
    ap.add_argument("--try", dest="extra", action="append", default=[], metavar="OPTIONS",
                    help="also run ours with these `inspect eval` options, e.g. "
                    "--try='--display none --no-log-samples' (repeatable)")
    ap.add_argument("--profile", action="store_true",
                    help="also profile each harness (cProfile, all threads) and print "
                    "where the marginal CPU per request goes")
    ap.add_argument("--serve", nargs=2, metavar=("PORT", "ENTRIES"), help=argparse.SUPPRESS)
    return ap


Plan = list[tuple[str, list[str] | None]]
"""(label, `inspect eval` options of ours; None: the official `bfcl generate`)."""


def run_plan(plan: Plan, entries: list[dict[str, Any]], python: Path | None, repeat: int,
             startup_repeat: int, profile: bool, console: Console
             ) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]],
                        dict[str, dict[str, float]]]:
    """Every harness of the plan on `entries` and on one entry, against one instant
    server, interleaved (least CPU kept); with `profile`, once more each under cProfile.
    Returns the N-entry runs, the one-entry runs (with their CPU spread) and, per
    harness, the marginal profile (ms per request by owner)."""
    runs: dict[str, dict[str, Any]] = {}
    startup: dict[str, dict[str, Any]] = {}
    profiles: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bfcl_vs_official_") as tmp:
        server = Server(entries, Path(tmp))

        def run(options: list[str] | None, chosen: list[dict[str, Any]],
                prof: Path | None = None) -> dict[str, Any]:
            if options is None:
                assert python is not None
                return run_official(python, chosen, server, Path(tmp), prof)
            return run_ours(options, chosen, server, Path(tmp), prof)

        try:
            for rep in range(max(repeat, startup_repeat)):  # interleaved
                for name, options in plan:
                    for chosen, kept, reps in ((entries, runs, repeat),
                                               (entries[:1], startup, startup_repeat)):
                        if rep >= reps:
                            continue
                        console.print(f"[dim]{name}: {len(chosen)} entries (run {rep + 1})"
                                      f"...[/dim]")
                        result = run(options, chosen)
                        result["cpu_seen_s"] = [*kept.get(name, {}).get("cpu_seen_s", []),
                                                result["cpu_s"]]
                        if name not in kept or result["cpu_s"] < kept[name]["cpu_s"]:
                            kept[name] = result
                        kept[name]["cpu_seen_s"] = result["cpu_seen_s"]
                        kept[name]["cpu_spread_s"] = (max(result["cpu_seen_s"])
                                                      - min(result["cpu_seen_s"]))
            for name, options in plan if profile else []:
                console.print(f"[dim]{name}: profiling (N entries, then 1)...[/dim]")
                full, first = Path(tmp, f"{len(profiles)}_full.prof"), Path(
                    tmp, f"{len(profiles)}_first.prof")
                a, b = run(options, entries, full), run(options, entries[:1], first)
                if full.exists() and first.exists():
                    profiles[name] = marginal_profile(full, first,
                                                      a["requests"] - b["requests"])
        finally:
            server.close()
    return runs, startup, profiles


def figures_of(runs: dict[str, dict[str, Any]], startup: dict[str, dict[str, Any]]
               ) -> dict[str, dict[str, Any]]:
    """Per harness its per-request figures, accuracy, and ratios to the official run."""
    figures: dict[str, Any] = {name: per_request(result, startup.get(name))
                               for name, result in runs.items()}
    official = figures.get("official")
    for name, f in figures.items():
        f["ok"] = runs[name]["rc"] == 0
        if name == "official":
            f["entries_done"] = runs[name]["entries_done"]
            continue
        f["accuracy"] = runs[name]["accuracy"]
        if official:
            for key in ("wall_ms_per_request", "cpu_ms_per_request",
                        "marginal_cpu_ms_per_request"):
                if key in f and key in official:
                    ratio = key.replace("_ms_per_request", "_ratio_vs_official")
                    f[ratio] = round(f[key] / official[key], 2)
    return figures


def print_figures(console: Console, figures: dict[str, dict[str, Any]], entries: int,
                  categories: str, load: str) -> None:
    from rich.table import Table

    table = Table(title=f"BFCL multi-turn, {entries} entries ({categories}), "
                  f"instant local server; ratios = ours / official; load avg {load}")
    for col in ("harness", "options", "requests", "CPU s", "start-up CPU s",
                "marginal CPU ms/req", "± ms", "MARGINAL RATIO", "req/s/core",
                "CPU ms/req incl. start-up", "its ratio", "wall ratio", "accuracy"):
        table.add_column(col, justify="left" if col in ("harness", "options") else "right")
    for name, f in figures.items():
        if name == "official":
            label, options = "official bfcl generate", f"--num-threads {THREADS}"
        else:
            label, options = f"ours: {name}", " ".join(SETTINGS[name]) or "(none)"
        table.add_row(label, options, *(str(f.get(k, "-")) for k in (
            "requests", "cpu_s", "startup_cpu_s", "marginal_cpu_ms_per_request",
            "marginal_uncertainty_ms", "marginal_cpu_ratio_vs_official",
            "requests_per_s_per_core", "cpu_ms_per_request", "cpu_ratio_vs_official",
            "wall_ratio_vs_official", "accuracy")))
    console.print(table)
    console.print("Marginal = (CPU of the N-entry run - CPU of a one-entry run) / extra "
                  "requests; ± = spread of the one-entry runs over the extra requests. "
                  "Target: marginal ≤ 2× official with Inspect's defaults, ≤ 1.2× with "
                  f"the documented settings ({' '.join(SETTINGS[DOCUMENTED])}).")


def print_profiles(console: Console, profiles: dict[str, dict[str, float]]) -> None:
    from rich.table import Table

    table = Table(title="where the marginal CPU per request goes (cProfile, thread CPU "
                  "time, all threads; N-entry run less one-entry run): ms/request (share)")
    table.add_column("owner")
    for name in profiles:
        table.add_column(name, justify="right")
    owners = sorted({k for p in profiles.values() for k in p},
                    key=lambda k: -max(p.get(k, 0.0) for p in profiles.values()))
    for key in owners:
        cells = []
        for p in profiles.values():
            total = p["(profiled total)"] or 1.0
            cells.append(f"{p[key]:.2f} ({100 * p[key] / total:.0f}%)" if key in p else "-")
        table.add_row(key, *cells)
    console.print(table)
    console.print("cProfile slows Python code several-fold, so profiled ms exceed the "
                  "unprofiled marginal; the shares are what count.")


def summary_line(figures: dict[str, dict[str, Any]], entries: int, categories: list[str],
                 repeat: int, python: Path | None, venv_note: str, load: str,
                 profiles: dict[str, dict[str, float]]) -> dict[str, Any]:
    """The one JSON line the run ends with."""
    from importlib.metadata import version

    defaults, fast = figures.get("defaults", {}), figures.get(FAST, {})
    documented, official = figures.get(DOCUMENTED, {}), figures.get("official", {})
    return {
        "entries": entries, "categories": categories,
        "requests": {k: v["requests"] for k, v in figures.items()},
        "marginal_cpu_ratio_vs_official": defaults.get("marginal_cpu_ratio_vs_official"),
        "documented_settings": " ".join(SETTINGS[DOCUMENTED]),
        "documented_marginal_cpu_ratio_vs_official": documented.get(
            "marginal_cpu_ratio_vs_official"),
        "fast_marginal_cpu_ratio_vs_official": fast.get("marginal_cpu_ratio_vs_official"),
        "marginal_cpu_ms_per_request": {k: v.get("marginal_cpu_ms_per_request")
                                        for k, v in figures.items()},
        "marginal_stable": {k: v.get("marginal_stable") for k, v in figures.items()},
        "requests_per_s_per_core": {k: v.get("requests_per_s_per_core")
                                    for k, v in figures.items()},
        "official_marginal_cpu_ms_per_request": official.get("marginal_cpu_ms_per_request"),
        "cpu_ratio_vs_official": defaults.get("cpu_ratio_vs_official"),
        "wall_ratio_vs_official": defaults.get("wall_ratio_vs_official"),
        "fast_settings": " ".join(SETTINGS[FAST]),
        "fast_cpu_ratio_vs_official": fast.get("cpu_ratio_vs_official"),
        "fast_wall_ratio_vs_official": fast.get("wall_ratio_vs_official"),
        "official_threads": THREADS, "repeat": repeat, "load_average": load,
        "official": venv_note if python else None,
        "skipped_official": None if python else venv_note,
        "versions": {"inspect_ai": version("inspect_ai"), "bfcl_eval": BFCL_VERSION,
                     "python": sys.version.split()[0]},
        "runs": figures, "profiles": profiles,
    }


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.serve:
        serve(int(args.serve[0]), args.serve[1])
        return 0
    if args.quick:
        args.limit = 40
        args.settings = args.settings or f"defaults|{DOCUMENTED}|{FAST}"
    labels = args.settings.split("|") if args.settings else list(SETTINGS)
    for options in args.extra:
        SETTINGS[options] = options.split()
        labels.append(options)
    categories = args.categories.split(",")

    from rich.console import Console

    console = Console(stderr=True, width=None if sys.stderr.isatty() else 200)
    entries = select_entries(categories, args.limit)
    python, venv_note = official_venv(args.official_venv)
    plan: Plan = [("official", None)] if python else []
    plan += [(label, SETTINGS[label]) for label in labels]
    load_before = load_average()
    runs, startup, profiles = run_plan(plan, entries, python, args.repeat,
                                       args.startup_repeat, args.profile, console)
    load = f"{load_before} -> {load_average()}"
    for name, result in {**runs, **startup}.items():
        if result["rc"] != 0:
            console.print(f"[red]{name} exited {result['rc']}[/red]\n{result['tail']}")
    figures = figures_of(runs, startup)
    print_figures(console, figures, len(entries), args.categories, load)
    if profiles:
        print_profiles(console, profiles)
    line = summary_line(figures, len(entries), categories, args.repeat, python, venv_note,
                        load, profiles)
    print(json.dumps(line), flush=True)
    return 0 if all(r["rc"] == 0 for r in [*runs.values(), *startup.values()]) else 1


if __name__ == "__main__":
    sys.exit(main())
