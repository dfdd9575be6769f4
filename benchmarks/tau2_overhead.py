"""τ² harness CPU per step: our Inspect task vs the official `tau2 run`, side by side.

    TAU2_DATA_DIR=/work/shared/data/tau2 python benchmarks/tau2_overhead.py \
        [--domains airline,retail] [--limit 20] [--quick] [--profile] [--oracle]

Both harnesses talk to ONE instant OpenAI-compatible server on 127.0.0.1
(`testkit.recording_server` in its own process, so its CPU is nobody's) that plays the
agent AND the user from what each request contains (`tau2_scripted.py` beside this
script: the agent calls the task's gold actions, then says the information to
communicate; the user says its scenario, then `###STOP###`). Same conversation in, same
answer out, whichever harness asks; the server's record counts the requests.

* official: tau2-bench's own `tau2 run` at the commit our port pins
  (`envs.tau2.data.RELEASE_COMMIT`), in a venv the user installed it into
  (`--official-venv`; this script installs no upstream code; without one it reports ours),
  `--agent-llm openai/bench --user-llm openai/bench` with the server as litellm's
  `api_base` in `--agent-llm-args`/`--user-llm-args`, on the same `--task-ids`,
  `--max-concurrency` = Inspect's default connection count, reading the same data
  (`TAU2_DATA_DIR`, laid out as upstream's `data/tau2`).
* ours: `inspect eval tasks/tau2/tau2.py@tau2_<domain> --model openai-api/local/bench
  --model-role user=openai-api/local/bench` on the same `--sample-id`s, with Inspect's
  defaults and with the settings the README documents (`--display none
  --no-log-realtime`).

Each run is a child process on a pseudo-terminal (`bfcl_vs_official.run_timed`: wall,
and CPU from `wait4`, children included). A STEP here is one model call (the agent's or
the user's turn), as the server counts them: the same count for both harnesses. The
headline is the MARGINAL CPU per step: the N-task run less a one-task run of the same
harness and settings (start-up, imports, data loading), over the extra steps; steps/s
per core = 1000 / marginal ms; the one-task runs are repeated (`--startup-repeat`, least
CPU kept) and their spread over the extra steps is the marginal's uncertainty. Each
run's mean reward is reported too (the gold path: 1.0 on both sides where they agree).
Only airline and retail can be scripted this way (telecom's gold includes the user's
phone actions, which the agent's requests do not show). `--profile` runs the N-task and
one-task run of each harness once more under cProfile and prints where the marginal
CPU goes, by owner (`bfcl_vs_official.marginal_profile`). `--oracle` also runs the
in-process figures (`measure`: `envfactory/oracle` in both roles, no server, and what
the reward costs). `--quick` (CI): airline, 10 tasks. If the official venv cannot be
made, the JSON line says why and ours is still reported (exit 0). Without τ² data
(`TAU2_DATA_DIR`, or `../shared/data/tau2` beside the checkout) it skips with the reason
in its JSON line.

Prints a table and ends with one JSON line of the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]  # the project; bfcl_vs_official
SHARED = ROOT.parent / "shared" / "data" / "tau2"
if "TAU2_DATA_DIR" not in os.environ and SHARED.is_dir():
    os.environ["TAU2_DATA_DIR"] = str(SHARED)

#: what the scripted server can replay (`tau2_scripted.DOMAINS`; no user actions)
SIDE_BY_SIDE = ("airline", "retail")
MODEL = "bench"


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


# -- in process: the oracle in both roles, and the reward ---------------------------------


def oracle_figures(domains: list[str], limit: int | None) -> dict[str, dict[str, Any]]:
    """`measure` per domain, with the marginal CPU per τ² step (the N-task eval less a
    second one-task eval, after a one-task warm-up) and steps/s per core."""
    first = {}
    for d in domains:
        measure(d, 1)
        first[d] = measure(d, 1)
    figures = {d: measure(d, limit) for d in domains}
    for d, f in figures.items():
        f.update(marginal_of(f["cpu_s"], f["steps"], first[d]["cpu_s"], first[d]["steps"]))
    return figures


def marginal_of(cpu_s: float, steps: int, first_cpu_s: float, first_steps: int
                ) -> dict[str, float | None]:
    """Marginal CPU ms per step of a long run over a short one, and steps/s per core."""
    extra = steps - first_steps
    marginal = 1000 * (cpu_s - first_cpu_s) / extra if extra > 0 else None
    return {"marginal_cpu_ms_per_step": None if marginal is None else round(marginal, 2),
            "steps_per_s_per_core": (round(1000 / marginal, 1) if marginal and marginal > 0
                                     else None)}


# -- side by side: the official `tau2 run` and ours, one scripted server -------------------


class Server:
    """`testkit.recording_server` answering with `tau2_scripted.respond`, in its own
    process; its record file counts the requests."""

    def __init__(self, workdir: Path) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/v1"
        self.record = workdir / "requests.jsonl"
        self.record.touch()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "testkit.recording_server", "--port", str(port),
             "--record", str(self.record), "--responder", "benchmarks.tau2_scripted:respond"],
            cwd=ROOT, stdout=subprocess.DEVNULL)
        for _ in range(400):
            try:
                urllib.request.urlopen(f"{self.url}/models", timeout=5).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
        raise RuntimeError("the scripted τ² server did not start")

    def requests(self) -> int:
        with self.record.open("rb") as f:
            return sum(1 for _ in f)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait()


def official_venv(path: Path) -> tuple[Path | None, str]:
    """The official harness's venv, as the user installed tau2-bench at the pinned commit
    into it (this script installs no upstream code): its python, or None and why."""
    from envs.tau2.data import RELEASE_COMMIT, REPOSITORY

    python = path / "bin" / "python"
    try:
        subprocess.run([str(python), "-c", "import tau2.cli"], check=True,
                       capture_output=True)
    except (subprocess.CalledProcessError, OSError):
        return None, (f"no official venv at {path} (install {REPOSITORY}@{RELEASE_COMMIT} "
                      "into a venv and pass --official-venv)")
    return python, f"{path}"


#: the `tau2` console script, as `-c` code (so that a profiler can go in front)
OFFICIAL_LAUNCHER = """
import sys
from tau2.cli import main
sys.argv[0] = "tau2"
main()
"""


def official_data_dir(workdir: Path) -> Path:
    """Upstream reads `$TAU2_DATA_DIR/tau2/domains/...` and writes its results beside
    them (`simulations/`): a folder of our own with `tau2` -> the τ² data."""
    folder = workdir / "official_data"
    if not folder.exists():
        folder.mkdir()
        (folder / "tau2").symlink_to(Path(os.environ["TAU2_DATA_DIR"]).resolve())
    return folder


def run_official(python: Path, domain: str, ids: list[str], server: Server, workdir: Path,
                 profile: Path | None = None) -> dict[str, Any]:
    from bfcl_vs_official import THREADS, profiler_code, run_timed

    data_dir = official_data_dir(workdir)
    name = f"run_{time.monotonic_ns()}"
    llm_args = json.dumps({"temperature": 0.0, "api_base": server.url})
    code = (profiler_code(profile) if profile else "") + OFFICIAL_LAUNCHER
    cmd = [str(python), "-c", code, "run", "--domain", domain,
           "--agent-llm", f"openai/{MODEL}", "--agent-llm-args", llm_args,
           "--user-llm", f"openai/{MODEL}", "--user-llm-args", llm_args,
           "--task-ids", *ids, "--max-concurrency", str(THREADS), "--save-to", name]
    before = server.requests()
    run = run_timed(cmd, {"TAU2_DATA_DIR": str(data_dir), "OPENAI_API_KEY": "bench"},
                    workdir)
    run["requests"] = server.requests() - before
    results = data_dir / "simulations" / f"{name}.json"
    sims = json.loads(results.read_text())["simulations"] if results.exists() else []
    rewards = [s["reward_info"]["reward"] for s in sims if s.get("reward_info")]
    run["conversations"] = len(sims)
    run["reward"] = round(sum(rewards) / len(rewards), 4) if rewards else None
    return run


def run_ours(options: list[str], domain: str, ids: list[str], server: Server,
             workdir: Path, profile: Path | None = None) -> dict[str, Any]:
    from bfcl_vs_official import INSPECT_LAUNCHER, profiler_code, run_timed

    log_dir = Path(tempfile.mkdtemp(dir=workdir, prefix="ours_"))
    launcher = ([sys.executable, "-c", profiler_code(profile) + INSPECT_LAUNCHER] if profile
                else [str(Path(sys.executable).parent / "inspect")])
    cmd = [*launcher, "eval", f"tasks/tau2/tau2.py@tau2_{domain}",
           "--model", f"openai-api/local/{MODEL}",
           "--model-role", f"user=openai-api/local/{MODEL}",
           "--sample-id", ",".join(ids), "--log-dir", str(log_dir), *options]
    before = server.requests()
    run = run_timed(cmd, {"LOCAL_BASE_URL": server.url, "LOCAL_API_KEY": "bench"}, ROOT)
    run["requests"] = server.requests() - before
    run["conversations"], run["reward"] = ours_reward(log_dir)
    return run


def ours_reward(log_dir: Path) -> tuple[int, float | None]:
    """Samples and mean reward (`avg_reward`) of the eval log in `log_dir`."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info, header_only=True)
        samples = log.results.completed_samples if log.results else 0
        for score in log.results.scores if log.results else []:
            if "avg_reward" in score.metrics:
                return samples, round(score.metrics["avg_reward"].value, 4)
        return samples, None
    return 0, None


