"""A zero-latency Inspect model that answers each call with a Python function.

Tests and benchmarks script synthesis agents and solvers this way: the function sees the
messages of each call (so it can answer from what the prompt says, not from a fixed list)
and returns a `ModelOutput`; `reply` builds one with explicit token usage, so token
accounting works offline. Nothing here knows a benchmark or a prompt.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolCall

__all__ = ["Respond", "reply", "responder_model"]

#: messages of one call -> the model's output
Respond = Callable[[list[ChatMessage]], ModelOutput]


def reply(text: str = "", calls: list[ToolCall] | None = None) -> ModelOutput:
    """An assistant output with `text` and/or tool `calls`, costing 2 tokens."""
    return ModelOutput(model="scripted", choices=[ChatCompletionChoice(
        message=ChatMessageAssistant(content=text, tool_calls=calls))],
        usage=ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2))


def responder_model(respond: Respond) -> Model:
    """An Inspect `Model` (mockllm underneath, never memoized) that calls `respond`."""

    def custom(input: list[ChatMessage], tools: Any, tool_choice: Any,
               config: Any) -> ModelOutput:
        return respond(input)

    return get_model("mockllm/model", custom_outputs=custom, memoize=False)
