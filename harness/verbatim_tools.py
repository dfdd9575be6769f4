"""Send a benchmark's official tool objects to OpenAI-style APIs unchanged.

A tool is model-facing text: servers that render tool JSON into the prompt (vLLM chat
templates) show the model every key, in order. Inspect rebuilds each tool from its
`ToolInfo` (`json_schema_dump` of a validated `ToolParams`), which drops keys it does not
model (BFCL's `response` output schema), reorders schema keys (`type, description, items`
for the official `type, items, description`) and, on the Responses API, adds
`strict: false`. So the official objects travel with the `ToolInfo` as a key into a
content-addressed table (`options[VERBATIM_KEY]`, a sha256 of both objects):

- Chat Completions: `openai_chat_tool_param` (module `inspect_ai.model._openai`, looked
  up through the module's globals by `openai_chat_tools`, which the `openai/` chat path,
  `openai-api/`, `vllm/` and the other OpenAI-compatible providers all call) and
- Responses API: `_tool_param_for_tool_info` (module `inspect_ai.model._openai_responses`,
  looked up the same way by `openai_responses_tools`)

are wrapped once, idempotently (through `harness.inspect_compat`: both are Inspect
internals), to return the registered object where the key is present
and to delegate to Inspect otherwise, so tools without the key are untouched.

Only the key is stored on the tool, not the objects: Inspect copies every tool and writes
it into each model event of the log, and carrying two more copies of each schema there
cost ~30% of BFCL's harness time per model call (benchmarks/harness_overhead.py). What was
sent is still in the log, in each model event's request record (`call`). A tool read back
from a log, whose key this process never registered, is sent as Inspect builds it.

The `ToolInfo` itself stays as Inspect validates it (names, descriptions, parameters
for argument parsing and for non-OpenAI providers).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from typing import Any

from inspect_ai.tool import ToolInfo

from envs.hashing import text_sha256
from harness import inspect_compat

__all__ = ["VERBATIM_KEY", "install", "registered", "responses_form", "verbatim"]

#: `ToolInfo.options` key holding the content key of the tool's official objects
VERBATIM_KEY = "__envfactory_verbatim__"

#: content key -> (Chat Completions object, Responses object); immutable once stored
_OBJECTS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}


def responses_form(official: Mapping[str, Any]) -> dict[str, Any]:
    """The Responses-API tool for a Chat-Completions tool object, as the official BFCL
    Responses handler builds it (`convert_to_tool` for `OpenAI_Responses`): `type`, `name`,
    `description`, `parameters` at top level; no `strict`, no extra keys (the API has no
    place for e.g. BFCL's `response`)."""
    return copy.deepcopy(_responses_shape(official))


def _responses_shape(official: Mapping[str, Any]) -> dict[str, Any]:
    """`responses_form` sharing the official object's values (no copy)."""
    function = official["function"]
    out: dict[str, Any] = {"type": "function", "name": function["name"]}
    for key in ("description", "parameters"):
        if key in function:
            out[key] = function[key]
    return out


def verbatim(info: ToolInfo, official: Mapping[str, Any],
             responses: Mapping[str, Any] | None = None) -> ToolInfo:
    """A copy of `info` that OpenAI providers send as `official` (Chat Completions) and as
    `responses` (Responses API; default `responses_form(official)`), unchanged.

    `official` is a Chat Completions tool object: `{"type": "function", "function":
    {name, description, parameters, ...any extra keys}}`. Installs the hooks.
    """
    if official.get("type") != "function" or not isinstance(official.get("function"), Mapping):
        raise ValueError("official tool must be {'type': 'function', 'function': {...}}")
    if official["function"].get("name") != info.name:
        raise ValueError(f"official tool {official['function'].get('name')!r} is not "
                         f"{info.name!r}")
    install()
    # one serialisation is both the content key and the private copy (cheaper than two
    # deep copies; BFCL builds ~50 of these per entry)
    text = json.dumps([official, responses if responses is not None
                       else _responses_shape(official)])
    key = text_sha256(text)
    if key not in _OBJECTS:
        chat, resp = json.loads(text)
        _OBJECTS[key] = (chat, resp)
    return info.model_copy(update={"options": {**(info.options or {}), VERBATIM_KEY: key}})


def registered(tool: ToolInfo) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The (Chat Completions, Responses) objects `tool` is sent as, or None."""
    key = (tool.options or {}).get(VERBATIM_KEY)
    return _OBJECTS.get(key) if isinstance(key, str) else None


def install() -> None:
    """Wrap Inspect's chat and Responses tool converters once (idempotent; a no-op for
    tools without a registered key)."""
    inspect_compat.wrap_openai_chat_tool_param(_chat_tool_param)
    inspect_compat.wrap_openai_responses_tool_param(_responses_tool_param)


def _chat_tool_param(inner: Callable[..., Any]) -> Callable[..., Any]:
    def openai_chat_tool_param(tool: ToolInfo, exclude: set[str] | None = None) -> Any:
        objects = registered(tool)
        if objects is not None:
            return objects[0]  # read-only: the SDK serialises it, nothing mutates it
        return inner(tool, exclude=exclude)

    return openai_chat_tool_param


def _responses_tool_param(inner: Callable[..., Any]) -> Callable[..., Any]:
    def _tool_param_for_tool_info(tool: ToolInfo, model_name: str, config: Any,
                                  is_latest: bool = False) -> Any:
        objects = registered(tool)
        if objects is not None:
            return objects[1]
        return inner(tool, model_name, config, is_latest)

    return _tool_param_for_tool_info
