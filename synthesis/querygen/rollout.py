"""Solver rollouts: one candidate solution of one turn, run by the harness episode loop.

Each candidate gets a fresh in-process `World` restored from the turn's start state and
its own `EpisodeProgress` on a fresh `Store` (handed to the `Episode`), so k rollouts of
one sample never share progress or what the loop publishes to offline providers; this
works inside an Inspect sample and outside one (tests, scripts) alike.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser, Model
from inspect_ai.util import Store

from envs.names import split_name
from harness.episode import (
    Episode,
    EpisodeProgress,
    Rules,
    ScriptedUser,
    Side,
    SimulatedUser,
    UserTurn,
)
from harness.tool_backends import InProcessBackend
from harness.trajectory import Call, Message
from synthesis.querygen.prompts import SOLVER_SYSTEM, USER_STOP

__all__ = ["Candidate", "UserPlay", "rollout", "run_isolated"]

T = TypeVar("T")


@dataclass
class UserPlay:
    """A simulated user for conversational rollouts: its model and system prompt."""

    model: Model
    prompt: str
    max_messages: int


@dataclass
class Candidate:
    """What one rollout did in its turn."""

    #: calls the environments accepted, in order (failed calls change nothing)
    calls: list[Call]
    failed_calls: int
    answer: str | None
    final_state: dict[str, dict[str, Any]] | None
    termination: str | None
    messages: list[Message] = field(default_factory=list)
    #: what the user said in the turn (the query, plus a simulated user's replies)
    user_messages: list[str] = field(default_factory=list)


async def run_isolated(jobs: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
    """Run `jobs` concurrently, each in its own task (so context-local state, like the
    raw argument capture, stays its own); results in the order of `jobs`."""
    results: list[Any] = [None] * len(jobs)

    async def one(i: int) -> None:
        results[i] = await jobs[i]()

    async with anyio.create_task_group() as tg:
        for i in range(len(jobs)):
            tg.start_soon(one, i)
    return results


async def rollout(envs: list[str], start: dict[str, dict[str, Any]], history: list[ChatMessage],
                  query: str, solver: Model, max_solve: int, user: UserPlay | None = None
                  ) -> Candidate:
    """One candidate for one turn, on its own world and progress store."""
    backend = InProcessBackend(envs, start)
    own = EpisodeProgress(store=Store())
    agent = Side(role="assistant", model=solver,
                 history=[ChatMessageSystem(content=SOLVER_SYSTEM), *history],
                 tools=backend.tools())
    if user is None:
        rules = Rules(turn_step_limit=max_solve, end_episode_at_turn_step_limit=True)
        progress = await Episode(agent, backend, rules, user=ScriptedUser(
            [UserTurn(messages=[ChatMessageUser(content=query)])]), progress=own).run()
    else:
        side = Side(role="user", model=user.model, history=[
            ChatMessageSystem(content=user.prompt),
            ChatMessageUser(content="The assistant is ready; send your first message.")])
        rules = Rules(turn_step_limit=max_solve, end_episode_at_turn_step_limit=True,
                      max_steps=2 * user.max_messages * (max_solve + 2))
        progress = await Episode(agent, backend, rules,
                                 user=SimulatedUser(side, stop_tokens=(USER_STOP,)),
                                 progress=own).run()
    return candidate(envs, progress.messages, progress.final_state,
                     None if progress.termination is None else str(progress.termination))


def candidate(envs: list[str], messages: list[Message],
              final_state: dict[str, dict[str, Any]] | None, termination: str | None
              ) -> Candidate:
    """The calls, answer and user words of a recorded turn."""
    names = dict.fromkeys(envs)
    ok = {m.tool_call_id: not m.error for m in messages if m.role == "tool"}
    calls: list[Call] = []
    failed = 0
    answer = None
    said = []
    for m in messages:
        if m.role == "user" and m.content and USER_STOP not in m.content:
            said.append(m.content)
        if m.role != "assistant":
            continue
        if m.content and not m.tool_calls:
            answer = m.content
        for c in m.tool_calls or []:
            parts = split_name(c.name, names)
            if parts is None or c.parse_error is not None or not ok.get(c.id, False):
                failed += 1
                continue
            calls.append(Call(env=parts[0], name=parts[1], arguments=c.arguments))
    return Candidate(calls=calls, failed_calls=failed, answer=answer, final_state=final_state,
                     termination=termination, messages=messages, user_messages=said)

