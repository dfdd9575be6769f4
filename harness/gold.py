"""Gold messages, scripts and the channel through which offline providers receive them.

The episode loop (`harness.episode`) knows, before each model call, *who* is about to
speak and *where* in the episode it is (`Position`), and — when the benchmark supplies
a `GoldPolicy` — what the gold next message would be. It publishes both in its
episode's store (`ModelCallContext`; the sample's store unless the episode was given its
own, see `channel`) right before calling the model. `envfactory/oracle`
plays the published gold; `envfactory/replay` plays the recorded message at that
position. Neither provider knows any benchmark: this module is their whole interface.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

from inspect_ai.util import Store, StoreModel, store
from pydantic import BaseModel, Field

from harness import inspect_compat
from harness.trajectory import Role

__all__ = [
    "CallParseError",
    "GoldCall",
    "GoldMessage",
    "GoldPolicy",
    "ModelCallContext",
    "Position",
    "Script",
    "ScriptPolicy",
    "channel",
    "parse_call",
    "publish",
    "published",
]


class GoldCall(BaseModel):
    function: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class GoldMessage(BaseModel):
    """One gold message: tool calls, or text when there are none."""

    calls: list[GoldCall] = Field(default_factory=list)
    text: str = ""


class Position(BaseModel):
    """Where a model call happens: who speaks, in which user turn (0-based; -1 before
    the first), and how many messages that speaker has produced in the turn so far."""

    role: Role
    turn: int
    step: int


class ModelCallContext(StoreModel):
    """Published by the loop before every model call (the providers' only input)."""

    position: Position | None = None
    gold: GoldMessage | None = None


_POSITION_KEY = inspect_compat.store_key(ModelCallContext, "position")
_GOLD_KEY = inspect_compat.store_key(ModelCallContext, "gold")

#: the store of the episode running in this task (None: the sample's, `store()`)
_episode_store: ContextVar[Store | None] = ContextVar("envfactory_episode_store",
                                                      default=None)


@contextmanager
def channel(episode_store: Store) -> Iterator[None]:
    """Publish into `episode_store` inside the block (this task and those it starts).

    An episode with its own store (QueryGen runs k of them at once in one sample) sets
    it here, so each provider call reads its own episode's position and gold."""
    token = _episode_store.set(episode_store)
    try:
        yield
    finally:
        _episode_store.reset(token)


def _store() -> Store:
    own = _episode_store.get()
    return own if own is not None else store()


def publish(position: Position, gold: GoldMessage | None) -> None:
    """Tell offline providers where the next model call happens and what gold says.

    Written straight into the store under `ModelCallContext`'s keys (so `store_as(
    ModelCallContext)` reads them): binding a StoreModel re-validates its fields, and
    this runs before every model call."""
    s = _store()
    s.set(_POSITION_KEY, position)
    s.set(_GOLD_KEY, gold)


def published() -> tuple[Position | None, GoldMessage | None]:
    """What the loop published for the model call in progress (see `publish`)."""
    s = _store()
    position, gold = s.get(_POSITION_KEY), s.get(_GOLD_KEY)
    return (Position.model_validate(position) if isinstance(position, dict) else position,
            GoldMessage.model_validate(gold) if isinstance(gold, dict) else gold)


class GoldPolicy(Protocol):
    """A benchmark's gold behaviour: the gold next message at a position."""

    def next(self, position: Position) -> GoldMessage: ...

    def observe(self, requestor: Role, name: str) -> None:
        """A call ran (policies whose path depends on what happened track it here)."""


class Script(BaseModel):
    """Per role and user turn, the messages to play in order; a speaker whose messages
    for the turn are exhausted answers `final_text` (which ends an agent's turn)."""

    assistant: list[list[GoldMessage]] = Field(default_factory=list)
    user: list[list[GoldMessage]] = Field(default_factory=list)
    final_text: str = "Done."

    def at(self, position: Position) -> GoldMessage:
        turns = self.assistant if position.role == "assistant" else self.user
        if 0 <= position.turn < len(turns) and position.step < len(turns[position.turn]):
            return turns[position.turn][position.step]
        return GoldMessage(text=self.final_text)

    @classmethod
    def of_calls(cls, turns: Sequence[Sequence[Sequence[GoldCall]]]) -> Script:
        """An agent script from calls: per turn, per step, the calls of one message."""
        return cls(assistant=[[GoldMessage(calls=list(step)) for step in turn]
                              for turn in turns])


class ScriptPolicy:
    """A fixed script as a gold policy (the gold does not depend on what happened)."""

    def __init__(self, script: Script) -> None:
        self.script = script

    def next(self, position: Position) -> GoldMessage:
        return self.script.at(position)

    def observe(self, requestor: Role, name: str) -> None:
        return None


class CallParseError(ValueError):
    """A recorded call string is not `name(key=value, ...)` with Python literals."""


def parse_call(text: str, positional: Mapping[str, Sequence[str]] | None = None) -> GoldCall:
    """Parse `name(key=value, ...)` (Python literal values) into a `GoldCall`.

    Positional arguments are bound by `positional[name]` (a parameter order), when given.
    """
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise CallParseError(f"cannot parse call {text!r}: {e.msg}") from e
    if not isinstance(node, ast.Call):
        raise CallParseError(f"not a function call: {text!r}")
    name = _dotted_name(node.func)
    if name is None:
        raise CallParseError(f"unsupported function expression in {text!r}")
    arguments: dict[str, Any] = {}
    try:
        if node.args:
            order = list((positional or {}).get(name, []))
            if len(node.args) > len(order):
                raise CallParseError(
                    f"{text!r} has positional arguments and no parameter order is known "
                    f"for {name!r}; write it as {name}(key=value, ...)"
                )
            for pname, arg in zip(order, node.args, strict=False):
                arguments[pname] = ast.literal_eval(arg)
        for kw in node.keywords:
            if kw.arg is None:
                raise CallParseError(f"**kwargs are not supported in {text!r}")
            arguments[kw.arg] = ast.literal_eval(kw.value)
    except ValueError as e:
        if isinstance(e, CallParseError):
            raise
        raise CallParseError(f"argument of {text!r} is not a Python literal: {e}") from e
    return GoldCall(function=name, arguments=arguments)


def _dotted_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted_name(node.value)
        return f"{base}.{node.attr}" if base else None
    return None
