"""A zero-latency Inspect model that answers each call with a Python function.

Tests and benchmarks script synthesis agents and solvers this way: the function sees the
messages of each call (so it can answer from what the prompt says, not from a fixed list)
and returns a `ModelOutput`; `reply` builds one with explicit token usage, so token
accounting works offline. A function that also needs the offered tools or the generation
config (an agent calling whatever tool is offered, a test of the request's options) takes
the whole `Request` through `request_model`. Nothing here knows a benchmark or a prompt;
the test kit (`testkit.scripted`) builds scripted agents and users on top of it.
"""

from __future__ import annotations

from collections.abc import Callable
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

__all__ = ["Request", "Respond", "RespondToRequest", "reply", "request_model",
           "responder_model"]

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
