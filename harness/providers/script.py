"""Scripts of tool calls that offline providers play back, and how solvers hand them over.

A benchmark's solver knows the gold calls of the sample it runs; the `envfactory/oracle`
provider does not. The solver therefore publishes the gold as a `Script` in the
sample's store, plus the index of the user turn in progress; the provider reads both.
The same `Script` shape is what `envfactory/replay` builds from a recorded file, so
both providers share one playback rule (`next_output`).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

__all__ = [
    "NEXT_KEY",
    "GoldMessage",
    "SCRIPT_KEY",
    "TURN_KEY",
    "POSITIONAL_KEY",
    "Script",
    "ScriptedCall",
    "parse_call",
]

SCRIPT_KEY = "envfactory:gold_script"
TURN_KEY = "envfactory:turn_index"
#: Optional {function name: [parameter names in positional order]} for binding `f('x')`.
POSITIONAL_KEY = "envfactory:positional_params"
#: For conversations whose gold path depends on what happened (τ²): the solver publishes
#: the gold next message right before each model call; it wins over the turn script.
NEXT_KEY = "envfactory:gold_next"


class ScriptedCall(BaseModel):
    function: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Script(BaseModel):
    """Per user turn, a list of steps; each step is one assistant message's tool calls.

    After a turn's last step the provider answers with `final_text`, ending the turn.
    """

    turns: list[list[list[ScriptedCall]]]
    final_text: str = "Done."


class GoldMessage(BaseModel):
    """One gold assistant message: tool calls, or text when there are none."""

    calls: list[ScriptedCall] = Field(default_factory=list)
    text: str = ""


class CallParseError(ValueError):
    """A recorded call string is not `name(key=value, ...)` with Python literals."""


def parse_call(text: str, positional: Mapping[str, Sequence[str]] | None = None) -> ScriptedCall:
    """Parse `name(key=value, ...)` (Python literal values) into a `ScriptedCall`.

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
    return ScriptedCall(function=name, arguments=arguments)


def _dotted_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted_name(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def steps_in_current_turn(messages: Sequence[Any]) -> int:
    """Assistant messages since the last user message: the step index within the turn."""
    count = 0
    for message in reversed(messages):
        if message.role == "user":
            break
        if message.role == "assistant":
            count += 1
    return count


def next_step(script: Script, turn: int, step: int) -> list[ScriptedCall] | None:
    """The calls to play at (turn, step), or None when the turn should end with text."""
    if turn >= len(script.turns):
        return None
    steps = script.turns[turn]
    return steps[step] if step < len(steps) else None
