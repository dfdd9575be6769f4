"""τ² reward agreement with the `inspect-evals` port (peer comparison, no runtime dependency).

    TAU2_DATA_DIR=/work/shared/data/tau2 python benchmarks/tau2_peer_comparison.py \
        [--peer-python /tmp/ievenv/bin/python] [--domains airline,retail,telecom] \
        [--cases oracle,chat_only,...] [--limit N] [--peer-jobs 2] [--out records.jsonl]

Builds SCRIPTED conversations for every task of each domain (τ² v0.2.0 data, telecom =
the 114 `base` tasks) and grades each twice:

* ours: `tasks._tau2.evaluator.evaluate` (upstream v0.2 semantics), in this process;
* theirs: the `inspect_evals.tau2` code (inspect-evals 0.26.0) in a SEPARATE interpreter
  (`--peer-python`, a venv with inspect-ai + inspect-evals; see below). A small driver
  (`PEER_DRIVER`, written to a temp file and run there) rebuilds each conversation the way
  their solver would have produced it and calls their scorers directly:
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

Conversation cases (each task where applicable; `n/a` otherwise):
  oracle            greeting, user opener, the task's gold actions executed in order by
                    their requestor (each a tool call + its result from our env), one
                    agent message with every `communicate_info` string, user ###STOP###
  no_info           oracle whose closing agent message omits the info (≥1 string)
  split_info        communicate_info list split across two agent messages (≥2 strings)
  fragmented_info   every communicate_info string cut in half across two agent messages
                    (tests "concatenated text" vs "some single message"; strings of ≥2
                    characters)
  info_on_tool_call the info text is the content of the agent message that carries the
                    last agent gold call (no separate text message; ≥1 string)
  chat_only         no tool calls at all, info still communicated
  wrong_arg         oracle with one argument of the last write action changed
  numeric_strings   oracle with every number in the gold calls' arguments sent as a JSON
                    string ("2.0" for 2.0), as a model sometimes does; upstream passes
                    arguments to the tool function as they are (no coercion)
  ints_as_floats    oracle with every integer in the gold calls' arguments sent as a
                    float (2 -> 2.0), which JSON allows and upstream also passes as is
  reordered_items   oracle with the (item, new item) pairs of multi-item retail calls
                    (item_ids/new_item_ids) listed in reverse order
  no_transfer       oracle without the transfer_to_human_agents call(s)
  transfer_by_user  oracle with transfer_to_human_agents issued by the user side
  max_steps         oracle, termination max_steps
  too_many_errors   oracle + 10 failing agent read calls, termination too_many_errors
  errors_user_stop  the same trajectory, termination user_stop (control for the above)
  agent_error       oracle, termination agent_error (v0.x still grades it)

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
import copy
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PEER_VENV = Path(os.environ.get("ENVFACTORY_CACHE", Path.home() / ".cache" / "envfactory")
                 ) / "bench" / "inspect-evals-venv"
DEFAULT_PEER_PYTHON = next((p for p in ("/tmp/ievenv/bin/python", str(PEER_VENV / "bin/python"))
                            if os.path.isfile(p)), str(PEER_VENV / "bin/python"))
SHARED_TAU2 = ROOT.parent / "shared" / "data" / "tau2"
if "TAU2_DATA_DIR" not in os.environ and SHARED_TAU2.is_dir():
    os.environ["TAU2_DATA_DIR"] = str(SHARED_TAU2)
DOMAINS = ("airline", "retail", "telecom")
CASES = ("oracle", "no_info", "split_info", "fragmented_info", "info_on_tool_call", "chat_only",
         "wrong_arg", "numeric_strings", "ints_as_floats", "reordered_items", "no_transfer",
         "transfer_by_user", "max_steps", "too_many_errors", "errors_user_stop", "agent_error")
#: argument-typing cases: the driver also replays them the way upstream would (below)
RAW_CASES = ("numeric_strings", "ints_as_floats")

GREETING = "Hi! How can I help you today?"
OPENER = "Hi, I need help with my request."
STOP = "Thank you, that is all. ###STOP###"
TRANSFER = "transfer_to_human_agents"
#: an agent read call that fails in both implementations (for the error cases)
FAILING_CALL = {
    "airline": ("get_reservation_details", {"reservation_id": "ZZZZZZ"}),
    "retail": ("get_order_details", {"order_id": "#W0000000"}),
    "telecom": ("get_customer_by_id", {"customer_id": "C9999999"}),
}
MAX_ERRORS = 10
#: plausible alternatives for enumerated string arguments (wrong_arg)
ALTERNATIVES = {
    "reason": ["no longer needed", "ordered by mistake"],
    "cabin": ["basic_economy", "economy", "business"],
    "insurance": ["yes", "no"],
    "flight_type": ["one_way", "round_trip"],
}

# --------------------------------------------------------------------------------------
# The driver run by the peer interpreter. Reads conversation records (JSONL, our
# `Conversation` format plus "key"), writes one result line per record.
# --------------------------------------------------------------------------------------
PEER_DRIVER = r'''
import asyncio, gzip, json, shutil, sys, tempfile, traceback
from pathlib import Path

from inspect_ai.model import (ChatMessageAssistant, ChatMessageSystem, ChatMessageUser,
                              ModelName, execute_tools)
from inspect_ai.scorer import CORRECT, Target
from inspect_ai.solver import TaskState
from inspect_ai.tool import ToolCall
from inspect_ai.util import store_as
from inspect_ai.util._store import Store, init_subtask_store, suspend_store_events

import inspect_evals.tau2.utils as tau2_utils

# memo: unpack each .gz once (their uncompress_file leaks a new temp copy per load)
_UNPACKED = {}
_TMP = tempfile.mkdtemp(prefix="tau2peer_")
def _uncompress_once(path):
    if not str(path).endswith(".gz"):
        return path
    if path not in _UNPACKED:
        target = Path(_TMP) / (str(len(_UNPACKED)) + "_" + Path(path).name[:-3])
        with gzip.open(path, "rb") as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
        _UNPACKED[path] = str(target)
    return _UNPACKED[path]
tau2_utils.uncompress_file = _uncompress_once

from inspect_evals.tau2.airline.AirlineAgentTools import get_airline_tools
from inspect_evals.tau2.common.agents import StoredAgentState
from inspect_evals.tau2.retail.tools import get_retail_tools
from inspect_evals.tau2.telecom.environment import get_environment
from inspect_evals.tau2.common.scorer import evaluate_required_actions, score_communicated_info
from inspect_evals.tau2.airline.dataset import get_record_to_sample as airline_sample
from inspect_evals.tau2.airline.scorer import airline_scorer
from inspect_evals.tau2.airline.tools import all_airline_tools
from inspect_evals.tau2.retail.dataset import get_record_to_sample as retail_sample
from inspect_evals.tau2.retail.scorer import retail_scorer
from inspect_evals.tau2.retail.tools import all_retail_tools
from inspect_evals.tau2.telecom.dataset import get_record_to_sample as telecom_sample
from inspect_evals.tau2.telecom.scorer import env_assertions, telecom_scorer
from inspect_evals.tau2.telecom.solver import telecom_initializer
from inspect_evals.tau2.telecom.tools import all_telecom_agent_tools
from inspect_evals.tau2.telecom.user_tools import all_telecom_user_tools
from inspect_evals.tau2.utils import TAU2_DATA_DIR

INSTANCE = {"airline": "AirlineAgent", "retail": "RetailAgent", "telecom": "TelecomAgent"}
TO_SAMPLE = {"airline": airline_sample, "retail": retail_sample, "telecom": telecom_sample}
SCORER = {"airline": airline_scorer, "retail": retail_scorer, "telecom": telecom_scorer}
AGENT_TOOLS = {"airline": all_airline_tools, "retail": all_retail_tools,
               "telecom": all_telecom_agent_tools}
USER_TOOLS = {"telecom": all_telecom_user_tools}

def load_records(domain):
    folder = TAU2_DATA_DIR / "domains" / domain
    path = folder / "tasks.json"
    if not path.exists():
        with gzip.open(folder / "tasks.json.gz", "rt", encoding="utf-8") as f:
            return {t["id"]: t for t in json.load(f)}
    return {t["id"]: t for t in json.loads(path.read_text(encoding="utf-8"))}

RECORDS = {}

def passed(score):
    return score is not None and score.value == CORRECT

async def run_tools(history, tools):
    result = await execute_tools(history, tools)
    history.extend(result.messages)
    return [{"id": m.tool_call_id, "error": m.error is not None,
             "content": m.error.message if m.error is not None else m.text}
            for m in result.messages if m.role == "tool"]

async def grade(rec):
    domain = rec["domain"]
    if domain not in RECORDS:
        RECORDS[domain] = load_records(domain)
    raw = RECORDS[domain][rec["task_id"]]
    init_subtask_store(Store())
    sample = TO_SAMPLE[domain](INSTANCE[domain])(raw)
    state = TaskState(model=ModelName("none/none"), sample_id=sample.id, epoch=1,
                      input=sample.input, messages=list(sample.input),
                      target=Target(sample.target), metadata=sample.metadata)
    if domain == "telecom":
        state = await telecom_initializer()(state, None)
    agent_tools = [t() for t in AGENT_TOOLS[domain]]
    user_tools = [t() for t in USER_TOOLS.get(domain, [])]
    agent_history = [ChatMessageSystem(content="(agent system prompt)")]
    tool_results = []
    messages = rec["messages"]
    # upstream (and ours) open with the agent's greeting; their solver has no greeting
    # (its Sample input ends with a kick-off user message instead), so it is dropped
    if messages and messages[0]["role"] == "assistant" and not messages[0].get("tool_calls"):
        messages = messages[1:]
    for m in messages:
        calls = [ToolCall(id=c["id"], function=c["name"], arguments=c.get("arguments") or {})
                 for c in (m.get("tool_calls") or [])]
        text = m.get("content") or ""
        if m["role"] == "assistant":
            agent_history.append(ChatMessageAssistant(content=text, tool_calls=calls or None))
            if calls:
                tool_results += await run_tools(agent_history, agent_tools)
            else:
                state.messages.append(ChatMessageUser(content=text))
        elif m["role"] == "user":
            state.messages.append(ChatMessageAssistant(content=text, tool_calls=calls or None))
            if calls:
                tool_results += await run_tools(state.messages, user_tools)
            else:
                agent_history.append(ChatMessageUser(content=text))
        # role "tool": their harness produces its own results (collected above)
    store_as(StoredAgentState, INSTANCE[domain]).messages = agent_history
    target = Target(sample.target)
    total = await SCORER[domain]()(state, target)
    out = {"key": rec["key"], "reward": 1.0 if passed(total) else 0.0,
           "explanation": total.explanation if total is not None else None,
           "tool_results": tool_results}
    if domain == "telecom":
        env = get_environment()
        out["db_hash"] = [env.tools.db.get_hash(), env.user_tools.db.get_hash()]
    else:
        toolkit = get_airline_tools() if domain == "airline" else get_retail_tools()
        out["db_hash"] = [toolkit.db.get_hash(), None]
    if domain == "telecom":
        actions = evaluate_required_actions(check_reward_basis=True)
        out["components"] = {"action": passed(await actions(state, target)),
                             "env_assertions": passed(await env_assertions()(state, target))}
    else:
        communicated = passed(await score_communicated_info()(state, target))
        # complete_if_all_complete returns the first failing score (order: db, comm)
        db = True if passed(total) else (False if communicated else
             not (total.explanation or "").startswith("The retail database does not match"))
        out["components"] = {"db": db, "communicate": communicated}
    return out

async def grade_raw(rec):
    """Upstream's execution of the same calls: unconverted arguments, straight to the
    toolkit method; any exception is an error result; telecom syncs after success."""
    domain = rec["domain"]
    raw = RECORDS[domain][rec["task_id"]]
    init_subtask_store(Store())
    sample = TO_SAMPLE[domain](INSTANCE[domain])(raw)
    state = TaskState(model=ModelName("none/none"), sample_id=sample.id, epoch=1,
                      input=sample.input, messages=list(sample.input),
                      target=Target(sample.target), metadata=sample.metadata)
    if domain == "telecom":
        state = await telecom_initializer()(state, None)
    agent_history = [ChatMessageSystem(content="(agent system prompt)")]
    errors = []
    for m in rec["messages"][1:]:
        calls = [ToolCall(id=c["id"], function=c["name"], arguments=c.get("arguments") or {})
                 for c in (m.get("tool_calls") or [])]
        text = m.get("content") or ""
        if m["role"] == "assistant":
            agent_history.append(ChatMessageAssistant(content=text, tool_calls=calls or None))
            if not calls:
                state.messages.append(ChatMessageUser(content=text))
        elif m["role"] == "user":
            state.messages.append(ChatMessageAssistant(content=text, tool_calls=calls or None))
            if not calls:
                agent_history.append(ChatMessageUser(content=text))
        for c in calls:
            if domain == "telecom":
                env = get_environment()
                kit = env.tools if m["role"] == "assistant" else env.user_tools
            else:
                env, kit = None, (get_airline_tools() if domain == "airline"
                                  else get_retail_tools())
            method = getattr(kit, c.function, None)
            if method is None:  # calculate / transfer: not toolkit methods, no state
                continue
            try:
                method(**c.arguments)
                if env is not None:
                    env.sync_tools()
            except Exception as e:
                errors.append(f"{c.function}: {type(e).__name__}: {e}"[:160])
    store_as(StoredAgentState, INSTANCE[domain]).messages = agent_history
    total = await SCORER[domain]()(state, Target(sample.target))
    return {"reward_raw": 1.0 if passed(total) else 0.0, "raw_errors": errors}

async def main(inp, outp):
    with open(inp, encoding="utf-8") as fin, open(outp, "w", encoding="utf-8") as fout:
        for line in fin:
            rec = json.loads(line)
            try:
                # no StoreEvents: their transcript would diff the whole store (the DB)
                # around every tool call; logging only, and most of the run time
                with suspend_store_events():
                    out = await grade(rec)
                    if rec.get("raw_emulation"):
                        out.update(await grade_raw(rec))
            except Exception as e:
                out = {"key": rec["key"], "reward": None,
                       "error": f"{type(e).__name__}: {e}",
                       "traceback": traceback.format_exc(limit=4)}
            fout.write(json.dumps(out) + "\n")
            fout.flush()

try:
    asyncio.run(main(sys.argv[1], sys.argv[2]))
finally:
    shutil.rmtree(_TMP, ignore_errors=True)
'''

PEER_PROBE = ("import importlib.metadata as m, inspect_evals.tau2.telecom.scorer; "
              "print('inspect-ai', m.version('inspect-ai'), '/ inspect-evals', "
              "m.version('inspect-evals'))")


# --------------------------------------------------------------------------------------
# Scripted conversations (our side builds them and records our env's tool results)
# --------------------------------------------------------------------------------------
class Script:
    """Builds one conversation, executing tool calls on a live world of ours."""

    def __init__(self, domain: str, task: Any) -> None:
        from envs.tau2.world import Tau2World

        self.world = Tau2World(domain)
        self.world.initialize(task.initial_state)
        self.messages: list[dict[str, Any]] = [{"role": "assistant", "content": GREETING}]
        self.n = 0

    def say(self, role: str, text: str) -> None:
        self.messages.append({"role": role, "content": text})

    def call(self, requestor: str, name: str, arguments: dict[str, Any],
             text: str | None = None) -> None:
        from envs.tau2.base import tau2_text

        self.n += 1
        call_id = f"call_{self.n}"
        self.messages.append({"role": requestor, "content": text, "tool_calls": [
            {"id": call_id, "name": name, "arguments": arguments, "requestor": requestor}]})
        result = self.world.execute(requestor, name, arguments)
        self.messages.append({"role": "tool", "content": tau2_text(result),
                              "tool_call_id": call_id, "requestor": requestor,
                              "error": not result.ok})


@functools.cache
def _is_write(domain: str, requestor: str, name: str) -> bool:
    from envs.tau2.world import Tau2World

    env = Tau2World(domain).env(requestor)
    bound = env._tools.get(name) if env is not None else None  # noqa: SLF001
    return bool(bound is not None and bound.write)


def _mutate(arguments: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """One argument changed: an enumerated string to another value, else a number +1,
    else a bool flipped, else a string suffixed; None when there is nothing to change."""
    for key, value in arguments.items():
        if key in ALTERNATIVES and isinstance(value, str):
            other = next(v for v in ALTERNATIVES[key] if v != value)
            return {**arguments, key: other}, f"{key}: {value!r} -> {other!r}"
    paths: list[tuple[list[Any], Any]] = []

    def walk(node: Any, path: list[Any]) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, [*path, k])
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, [*path, i])
        else:
            paths.append((path, node))

    walk(arguments, [])
    for kind in ("number", "bool", "str"):
        for path, value in paths:
            if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
                new: Any = value + 1
            elif kind == "bool" and isinstance(value, bool):
                new = not value
            elif kind == "str" and isinstance(value, str):
                new = value + "_changed"
            else:
                continue
            out = copy.deepcopy(arguments)
            node = out
            for p in path[:-1]:
                node = node[p]
            node[path[-1]] = new
            where = ".".join(str(p) for p in path)
            return out, f"{where}: {value!r} -> {new!r}"
    return None


def _ints_as_floats(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _ints_as_floats(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_ints_as_floats(v) for v in node]
    if isinstance(node, int) and not isinstance(node, bool):
        return float(node)
    return node


def _numbers_as_strings(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _numbers_as_strings(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_numbers_as_strings(v) for v in node]
    if isinstance(node, int | float) and not isinstance(node, bool):
        return str(node)
    return node


def build_case(domain: str, task: Any, case: str) -> dict[str, Any] | None:
    """The scripted conversation of one case, or None when the case does not apply."""
    criteria = task.evaluation_criteria
    actions = list(criteria.actions or []) if criteria else []
    info = list(criteria.communicate_info or []) if criteria else []
    note = ""
    changed_tools: list[str] = []
    if case == "split_info" and len(info) < 2:
        return None
    if case in ("no_info", "fragmented_info", "info_on_tool_call") and not info:
        return None
    if case == "fragmented_info" and min(map(len, info)) < 2:
        return None  # a one-character string cannot be cut
    if case in ("no_transfer", "transfer_by_user") and not any(a.name == TRANSFER
                                                             for a in actions):
        return None
    if case == "info_on_tool_call" and not any(a.requestor == "assistant" for a in actions):
        return None
    if case == "wrong_arg":
        writes = [i for i, a in enumerate(actions)
                  if _is_write(domain, a.requestor, a.name) and _mutate(a.arguments)]
        if not writes:
            return None
        i = writes[-1]
        mutated, what = _mutate(actions[i].arguments)  # type: ignore[misc]
        note = f"{actions[i].action_id} {actions[i].name} {what}"
        actions[i] = actions[i].model_copy(update={"arguments": mutated})
    if case in RAW_CASES:
        convert = _numbers_as_strings if case == "numeric_strings" else _ints_as_floats
        changed = [a.model_copy(update={"arguments": convert(a.arguments)}) for a in actions]
        # compared as JSON: 2 == 2.0 in Python, but not as a tool argument
        touched = [a for a, b in zip(actions, changed, strict=True)
                   if json.dumps(a.arguments) != json.dumps(b.arguments)]
        if not touched:
            return None
        note = "; ".join(f"{a.action_id} {a.name}" for a in touched)
        changed_tools = sorted({a.name for a in touched})
        actions = changed
    if case == "reordered_items":
        pairs = [i for i, a in enumerate(actions) if len(a.arguments.get("item_ids") or []) > 1
                 and len(a.arguments.get("new_item_ids") or []) == len(a.arguments["item_ids"])]
        if not pairs:
            return None
        for i in pairs:
            args = dict(actions[i].arguments)
            args["item_ids"], args["new_item_ids"] = (list(reversed(args["item_ids"])),
                                                      list(reversed(args["new_item_ids"])))
            actions[i] = actions[i].model_copy(update={"arguments": args})
        note = "; ".join(f"{actions[i].action_id} {actions[i].name}" for i in pairs)
    if case == "no_transfer":
        actions = [a for a in actions if a.name != TRANSFER]
    if case == "transfer_by_user":
        actions = [a.model_copy(update={"requestor": "user"}) if a.name == TRANSFER else a
                   for a in actions]

    s = Script(domain, task)
    s.say("user", OPENER)
    info_text = ("Here is what you need to know: " + " ; ".join(info) + ".") \
        if info and case != "no_info" else "Your request has been handled."
    if case != "chat_only":
        last_agent = max((i for i, a in enumerate(actions) if a.requestor == "assistant"),
                         default=None)
        for i, a in enumerate(actions):
            text = info_text if case == "info_on_tool_call" and i == last_agent else None
            s.call(a.requestor, a.name, dict(a.arguments), text=text)
    if case == "split_info":
        half = (len(info) + 1) // 2
        s.say("assistant", "First: " + " ; ".join(info[:half]) + ".")
        s.say("user", "Go on.")
        s.say("assistant", "Also: " + " ; ".join(info[half:]) + ".")
    elif case == "fragmented_info":
        s.say("assistant", "Here is what you need to know: "
              + " ; ".join(x[:len(x) // 2] for x in info))
        s.say("user", "Go on.")
        s.say("assistant", " ; ".join(x[len(x) // 2:] for x in info) + ".")
    elif case != "info_on_tool_call":
        s.say("assistant", info_text)
    termination = {"max_steps": "max_steps", "too_many_errors": "too_many_errors",
                   "agent_error": "agent_error"}.get(case, "user_stop")
    if case in ("too_many_errors", "errors_user_stop"):
        name, arguments = FAILING_CALL[domain]
        for _ in range(MAX_ERRORS):
            s.call("assistant", name, dict(arguments))
    if termination == "user_stop":
        s.say("user", STOP)
    return {"domain": domain, "task_id": task.id, "case": case, "note": note,
            "termination_reason": termination, "messages": s.messages,
            "our_db_hash": list(s.world.db_hashes()), "changed": changed_tools,
            "raw_emulation": case in RAW_CASES}


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


def main(argv: list[str] | None = None) -> int:
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
    args = ap.parse_args(argv)
    if args.quick:
        args.limit = args.limit or 2
    domains = parse_list(args.domains, DOMAINS, "domain")
    cases = parse_list(args.cases, CASES, "case")
    data = os.environ.get("TAU2_DATA_DIR")
    if args.quick and not (data and Path(data, "domains").is_dir()):
        print(json.dumps({"skipped": f"no τ² data: TAU2_DATA_DIR={data!r} has no domains/"}))
        return 0
    if args.create_peer_venv:
        args.peer_python = create_peer_venv(PEER_VENV)
    try:
        peer_version = check_peer(args.peer_python)
    except SystemExit as e:
        print(f"tau2_peer_comparison: {e}", file=sys.stderr)
        if args.quick:
            print(json.dumps({"skipped": str(e)}))
            return 0
        return 2

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    console.print(f"peer: {args.peer_python} ({peer_version})")
    t0 = time.perf_counter()
    tasks = {d: load_our_tasks(d) for d in domains}
    records: list[dict[str, Any]] = []
    for d in domains:
        ids = list(tasks[d])[: args.limit] if args.limit else list(tasks[d])
        for tid in ids:
            for case in cases:
                rec = build_case(d, tasks[d][tid], case)
                if rec is not None:
                    rec["key"] = f"{d}/{tid}/{case}"
                    records.append(rec)
    console.print(f"{len(records)} scripted conversations built in "
                  f"{time.perf_counter() - t0:.0f}s; grading (peer runs in parallel)…")

    with tempfile.TemporaryDirectory(prefix="tau2_peer_") as tmp:
        drv = Path(tmp, "driver.py")
        drv.write_text(PEER_DRIVER, encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        jobs = max(1, args.peer_jobs)
        shards = []
        for i in range(jobs):  # round robin, so that every shard gets every domain
            inp, outp, errp = (Path(tmp, f"{name}{i}") for name in ("in", "out", "err"))
            inp.write_text("".join(json.dumps(r) + "\n" for r in records[i::jobs]),
                           encoding="utf-8")
            with errp.open("w") as err:
                proc = subprocess.Popen([args.peer_python, str(drv), str(inp), str(outp)],
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
                return 1
            theirs.update((r["key"], r) for r in map(json.loads, outp.read_text().splitlines()))
        t_peer = time.perf_counter() - t1
    console.print(f"ours graded in {t_ours:.0f}s, peer finished after {t_peer:.0f}s")

    # ---- comparison ---------------------------------------------------------------
    cell: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    by_cause: dict[str, dict[tuple[str, str], list[str]]] = defaultdict(lambda: defaultdict(list))
    examples: dict[str, str] = {}
    tool_diffs: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    tool_diff_example: dict[tuple[str, str], str] = {}
    hash_diffs: dict[tuple[str, str], list[str]] = defaultdict(list)
    typing_cells: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    ours_vs_upstream: dict[tuple[str, str], list[str]] = defaultdict(list)
    raw_error_example: dict[tuple[str, str], str] = {}
    for r in records:
        key, d, case = r["key"], r["domain"], r["case"]
        o, t = ours[key], theirs.get(key, {"reward": None, "error": "no result"})
        c = cell[(d, case)]
        c["n"] += 1
        c["ours_1"] += o["reward"] == 1.0
        c["theirs_1"] += t.get("reward") == 1.0
        c["peer_error"] += t.get("reward") is None
        if o["reward"] == t.get("reward"):
            c["agree"] += 1
        else:
            c["disagree"] += 1
            cause = classify(d, case, o, t)
            by_cause[cause][(d, case)].append(r["task_id"])
            peer_says = (t.get("explanation") or t.get("error") or "")[:160]
            examples.setdefault(cause, f"{key}: ours {o['reward']}, theirs {t.get('reward')}"
                                + (f" [{r['note']}]" if r["note"] else "")
                                + f" — peer: {peer_says!r}")
        if "reward_raw" in t:
            up = typing_cells[(d, case)]
            up["n"] += 1
            up["ours_eq_upstream"] += o["reward"] == t["reward_raw"]
            up["peer_eq_upstream"] += t.get("reward") == t["reward_raw"]
            up["upstream_1"] += t["reward_raw"] == 1.0
            if o["reward"] != t["reward_raw"]:
                ours_vs_upstream[(d, case)].append(
                    f"{r['task_id']} [{', '.join(r['changed'])}: ours {o['reward']:.0f}, "
                    f"upstream {t['reward_raw']:.0f}]")
                raw_error_example.setdefault((d, case), "; ".join(t.get("raw_errors") or [])
                                             or "no upstream error")
        if t.get("db_hash") is not None:
            which = [name for name, mine, their in zip(("agent DB", "user DB"), r["our_db_hash"],
                                                       t["db_hash"], strict=True)
                     if mine != their]
            if which:
                hash_diffs[(d, case)].append(f"{r['task_id']} ({', '.join(which)})")
        for diff in tool_output_diffs(r, t):
            what = diff.split(" (")[0]
            tool_diffs[(d, case)][what] += 1
            tool_diff_example.setdefault((d, case, what), f"{key}: {diff}")
        r["reward_ours"], r["reward_theirs"] = o["reward"], t.get("reward")
        r["peer_explanation"] = t.get("explanation") or t.get("error")

    table = Table(title="τ² reward agreement, ours vs inspect-evals (scripted conversations)")
    for col in ("domain", "case", "n", "agree", "disagree", "ours=1", "theirs=1", "peer err"):
        table.add_column(col, justify="left" if col in ("domain", "case") else "right")
    for d in domains:
        for case in cases:
            c = cell.get((d, case))
            if c is None:
                table.add_row(d, case, "n/a", "", "", "", "", "")
                continue
            table.add_row(d, case, str(c["n"]), str(c["agree"]),
                          f"[red]{c['disagree']}[/red]" if c["disagree"] else "0",
                          str(c["ours_1"]), str(c["theirs_1"]), str(c["peer_error"]))
        table.add_section()
    console.print(table)

    console.print("\n[bold]Disagreements by cause[/bold]")
    if not by_cause:
        console.print("none")
    for cause, cells in sorted(by_cause.items(), key=lambda kv: -sum(map(len, kv[1].values()))):
        total = sum(map(len, cells.values()))
        console.print(f"\n[bold]{escape(describe(cause))}[/bold] — "
                      f"{total} conversation(s)")
        console.print(escape(f"  example: {examples[cause]}"))
        for (d, case), ids in sorted(cells.items()):
            n = cell[(d, case)]["n"]
            shown = f"all {n} applicable tasks" if len(ids) == n else _ids(ids)
            console.print(escape(f"  {d}/{case} ({len(ids)}/{n}): {shown}"))

    console.print("\n[bold]Argument-typing cases vs upstream execution[/bold] (emulated: "
                  "unconverted arguments straight to the peer's toolkit methods)")
    if not typing_cells:
        console.print("none run")
    for (d, case), up in sorted(typing_cells.items()):
        console.print(escape(f"  {d}/{case}: n {up['n']}, upstream=1 {up['upstream_1']}, "
                             f"ours==upstream {up['ours_eq_upstream']}, "
                             f"peer==upstream {up['peer_eq_upstream']}"))
        if ours_vs_upstream.get((d, case)):
            console.print(escape(f"    ours != upstream: {_ids(ours_vs_upstream[(d, case)], 8)}"))
            console.print(escape(f"    upstream errors e.g.: {raw_error_example[(d, case)][:200]}"))

    console.print("\n[bold]Environment cross-check: final DB hashes that differ "
                  "(ours vs theirs, after the same calls)[/bold]")
    if not hash_diffs:
        console.print("none")
    for d in domains:
        per_case = {case: items for (dd, case), items in hash_diffs.items() if dd == d}
        if not per_case:
            continue
        tasks_hit = sorted({i for items in per_case.values() for i in items})
        console.print(escape(f"  {d}: " + ", ".join(
            f"{case} {len(items)}/{cell[(d, case)]['n']}" for case, items in per_case.items())))
        console.print(escape(f"    tasks: {_ids(tasks_hit, 8)}"))
    console.print("\n[bold]Environment cross-check: tool results that differ[/bold]")
    if not tool_diffs:
        console.print("none")
    grouped: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for (d, case), diffs in tool_diffs.items():
        for what, n in diffs.items():
            grouped[(d, what)][case] += n
    for (d, what), per_case in sorted(grouped.items()):
        example = next(tool_diff_example[(d, case, what)] for case in per_case)
        console.print(escape(f"  {d}: {what} — " + ", ".join(
            f"{case} ×{n}" for case, n in per_case.most_common())))
        console.print(escape(f"    e.g. {example[:220]}"))

    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        console.print(f"\nrecords written to {args.out}")

    summary = {
        "peer": peer_version,
        "conversations": len(records),
        "agree": sum(c["agree"] for c in cell.values()),
        "disagree": sum(c["disagree"] for c in cell.values()),
        "peer_errors": sum(c["peer_error"] for c in cell.values()),
        "cells": {f"{d}/{case}": {k: cell[(d, case)][k] for k in
                                  ("n", "agree", "disagree", "ours_1", "theirs_1", "peer_error")}
                  for d in domains for case in cases if (d, case) in cell},
        "causes": {cause: sum(map(len, cells.values())) for cause, cells in by_cause.items()},
        "upstream_emulated": {f"{d}/{case}": dict(up) for (d, case), up in
                              sorted(typing_cells.items())},
        "db_hash_diffs": {f"{d}/{case}": len(v) for (d, case), v in sorted(hash_diffs.items())},
        "tool_result_diffs": {f"{d}/{case}": sum(v.values())
                              for (d, case), v in sorted(tool_diffs.items())},
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
