"""VitaBench harness overhead with zero-latency scripted models, and OTA search latency.

    python benchmarks/vitabench_overhead.py [--limit N] [--cycles 3] [--messages 300]
        [--repeat 5] [--no-tau2] [--profile] [--synthetic]
    python benchmarks/vitabench_overhead.py --quick      # 5 conversations, 1 repeat (CI)

Three measurements, in this process, after a warm-up that pays imports and data loading:

* **per conversation step**: the real Inspect task (`vitabench_delivery`, English, on
  the shared snapshot `../shared/data/vitabench` with the tool objects and tables
  recorded from the official code) with scripted models (`testkit.scripted`) as agent, user and
  judge, which answer instantly: the agent runs a search, two toolkit calls and an order
  listing, then answers; the user asks `--cycles` times, then stops; the judge marks every
  rubric met. All the time is harness: the episode loop, the environment, Inspect's
  bookkeeping and the judge windows. `ms_per_step` = wall time / conversation steps (the
  scorer's `steps`). With τ² data present, `tau2_overhead.py`'s airline figure on as
  many tasks is measured too (its oracle agent and user; `--no-tau2` skips it), and the
  ratios given, with and without τ²'s reward (a replay, most of its time). Without the
  VitaBench snapshot (or with `--synthetic`), the same run goes over 20 synthetic OTA
  tasks on the committed fixture database, with placeholder prompt templates (not the
  release's texts): the figures are then only indicative. `--profile` adds where the
  CPU goes (`harness_overhead.py`'s sampler: ours, or Inspect by sub-package).
* **per judge window**: `tasks._vitabench.judge.judge_conversation` on a conversation of
  `--messages` messages (user, assistant with tool calls, tool results) with a scripted
  judge: ms per window (10 messages overlapping by 2) and per conversation.
* **OTA search latency** at the scale of the release's whole OTA domain (1,437 providers,
  9,693 products), as one task database (`envs.vitabench.synthetic`; 797 hotels x 3 room
  types x 3 dates, 340 attractions, 150 flights, 150 trains): the four search tools (best
  of `--repeat`) and the environment's load time, with the share of it spent building the
  registries (`Registry.of`); and the load time of 1,437 hotels x 21 rooms.

Prints tables on stderr and ends with one JSON line of the figures; asserts nothing on
timings. CPU time is the steadier figure on a shared machine.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import re
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data" / "vitabench"
OFFICIAL = ROOT / "tests" / "data" / "vitabench" / "official"  # recorded data, read only

#: OTA's whole 2025 database, per the 2026 README
OTA_SCALE = {"providers": 1437, "products": 9693}
OTA_TABLES = {"n_hotels": 797, "rooms": 3, "attractions": 340, "flights": 150, "trains": 150}
SEARCHES: dict[str, dict[str, Any]] = {
    "hotel_search_recommand": {"city_name": "Hangzhou",
                               "key_words": ["swimming pool", "lake view"]},
    "attractions_search_recommend": {"city_name": "Hangzhou", "key_words": ["temple"]},
    "flight_search_recommend": {"departure": "Beijing", "destination": "Hangzhou"},
    "train_ticket_search": {"departure": "Shanghai", "destination": "Hangzhou",
                            "date": "2025-07-20"},
}
#: the agent's first call of each request, by task set
FIRST_CALL: dict[str, tuple[str, dict[str, Any]]] = {
    "delivery": ("delivery_store_search_recommand", {"keywords": ["noodles"]}),
    "ota": ("hotel_search_recommand", SEARCHES["hotel_search_recommand"]),
}


# -- data ------------------------------------------------------------------------------

def data_dir(root: Path, synthetic: bool = False) -> str:
    """A `VITABENCH_DATA_DIR` under `root`; the task set it holds ("delivery" from the
    shared snapshot, else "ota": synthetic tasks on the committed fixture database)."""
    root.mkdir(parents=True, exist_ok=True)
    for name in ("tools", "tables"):
        (root / name).symlink_to(OFFICIAL / name)
    if not synthetic and (SHARED / "domains" / "delivery" / "tasks_en.json").is_file():
        for name in ("domains", "prompts", "models.yaml"):
            (root / name).symlink_to(SHARED / name)
        return "delivery"
    base = json.loads((OFFICIAL / "ota_environment.json").read_text(encoding="utf-8"))
    tasks = [{"id": f"bench-ota-{i}", "domain": "ota", "message_history": [],
              "environment": base,
              "user_scenario": {"user_profile": {"user id": base["user_id"]}},
              "instructions": "Find a hotel in Hangzhou and check your orders.",
              "evaluation_criteria": {"expected_states": [{
                  "required_orders": [], "optional_orders": [],
                  "state_rubrics": ["The agent searched hotels.", "The agent listed orders."]}],
                  "overall_rubrics": ["The agent answered politely."]}}
             for i in range(20)]
    (root / "domains" / "ota").mkdir(parents=True)
    (root / "domains" / "ota" / "tasks_en.json").write_text(json.dumps(tasks))
    (root / "prompts").mkdir()
    placeholders = {  # benchmark placeholders with the release's fields, not its texts
        "agent_system_prompt": "Time: {time}",
        "user_system_prompt": "Persona: {persona}\nTask: {instructions}",
        "sliding_window_eval_template": "{env_info}\n{user_instruction}\n"
                                        "window {window_idx} of {total_windows}"}
    for name, text in placeholders.items():
        (root / "prompts" / f"{name}.yaml").write_text(
            json.dumps({"chinese": text, "english": text}))
    return "ota"


# -- scripted models (testkit.scripted: usage given, so mockllm downloads no tokenizer) --

def scripted_agent(task_set: str) -> Any:
    """Per request: a search, then distance and weather, then the user's orders, then an
    answer (four messages, by the count of its own messages so far)."""
    from testkit.scripted import Answer, Request, call, scripted

    first = FIRST_CALL[task_set]
    rounds = [[first],
              [("longitude_latitude_to_distance", {"longitude1": 120.15, "latitude1": 30.26,
                                                   "longitude2": 120.21, "latitude2": 30.29}),
               ("weather", {"address": "Hangzhou", "date_start": "2025-07-19",
                            "date_end": "2025-07-20"})],
              [("get_user_all_orders", {})]]

    def respond(request: Request) -> Answer:
        said = sum(m.role == "assistant" for m in request.messages)
        step = said % (len(rounds) + 1)
        if step == len(rounds):
            return "Here is what I found. Anything else?"
        return [call(name, args, id=f"call_{said}_{k}")
                for k, (name, args) in enumerate(rounds[step])]

    return scripted(respond)


def scripted_user(cycles: int) -> Any:
    """Asks `cycles` times, then ends the conversation."""
    from testkit.scripted import by_own_turns

    return by_own_turns(["Please check my options."] * cycles
                        + ["Thanks, that's all. ###STOP###"]).model


def scripted_judge() -> Any:
    """Marks every rubric of the window's current states met."""
    from testkit.scripted import Request, scripted

    def respond(request: Request) -> str:
        found = re.search(r"<current_rubrics>\s*(.*?)\s*</current_rubrics>",
                          request.messages[-1].text, re.S)
        states = json.loads(found.group(1)) if found else []
        return json.dumps([{**s, "justification": "ok", "meetExpectation": True}
                           for s in states], ensure_ascii=False)

    return scripted(respond)


