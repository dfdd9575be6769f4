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

The same strings can go back out: official harnesses that keep the provider's message
in their history (BFCL's OpenAI handlers) re-send each tool call's arguments exactly as
the model wrote them, malformed JSON included, where Inspect re-serialises its parse
(`{}` for a call it could not parse). Inside `resend()` every captured string is
remembered for the block, and Inspect's OpenAI serialisers of assistant tool calls
(`openai_chat_tool_call_param` for Chat Completions and the OpenAI-compatible
providers, `_tool_call_items_from_assistant_message` for the Responses API; both looked
up through their module's globals) are wrapped once to send the remembered string for
that tool call id; calls without one, and everything outside `resend()`, go out as
Inspect builds them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from inspect_ai.model import ChatMessageAssistant, Model
from inspect_ai.tool import ToolCall

__all__ = ["capture", "install", "parse_response", "resend"]

#: tool call id -> raw argument string, for the model call in progress
_capture: ContextVar[dict[str, str] | None] = ContextVar("envfactory_raw_arguments",
                                                        default=None)
#: tool call id -> raw argument string, for every model call inside `resend()`
_resend: ContextVar[dict[str, str] | None] = ContextVar("envfactory_raw_arguments_resend",
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
        targets = [d for d in (_capture.get(), _resend.get()) if d is not None]
        if targets and isinstance(result, tuple) and len(result) == 2:
            parsed = parse_response(getattr(result[1], "response", None))
            for found in targets:
                found.update(parsed)
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


@contextmanager
def resend() -> Iterator[dict[str, str]]:
    """Re-send, in later history, the captured argument strings of the model calls made
    inside the block (models wrapped by `install`), instead of Inspect's re-serialisation."""
    _install_serialisers()
    sent: dict[str, str] = {}
    token = _resend.set(sent)
    try:
        yield sent
    finally:
        _resend.reset(token)


def _install_serialisers() -> None:
    """Wrap Inspect's OpenAI tool-call serialisers once (idempotent)."""
    from inspect_ai.model import _openai, _openai_responses

    chat = _openai.openai_chat_tool_call_param
    if not getattr(chat, _WRAPPED, False):
        def openai_chat_tool_call_param(tool_call: ToolCall) -> Any:
            param = chat(tool_call)
            raw = (_resend.get() or {}).get(tool_call.id)
            if raw is not None:
                param["function"]["arguments"] = raw
            return param

        setattr(openai_chat_tool_call_param, _WRAPPED, True)
        _openai.openai_chat_tool_call_param = openai_chat_tool_call_param  # type: ignore[assignment]

    responses = _openai_responses._tool_call_items_from_assistant_message
    if not getattr(responses, _WRAPPED, False):
        def tool_call_items(message: ChatMessageAssistant, *args: Any, **kwargs: Any) -> Any:
            items = responses(message, *args, **kwargs)
            sent = _resend.get() or {}
            for item in items:
                if (isinstance(item, dict) and item.get("type") == "function_call"
                        and item.get("call_id") in sent):
                    item["arguments"] = sent[item["call_id"]]
            return items

        setattr(tool_call_items, _WRAPPED, True)
        _openai_responses._tool_call_items_from_assistant_message = tool_call_items  # type: ignore[assignment]


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
