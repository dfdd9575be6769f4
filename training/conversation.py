"""A Trajectory as the conversation a model is trained on: one list of steps per user turn.

Training formats want the full exchange: what the user said, each assistant step (its tool
calls or its text), and what each tool answered. A trajectory that recorded its messages
(a run converted from an Inspect log, a QueryGen output) already has them; a task holds
only the user's words and the gold calls, so its exchange is rebuilt by replaying the gold
calls, one step per call, on a `World` restored from the initial state. The tool text is
`ToolResult.text()`, exactly what the in-process backend shows a model at evaluation time.

Only the assistant's own calls are trained on: calls run on the user's side (τ²'s phone)
are not part of this view.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from envs.base import ToolSpec
from envs.world import World
from harness.trajectory import Message, Trajectory

__all__ = ["ExchangeCall", "Step", "TurnExchange", "exchange", "tool_specs"]


class ExchangeCall(BaseModel):
    """One tool call of an assistant step, with what the tool answered."""

    name: str  # qualified "env-tool"
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: str = ""
    ok: bool = True


class Step(BaseModel):
    """One assistant step: tool calls (run in parallel) or a text reply."""

    calls: list[ExchangeCall] = Field(default_factory=list)
    text: str | None = None

    @property
    def failed(self) -> bool:
        """A step whose call failed stays in the history but is never a target."""
        return any(not c.ok for c in self.calls)

    def call_xml(self) -> str:
        """The calls as hermes `<tool_call>` blocks (what Qwen-style templates render)."""
        return "".join("<tool_call>\n" + json.dumps({"name": c.name, "arguments": c.arguments},
                                                    ensure_ascii=False) + "\n</tool_call>\n"
                       for c in self.calls)

    def response_xml(self) -> str:
        """The results as `<tool_response>` blocks, in call order."""
        return "".join(f"<tool_response>\n{c.result}\n</tool_response>\n" for c in self.calls)


class TurnExchange(BaseModel):
    user: str
    steps: list[Step]
    #: replayed exchanges only: every environment's state after the turn's gold calls
    state_after: dict[str, dict[str, Any]] | None = None

    @property
    def has_calls(self) -> bool:
        return any(s.calls for s in self.steps)


def tool_specs(trajectory: Trajectory) -> list[tuple[str, ToolSpec]]:
    """(qualified name, spec) of every tool of the trajectory's environments, in order."""
    return World(trajectory.environments).tools()


def exchange(trajectory: Trajectory, *, replay: bool = False) -> list[TurnExchange]:
    """The trajectory's turns as user words plus assistant steps (see the module doc);
    `replay` rebuilds them from the gold calls even when messages were recorded."""
    if not replay and any(m.role == "assistant" for m in trajectory.messages):
        return _from_messages(trajectory)
    return _replay(trajectory)


def _replay(trajectory: Trajectory) -> list[TurnExchange]:
    world = World(trajectory.environments, trajectory.initial_state)
    turns = []
    for turn in trajectory.turns:
        steps = []
        for call in turn.gold_calls:
            result = world.call(call.env, call.name, call.arguments)
            steps.append(Step(calls=[ExchangeCall(name=call.qualified_name,
                                                  arguments=call.arguments,
                                                  result=result.text(), ok=result.ok)]))
        if turn.assistant:
            steps.append(Step(text=turn.assistant))
        turns.append(TurnExchange(user=turn.user, steps=steps, state_after=world.snapshot()))
    return turns


def _from_messages(trajectory: Trajectory) -> list[TurnExchange]:
    """Turns from recorded messages: the agent's side only (its calls, its text, the results
    it received); a user message opens a turn."""
    turns: list[TurnExchange] = []
    pending: dict[str, ExchangeCall] = {}
    for m in trajectory.messages:
        if m.role == "user" and m.requestor in (None, "assistant"):
            turns.append(TurnExchange(user=m.content or "", steps=[]))
        elif not turns or m.role == "system":
            continue
        elif m.role == "assistant":
            _assistant_step(m, turns[-1], pending)
        elif m.role == "tool" and m.requestor in (None, "assistant"):
            call = pending.pop(m.tool_call_id or "", None)
            if call is not None:
                call.result, call.ok = m.content or "", not m.error
    return turns


def _assistant_step(m: Message, turn: TurnExchange, pending: dict[str, ExchangeCall]) -> None:
    calls = []
    for c in m.tool_calls or []:
        if c.requestor != "assistant":
            continue
        # an undecodable call never ran: it is history (failed), never a target
        call = ExchangeCall(name=c.name, arguments=c.arguments, ok=c.parse_error is None,
                            result=f"Error: {c.parse_error}" if c.parse_error else "")
        pending[c.id] = call
        calls.append(call)
    if calls:
        turn.steps.append(Step(calls=calls))
    elif m.content:
        turn.steps.append(Step(text=m.content))