# -- 1. conversation steps ---------------------------------------------------------------

def conversation_steps(task_set: str, limit: int | None, cycles: int) -> dict[str, Any]:
    from inspect_ai import eval as inspect_eval

    from tasks.vitabench import vitabench

    task = getattr(vitabench, f"vitabench_{task_set}")(language="en")
    with tempfile.TemporaryDirectory(prefix="vitabench_overhead_") as logs:
        wall0, cpu0 = time.perf_counter(), time.process_time()
        (log,) = inspect_eval(task, model=scripted_agent(task_set),
                              model_roles={"user": scripted_user(cycles),
                                           "judge": scripted_judge()},
                              limit=limit, log_dir=logs, display="none", max_samples=16)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        if log.status != "success":
            raise RuntimeError(f"vitabench_{task_set}: eval did not succeed: "
                           f"{log.error.message if log.error else log.status}")
        samples = list(log.samples or [])  # read (lazily) before the folder goes
    scores = [next(iter(s.scores.values())) for s in samples if s.scores]
    steps = sum(int((sc.metadata or {}).get("steps", 0)) for sc in scores)
    windows = sum(len((sc.metadata or {}).get("windows") or []) for sc in scores)
    calls = sum(1 for s in samples for e in s.events if e.event == "model")
    n = max(len(samples), 1)
    return {"task_set": task_set, "conversations": len(samples), "steps": steps,
            "model_calls": calls, "judge_windows": windows,
            "mean_reward": round(statistics.fmean(float(sc.value) for sc in scores), 3)
            if scores else None,
            "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "ms_per_step": round(1000 * wall / max(steps, 1), 2),
            "cpu_ms_per_step": round(1000 * cpu / max(steps, 1), 2),
            "ms_per_conversation": round(1000 * wall / n, 1)}


