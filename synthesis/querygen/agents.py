"""The LLM agents of QueryGen: one Inspect model call each, tagged replies, retried with feedback.

`ask` is the only place a synthesis agent talks to a model: a reply that lacks a tag or
fails the caller's check is answered with what was wrong and asked again, up to
`retries` times; then `AgentError` carries the last problem (a rejection, never a crash).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar, cast

from inspect_ai.model import ChatMessageUser, Model

from envs import registry
from harness.reask import ask_until_valid
from harness.trajectory import Call
from synthesis.querygen.prompts import (
    JUDGE,
    PLANNER,
    QUERY,
    REFINE,
    SELECTOR,
    STATE_WRITER,
    STEP_FILTER,
    parse_tags,
)

__all__ = ["AgentError", "ask", "filter_steps", "judge", "plan", "refine", "select",
           "tags_only", "write_query", "write_state"]

T = TypeVar("T")


class AgentError(Exception):
    """An agent gave no usable reply within its retries."""

    def __init__(self, agent: str, problem: str) -> None:
        super().__init__(f"{agent}: {problem}")
        self.agent, self.problem = agent, problem


def tags_only(tags: dict[str, str]) -> dict[str, str]:
    """`ask`'s check when the tags themselves are the answer."""
    return tags


async def ask(model: Model, agent: str, prompt: str, tags: list[str], retries: int,
              check: Callable[[dict[str, str]], T]) -> T:
    """Ask `model`; parse `tags`; `check` turns them into the result or raises ValueError
    (a `StateError` is one), which is shown to the model, `retries` times at most."""
    asked = await ask_until_valid(
        model, [ChatMessageUser(content=prompt)], lambda text: check(parse_tags(text, tags)),
        attempts=retries + 1,
        again="That reply cannot be used: {problem}. Please answer again in the requested "
              "format.")
    if asked.problem is not None:
        raise AgentError(agent, asked.problem)
    return cast(T, asked.value)


def _services(envs: list[str]) -> str:
    return "\n".join(f"- {e}: {registry.get(e).description}" for e in envs)


async def plan(model: Model, envs: list[str], capabilities: list[str],
               retries: int) -> tuple[str, str]:
    """(persona, scenario) for a chain: the planner sees tool descriptions, never names."""
    prompt = PLANNER.format(services=_services(envs),
                                    capabilities="\n".join(f"- {c}" for c in capabilities))
    tags = await ask(model, "planner", prompt, ["persona", "scenario"], retries,
                     tags_only)
    return tags["persona"], tags["scenario"]


async def write_state(model: Model, env: str, scenario: str, default: dict[str, Any],
                      retries: int) -> dict[str, Any]:
    """An LLM-written state for `env`, validated by the env's own State model."""
    cls = type(registry.create(env))
    schema = json.dumps(cls.State.model_json_schema(), ensure_ascii=False)
    prompt = STATE_WRITER.format(env=env, scenario=scenario, schema=schema,
                                         default=json.dumps(default, ensure_ascii=False))

    def valid(tags: dict[str, str]) -> dict[str, Any]:
        try:
            data = json.loads(tags["state"])
        except json.JSONDecodeError as e:
            raise ValueError(f"<state> is not JSON ({e})") from None
        return cls.load_state(data).model_dump(mode="json")

    return await ask(model, f"state writer ({env})", prompt, ["state"], retries, valid)


async def write_query(model: Model, *, persona: str, scenario: str, history: str,
                      state: dict[str, Any], tools: str, retries: int) -> tuple[str, str]:
    """(intent, query) for one turn."""
    prompt = QUERY.format(persona=persona, scenario=scenario, history=history or "(none)",
                                  state=json.dumps(state, ensure_ascii=False), tools=tools)
    tags = await ask(model, "query generator", prompt, ["intent", "query"], retries,
                     tags_only)
    return tags["intent"], tags["query"]


async def refine(model: Model, query: str, history: str, retries: int
                 ) -> tuple[str, list[str]]:
    """(refined query, patterns applied), patterns among the four known names."""
    prompt = REFINE.format(query=query, history=history or "(none)")

    def known(tags: dict[str, str]) -> tuple[str, list[str]]:
        names = [p.strip() for p in tags["patterns"].split(",") if p.strip()]
        unknown = [p for p in names if p not in PATTERNS]
        if unknown:
            raise ValueError(f"unknown patterns {unknown}; use {', '.join(PATTERNS)}")
        return tags["query"], names

    return await ask(model, "refiner", prompt, ["query", "patterns"], retries, known)


PATTERNS = ("implicit_reference", "action_compression", "reasonable_ambiguity",
            "goal_expansion")


async def select(model: Model, query: str, candidates: list[str], retries: int) -> int:
    """Index (0-based) of the best of several agreeing candidates."""
    if len(candidates) == 1:
        return 0
    shown = "\n\n".join(f"Solution {i + 1}:\n{c}" for i, c in enumerate(candidates))
    prompt = SELECTOR.format(query=query, candidates=shown)

    def in_range(tags: dict[str, str]) -> int:
        try:
            n = int(tags["choice"].strip())
        except ValueError:
            raise ValueError("<choice> must be a number") from None
        if not 1 <= n <= len(candidates):
            raise ValueError(f"<choice> must be between 1 and {len(candidates)}")
        return n - 1

    return await ask(model, "selector", prompt, ["choice"], retries, in_range)


async def filter_steps(model: Model, query: str, calls: list[Call], retries: int
                       ) -> tuple[bool, list[list[str]]]:
    """(keep the turn?, masked argument names per call)."""
    shown = "\n".join(f"{i + 1}. {c.qualified_name}({json.dumps(c.arguments, ensure_ascii=False)})"
                      for i, c in enumerate(calls))
    prompt = STEP_FILTER.format(query=query, calls=shown)

    def parsed(tags: dict[str, str]) -> tuple[bool, list[list[str]]]:
        keep = tags["keep"].strip().lower()
        if keep not in ("yes", "no"):
            raise ValueError("<keep> must be yes or no")
        try:
            masked = json.loads(tags["masked"] or "{}")
        except json.JSONDecodeError as e:
            raise ValueError(f"<masked> is not JSON ({e})") from None
        if not isinstance(masked, dict):
            raise ValueError("<masked> must be a JSON object")
        out: list[list[str]] = [[] for _ in calls]
        for key, names in masked.items():
            if not (str(key).isdigit() and 1 <= int(key) <= len(calls)):
                raise ValueError(f"<masked> names call {key!r}, not one of 1..{len(calls)}")
            call = calls[int(key) - 1]
            if not isinstance(names, list) or any(n not in call.arguments for n in names):
                raise ValueError(f"<masked> for call {key} must list arguments of that call")
            out[int(key) - 1] = [str(n) for n in names]
        return keep == "yes", out

    return await ask(model, "step filter", prompt, ["keep", "masked"], retries, parsed)


async def judge(model: Model, intent: str, conversation: str, retries: int) -> tuple[bool, str]:
    """(passed, reason) for one conversational turn."""
    prompt = JUDGE.format(intent=intent, conversation=conversation)

    def verdict(tags: dict[str, str]) -> tuple[bool, str]:
        v = tags["verdict"].strip().lower()
        if v not in ("pass", "fail"):
            raise ValueError("<verdict> must be pass or fail")
        return v == "pass", tags["reason"]

    return await ask(model, "judge", prompt, ["verdict", "reason"], retries, verdict)
