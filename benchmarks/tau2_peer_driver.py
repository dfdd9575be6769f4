"""The peer side of `tau2_peer_comparison.py`: run by the PEER interpreter (a venv with
inspect-ai 0.3.285 + inspect-evals 0.26.0), never imported by this project.

    PEER_PYTHON benchmarks/tau2_peer_driver.py IN.jsonl OUT.jsonl

Reads conversation records (JSONL: our `Conversation` format plus "key", "domain",
"task_id", "raw_emulation"), rebuilds each conversation the way the `inspect_evals.tau2`
solver would have produced it, calls their scorers directly, and writes one result line
per record (reward, scorer explanation, tool results, final DB hashes, component scores;
for the argument-typing cases also the reward under upstream's unconverted execution).
A scorer exception is recorded on that record's line; only a crash of the driver itself
exits non-zero. The comparison script's docstring says what each step stands for.
"""

# ruff: noqa: E402 - the memo on `uncompress_file` must be installed before the rest of
# inspect_evals.tau2 is imported (its modules bind the function at import time)

from __future__ import annotations

import asyncio
import gzip
import json
import shutil
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

import inspect_evals.tau2.utils as tau2_utils
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ModelName,
    execute_tools,
)
from inspect_ai.scorer import CORRECT, Score, Target
from inspect_ai.solver import TaskState
from inspect_ai.tool import Tool, ToolCall
from inspect_ai.util import store_as

# the PEER's Inspect (pinned above), not ours: a fresh store per conversation is how their
# toolkits are reset, and suspending store events is what keeps the run fast
from inspect_ai.util._store import Store, init_subtask_store, suspend_store_events

_UNPACKED: dict[str, str] = {}
_TMP = tempfile.mkdtemp(prefix="tau2peer_")


def _uncompress_once(path: str) -> str:
    """Their `uncompress_file`, memoised: each .gz unpacked once into a private temp dir
    (theirs leaves a new, never-deleted /tmp copy on every load)."""
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
from inspect_evals.tau2.airline.dataset import get_record_to_sample as airline_sample
from inspect_evals.tau2.airline.scorer import airline_scorer
from inspect_evals.tau2.airline.tools import all_airline_tools
from inspect_evals.tau2.common.agents import StoredAgentState
from inspect_evals.tau2.common.scorer import evaluate_required_actions, score_communicated_info
from inspect_evals.tau2.retail.dataset import get_record_to_sample as retail_sample
from inspect_evals.tau2.retail.scorer import retail_scorer
from inspect_evals.tau2.retail.tools import all_retail_tools, get_retail_tools
from inspect_evals.tau2.telecom.dataset import get_record_to_sample as telecom_sample
from inspect_evals.tau2.telecom.environment import get_environment
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

RECORDS: dict[str, dict[str, Any]] = {}
"""Their task records per domain, loaded on first use."""


def load_records(domain: str) -> dict[str, Any]:
    folder = TAU2_DATA_DIR / "domains" / domain
    path = folder / "tasks.json"
    if not path.exists():
        with gzip.open(folder / "tasks.json.gz", "rt", encoding="utf-8") as f:
            return {t["id"]: t for t in json.load(f)}
    return {t["id"]: t for t in json.loads(path.read_text(encoding="utf-8"))}


def passed(score: Score | None) -> bool:
    return score is not None and score.value == CORRECT


async def run_tools(history: list[ChatMessage], tools: list[Tool]) -> list[dict[str, Any]]:
    """Execute the last message's calls the way their `generate_loop` does."""
    result = await execute_tools(history, tools)
    history.extend(result.messages)
    return [{"id": m.tool_call_id, "error": m.error is not None,
             "content": m.error.message if m.error is not None else m.text}
            for m in result.messages if m.role == "tool"]


async def new_state(domain: str, task_id: str) -> tuple[TaskState, Target]:
    """A fresh store and the TaskState their solver starts from: the Sample built by their
    own `record_to_sample` from THEIR task file, and for telecom `telecom_initializer`."""
    if domain not in RECORDS:
        RECORDS[domain] = load_records(domain)
    raw = RECORDS[domain][task_id]
    init_subtask_store(Store())
    sample = TO_SAMPLE[domain](INSTANCE[domain])(raw)
    state = TaskState(model=ModelName("none/none"), sample_id=sample.id, epoch=1,
                      input=sample.input, messages=list(sample.input),
                      target=Target(sample.target), metadata=sample.metadata)
    if domain == "telecom":
        state = await telecom_initializer()(state, None)
    return state, Target(sample.target)


def tool_calls(message: dict[str, Any]) -> list[ToolCall]:
    return [ToolCall(id=c["id"], function=c["name"], arguments=c.get("arguments") or {})
            for c in (message.get("tool_calls") or [])]


async def grade(rec: dict[str, Any]) -> dict[str, Any]:
    """Their reward for one conversation, with DB hashes and component scores."""
    domain = rec["domain"]
    state, target = await new_state(domain, rec["task_id"])
    agent_tools = [t() for t in AGENT_TOOLS[domain]]
    user_tools = [t() for t in USER_TOOLS.get(domain, [])]
    agent_history: list[ChatMessage] = [ChatMessageSystem(content="(agent system prompt)")]
    tool_results = []
    messages = rec["messages"]
    # upstream (and ours) open with the agent's greeting; their solver has no greeting
    # (its Sample input ends with a kick-off user message instead), so it is dropped
    if messages and messages[0]["role"] == "assistant" and not messages[0].get("tool_calls"):
        messages = messages[1:]
    for m in messages:
        calls = tool_calls(m)
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


async def grade_raw(rec: dict[str, Any]) -> dict[str, Any]:
    """Upstream's execution of the same calls: unconverted arguments, straight to the
    toolkit method; any exception is an error result; telecom syncs after success."""
    domain = rec["domain"]
    state, target = await new_state(domain, rec["task_id"])
    agent_history: list[ChatMessage] = [ChatMessageSystem(content="(agent system prompt)")]
    errors = []
    for m in rec["messages"][1:]:
        calls = tool_calls(m)
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
    total = await SCORER[domain]()(state, target)
    return {"reward_raw": 1.0 if passed(total) else 0.0, "raw_errors": errors}


async def main(inp: str, outp: str) -> None:
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


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1], sys.argv[2]))
    finally:
        shutil.rmtree(_TMP, ignore_errors=True)