def profiled(run: Callable[[], dict[str, Any]]) -> tuple[dict[str, Any], dict[str, float]]:
    """`run()` under `harness_overhead.py`'s CPU-time stack sampler (SIGPROF, 2 ms): the
    share of samples whose innermost frame of ours (harness/, tasks/, envs/) or of
    Inspect's sub-packages is where the CPU went."""
    from harness_overhead import owner  # this folder's script

    counts: Counter[str] = Counter()
    old = signal.signal(signal.SIGPROF, lambda _s, frame: counts.update([owner(frame)]))
    signal.setitimer(signal.ITIMER_PROF, 0.002, 0.002)
    try:
        result = run()
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, old)
    total = sum(counts.values()) or 1
    return result, {k: round(v / total, 4) for k, v in counts.most_common()}


def tau2_steps(limit: int) -> dict[str, Any] | None:
    """`tau2_overhead.py`'s airline figure on `limit` tasks (None without τ² data)."""
    import tau2_overhead  # this folder's script (its import sets TAU2_DATA_DIR)

    data = os.environ.get("TAU2_DATA_DIR")
    if not data or not Path(data, "domains").is_dir():
        return None
    tau2_overhead.measure("airline", 1)  # warm-up
    return tau2_overhead.measure("airline", limit)


# -- 2. judge windows --------------------------------------------------------------------

def long_conversation(count: int) -> list[Any]:
    """`count` messages: user, assistant with a tool call, tool result, assistant text."""
    from harness.trajectory import Message, MessageCall

    pattern = [
        lambda i: Message(role="user", content=f"Could you look for option {i}, please?"),
        lambda i: Message(role="assistant", content=None, tool_calls=[MessageCall(
            id=f"c{i}", name="hotel_search_recommand",
            arguments={"city_name": "Hangzhou", "key_words": [f"option {i}"]})]),
        lambda i: Message(role="tool", tool_call_id=f"c{i}",
                          content=f"Hotel H{i}: Lakeview Inn, score 4.{i % 10}, 680.0 " * 4),
        lambda i: Message(role="assistant", content=f"I found option {i} for you. "
                                                    "Would you like to book it?")]
    return [pattern[i % len(pattern)](i) for i in range(count)]


def judge_windows(task: dict[str, Any], messages: int, repeat: int) -> dict[str, Any]:
    from tasks._vitabench.judge import judge_conversation

    conversation, judge = long_conversation(messages), scripted_judge()
    asyncio.run(judge_conversation(conversation[:20], task, "en", judge, "user_stop"))
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        wall0, cpu0 = time.perf_counter(), time.process_time()
        result = asyncio.run(judge_conversation(conversation, task, "en", judge, "user_stop"))
        best_wall = min(best_wall, time.perf_counter() - wall0)
        best_cpu = min(best_cpu, time.process_time() - cpu0)
    windows = len(result.windows)
    return {"messages": messages, "windows": windows, "rubrics": len(result.rubrics),
            "reward": result.reward,
            "ms_per_window": round(1000 * best_wall / windows, 3),
            "cpu_ms_per_window": round(1000 * best_cpu / windows, 3),
            "ms_per_conversation": round(1000 * best_wall, 1)}