Harness = tuple[str, list[str] | None]
"""(label, `inspect eval` options of ours; None: the official `tau2 run`)."""


def run_domain(domain: str, limit: int, plan: list[Harness], python: Path | None,
               startup_repeat: int, profile: bool, console: Console
               ) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]],
                          dict[str, dict[str, float]]]:
    """Every harness of `plan` on the domain's first `limit` tasks and on its first task
    alone (`startup_repeat` times, interleaved, least CPU kept), against one scripted
    server; with `profile`, each once more under cProfile. Returns the N-task runs,
    the one-task runs (with their CPU spread) and the marginal profiles."""
    from bfcl_vs_official import marginal_profile

    from envs.tau2 import data

    ids = [str(t["id"]) for t in data.load_tasks(domain)][:limit]
    runs: dict[str, dict[str, Any]] = {}
    startup: dict[str, dict[str, Any]] = {}
    profiles: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="tau2_overhead_") as tmp:
        server = Server(Path(tmp))

        def run(options: list[str] | None, chosen: list[str],
                prof: Path | None = None) -> dict[str, Any]:
            if options is None:
                assert python is not None
                return run_official(python, domain, chosen, server, Path(tmp), prof)
            return run_ours(options, domain, chosen, server, Path(tmp), prof)

        try:
            for rep in range(max(1, startup_repeat)):
                for name, options in plan:
                    for chosen, kept in ((ids, runs), (ids[:1], startup)):
                        if chosen is ids and rep > 0:
                            continue
                        console.print(f"[dim]{domain} {name}: {len(chosen)} tasks "
                                      f"(run {rep + 1})...[/dim]")
                        result = run(options, chosen)
                        seen = [*kept.get(name, {}).get("cpu_seen_s", []), result["cpu_s"]]
                        if name not in kept or result["cpu_s"] < kept[name]["cpu_s"]:
                            kept[name] = result
                        kept[name]["cpu_seen_s"] = seen
                        kept[name]["cpu_spread_s"] = max(seen) - min(seen)
            for name, options in plan if profile else []:
                console.print(f"[dim]{domain} {name}: profiling (N tasks, then 1)...[/dim]")
                full, first = Path(tmp, f"{len(profiles)}_full.prof"), Path(
                    tmp, f"{len(profiles)}_first.prof")
                a, b = run(options, ids, full), run(options, ids[:1], first)
                if full.exists() and first.exists():
                    profiles[name] = {
                        k.replace("other: tau2", "official tau2"): v
                        for k, v in marginal_profile(full, first,
                                                     a["requests"] - b["requests"]).items()}
        finally:
            server.close()
    return runs, startup, profiles


