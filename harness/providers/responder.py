"""A zero-latency Inspect model that answers each call with a Python function.

Tests and benchmarks script synthesis agents and solvers this way: the function sees the
messages of each call (so it can answer from what the prompt says, not from a fixed list)
and returns a `ModelOutput`; `reply` builds one with explicit token usage, so token
accounting works offline. A function that also needs the offered tools or the generation
config (an agent calling whatever tool is offered, a test of the request's options) takes
the whole `Request` through `request_model`. Nothing here knows a benchmark or a prompt;
the test kit (`testkit.scripted`) and the script provider (`script.py`) build scripted
agents, users and judges on top of it, sharing the two rules every scripted speaker needs:
its turn is the number of its own (assistant) messages so far (`own_turns`), and a
scripted answer given twice never repeats a tool-call id (`fresh_ids`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

__all__ = ["Request", "Respond", "RespondToRequest", "fresh_ids", "new_id", "own_turns", "reply",
           "request_model", "responder_model"]

#: messages of one call -> the model's output
Respond = Callable[[list[ChatMessage]], ModelOutput]


@dataclass(frozen=True)
class Request:
    """One model call as the provider receives it."""

    messages: list[ChatMessage]
    tools: list[ToolInfo]
    tool_choice: ToolChoice
    config: GenerateConfig


#: the whole request of one call -> the model's output
RespondToRequest = Callable[[Request], ModelOutput]


def reply(text: str = "", calls: list[ToolCall] | None = None) -> ModelOutput:
    """An assistant output with `text` and/or tool `calls`, costing 2 tokens; its stop
    reason is the one a provider gives for it (`tool_calls` or `stop`)."""
    return ModelOutput(model="scripted", choices=[ChatCompletionChoice(
        message=ChatMessageAssistant(content=text, tool_calls=calls),
        stop_reason="tool_calls" if calls else "stop")],
        usage=ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2))


def request_model(respond: RespondToRequest, config: GenerateConfig | None = None) -> Model:
    """An Inspect `Model` (mockllm underneath, never memoized) that calls `respond` with
    each call's whole `Request`; `config` is the model's own generation config (what a
    role's `-M`/model config would set)."""

    def custom(input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
               config: GenerateConfig) -> ModelOutput:
        return respond(Request(list(input), list(tools), tool_choice, config))

    return get_model("mockllm/model", custom_outputs=custom, memoize=False,
                     config=config or GenerateConfig())


def responder_model(respond: Respond) -> Model:
    """An Inspect `Model` (mockllm underneath, never memoized) that calls `respond` with
    each call's messages."""
    return request_model(lambda request: respond(request.messages))


_ids = itertools.count(1)


def new_id(prefix: str) -> str:
    """A tool-call id unique in the process (`prefix` then a number)."""
    return f"{prefix}{next(_ids)}"


def own_turns(messages: Sequence[ChatMessage]) -> int:
    """How far a speaker's conversation is: the assistant messages it already holds."""
    return sum(m.role == "assistant" for m in messages)


def fresh_ids(out: ModelOutput, messages: Sequence[ChatMessage], *, prefix: str) -> ModelOutput:
    """`out` with every made-up tool-call id (one starting with `prefix`) that the
    conversation already holds replaced by a new one: a scripted answer given twice must
    not reuse its ids, as no provider would. Other ids are left as they are."""
    used = {c.id for m in messages if isinstance(m, ChatMessageAssistant)
            for c in m.tool_calls or []}

    def stale(c: ToolCall) -> bool:
        return c.id.startswith(prefix) and c.id in used

    if not any(stale(c) for c in out.message.tool_calls or []):
        return out
    out = out.model_copy(deep=True)
    for c in out.message.tool_calls or []:
        if stale(c):
            while c.id in used:
                c.id = new_id(prefix)
    return out
