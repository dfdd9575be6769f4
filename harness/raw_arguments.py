"""The provider's own tool-call argument strings, captured at the source.

Official decoders (BFCL's `decode_execute`) run `json.loads` on the exact argument
string a provider returned; Inspect parses leniently (stray-quote recovery, a YAML
fallback for non-objects), so its parsed `ToolCall.arguments` cannot stand in for it.
The string is in the provider's raw response (`ModelCall.response`), but Inspect keeps
that in the transcript for only the first few calls of a sample unless
`--log-model-api` is set. So we read it where the provider hands it to Inspect: the
model's `api.generate` is wrapped once, and every response is parsed into the capture
dict of the episode that is waiting for it. Works whatever the logging options;
without a provider response (a cache hit, a provider that returns no `ModelCall`)
nothing is captured and callers fall back to Inspect's parse.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from inspect_ai.model import Model

__all__ = ["capture", "install", "parse_response"]

#: tool call id -> raw argument string, for the model call in progress
_capture: ContextVar[dict[str, str] | None] = ContextVar("envfactory_raw_arguments",
                                                        default=None)
_WRAPPED = "__envfactory_raw_arguments__"


def install(model: Model) -> Model:
    """Wrap `model.api.generate` (once per model object) to feed `capture()`."""
    api = model.api
    if getattr(api, _WRAPPED, False):
        return model
    inner = api.generate

    async def generate(*args: Any, **kwargs: Any) -> Any:
        result = await inner(*args, **kwargs)
        found = _capture.get()
        if found is not None and isinstance(result, tuple) and len(result) == 2:
            found.update(parse_response(getattr(result[1], "response", None)))
        return result

    api.generate = generate  # type: ignore[method-assign]
    setattr(api, _WRAPPED, True)
    return model


@contextmanager
def capture() -> Iterator[dict[str, str]]:
    """Collect raw argument strings of the model calls made inside the block."""
    found: dict[str, str] = {}
    token = _capture.set(found)
    try:
        yield found
    finally:
        _capture.reset(token)


def parse_response(response: Any) -> dict[str, str]:
    """{tool call id: raw arguments} from an OpenAI chat-completions or Responses body."""
    if not isinstance(response, dict):
        return {}
    found: dict[str, str] = {}
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        for tc in (choices[0].get("message") or {}).get("tool_calls") or []:
            fn = tc.get("function") or {}
            if isinstance(fn.get("arguments"), str) and tc.get("id"):
                found[tc["id"]] = fn["arguments"]
    for item in response.get("output") or []:
        if (isinstance(item, dict) and item.get("type") == "function_call"
                and isinstance(item.get("arguments"), str) and item.get("call_id")):
            found[item["call_id"]] = item["arguments"]
    return found