#: bfcl_vs_official.per_request's keys, as steps (one step = one model request)
_AS_STEPS = {"wall_ms_per_request": "wall_ms_per_step",
             "cpu_ms_per_request": "cpu_ms_per_step",
             "startup_requests": "startup_steps",
             "marginal_cpu_ms_per_request": "marginal_cpu_ms_per_step",
             "requests_per_s_per_core": "steps_per_s_per_core",
             "requests": "steps"}


def figures_of(runs: dict[str, dict[str, Any]], startup: dict[str, dict[str, Any]]
               ) -> dict[str, dict[str, Any]]:
    """Per harness: per-step figures, the marginal (N-task run less the one-task run),
    reward, and, for ours, ratios to the official run."""
    from bfcl_vs_official import per_request

    figures: dict[str, dict[str, Any]] = {}
    for name, run in runs.items():
        f = {_AS_STEPS.get(k, k): v for k, v in per_request(run, startup.get(name)).items()}
        f.update(ok=run["rc"] == 0, conversations=run["conversations"], reward=run["reward"])
        if "marginal_uncertainty_ms" in f and len(startup[name]["cpu_seen_s"]) < 2:
            f["marginal_uncertainty_ms"] = f["marginal_stable"] = None  # one run: no spread
        figures[name] = f
    official = figures.get("official")
    for name, f in figures.items():
        if name == "official" or not official:
            continue
        for key in ("marginal_cpu_ms_per_step", "cpu_ms_per_step", "wall_ms_per_step"):
            if f.get(key) and official.get(key):
                f[key.replace("_ms_per_step", "_ratio_vs_official")] = round(
                    f[key] / official[key], 2)
    return figures


