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
(`{}` for a call it could not parse), a Chat Completions message's `content: null`
(Inspect sends `""`), and a Responses API reasoning item as it came (Inspect re-sends
an encrypted one without its summary, and with `content: []`). Inside `resend()` every
captured string, reasoning item (by its id) and which assistant messages had null
content (by Inspect message id) is remembered for the block, and Inspect's OpenAI
serialisers (`openai_chat_message` / `openai_chat_tool_call_param` for Chat Completions
and the OpenAI-compatible providers, `_tool_call_items_from_assistant_message` and
`responses_reasoning_from_reasoning` for the Responses API; Inspect internals, replaced
through `harness.inspect_compat`) are wrapped once to send what was remembered for that
tool call id, reasoning id or message id; calls, items and messages without a record,
and everything outside `resend()`, go out as Inspect builds them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ContentReasoning, Model
from inspect_ai.tool import ToolCall

from harness import inspect_compat

__all__ = ["Resent", "capture", "install", "parse_reasoning", "parse_response", "resend"]

#: tool call id -> raw argument string, for the model call in progress
_capture: ContextVar[dict[str, str] | None] = ContextVar("envfactory_raw_arguments",
                                                        default=None)


@dataclass
class Resent:
    """What `resend()` remembered: raw argument strings by tool call id, Responses
    reasoning items by their id, and the ids of the assistant messages whose Chat
    Completions message had `content: null`."""

    arguments: dict[str, str] = field(default_factory=dict)
    null_content: set[str] = field(default_factory=set)
    reasoning: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: False: re-send only `content: null`; arguments go out re-serialised from the parse
    #: (`json.dumps`), as harnesses that keep parsed calls do (VitaBench)
    keep_arguments: bool = True


_resend: ContextVar[Resent | None] = ContextVar("envfactory_raw_arguments_resend",
                                                default=None)


def install(model: Model) -> Model:
    """Wrap `model.api.generate` (once per model object) to feed `capture()`."""
    inspect_compat.wrap_model_api_generate(model, _capturing)
    return model


def _capturing(inner: Callable[..., Any]) -> Callable[..., Any]:
    async def generate(*args: Any, **kwargs: Any) -> Any:
        result = await inner(*args, **kwargs)
        found, resent = _capture.get(), _resend.get()
        if (found is not None or resent is not None) and isinstance(result, tuple) \
                and len(result) == 2:
            response = getattr(result[1], "response", None)
            parsed = parse_response(response)
            if found is not None:
                found.update(parsed)
            if resent is not None:
                if resent.keep_arguments:
                    resent.arguments.update(parsed)
                    resent.reasoning.update(parse_reasoning(response))
                message = getattr(result[0], "message", None)
                if message is not None and message.id and _null_content(response):
                    resent.null_content.add(message.id)
        return result

    return generate


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
def resend(arguments: bool = True) -> Iterator[Resent]:
    """Re-send, in later history, the tool calls of the model calls made inside the block
    (models wrapped by `install`) as the provider returned them, instead of Inspect's
    re-serialisation; with `arguments=False`, only the messages' `content: null`."""
    _install_serialisers()
    sent = Resent(keep_arguments=arguments)
    token = _resend.set(sent)
    try:
        yield sent
    finally:
        _resend.reset(token)


def _install_serialisers() -> None:
    """Wrap Inspect's OpenAI tool-call serialisers once (idempotent)."""
    inspect_compat.wrap_openai_chat_message(_chat_message)
    inspect_compat.wrap_openai_chat_tool_call_param(_chat_tool_call_param)
    inspect_compat.wrap_openai_responses_tool_call_items(_responses_tool_call_items)
    inspect_compat.wrap_openai_responses_reasoning_item(_responses_reasoning_item)


def _chat_message(inner: Callable[..., Any]) -> Callable[..., Any]:
    async def openai_chat_message(message: ChatMessage, *args: Any, **kwargs: Any) -> Any:
        param = await inner(message, *args, **kwargs)
        resent = _resend.get()
        if (resent is not None and isinstance(message, ChatMessageAssistant)
                and not message.text and message.id in resent.null_content):
            param["content"] = None
        return param

    return openai_chat_message


def _chat_tool_call_param(inner: Callable[..., Any]) -> Callable[..., Any]:
    def openai_chat_tool_call_param(tool_call: ToolCall) -> Any:
        param = inner(tool_call)
        resent = _resend.get()
        raw = resent.arguments.get(tool_call.id) if resent is not None else None
        if raw is not None:
            param["function"]["arguments"] = raw
        return param

    return openai_chat_tool_call_param


def _responses_tool_call_items(inner: Callable[..., Any]) -> Callable[..., Any]:
    def tool_call_items(message: ChatMessageAssistant, *args: Any, **kwargs: Any) -> Any:
        items: list[dict[str, Any]] = inner(message, *args, **kwargs)
        resent = _resend.get()
        sent = resent.arguments if resent is not None else {}
        for item in items:
            if item.get("type") == "function_call" and item.get("call_id") in sent:
                item["arguments"] = sent[item["call_id"]]
        return items

    return tool_call_items


def _responses_reasoning_item(inner: Callable[..., Any]) -> Callable[..., Any]:
    def responses_reasoning_from_reasoning(content: ContentReasoning, *args: Any,
                                           **kwargs: Any) -> Any:
        resent = _resend.get()
        item = resent.reasoning.get(content.signature or "") if resent is not None else None
        if item is not None:
            return copy.deepcopy(item)
        return inner(content, *args, **kwargs)

    return responses_reasoning_from_reasoning


def _null_content(response: Any) -> bool:
    """Whether a Chat Completions response's message came with `content: null`."""
    if not isinstance(response, dict):
        return False
    choices = response.get("choices")
    if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
        return False
    message = choices[0].get("message")
    return isinstance(message, dict) and "content" in message and message["content"] is None


def parse_reasoning(response: Any) -> dict[str, dict[str, Any]]:
    """{reasoning item id: the item} from a Responses API body's output, without the
    fields that are null (Inspect records the SDK's full dump, unset fields as null; the
    official handler's SDK sends back only the fields the server set)."""
    if not isinstance(response, dict):
        return {}
    return {item["id"]: {k: v for k, v in item.items() if v is not None}
            for item in response.get("output") or []
            if isinstance(item, dict) and item.get("type") == "reasoning"
            and isinstance(item.get("id"), str)}


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
