"""The one episode loop: an agent, a user, and tools, taking turns.

Every benchmark task (BFCL multi-turn, τ², the EnvFactory tasks), QueryGen's rollouts
and, later, verl's agent loop run their conversations here. It is τ²'s half-duplex
orchestration made general: control passes between the agent, the user and the
environment (`ToolBackend`); each hop is one step. What differs between benchmarks is
small and lives in `Rules` and in the choice of user:

* `ScriptedUser` — user turns from the data, fed one at a time whenever the agent
  answers in text (BFCL, EnvFactory). A turn may change the agent's tools (BFCL's
  held-out functions).
* `SimulatedUser` — a model (an Inspect model role) with its own history, tools and
  stop tokens (τ²).
* no user — the agent works alone and must end with its stop tool (τ² solo).

`Rules` hold a benchmark's policies: how raw tool calls are decoded, per-turn and
per-episode step limits (and whether they wait for the environment), the error limit, the
tool-call limit, an opening greeting (and whether the agent's requests include it), the
stop tool, stop tokens from the agent, whether a stop token beside a tool call stops, what
a message with neither text nor calls does (retried, forwarded or ending the episode), and
how a call that could not be decoded is answered (refused, or ending the episode).

Progress is written to the episode's `EpisodeProgress` (a typed `StoreModel`; by default
the sample's, which scorers read; a caller running episodes side by side, like
QueryGen's k rollouts, passes each its own) after every step, with the canonical
`Message` record of everything said and every call made. A token, time or message
limit (or an error) therefore leaves the evidence in the log and `termination` set, and
scorers can always score. Tool calls and results also appear in Inspect's transcript as
tool events, so `inspect view` shows them, while each model is sent exactly its
benchmark's messages.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

import anyio
from inspect_ai.event import ToolEvent
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    Model,
)
from inspect_ai.tool import ToolCallError, ToolChoice, ToolInfo
from inspect_ai.util import LimitExceededError, StoreModel, store_as
from pydantic import BaseModel, Field

from envs.errors import ErrorKind
from harness import inspect_compat, raw_arguments
from harness.gold import GoldPolicy, Position, channel, publish
from harness.tool_backends import ToolBackend
from harness.trajectory import ERROR_KIND_KEY, Message, MessageCall, Role

__all__ = [
    "Episode",
    "EpisodeProgress",
    "Invocation",
    "Rules",
    "ScriptedUser",
    "Side",
    "SimulatedUser",
    "Termination",
    "UserTurn",
    "inspect_decode",
    "json_decode",
    "message_record",
]


class Termination(StrEnum):
    """Why an episode ended (τ²'s reasons plus the harness's own)."""

    USER_STOP = "user_stop"
    AGENT_STOP = "agent_stop"
    MAX_STEPS = "max_steps"
    TOO_MANY_ERRORS = "too_many_errors"
    AGENT_ERROR = "agent_error"
    USER_ERROR = "user_error"
    #: the agent's message stayed empty through its retries (VitaBench)
    INVALID_AGENT_MESSAGE = "invalid_agent_message"
    #: a scripted user had no more turns
    TURNS_DONE = "turns_done"
    #: the episode's tool calls reached `Rules.max_tool_calls` (MCP-Atlas)
    MAX_TOOL_CALLS = "max_tool_calls"
    #: a turn used up its steps and the rules end the episode (BFCL's force-quit)
    TURN_STEP_LIMIT = "turn_step_limit"
    #: an Inspect limit (tokens, messages, time, working time) cut the episode
    LIMIT = "limit"
    #: an exception ended it
    ERROR = "error"


class EpisodeProgress(StoreModel):
    """The episode so far, rewritten after every step (what scorers read)."""

    messages: list[Message] = Field(default_factory=list)
    #: index of the current user turn (-1 before the first)
    turn: int = -1
    steps: int = 0
    tool_errors: int = 0
    termination: Termination | None = None
    #: Inspect limit or error message, when one ended the episode
    detail: str | None = None
    #: the backend's snapshot when the episode ended (None if it could not be taken)
    final_state: dict[str, dict[str, Any]] | None = None


class Invocation(BaseModel):
    """A decoded tool call, ready to run (or, with `parse_error`, to be refused)."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    parse_error: str | None = None


