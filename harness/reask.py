"""Ask a model, check the reply, and ask again with the reason when it cannot be used.

The synthesis agents (QueryGen's planner and writers, EnvGen's coder and tester, the
tool graph's LLM passes) all want a reply in a format they can check (tags, a fenced
code block, JSON). When the check fails, the model is shown its own reply and what was
wrong with it, in the same conversation, and answers again: a model that slipped on the
format usually fixes it once told, where a fresh sample would repeat the slip. The loop
lives here once, on Inspect's model API (so any provider and model role works); each
caller keeps its own wording of the retry request, which is part of its prompts.

Judges are not re-asked this way: a judge's reply is a verdict, and asking again until
it parses would bias it (`harness.judge`, MCP-Atlas's upstream retry policy).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    Model,
)

T = TypeVar("T")

__all__ = ["Asked", "ask_until_valid"]


@dataclass(frozen=True)
class Asked(Generic[T]):
    """The outcome of `ask_until_valid`: the checked value (None when every attempt was
    refused), the attempts made, the tokens they cost and the last refusal's reason."""

    value: T | None
    attempts: int
    tokens: int
    problem: str | None


async def ask_until_valid(model: Model, messages: list[ChatMessage],
                          check: Callable[[str], T], *, attempts: int, again: str,
                          refused: tuple[type[Exception], ...] = (ValueError,),
                          config: GenerateConfig | None = None) -> Asked[T]:
    """Generate from `messages` and pass the reply's text to `check`, up to `attempts`
    times. A reply `check` refuses (by raising one of `refused`; its message is the
    reason) is followed by `again.format(problem=reason)` as the next user message.
    `messages` itself is not changed."""
    conversation = list(messages)
    tokens = 0
    problem: str | None = None
    for attempt in range(1, attempts + 1):
        output = await model.generate(conversation, config=config or GenerateConfig())
        if output.usage is not None:
            tokens += output.usage.total_tokens
        text = output.completion
        try:
            return Asked(check(text), attempt, tokens, None)
        except refused as e:
            problem = str(e)
        conversation += [ChatMessageAssistant(content=text),
                         ChatMessageUser(content=again.format(problem=problem))]
    return Asked(None, attempts, tokens, problem)