def print_figures(console: Console, domain: str, figures: dict[str, dict[str, Any]],
                  settings: dict[str, list[str]], tasks: int, load: str) -> None:
    from bfcl_vs_official import THREADS
    from rich.table import Table

    table = Table(title=f"τ² {domain}, {tasks} tasks, scripted agent and user on one "
                  f"instant server; ratios = ours / official; load avg {load}")
    for col in ("harness", "options", "conv.", "reward", "steps", "CPU s", "start-up CPU s",
                "marginal CPU ms/step", "± ms", "MARGINAL RATIO", "steps/s/core",
                "CPU ms/step incl. start-up", "wall ratio"):
        table.add_column(col, justify="left" if col in ("harness", "options") else "right")
    for name, f in figures.items():
        label, options = (("official tau2 run", f"--max-concurrency {THREADS}")
                          if name == "official"
                          else (f"ours: {name}", " ".join(settings[name]) or "(none)"))
        table.add_row(label, options, *(str(f.get(k, "-")) for k in (
            "conversations", "reward", "steps", "cpu_s", "startup_cpu_s",
            "marginal_cpu_ms_per_step", "marginal_uncertainty_ms",
            "marginal_cpu_ratio_vs_official", "steps_per_s_per_core", "cpu_ms_per_step",
            "wall_ratio_vs_official")))
    console.print(table)


def print_oracle(console: Console, figures: dict[str, dict[str, Any]]) -> None:
    from rich.table import Table

    table = Table(title="in process: τ² harness overhead (envfactory/oracle agent and user)")
    for col in ("domain", "conversations", "steps", "model calls", "wall s", "CPU s",
                "ms/step", "ms/conversation", "reward ms/conv", "reward share",
                "marginal CPU ms/step", "steps/s/core"):
        table.add_column(col, justify="right")
    for d, f in figures.items():
        table.add_row(d, *(str(v) for v in f.values()))
    console.print(table)


