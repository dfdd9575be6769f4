"""τ² reward agreement with the `inspect-evals` port (peer comparison, no runtime dependency).

    TAU2_DATA_DIR=/work/shared/data/tau2 python benchmarks/tau2_peer_comparison.py \
        [--peer-python /tmp/ievenv/bin/python] [--domains airline,retail,telecom] \
        [--cases oracle,chat_only,...] [--limit N] [--peer-jobs 2] [--out records.jsonl]

Builds SCRIPTED conversations for every task of each domain (τ² v0.2.0 data, telecom =
the 114 `base` tasks) and grades each twice:

* ours: `tasks._tau2.evaluator.evaluate` (upstream v0.2 semantics), in this process;
* theirs: the `inspect_evals.tau2` code (inspect-evals 0.26.0) in a SEPARATE interpreter
  (`--peer-python`, a venv with inspect-ai + inspect-evals; see below). A small driver
  (`tau2_peer_driver.py` beside this script, run as a script by that interpreter) rebuilds
  each conversation the way their solver would have produced it and calls their scorers
  directly:
  - a fresh Inspect `Store` per conversation (their toolkits live in the store), the
    Sample built by their own `record_to_sample` from THEIR vendored task file, and, for
    telecom, their `telecom_initializer` solver;
  - every tool call is executed with their Inspect tools (`all_<domain>_tools`, and the
    phone tools for telecom user calls) through `inspect_ai.model.execute_tools`, i.e. the
    same path as their `generate_loop`: agent calls land in their `StoredAgentState`,
    user calls in the user-simulator's `state.messages`;
  - agent text messages without tool calls are flipped into `state.messages` as user
    messages (what their loop does with the final message of each agent turn); user text
    goes there as assistant messages; text riding on a tool-call message stays in the
    agent's own history only (as in their loop, where only the turn's last message is
    flipped);
  - then their domain scorer (`airline_scorer` / `retail_scorer` / `telecom_scorer`,
    each a `multi_scorer` reduced by `complete_if_all_complete`) gives the reward, and
    its component scorers (`score_communicated_info`; `evaluate_required_actions`,
    `env_assertions`) are called again for the diagnosis. `termination_reason` is not
    passed: their port does not model it;
  - for the argument-typing cases (numeric_strings, ints_as_floats) the conversation is
    replayed once more the way UPSTREAM executes calls, to say which side upstream agrees
    with: each call goes straight to their toolkit method with the arguments unconverted
    (upstream's `ToolKitBase.use_tool` -> `self.tools[name](**kwargs)`), any exception
    becomes an error result, telecom syncs after each successful call (upstream
    `Environment.get_response`), and their scorer grades that state. Their toolkits are
    close adaptations of upstream's (same arithmetic; the oracle DB hashes below match
    ours), so this stands in for upstream without installing it.
  The only thing the driver changes in their package is a memo on
  `inspect_evals.tau2.utils.uncompress_file` (the gzipped DBs are unpacked once into a
  private temp dir instead of into a new, never-deleted /tmp file on every load); it also
  runs under Inspect's `suspend_store_events()` (no transcript diff of the whole store
  around every tool call: logging only, and most of the run time otherwise).

Conversation cases: `tau2_peer_cases.py` (oracle, missing / split / fragmented info,
info on a tool-call message, chat only, a wrong argument, numbers as strings, ints as
floats, reordered items, transfers, and the termination reasons).

Prints a rich table of agreement per domain x case, every disagreement grouped by cause
(with task ids), then an environment cross-check that does not depend on either reward:
the final DB hashes of the two implementations after the same calls (agent DB, and the
phone in telecom; both hash `json.dumps(model_dump(), sort_keys=True, default=str)`), and
tool results that differ (error vs success, or parsed content). Ends with exactly ONE JSON
line with the counts.

The peer venv (kept out of this project on purpose: inspect-evals' declared
dependencies pull `datasets`/HF; none of them is needed for τ²) is found at
`--peer-python`, else at ~/.cache/envfactory/bench/inspect-evals-venv; `--create-peer-venv`
makes that one from PyPI:

    python -m venv VENV
    VENV/bin/pip install inspect-ai==0.3.285
    VENV/bin/pip install --no-deps inspect-evals==0.26.0
    VENV/bin/pip install backoff toml jinja2 numpy tiktoken

`--quick` (CI): 2 tasks per domain, every case; without the peer venv or τ² data it
skips, exit 0, with the reason in its JSON line.

Exit status: 0 after a comparison (disagreements are findings, not failures); 2 when the
peer interpreter is missing or cannot import `inspect_evals.tau2`; 1 if a peer driver
process itself fails (a scorer exception is recorded per conversation as "peer err").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from envs.jsonl import read_objects  # noqa: E402
from envs.release_registry import BENCH_VENVS  # noqa: E402 - after the path fix above

PEER_VENV = BENCH_VENVS.path() / "inspect-evals-venv"
DEFAULT_PEER_PYTHON = next((p for p in ("/tmp/ievenv/bin/python", str(PEER_VENV / "bin/python"))
                            if os.path.isfile(p)), str(PEER_VENV / "bin/python"))
SHARED_TAU2 = ROOT.parent / "shared" / "data" / "tau2"
if "TAU2_DATA_DIR" not in os.environ and SHARED_TAU2.is_dir():
    os.environ["TAU2_DATA_DIR"] = str(SHARED_TAU2)

from benchmarks.tau2_peer_cases import CASES, DOMAINS, RAW_CASES, build_records  # noqa: E402

PEER_DRIVER = Path(__file__).with_name("tau2_peer_driver.py")
"""The peer side, run by `--peer-python` as a script: reads conversation records (JSONL,
our `Conversation` format plus "key"), writes one result line per record."""
PEER_PROBE = ("import importlib.metadata as m, inspect_evals.tau2.telecom.scorer; "
              "print('inspect-ai', m.version('inspect-ai'), '/ inspect-evals', "
              "m.version('inspect-evals'))")


# --------------------------------------------------------------------------------------
# Grading, comparison, report
# --------------------------------------------------------------------------------------
def grade_ours(tasks: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    from harness.trajectory import Message
    from tasks._tau2.evaluator import evaluate

    task = tasks[record["task_id"]]
    messages = [Message.model_validate(m) for m in record["messages"]]
    info = asyncio.run(evaluate(task, record["domain"], messages,
                                record["termination_reason"]))
    return {
        "reward": info.reward,
        "zeroed_by_termination": bool(info.info.get("note", "").startswith("terminated by")),
        "db": info.db_match,
        "communicate": all(c.met for c in info.communicate_checks),
        "action": all(c.met for c in info.action_checks),
        "env_assertions": all(c.met for c in info.env_assertions),
        "basis": info.reward_basis,
    }


CAUSES = {
    "termination": "termination reason not modelled by the peer: ours zeroes max_steps / "
                   "too_many_errors (upstream v0.x evaluate_simulation), theirs grades the "
                   "trajectory",
    "communicate_hidden": "communicate_info on an agent message that also carries a tool "
                          "call: upstream/ours check every assistant message with text; "
                          "the peer only sees the final (text-only) message of each agent "
                          "turn, flipped to the user",
    "action_requestor": "ACTION: upstream/ours match a gold action against tool calls of "
                        "either side; the peer only against the gold requestor's own calls",
    "stale_variant": "modify_pending_order_items with the item pairs reordered: upstream "
                     "(and the peer) set every modified item's price/options from the LAST "
                     "new variant (stale loop variable), so the order changes the DB; ours "
                     "uses each item's own variant, so it does not",
}


TYPING = ("argument typing ({case}: {what}): ours validates tool arguments with pydantic "
          "(envs.base.Environment.call), the peer with Inspect's JSON-schema check of tool "
          "input; upstream passes them unconverted to the tool code -> upstream (emulated) "
          "agrees with {side}")


def classify(domain: str, case: str, ours: dict[str, Any], theirs: dict[str, Any]) -> str:
    if theirs.get("reward") is None:
        return f"peer raised {theirs.get('error', '?').split(':')[0]}"
    if ours["zeroed_by_termination"] and theirs["reward"] == 1.0:
        return "termination"
    comp = theirs.get("components", {})
    differing = []
    if domain == "telecom":
        basis = set(ours["basis"])
        if "ACTION" in basis and ours["action"] != comp.get("action"):
            differing.append("action")
        if "ENV_ASSERTION" in basis and ours["env_assertions"] != comp.get("env_assertions"):
            differing.append("env_assertions")
    else:
        if ours["db"] != comp.get("db"):
            differing.append("db")
        if ours["communicate"] != comp.get("communicate"):
            differing.append("communicate")
    if case in RAW_CASES:
        up = theirs.get("reward_raw")
        side = ("ours" if up == ours["reward"] else "peer" if up == theirs["reward"]
                else "neither")
        return f"typing:{case}:upstream_agrees_with_{side}"
    if differing == ["db"] and case == "reordered_items":
        return "stale_variant"
    if differing == ["communicate"] and case == "info_on_tool_call":
        return "communicate_hidden"
    if differing == ["action"] and case == "transfer_by_user":
        return "action_requestor"
    return f"{'+'.join(differing) or 'reward'} differs (case {case})"


def _norm(content: Any) -> Any:
    if not isinstance(content, str):
        return content
    try:
        return json.loads(content)
    except (json.JSONDecodeError, ValueError):
        return content


def _first_diff(ours: Any, theirs: Any, path: str = "") -> str:
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for k in sorted(set(ours) | set(theirs), key=str):
            if ours.get(k) != theirs.get(k):
                return _first_diff(ours.get(k), theirs.get(k), f"{path}.{k}")
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            if a != b:
                return _first_diff(a, b, f"{path}[{i}]")
    return f"at {path or '/'}: ours {repr(ours)[:40]}, theirs {repr(theirs)[:40]}"


def tool_output_diffs(record: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    """Calls whose result differs between the two environments (error-ness, or the
    parsed content of successful results)."""
    ours = {m["tool_call_id"]: m for m in record["messages"] if m["role"] == "tool"}
    names = {c["id"]: c["name"] for m in record["messages"] for c in m.get("tool_calls") or []}
    out = []
    for r in theirs.get("tool_results") or []:
        mine = ours.get(r["id"])
        if mine is None:
            continue
        if mine["error"] != r["error"]:
            out.append(f"{names.get(r['id'])}: ours {'error' if mine['error'] else 'ok'}, "
                       f"theirs {'error' if r['error'] else 'ok'} "
                       f"({(mine['content'] if mine['error'] else r['content'])[:80]!r})")
        elif not r["error"] and _norm(mine["content"]) != _norm(r["content"]):
            out.append(f"{names.get(r['id'])}: content differs "
                       f"({_first_diff(_norm(mine['content']), _norm(r['content']))})")
    return out


def describe(cause: str) -> str:
    if cause.startswith("typing:"):
        _, case, side = cause.split(":")
        side = side.removeprefix("upstream_agrees_with_")
        what = "numbers as strings" if case == "numeric_strings" else "integers as floats"
        return TYPING.format(case=case, what=what,
                             side={"ours": "OURS", "peer": "the PEER"}.get(side, side))
    return CAUSES.get(cause, cause)


def _ids(ids: list[str], limit: int = 12) -> str:
    return ", ".join(ids[:limit]) + (f", … (+{len(ids) - limit})" if len(ids) > limit else "")


def load_our_tasks(domain: str) -> dict[str, Any]:
    from envs.tau2 import data
    from envs.tau2.tasks import Task

    base = set(data.load_split(domain)["base"])
    return {t["id"]: Task.model_validate(t) for t in data.load_tasks(domain) if t["id"] in base}


def check_peer(peer_python: str) -> str:
    if not (os.path.isfile(peer_python) and os.access(peer_python, os.X_OK)):
        raise SystemExit(f"peer interpreter {peer_python!r} not found: create the venv "
                         "with inspect-ai and inspect-evals (see this script's docstring) "
                         "or pass --peer-python")
    probe = subprocess.run([peer_python, "-c", PEER_PROBE], capture_output=True, text=True,
                           timeout=300)
    if probe.returncode != 0:
        raise SystemExit(f"{peer_python} cannot import inspect_evals.tau2:\n"
                         f"{probe.stderr.strip()[-2000:]}")
    return probe.stdout.strip()


def create_peer_venv(venv: Path) -> str:
    """The peer venv from PyPI (the recipe in the docstring)."""
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([*pip, "inspect-ai==0.3.285"], check=True)
    subprocess.run([*pip, "--no-deps", "inspect-evals==0.26.0"], check=True)
    subprocess.run([*pip, "backoff", "toml", "jinja2", "numpy", "tiktoken"], check=True)
    return str(venv / "bin" / "python")


def parse_list(text: str, allowed: Iterable[str], what: str) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in items if x not in allowed]
    if bad:
        raise SystemExit(f"unknown {what}: {', '.join(bad)} (known: {', '.join(allowed)})")
    return items


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peer-python", default=DEFAULT_PEER_PYTHON)
    ap.add_argument("--domains", default=",".join(DOMAINS))
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--limit", type=int, default=None, help="first N tasks per domain")
    ap.add_argument("--peer-jobs", type=int, default=2,
                    help="peer driver processes (the peer side is the slow one)")
    ap.add_argument("--out", type=Path, default=None,
                    help="write every conversation with both rewards here (JSONL)")
    ap.add_argument("--create-peer-venv", action="store_true",
                    help=f"create the peer venv at {PEER_VENV} first (PyPI)")
    ap.add_argument("--quick", action="store_true",
                    help="2 tasks per domain; skip (exit 0) without peer venv or data (CI)")
    return ap


def peer_or_exit(args: argparse.Namespace) -> str | int:
    """The peer's versions, or the exit status when there is no comparison to run: 0 for a
    `--quick` skip (its JSON line printed), 2 for a missing or broken peer interpreter."""
    data = os.environ.get("TAU2_DATA_DIR")
    if args.quick and not (data and Path(data, "domains").is_dir()):
        print(json.dumps({"skipped": f"no τ² data: TAU2_DATA_DIR={data!r} has no domains/"}))
        return 0
    if args.create_peer_venv:
        args.peer_python = create_peer_venv(PEER_VENV)
    try:
        return check_peer(args.peer_python)
    except SystemExit as e:
        print(f"tau2_peer_comparison: {e}", file=sys.stderr)
        if args.quick:
            print(json.dumps({"skipped": str(e)}))
            return 0
        return 2


@dataclass
class Graded:
    """Both rewards of every conversation, by key, and how long each side took."""

    ours: dict[str, dict[str, Any]]
    theirs: dict[str, dict[str, Any]]
    seconds_ours: float
    seconds_peer: float


def grade_both(records: list[dict[str, Any]], tasks: dict[str, dict[str, Any]],
               peer_python: str, jobs: int) -> Graded | None:
    """The peer driver in `jobs` processes (round robin, so that every shard gets every
    domain) while ours grades here; None (the driver's stderr printed) if one fails."""
    with tempfile.TemporaryDirectory(prefix="tau2_peer_") as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        shards = []
        for i in range(jobs):
            inp, outp, errp = (Path(tmp, f"{name}{i}") for name in ("in", "out", "err"))
            inp.write_text("".join(json.dumps(r) + "\n" for r in records[i::jobs]),
                           encoding="utf-8")
            with errp.open("w") as err:
                proc = subprocess.Popen([peer_python, str(PEER_DRIVER), str(inp), str(outp)],
                                        stdout=subprocess.DEVNULL, stderr=err, env=env,
                                        cwd=tmp)
            shards.append((proc, outp, errp))
        t1 = time.perf_counter()
        ours = {r["key"]: grade_ours(tasks[r["domain"]], r) for r in records}
        t_ours = time.perf_counter() - t1
        theirs = {}
        for proc, outp, errp in shards:
            proc.wait()
            if proc.returncode != 0 or not outp.exists():
                print(f"peer driver failed (exit {proc.returncode}):\n"
                      f"{errp.read_text()[-4000:]}", file=sys.stderr)
                return None
            theirs.update((r["key"], r) for r in read_objects(outp))
        return Graded(ours, theirs, t_ours, time.perf_counter() - t1)


def _cells() -> defaultdict[tuple[str, str], Counter[str]]:
    return defaultdict(Counter)


@dataclass
class Comparison:
    """The two rewards of every conversation compared, per (domain, case) cell: agreement
    counts, disagreements by cause, upstream emulation of the typing cases, and the
    environment cross-check (final DB hashes, tool results)."""

    cell: defaultdict[tuple[str, str], Counter[str]] = field(default_factory=_cells)
    by_cause: defaultdict[str, defaultdict[tuple[str, str], list[str]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    examples: dict[str, str] = field(default_factory=dict)
    tool_diffs: defaultdict[tuple[str, str], Counter[str]] = field(default_factory=_cells)
    tool_diff_example: dict[tuple[str, str, str], str] = field(default_factory=dict)
    hash_diffs: defaultdict[tuple[str, str], list[str]] = field(
        default_factory=lambda: defaultdict(list))
    typing_cells: defaultdict[tuple[str, str], Counter[str]] = field(default_factory=_cells)
    ours_vs_upstream: defaultdict[tuple[str, str], list[str]] = field(
        default_factory=lambda: defaultdict(list))
    raw_error_example: dict[tuple[str, str], str] = field(default_factory=dict)

    def add(self, r: dict[str, Any], o: dict[str, Any], t: dict[str, Any]) -> None:
        """One conversation (`o` ours, `t` theirs); its rewards are written into `r`."""
        self._rewards(r, o, t)
        if "reward_raw" in t:
            self._upstream(r, o, t)
        self._environment(r, t)
        r["reward_ours"], r["reward_theirs"] = o["reward"], t.get("reward")
        r["peer_explanation"] = t.get("explanation") or t.get("error")

    def _rewards(self, r: dict[str, Any], o: dict[str, Any], t: dict[str, Any]) -> None:
        key, d, case = r["key"], r["domain"], r["case"]
        c = self.cell[(d, case)]
        c["n"] += 1
        c["ours_1"] += o["reward"] == 1.0
        c["theirs_1"] += t.get("reward") == 1.0
        c["peer_error"] += t.get("reward") is None
        if o["reward"] == t.get("reward"):
            c["agree"] += 1
            return
        c["disagree"] += 1
        cause = classify(d, case, o, t)
        self.by_cause[cause][(d, case)].append(r["task_id"])
        peer_says = (t.get("explanation") or t.get("error") or "")[:160]
        self.examples.setdefault(cause, f"{key}: ours {o['reward']}, theirs {t.get('reward')}"
                                 + (f" [{r['note']}]" if r["note"] else "")
                                 + f" — peer: {peer_says!r}")

    def _upstream(self, r: dict[str, Any], o: dict[str, Any], t: dict[str, Any]) -> None:
        d, case = r["domain"], r["case"]
        up = self.typing_cells[(d, case)]
        up["n"] += 1
        up["ours_eq_upstream"] += o["reward"] == t["reward_raw"]
        up["peer_eq_upstream"] += t.get("reward") == t["reward_raw"]
        up["upstream_1"] += t["reward_raw"] == 1.0
        if o["reward"] != t["reward_raw"]:
            self.ours_vs_upstream[(d, case)].append(
                f"{r['task_id']} [{', '.join(r['changed'])}: ours {o['reward']:.0f}, "
                f"upstream {t['reward_raw']:.0f}]")
            self.raw_error_example.setdefault((d, case), "; ".join(t.get("raw_errors") or [])
                                              or "no upstream error")

    def _environment(self, r: dict[str, Any], t: dict[str, Any]) -> None:
        key, d, case = r["key"], r["domain"], r["case"]
        if t.get("db_hash") is not None:
            which = [name for name, mine, their in zip(("agent DB", "user DB"), r["our_db_hash"],
                                                       t["db_hash"], strict=True)
                     if mine != their]
            if which:
                self.hash_diffs[(d, case)].append(f"{r['task_id']} ({', '.join(which)})")
        for diff in tool_output_diffs(r, t):
            what = diff.split(" (")[0]
            self.tool_diffs[(d, case)][what] += 1
            self.tool_diff_example.setdefault((d, case, what), f"{key}: {diff}")


def compare(records: list[dict[str, Any]], graded: Graded) -> Comparison:
    comparison = Comparison()
    for r in records:
        comparison.add(r, graded.ours[r["key"]],
                       graded.theirs.get(r["key"], {"reward": None, "error": "no result"}))
    return comparison


def print_agreement(console: Console, comp: Comparison, domains: list[str],
                    cases: list[str]) -> None:
    table = Table(title="τ² reward agreement, ours vs inspect-evals (scripted conversations)")
    for col in ("domain", "case", "n", "agree", "disagree", "ours=1", "theirs=1", "peer err"):
        table.add_column(col, justify="left" if col in ("domain", "case") else "right")
    for d in domains:
        for case in cases:
            c = comp.cell.get((d, case))
            if c is None:
                table.add_row(d, case, "n/a", "", "", "", "", "")
                continue
            table.add_row(d, case, str(c["n"]), str(c["agree"]),
                          f"[red]{c['disagree']}[/red]" if c["disagree"] else "0",
                          str(c["ours_1"]), str(c["theirs_1"]), str(c["peer_error"]))
        table.add_section()
    console.print(table)


def print_causes(console: Console, comp: Comparison) -> None:
    console.print("\n[bold]Disagreements by cause[/bold]")
    if not comp.by_cause:
        console.print("none")
    for cause, cells in sorted(comp.by_cause.items(),
                               key=lambda kv: -sum(map(len, kv[1].values()))):
        total = sum(map(len, cells.values()))
        console.print(f"\n[bold]{escape(describe(cause))}[/bold] — "
                      f"{total} conversation(s)")
        console.print(escape(f"  example: {comp.examples[cause]}"))
        for (d, case), ids in sorted(cells.items()):
            n = comp.cell[(d, case)]["n"]
            shown = f"all {n} applicable tasks" if len(ids) == n else _ids(ids)
            console.print(escape(f"  {d}/{case} ({len(ids)}/{n}): {shown}"))


def print_typing(console: Console, comp: Comparison) -> None:
    console.print("\n[bold]Argument-typing cases vs upstream execution[/bold] (emulated: "
                  "unconverted arguments straight to the peer's toolkit methods)")
    if not comp.typing_cells:
        console.print("none run")
    for (d, case), up in sorted(comp.typing_cells.items()):
        console.print(escape(f"  {d}/{case}: n {up['n']}, upstream=1 {up['upstream_1']}, "
                             f"ours==upstream {up['ours_eq_upstream']}, "
                             f"peer==upstream {up['peer_eq_upstream']}"))
        if comp.ours_vs_upstream.get((d, case)):
            console.print(escape("    ours != upstream: "
                                 f"{_ids(comp.ours_vs_upstream[(d, case)], 8)}"))
            console.print(escape("    upstream errors e.g.: "
                                 f"{comp.raw_error_example[(d, case)][:200]}"))


def print_environment(console: Console, comp: Comparison, domains: list[str]) -> None:
    console.print("\n[bold]Environment cross-check: final DB hashes that differ "
                  "(ours vs theirs, after the same calls)[/bold]")
    if not comp.hash_diffs:
        console.print("none")
    for d in domains:
        per_case = {case: items for (dd, case), items in comp.hash_diffs.items() if dd == d}
        if not per_case:
            continue
        tasks_hit = sorted({i for items in per_case.values() for i in items})
        console.print(escape(f"  {d}: " + ", ".join(
            f"{case} {len(items)}/{comp.cell[(d, case)]['n']}"
            for case, items in per_case.items())))
        console.print(escape(f"    tasks: {_ids(tasks_hit, 8)}"))
    console.print("\n[bold]Environment cross-check: tool results that differ[/bold]")
    if not comp.tool_diffs:
        console.print("none")
    grouped: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for (d, case), diffs in comp.tool_diffs.items():
        for what, n in diffs.items():
            grouped[(d, what)][case] += n
    for (d, what), per_case in sorted(grouped.items()):
        example = next(comp.tool_diff_example[(d, case, what)] for case in per_case)
        console.print(escape(f"  {d}: {what} — " + ", ".join(
            f"{case} ×{n}" for case, n in per_case.most_common())))
        console.print(escape(f"    e.g. {example[:220]}"))


def summary(comp: Comparison, peer_version: str, conversations: int, domains: list[str],
            cases: list[str]) -> dict[str, Any]:
    """The one JSON line the run ends with."""
    cell = comp.cell
    return {
        "peer": peer_version,
        "conversations": conversations,
        "agree": sum(c["agree"] for c in cell.values()),
        "disagree": sum(c["disagree"] for c in cell.values()),
        "peer_errors": sum(c["peer_error"] for c in cell.values()),
        "cells": {f"{d}/{case}": {k: cell[(d, case)][k] for k in
                                  ("n", "agree", "disagree", "ours_1", "theirs_1", "peer_error")}
                  for d in domains for case in cases if (d, case) in cell},
        "causes": {cause: sum(map(len, cells.values()))
                   for cause, cells in comp.by_cause.items()},
        "upstream_emulated": {f"{d}/{case}": dict(up) for (d, case), up in
                              sorted(comp.typing_cells.items())},
        "db_hash_diffs": {f"{d}/{case}": len(v)
                          for (d, case), v in sorted(comp.hash_diffs.items())},
        "tool_result_diffs": {f"{d}/{case}": sum(v.values())
                              for (d, case), v in sorted(comp.tool_diffs.items())},
    }


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.quick:
        args.limit = args.limit or 2
    domains = parse_list(args.domains, DOMAINS, "domain")
    cases = parse_list(args.cases, CASES, "case")
    peer_version = peer_or_exit(args)
    if isinstance(peer_version, int):
        return peer_version

    console = Console()
    console.print(f"peer: {args.peer_python} ({peer_version})")
    t0 = time.perf_counter()
    tasks = {d: load_our_tasks(d) for d in domains}
    records = build_records(tasks, cases, args.limit)
    console.print(f"{len(records)} scripted conversations built in "
                  f"{time.perf_counter() - t0:.0f}s; grading (peer runs in parallel)…")
    graded = grade_both(records, tasks, args.peer_python, max(1, args.peer_jobs))
    if graded is None:
        return 1
    console.print(f"ours graded in {graded.seconds_ours:.0f}s, peer finished after "
                  f"{graded.seconds_peer:.0f}s")

    comparison = compare(records, graded)
    print_agreement(console, comparison, domains, cases)
    print_causes(console, comparison)
    print_typing(console, comparison)
    print_environment(console, comparison, domains)
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        console.print(f"\nrecords written to {args.out}")
    print(json.dumps(summary(comparison, peer_version, len(records), domains, cases)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