# -- 3. OTA search latency -----------------------------------------------------------------

def _best(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """Best wall and CPU seconds of `repeat` runs, and the last result."""
    best_wall = best_cpu = float("inf")
    result = None
    for _ in range(repeat):
        gc.collect()  # no collection of earlier garbage inside the timing
        wall0, cpu0 = time.perf_counter(), time.process_time()
        result = fn()
        best_wall = min(best_wall, time.perf_counter() - wall0)
        best_cpu = min(best_cpu, time.process_time() - cpu0)
    return best_wall, best_cpu, result


def load_time(environment: dict[str, Any], repeat: int) -> tuple[dict[str, Any], Any]:
    """Best load time of an OTA task database, and the share of it `Registry.of` takes
    (the loaded environment too)."""
    from envs.vitabench.models import Registry
    from envs.vitabench.ota import OTAEnvironment

    wall, cpu, env = _best(lambda: OTAEnvironment.from_environment(environment, "en"), repeat)
    registry, _, _ = _best(lambda: Registry.of(env.db), repeat)
    return {"load_s": round(wall, 3), "load_cpu_s": round(cpu, 3),
            "registry_s": round(registry, 3), "registry_share": round(registry / wall, 3)}, env


def ota_search(repeat: int) -> dict[str, Any]:
    from envs.vitabench.synthetic import scaled_ota_environment

    base = json.loads((OFFICIAL / "ota_environment.json").read_text(encoding="utf-8"))
    environment = scaled_ota_environment(base, **OTA_TABLES)
    tables = ("hotels", "attractions", "flights", "trains")
    providers = sum(len(environment[t]) for t in tables)
    products = sum(len(p["products"]) for t in tables for p in environment[t].values())
    load, env = load_time(environment, repeat)
    searches: dict[str, Any] = {}
    for name, arguments in SEARCHES.items():
        wall, cpu, result = _best(lambda n=name, a=arguments: env.call(n, a), repeat)
        searches[name] = {"ms": round(1000 * wall, 2), "cpu_ms": round(1000 * cpu, 2),
                          "lines": len(result.text().splitlines()), "ok": result.ok}
    # the OTA tests' large database: 1,437 hotels x 7 room types x 3 dates
    wide, _ = load_time(scaled_ota_environment(base, OTA_SCALE["providers"]), repeat)
    return {"providers": providers, "products": products, "target": OTA_SCALE, **load,
            "searches": searches, "hotels_1437_x21": wide}


# -- main ----------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--limit", type=int, default=None,
                    help="conversations (default: every task of the set)")
    ap.add_argument("--cycles", type=int, default=3,
                    help="requests of the scripted user per conversation")
    ap.add_argument("--messages", type=int, default=300,
                    help="messages of the judged conversation")
    ap.add_argument("--repeat", type=int, default=5, help="runs per timing (best kept)")
    ap.add_argument("--no-tau2", action="store_true", help="skip the τ² comparison")
    ap.add_argument("--profile", action="store_true",
                    help="add the CPU breakdown of the conversation run")
    ap.add_argument("--synthetic", action="store_true",
                    help="the synthetic OTA tasks even where the shared snapshot is")
    ap.add_argument("--quick", action="store_true", help="5 conversations, 1 repeat (CI)")
    return ap