def main(argv: list[str] | None = None) -> int:
    from bfcl_vs_official import DOCUMENTED, SETTINGS, load_average, print_profiles

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--domains", default=",".join(SIDE_BY_SIDE),
                        help="side by side: " + ", ".join(SIDE_BY_SIDE))
    parser.add_argument("--limit", type=int, default=20, help="tasks per domain")
    parser.add_argument("--quick", action="store_true", help="airline, 10 tasks (CI)")
    parser.add_argument("--startup-repeat", type=int, default=2,
                        help="one-task runs of each harness (least CPU kept)")
    parser.add_argument("--official-venv", type=Path, default=None,
                        help="default: the bench cache's tau2-official-venv")
    parser.add_argument("--profile", action="store_true",
                        help="also profile each harness and print where the marginal goes")
    parser.add_argument("--oracle", action="store_true",
                        help="also the in-process envfactory/oracle figures and the reward")
    args = parser.parse_args(argv)
    if args.quick:
        args.domains, args.limit = "airline", 10
    data = os.environ.get("TAU2_DATA_DIR")
    if not data or not Path(data, "domains").is_dir():
        print(json.dumps({"skipped": f"no τ² data: TAU2_DATA_DIR={data!r} has no domains/ "
                          f"(and no {SHARED})"}))
        return 0
    domains = args.domains.split(",")
    if bad := [d for d in domains if d not in SIDE_BY_SIDE]:
        parser.error(f"--domains: {', '.join(bad)} cannot be scripted side by side "
                     f"(choose from {', '.join(SIDE_BY_SIDE)})")

    from rich.console import Console

    from envs.release_registry import BENCH_VENVS
    from envs.tau2.data import RELEASE, RELEASE_COMMIT

    console = Console(stderr=True, width=None if sys.stderr.isatty() else 200)
    python, venv_note = official_venv(args.official_venv or BENCH_VENVS.path()
                                      / "tau2-official-venv")
    settings = {"defaults": SETTINGS["defaults"], DOCUMENTED: SETTINGS[DOCUMENTED]}
    plan: list[Harness] = [("official", None)] if python else []
    plan += list(settings.items())
    load_before = load_average()
    out: dict[str, Any] = {}
    ok = True
    for domain in domains:
        runs, startup, profiles = run_domain(domain, args.limit, plan, python,
                                             args.startup_repeat, args.profile, console)
        load = f"{load_before} -> {load_average()}"
        for name, result in {**runs, **startup}.items():
            if result["rc"] != 0:
                ok = False
                console.print(f"[red]{domain} {name} exited {result['rc']}[/red]\n"
                              f"{result['tail']}")
        figures = figures_of(runs, startup)
        print_figures(console, domain, figures, settings, args.limit, load)
        if profiles:
            print_profiles(console, profiles)
        out[domain] = {
            "tasks": args.limit,
            "marginal_cpu_ratio_vs_official": figures.get("defaults", {}).get(
                "marginal_cpu_ratio_vs_official"),
            "documented_marginal_cpu_ratio_vs_official": figures.get(DOCUMENTED, {}).get(
                "marginal_cpu_ratio_vs_official"),
            "marginal_cpu_ms_per_step": {k: v.get("marginal_cpu_ms_per_step")
                                         for k, v in figures.items()},
            "steps_per_s_per_core": {k: v.get("steps_per_s_per_core")
                                     for k, v in figures.items()},
            "runs": figures, "profiles": profiles}
    line: dict[str, Any] = {
        **out, "documented_settings": " ".join(settings[DOCUMENTED]),
        "load_average": f"{load_before} -> {load_average()}",
        "official": venv_note if python else None,
        "skipped_official": None if python else venv_note,
        "tau2_release": f"{RELEASE} ({RELEASE_COMMIT})"}
    if args.oracle:
        oracle = oracle_figures(domains, args.limit)
        print_oracle(console, oracle)
        line["in_process_oracle"] = oracle
    print(json.dumps(line), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
