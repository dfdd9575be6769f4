"""Tokens spent by the model calls of a block, counted through Inspect's public usage hook.

Progress displays (`envfactory synth queries`) show the tokens spent so far. Inspect's
running total (`model_usage()`) is internal; its public `Hooks.on_model_usage` sees each
call's usage instead, so the count is ours: every call made inside `counting_tokens()`,
in that task and the tasks it starts (a call answered from Inspect's local cache spent
nothing and is not counted).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from inspect_ai.hooks import Hooks, ModelUsageData, hooks

__all__ = ["TokenCount", "counting_tokens"]


@dataclass
class TokenCount:
    """Total tokens (input + output, as each provider reports them) so far."""

    total: int = 0


_active: ContextVar[TokenCount | None] = ContextVar("envfactory_token_count", default=None)


@contextmanager
def counting_tokens() -> Iterator[TokenCount]:
    """Count the tokens of the model calls made inside the block."""
    count = TokenCount()
    token = _active.set(count)
    try:
        yield count
    finally:
        _active.reset(token)


@hooks(name="envfactory_token_count",
       description="Tokens of the model calls inside harness.usage.counting_tokens()")
class _TokenCounter(Hooks):
    async def on_model_usage(self, data: ModelUsageData) -> None:
        count = _active.get()
        if count is not None:
            count.total += data.usage.total_tokens
