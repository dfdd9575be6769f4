"""The scripted conversations `tau2_peer_comparison.py` grades on both sides: for each τ²
task, one conversation per case, its tool calls executed on a live world of ours (so each
record carries our environment's tool results and final DB hashes).

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
"""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass, field
from typing import Any

DOMAINS = ("airline", "retail", "telecom")
CASES = ("oracle", "no_info", "split_info", "fragmented_info", "info_on_tool_call", "chat_only",
         "wrong_arg", "numeric_strings", "ints_as_floats", "reordered_items", "no_transfer",
         "transfer_by_user", "max_steps", "too_many_errors", "errors_user_stop", "agent_error")
#: argument-typing cases: the peer driver also replays them the way upstream would
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



@dataclass
class CaseActions:
    """The gold actions as one case changes them, and what it changed (for the report)."""

    actions: list[Any]
    note: str = ""
    changed: list[str] = field(default_factory=list)
    """The tools whose arguments an argument-typing case retyped."""


def _applies(case: str, actions: list[Any], info: list[str]) -> bool:
    """Whether the task has what `case` needs (info strings, a transfer, an agent call)."""
    if case == "split_info" and len(info) < 2:
        return False
    if case in ("no_info", "fragmented_info", "info_on_tool_call") and not info:
        return False
    if case == "fragmented_info" and min(map(len, info)) < 2:
        return False  # a one-character string cannot be cut
    if case in ("no_transfer", "transfer_by_user") and not any(a.name == TRANSFER
                                                             for a in actions):
        return False
    return not (case == "info_on_tool_call"
                and not any(a.requestor == "assistant" for a in actions))


def _wrong_arg(domain: str, actions: list[Any]) -> CaseActions | None:
    """One argument of the last write action that has one to change, changed."""
    writes = [i for i, a in enumerate(actions)
              if _is_write(domain, a.requestor, a.name) and _mutate(a.arguments)]
    if not writes:
        return None
    i = writes[-1]
    mutated, what = _mutate(actions[i].arguments)  # type: ignore[misc]
    note = f"{actions[i].action_id} {actions[i].name} {what}"
    actions[i] = actions[i].model_copy(update={"arguments": mutated})
    return CaseActions(actions, note)


def _retyped(case: str, actions: list[Any]) -> CaseActions | None:
    """Every number sent as a string (numeric_strings) or every int as a float."""
    convert = _numbers_as_strings if case == "numeric_strings" else _ints_as_floats
    changed = [a.model_copy(update={"arguments": convert(a.arguments)}) for a in actions]
    # compared as JSON: 2 == 2.0 in Python, but not as a tool argument
    touched = [a for a, b in zip(actions, changed, strict=True)
               if json.dumps(a.arguments) != json.dumps(b.arguments)]
    if not touched:
        return None
    return CaseActions(changed, "; ".join(f"{a.action_id} {a.name}" for a in touched),
                       sorted({a.name for a in touched}))


def _reordered(actions: list[Any]) -> CaseActions | None:
    """The (item, new item) pairs of multi-item calls listed in reverse order."""
    pairs = [i for i, a in enumerate(actions) if len(a.arguments.get("item_ids") or []) > 1
             and len(a.arguments.get("new_item_ids") or []) == len(a.arguments["item_ids"])]
    if not pairs:
        return None
    for i in pairs:
        args = dict(actions[i].arguments)
        args["item_ids"], args["new_item_ids"] = (list(reversed(args["item_ids"])),
                                                  list(reversed(args["new_item_ids"])))
        actions[i] = actions[i].model_copy(update={"arguments": args})
    return CaseActions(actions, "; ".join(f"{actions[i].action_id} {actions[i].name}"
                                          for i in pairs))


def case_actions(domain: str, case: str, actions: list[Any]) -> CaseActions | None:
    """The gold actions `case` executes (a copy), or None when it has nothing to change."""
    if case == "wrong_arg":
        return _wrong_arg(domain, actions)
    if case in RAW_CASES:
        return _retyped(case, actions)
    if case == "reordered_items":
        return _reordered(actions)
    if case == "no_transfer":
        return CaseActions([a for a in actions if a.name != TRANSFER])
    if case == "transfer_by_user":
        return CaseActions([a.model_copy(update={"requestor": "user"}) if a.name == TRANSFER
                            else a for a in actions])
    return CaseActions(actions)


def _communicate(s: Script, case: str, info: list[str], info_text: str) -> None:
    """The agent's closing message(s) with the info, as the case spreads them."""
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


def script_case(domain: str, task: Any, case: str, actions: list[Any], info: list[str]
                ) -> tuple[Script, str]:
    """The conversation: opener, the actions' calls, the info, the errors and the user's
    stop as the case has them; with the termination reason it ends on."""
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
    _communicate(s, case, info, info_text)
    termination = {"max_steps": "max_steps", "too_many_errors": "too_many_errors",
                   "agent_error": "agent_error"}.get(case, "user_stop")
    if case in ("too_many_errors", "errors_user_stop"):
        name, arguments = FAILING_CALL[domain]
        for _ in range(MAX_ERRORS):
            s.call("assistant", name, dict(arguments))
    if termination == "user_stop":
        s.say("user", STOP)
    return s, termination


def build_case(domain: str, task: Any, case: str) -> dict[str, Any] | None:
    """The scripted conversation of one case, or None when the case does not apply."""
    criteria = task.evaluation_criteria
    actions = list(criteria.actions or []) if criteria else []
    info = list(criteria.communicate_info or []) if criteria else []
    if not _applies(case, actions, info):
        return None
    changed = case_actions(domain, case, actions)
    if changed is None:
        return None
    s, termination = script_case(domain, task, case, changed.actions, info)
    return {"domain": domain, "task_id": task.id, "case": case, "note": changed.note,
            "termination_reason": termination, "messages": s.messages,
            "our_db_hash": list(s.world.db_hashes()), "changed": changed.changed,
            "raw_emulation": case in RAW_CASES}


def build_records(tasks: dict[str, dict[str, Any]], cases: list[str], limit: int | None
                  ) -> list[dict[str, Any]]:
    """Every applicable case of the first `limit` tasks of each domain, keyed
    `domain/task/case`."""
    records: list[dict[str, Any]] = []
    for d, by_id in tasks.items():
        ids = list(by_id)[:limit] if limit else list(by_id)
        for tid in ids:
            for case in cases:
                rec = build_case(d, by_id[tid], case)
                if rec is not None:
                    rec["key"] = f"{d}/{tid}/{case}"
                    records.append(rec)
    return records