Decoder = Callable[[Message], "list[Invocation] | None"]


def inspect_decode(message: Message) -> list[Invocation] | None:
    """Inspect's parse: each call runs, or is refused with its parse error."""
    return [Invocation(id=c.id, name=c.name, arguments=c.arguments, parse_error=c.parse_error)
            for c in message.tool_calls or []]


def json_decode(message: Message) -> list[Invocation]:
    """τ²'s and VitaBench's decoding: `json.loads` of each call's raw arguments string, which must
    give an object (`ToolCall.arguments` is a dict); anything else is a parse error
    (Inspect's own parse is more lenient: it falls back to YAML)."""
    invocations = []
    for call in message.tool_calls or []:
        error = call.parse_error
        if error is None and call.raw_arguments is not None:
            try:
                if not isinstance(json.loads(call.raw_arguments), dict):
                    error = "tool call arguments are not a JSON object"
            except ValueError as e:
                error = str(e)
        invocations.append(Invocation(id=call.id, name=call.name,
                                      arguments=call.arguments if error is None else {},
                                      parse_error=error))
    return invocations


def parse_error_text(invocation: Invocation) -> str:
    return f"Error: {invocation.parse_error}"


@dataclass
class Rules:
    """A benchmark's policies for the loop (defaults: plain tool use, no limits)."""

    #: tool calls of a message -> invocations; None means "not a tool step": the
    #: message ends the speaker's turn like text (BFCL's undecodable steps)
    decode: Decoder = inspect_decode
    #: the answer to a call whose arguments could not be decoded (never executed)
    refuse: Callable[[Invocation], str] = parse_error_text
    #: executed tool steps per user turn; reaching it ends the turn, or the episode
    turn_step_limit: int | None = None
    end_episode_at_turn_step_limit: bool = False
    #: hops in the whole episode
    max_steps: int | None = None
    #: failed tool calls in the whole episode
    max_errors: int | None = None
    #: check the two limits only when nobody waits on the environment (τ² v1.0); False:
    #: after every step, a pending tool call included (τ² v0.2.0)
    limits_wait_for_env: bool = True
    #: the agent's fixed first message (τ²), sent without a model call
    greeting: str | None = None
    #: whether the agent's requests include its greeting; τ² v0.2.0's agent never sees
    #: it (its first request is [system, user]). The record and the agent's history (the
    #: sample's messages, in the log) hold it either way
    greeting_in_agent_requests: bool = True
    #: a tool whose call ends the episode as AGENT_STOP (never executed)
    stop_tool: str | None = None
    #: tokens whose appearance in an agent's text ends the episode as AGENT_STOP
    agent_stop_tokens: tuple[str, ...] = ()
    #: whether a message carrying a stop token *and* tool calls stops; τ² v0.2.0: no,
    #: the calls run and the speaker is asked again (`is_stop` is false for calls)
    stop_token_with_calls: bool = False
    #: a generated agent message with neither text nor tool calls is regenerated up to
    #: `empty_retries` times (a user's never is); then "forward" sends it on as empty
    #: text, "end" ends the episode as AGENT_ERROR / USER_ERROR (τ² v0.2.0's message
    #: validation fails the simulation there), "invalid" ends it as INVALID_AGENT_MESSAGE
    #: for the agent and USER_ERROR for the user (VitaBench), with the reason in
    #: `EpisodeProgress.detail`
    empty_retries: int = 0
    empty_message: Literal["forward", "end", "invalid"] = "forward"
    #: tool calls executed (or refused) in the whole episode; reaching it ends the
    #: episode as MAX_TOOL_CALLS, and the calls left in that message never run and get no
    #: result (MCP-Atlas's harness: 100)
    max_tool_calls: int | None = None
    #: a call whose arguments could not be decoded is refused (answered by `refuse`),
    #: or, with "end", ends the episode as AGENT_ERROR / USER_ERROR (τ² v0.2.0's
    #: `json.loads` of the arguments raises there and the simulation fails)
    undecodable_call: Literal["refuse", "end"] = "refuse"


