"""Responses API requests with the reasoning options bfcl-eval's OpenAI handler sends.

`OpenAIResponsesHandler._query_FC` sends every model `store: false`, `include:
["reasoning.encrypted_content"]` and `reasoning: {"summary": "auto"}`. Inspect's
`openai/` provider builds the same options from the task's config (`reasoning_summary`,
`harness.generation_config.bfcl_config`), but only for the models it knows reason
(o-series, gpt-5, codex); for any other name (gpt-4o, gpt-4.1, a model served under its
own name) it leaves `include` empty and drops `reasoning` with a warning. Inside
`official_reasoning_options()` those options are built as for a reasoning model,
whatever the model: Inspect's own rules (`completion_params_responses`, an Inspect
internal replaced through `harness.inspect_compat`) decide what they are; outside the
block, and on Chat Completions, requests go out as Inspect builds them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from harness import inspect_compat

__all__ = ["official_reasoning_options"]

_active: ContextVar[bool] = ContextVar("envfactory_bfcl_reasoning_options", default=False)


class _ReasoningOptions:
    """A model's Responses info that says it takes reasoning options; the rest delegates."""

    def __init__(self, info: Any) -> None:
        self._info = info

    def __getattr__(self, name: str) -> Any:
        return getattr(self._info, name)

    def has_reasoning_options(self) -> bool:
        return True


def _request_options(inner: Callable[..., Any]) -> Callable[..., Any]:
    def completion_params_responses(*args: Any, model_info: Any, **kwargs: Any) -> Any:
        if _active.get():
            model_info = _ReasoningOptions(model_info)
        return inner(*args, model_info=model_info, **kwargs)

    return completion_params_responses


@contextmanager
def official_reasoning_options() -> Iterator[None]:
    """Build the Responses requests made inside the block with reasoning options."""
    inspect_compat.wrap_openai_responses_request_options(_request_options)
    token = _active.set(True)
    try:
        yield
    finally:
        _active.reset(token)
