"""The scripted τ² agent AND user behind one OpenAI-compatible server, for
`tau2_overhead.py`: both harnesses (ours and the official `tau2 run`) talk to it, so both
live through the same conversation with zero model latency.

    python -m testkit.recording_server --port 8765 --record out.jsonl \
        --responder benchmarks.tau2_scripted:respond        # TAU2_DATA_DIR set

Each request is answered from what it contains, nothing kept between requests:

* a USER request has the user simulator's system prompt, whose `<scenario>` block is the
  task's rendered scenario (`Task.user_scenario.render()`, upstream's
  `str(user_scenario)`): that names the task;
* an AGENT request (any other) names its task by its first user message, which is that
  same scenario text (the scripted user's first words).

The replies are `tasks._tau2.orchestrator.OraclePlan`'s (the gold path of our own
`envfactory/oracle` runs), its state rebuilt from the request: the agent calls the gold
actions in order, one per message (the calls already in its history are done), then
says the information to communicate, then the closing question; the user says its
scenario, then `Done. What next?` until the agent's closing words, then `###STOP###`.
Only domains whose gold actions are all the agent's (airline, retail) can be replayed
this way: a user's phone actions (telecom) are not visible in the agent's requests.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from envs.tau2 import data
from envs.tau2.tasks import Task
from tasks._tau2.orchestrator import OraclePlan
from testkit.recording_server import Api, Reply, ReplyCall

__all__ = ["DOMAINS", "respond", "role_of", "scenario_tasks"]

#: domains the stateless script can replay (every gold action is the agent's)
DOMAINS = ("airline", "retail")
_SCENARIO = re.compile(r"<scenario>\n(.*?)\n</scenario>", re.S)


@cache
def scenario_tasks() -> dict[str, Task]:
    """Rendered scenario -> task, over the scriptable domains (no two tasks share one)."""
    tasks: dict[str, Task] = {}
    for domain in DOMAINS:
        for raw in data.load_tasks(domain):
            task = Task.model_validate(raw)
            tasks.setdefault(task.user_scenario.render(), task)
    return tasks


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def role_of(messages: list[Mapping[str, Any]]) -> str:
    """"user" when the system prompt is the user simulator's (it has a scenario)."""
    system = next((_text(m.get("content")) for m in messages if m.get("role") == "system"), "")
    return "user" if _SCENARIO.search(system) else "assistant"


def _task(messages: list[Mapping[str, Any]], role: str) -> Task:
    if role == "user":
        system = next(_text(m.get("content")) for m in messages if m.get("role") == "system")
        match = _SCENARIO.search(system)
        scenario = match.group(1) if match else ""
    else:
        scenario = next((_text(m.get("content")) for m in messages if m.get("role") == "user"),
                        "")
    task = scenario_tasks().get(scenario)
    if task is None:
        raise LookupError(f"no τ² task of {', '.join(DOMAINS)} has this scenario: "
                          f"{scenario[:120]!r}")
    return task


def _closing(plan: OraclePlan) -> set[str]:
    """The agent's words once every action is done: the information, then the question."""
    done = OraclePlan(plan.task)
    done.cursor = len(done.actions)
    words = {text} if (text := done.for_agent().text) else set()
    done.informed = True
    return words | {done.for_agent().text}


def respond(api: Api, body: Mapping[str, Any]) -> Reply:
    """The scripted agent's or user's next message for this request."""
    messages: list[Mapping[str, Any]] = list(body.get("messages", []))
    role = role_of(messages)
    task = _task(messages, role)
    plan = OraclePlan(task)
    info = "; ".join(plan.info)
    if role == "assistant":
        for m in messages:
            if m.get("role") == "assistant":
                for call in m.get("tool_calls") or []:
                    plan.observe("assistant", call["function"]["name"])
                plan.informed = plan.informed or bool(info and _text(m.get("content")) == info)
        gold = plan.for_agent()
    else:  # the user's view: its own words are "assistant", the agent's are "user"
        plan.user_spoke = any(m.get("role") == "assistant" for m in messages)
        agent_said = {_text(m.get("content")) for m in messages if m.get("role") == "user"}
        if agent_said & _closing(plan):
            plan.cursor, plan.informed = len(plan.actions), True
        gold = plan.for_user()
    return Reply(content=gold.text or None,
                 tool_calls=[ReplyCall(name=c.function, arguments=json.dumps(c.arguments))
                             for c in gold.calls])
