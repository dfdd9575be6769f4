"""Send a benchmark's official tool objects to OpenAI-style APIs unchanged.

A tool is model-facing text: servers that render tool JSON into the prompt (vLLM chat
templates) show the model every key, in order. Inspect rebuilds each tool from its
`ToolInfo` (`json_schema_dump` of a validated `ToolParams`), which drops keys it does not
model (BFCL's `response` output schema), reorders schema keys (`type, description, items`
for the official `type, items, description`) and, on the Responses API, adds
`strict: false`. So the official object travels with the `ToolInfo`, in `options`:

- Responses API: Inspect's own `openai_responses_tools` already emits
  `options[RESPONSES_VERBATIM]` as the tool param, as is (no hook needed);
- Chat Completions: `openai_chat_tool_param` (module `inspect_ai.model._openai`, looked
  up through the module's globals by `openai_chat_tools`, which the `openai/` chat path,
  `openai-api/`, `vllm/` and the other OpenAI-compatible providers all call) is wrapped
  once, idempotently, to return `options[CHAT_VERBATIM]` where present and to delegate to
  Inspect otherwise, so tools without the key are untouched.

The `ToolInfo` itself stays as Inspect validates it (names, descriptions, parameters
for argument parsing and for non-OpenAI providers).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from inspect_ai.model import _openai
from inspect_ai.model._openai_responses import RESPONSES_VERBATIM
from inspect_ai.tool import ToolInfo

__all__ = ["CHAT_VERBATIM", "RESPONSES_VERBATIM", "install", "responses_form", "verbatim"]

#: `ToolInfo.options` key holding the Chat Completions tool object to send as is
CHAT_VERBATIM = "__envfactory_chat_verbatim__"
_WRAPPED = "__envfactory_verbatim_tools__"


def responses_form(official: Mapping[str, Any]) -> dict[str, Any]:
    """The Responses-API tool for a Chat-Completions tool object, as the official BFCL
    Responses handler builds it (`convert_to_tool` for `OpenAI_Responses`): `type`, `name`,
    `description`, `parameters` at top level; no `strict`, no extra keys (the API has no
    place for e.g. BFCL's `response`)."""
    function = official["function"]
    out: dict[str, Any] = {"type": "function", "name": function["name"]}
    for key in ("description", "parameters"):
        if key in function:
            out[key] = copy.deepcopy(function[key])
    return out


def verbatim(info: ToolInfo, official: Mapping[str, Any],
             responses: Mapping[str, Any] | None = None) -> ToolInfo:
    """A copy of `info` that OpenAI providers send as `official` (Chat Completions) and as
    `responses` (Responses API; default `responses_form(official)`), unchanged.

    `official` is a Chat Completions tool object: `{"type": "function", "function":
    {name, description, parameters, ...any extra keys}}`. Installs the chat hook.
    """
    if official.get("type") != "function" or not isinstance(official.get("function"), Mapping):
        raise ValueError("official tool must be {'type': 'function', 'function': {...}}")
    if official["function"].get("name") != info.name:
        raise ValueError(f"official tool {official['function'].get('name')!r} is not "
                         f"{info.name!r}")
    install()
    options = dict(info.options or {})
    options[CHAT_VERBATIM] = copy.deepcopy(dict(official))
    options[RESPONSES_VERBATIM] = (copy.deepcopy(dict(responses)) if responses is not None
                                   else responses_form(official))
    return info.model_copy(update={"options": options})


def install() -> None:
    """Wrap Inspect's `openai_chat_tool_param` once (idempotent; a no-op for tools without
    `options[CHAT_VERBATIM]`)."""
    inner = _openai.openai_chat_tool_param
    if getattr(inner, _WRAPPED, False):
        return

    def openai_chat_tool_param(tool: ToolInfo, exclude: set[str] | None = None) -> Any:
        official = (tool.options or {}).get(CHAT_VERBATIM)
        if isinstance(official, dict):
            return official  # read-only: the SDK serialises it, nothing mutates it
        return inner(tool, exclude=exclude)

    setattr(openai_chat_tool_param, _WRAPPED, True)
    _openai.openai_chat_tool_param = openai_chat_tool_param  # type: ignore[assignment]