def measure(args: argparse.Namespace, console: Console) -> tuple[str, dict[str, Any]]:
    """Every figure, on the data in a temporary folder (the shared snapshot's delivery
    set, else synthetic tasks): the task set measured and the figures."""
    with tempfile.TemporaryDirectory(prefix="vitabench_data_") as tmp:
        task_set = data_dir(Path(tmp, "data"), args.synthetic)
        os.environ["VITABENCH_DATA_DIR"] = str(Path(tmp, "data"))
        os.environ["ENVFACTORY_CACHE"] = str(Path(tmp, "cache"))
        from envs.vitabench.release import release
        from tasks._vitabench.dataset import load_tasks

        console.print(f"[dim]warm-up (vitabench_{task_set}, 1 conversation)...[/dim]")
        conversation_steps(task_set, 1, args.cycles)
        breakdown: dict[str, float] = {}
        if args.profile:
            steps, breakdown = profiled(
                lambda: conversation_steps(task_set, args.limit, args.cycles))
        else:
            steps = conversation_steps(task_set, args.limit, args.cycles)
        steps["data"] = "shared snapshot" if task_set == "delivery" else "synthetic (fixture)"
        tau2 = None if args.no_tau2 else tau2_steps(steps["conversations"])
        judge_task = load_tasks(release(), task_set, "en")[0]
        judge = judge_windows(judge_task, args.messages, args.repeat)
        ota = ota_search(args.repeat)

    fig: dict[str, Any] = {"steps": steps, "judge": judge, "ota": ota, "tau2_airline": tau2,
                           "breakdown": breakdown}
    if tau2 and tau2["ms_per_step"]:
        # τ²'s figure includes its reward (a replay of the episode, most of its time);
        # ours includes the scripted judge's windows
        bare = tau2["ms_per_step"] * (1 - tau2["reward_share"])
        fig["ratio_to_tau2"] = round(steps["ms_per_step"] / tau2["ms_per_step"], 2)
        fig["ratio_to_tau2_without_reward"] = round(steps["ms_per_step"] / bare, 2)
    return task_set, fig


def overhead_table(task_set: str, fig: dict[str, Any]) -> Table:
    steps, tau2 = fig["steps"], fig["tau2_airline"]
    table = Table(title=f"VitaBench harness overhead (vitabench_{task_set}, en, scripted "
                  f"zero-latency agent, user and judge; {steps['data']})")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in steps.items():
        table.add_row(key, str(value))
    if tau2:
        table.add_row(f"τ² airline ms/step ({tau2['conversations']} conv., oracle)",
                      str(tau2["ms_per_step"]))
        table.add_row("τ² airline reward share", str(tau2["reward_share"]))
        table.add_row("ratio VitaBench / τ²", str(fig["ratio_to_tau2"]))
        table.add_row("ratio VitaBench / τ² without its reward",
                      str(fig["ratio_to_tau2_without_reward"]))
    for key, value in fig["judge"].items():
        table.add_row(f"judge: {key}", str(value))
    for name, share in fig["breakdown"].items():
        table.add_row(f"CPU share: {name}", f"{100 * share:.1f}%")
    return table


def ota_table(ota: dict[str, Any], repeat: int) -> Table:
    search = Table(title=f"OTA at the whole domain's scale: {ota['providers']} providers, "
                   f"{ota['products']} products (best of {repeat})")
    for col in ("tool", "ms", "CPU ms", "lines"):
        search.add_column(col, justify="right")
    for name, s in ota["searches"].items():
        search.add_row(name, str(s["ms"]), str(s["cpu_ms"]), str(s["lines"]))
    search.add_row("load (from_environment)", str(round(1000 * ota["load_s"], 1)),
                   str(round(1000 * ota["load_cpu_s"], 1)), "")
    search.add_row("  of which Registry.of", str(round(1000 * ota["registry_s"], 1)), "",
                   f"{100 * ota['registry_share']:.0f}%")
    wide = ota["hotels_1437_x21"]
    search.add_row("load, 1,437 hotels x 21 rooms", str(round(1000 * wide["load_s"], 1)),
                   str(round(1000 * wide["load_cpu_s"], 1)), "")
    search.add_row("  of which Registry.of", str(round(1000 * wide["registry_s"], 1)), "",
                   f"{100 * wide['registry_share']:.0f}%")
    return search


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = _parser().parse_args(argv)
    if args.quick:
        args.limit, args.repeat, args.profile = 5, 1, False
    console = Console(stderr=True, width=None if sys.stderr.isatty() else 120)
    task_set, fig = measure(args, console)
    console.print(overhead_table(task_set, fig))
    console.print(ota_table(fig["ota"], args.repeat))
    print(json.dumps(fig), flush=True)
    return fig


if __name__ == "__main__":
    main()