@dataclass
class Side:
    """One speaker: its model, the history that model sees, and its tools.

    Give the agent the sample's own message list (`state.messages`) as its history:
    the log then holds the conversation as it grows, and Inspect's message limit is
    enforced on it like on any solver's messages."""

    role: Role
    model: Model | None
    history: list[ChatMessage]
    tools: list[ToolInfo] = field(default_factory=list)
    config: GenerateConfig | None = None
    #: Inspect's tool choice for this side's requests (None: its default, "auto")
    tool_choice: ToolChoice | None = None
    #: messages generated since the other side last spoke (the turn's step index)
    step: int = 0


@dataclass
class UserTurn:
    """One scripted user turn: the messages to send, and the agent's tools from now on."""

    messages: list[ChatMessage]
    tools: list[ToolInfo] | None = None


@dataclass
class ScriptedUser:
    turns: Sequence[UserTurn]


@dataclass
class SimulatedUser:
    side: Side
    stop_tokens: tuple[str, ...] = ()


class Episode:
    """One run of the loop. `await Episode(...).run()` returns the final progress."""

    def __init__(self, agent: Side, backend: ToolBackend, rules: Rules,
                 user: ScriptedUser | SimulatedUser | None = None,
                 gold: GoldPolicy | None = None,
                 progress: EpisodeProgress | None = None) -> None:
        """`progress`: where the loop writes (and, before each model call, publishes to
        the offline providers); default the running sample's (`store_as`). Pass
        `EpisodeProgress(store=Store())` to run beside other episodes of one sample, or
        outside any sample."""
        self.agent, self.backend, self.rules, self.user, self.gold = (
            agent, backend, rules, user, gold)
        self.progress = progress if progress is not None else store_as(EpisodeProgress)
        self.messages: list[Message] = []
        self.turn = -1
        self.steps = self.errors = self.turn_tool_steps = self.tool_calls = 0
        self.termination: Termination | None = None
        self.from_role: str = "user"
        self.to_role: str = "assistant" if user is None else "user"
        self.pending: list[Invocation] = []
        #: a message in the agent's history its requests leave out (its greeting)
        self.unsent: ChatMessage | None = None
        for side in self._sides():
            if side.model is not None:
                raw_arguments.install(side.model)

    def _sides(self) -> list[Side]:
        sides = [self.agent]
        if isinstance(self.user, SimulatedUser):
            sides.append(self.user.side)
        return sides

    def side(self, role: str) -> Side:
        if role == "assistant":
            return self.agent
        assert isinstance(self.user, SimulatedUser)
        return self.user.side

    # -- running ----------------------------------------------------------------------

    async def run(self) -> EpisodeProgress:
        with channel(self.progress.store):
            await self._run()
        return self.progress

    async def _run(self) -> None:
        try:
            if self.user is None:  # alone, the agent's work is one turn
                self._begin_turn()
            if self.rules.greeting is not None:
                self._greet(self.rules.greeting)
            while self.termination is None:
                await self._step()
                self._check_limits()
                self._save()
        except (LimitExceededError, anyio.get_cancelled_exc_class()) as e:
            # Inspect enforces sample limits by raising in, or cancelling, the solver
            self.termination, self.progress.detail = Termination.LIMIT, repr(e)
            raise
        except BaseException as e:
            if self.termination is None:
                self.termination, self.progress.detail = Termination.ERROR, repr(e)
            raise
        finally:
            self._save()
            with anyio.CancelScope(shield=True):
                try:
                    self.progress.final_state = await self.backend.snapshot()
                except Exception as e:  # noqa: BLE001 - the evidence so far is kept
                    self.progress.detail = f"final snapshot failed: {e!r}"

    def _save(self) -> None:
        """Write the progress fields. Straight into the store: StoreModel's setattr
        re-validates every field (the whole message list) on each assignment, and the
        values here are valid by construction."""
        p = self.progress
        for name, value in (("messages", self.messages), ("turn", self.turn),
                            ("steps", self.steps), ("tool_errors", self.errors),
                            ("termination", self.termination)):
            p.store.set(inspect_compat.store_key(EpisodeProgress, name, p.instance), value)

    def _end(self, reason: Termination) -> None:
        self.termination = reason

    def _begin_turn(self) -> None:
        self.turn += 1
        self.turn_tool_steps = 0
        for side in self._sides():
            side.step = 0

    def _record(self, message: Message) -> None:
        message.turn = self.turn if self.turn >= 0 else None
        self.messages.append(message)

    def _greet(self, text: str) -> None:
        self._record(Message(role="assistant", content=text))
        greeting = ChatMessageAssistant(content=text)
        self.agent.history.append(greeting)
        if not self.rules.greeting_in_agent_requests:
            self.unsent = greeting
        self._deliver_text("assistant", text)

    def _request(self, side: Side) -> list[ChatMessage]:
        """The history a side's model is sent (the agent's without an unsent greeting)."""
        if side is self.agent and self.unsent is not None:
            return [m for m in side.history if m is not self.unsent]
        return side.history

    async def _step(self) -> None:
        if self.to_role == "env":
            await self._execute(self.from_role)  # type: ignore[arg-type]
            self.from_role, self.to_role = "env", self.from_role
            if self.to_role == "assistant":
                self.turn_tool_steps += 1
                self._check_turn_steps()
        elif self.to_role == "user" and isinstance(self.user, ScriptedUser):
            self._feed_turn(self.user)
        elif self.to_role == "user":
            await self._speak("user")
        else:
            await self._speak("assistant")
        self.steps += 1

    def _feed_turn(self, user: ScriptedUser) -> None:
        if self.turn + 1 >= len(user.turns):
            self._end(Termination.TURNS_DONE)
            return
        self._begin_turn()
        turn = user.turns[self.turn]
        if turn.tools is not None:
            self.agent.tools = turn.tools
        for m in turn.messages:
            self._record(Message(role="system" if m.role == "system" else "user",
                                 content=m.text))
            self.agent.history.append(m)
        self.from_role, self.to_role = "user", "assistant"

    async def _speak(self, role: Role) -> None:
        side = self.side(role)
        assert side.model is not None
        position = Position(role=role, turn=self.turn, step=side.step)
        publish(position, self.gold.next(position) if self.gold is not None else None)
        attempts = 0
        while True:
            attempts += 1
            with raw_arguments.capture() as raw:
                output = await side.model.generate(self._request(side), tools=side.tools,
                                                   tool_choice=side.tool_choice,
                                                   config=side.config or GenerateConfig())
            empty = not (output.message.text.strip() or output.message.tool_calls)
            retries = self.rules.empty_retries if role == "assistant" else 0
            if not empty or attempts > retries:
                break
        side.step += 1
        message = output.message
        if empty and self.rules.empty_message != "forward":
            self._record(message_record(message, role, raw))
            self.progress.detail = (f"empty {role} message: neither text nor tool calls "
                                    f"({attempts} attempt(s))")
            self._end(Termination.USER_ERROR if role == "user"
                      else Termination.INVALID_AGENT_MESSAGE
                      if self.rules.empty_message == "invalid" else Termination.AGENT_ERROR)
            return
        record = message_record(message, role, raw,
                                lambda name: self.backend.requestor(role, name))
        invocations = self.rules.decode(record) if record.tool_calls else None
        if invocations and record.tool_calls:  # what runs is what the record says
            decoded = {i.id: i for i in invocations}
            for call in record.tool_calls:
                if call.id in decoded:
                    call.arguments = decoded[call.id].arguments
                    call.parse_error = decoded[call.id].parse_error
        self._record(record)
        side.history.append(message)
        bad = next((i for i in invocations or [] if i.parse_error is not None), None)
        if bad is not None and self.rules.undecodable_call == "end":
            self.progress.detail = (f"undecodable arguments of {role} tool call {bad.name!r}: "
                                    f"{bad.parse_error}")
            self._end(Termination.AGENT_ERROR if role == "assistant"
                      else Termination.USER_ERROR)
            return
        stoppable = self.rules.stop_token_with_calls or not message.tool_calls
        if stoppable and role == "user" and isinstance(self.user, SimulatedUser) and any(
                token in message.text for token in self.user.stop_tokens):
            self._end(Termination.USER_STOP)
        if stoppable and role == "assistant" and any(
                token in message.text for token in self.rules.agent_stop_tokens):
            self._end(Termination.AGENT_STOP)
        if invocations:
            self.from_role, self.to_role, self.pending = role, "env", invocations
        else:
            self._deliver_text(role, message.text)
        if role == "assistant" and self.rules.stop_tool and any(
                i.name == self.rules.stop_tool for i in invocations or []):
            self._end(Termination.AGENT_STOP)
        elif role == "assistant" and self.user is None and not invocations:
            self._end(Termination.AGENT_ERROR)  # alone, the agent may only call tools

    def _deliver_text(self, role: str, text: str) -> None:
        """Text ends the speaker's turn: the other side gets it (or the next turn)."""
        self.from_role = role
        if role == "assistant":
            self.to_role = "user"
            if isinstance(self.user, SimulatedUser):
                self._begin_turn()
                self.user.side.history.append(ChatMessageUser(content=text))
        else:
            self.to_role = "assistant"
            self.agent.history.append(ChatMessageUser(content=text))

    async def _execute(self, role: Role) -> None:
        side = self.side(role)
        limit = self.rules.max_tool_calls
        for invocation in self.pending:
            if limit is not None and self.tool_calls >= limit:
                break
            self.tool_calls += 1
            kind: ErrorKind | None
            if invocation.parse_error is not None:
                text, ok = self.rules.refuse(invocation), False
                kind = ErrorKind.INVALID_ARGUMENTS
            else:
                observation = await self.backend.call(invocation.name, invocation.arguments,
                                                      role)
                text, ok, kind = observation.text, observation.ok, observation.error_kind
                if self.gold is not None:
                    self.gold.observe(self.backend.requestor(role, invocation.name),
                                      invocation.name)
            self.errors += not ok
            self._record(Message(role="tool", content=text, tool_call_id=invocation.id,
                                 requestor=role, error=not ok, error_kind=kind))
            _tool_event(invocation, text, ok)
            # the kind rides in the message's metadata, which no provider sends: the model
            # reads exactly `text` (setting `error` would make providers send its message)
            side.history.append(ChatMessageTool(
                content=text, tool_call_id=invocation.id, function=invocation.name,
                metadata=None if kind is None else {ERROR_KIND_KEY: kind.value}))
        self.pending = []
        if limit is not None and self.tool_calls >= limit:
            self._end(Termination.MAX_TOOL_CALLS)

    # -- limits -----------------------------------------------------------------------

    def _check_turn_steps(self) -> None:
        limit = self.rules.turn_step_limit
        if limit is None or self.turn_tool_steps < limit:
            return
        if self.rules.end_episode_at_turn_step_limit:
            self._end(Termination.TURN_STEP_LIMIT)
        else:  # the turn is over; the next user turn follows
            self.from_role, self.to_role = "assistant", "user"

    def _check_limits(self) -> None:
        if self.to_role == "env" and self.rules.limits_wait_for_env:
            return
        if self.rules.max_steps is not None and self.steps >= self.rules.max_steps:
            self._end(Termination.MAX_STEPS)
        if self.rules.max_errors is not None and self.errors >= self.rules.max_errors:
            self._end(Termination.TOO_MANY_ERRORS)


def message_record(message: ChatMessageAssistant, role: Role, raw: dict[str, str],
                   requestor: Callable[[str], Role] | None = None) -> Message:
    """The canonical record of a generated message, with the provider's raw argument
    strings (`harness.raw_arguments.capture`) where they were captured."""
    return Message(
        role=role, content=message.text or None,
        tool_calls=[MessageCall(
            id=tc.id, name=tc.function,
            arguments={} if tc.parse_error else dict(tc.arguments),
            raw_arguments=raw.get(tc.id), parse_error=tc.parse_error,
            requestor=requestor(tc.function) if requestor is not None else role,
        ) for tc in message.tool_calls or []] or None)


def _tool_event(invocation: Invocation, text: str, ok: bool) -> None:
    """Show the call in Inspect's transcript (the model saw `text` as its result)."""
    inspect_compat.record_event(ToolEvent(
        id=invocation.id, function=invocation.name, arguments=invocation.arguments,
        result=text, error=None if ok else ToolCallError("unknown", text)))
