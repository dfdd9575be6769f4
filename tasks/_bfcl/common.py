"""Pieces both BFCL tasks share: official tool conversion and dataset-version metadata."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from typing import Any

from inspect_ai.tool import ToolInfo, ToolParams
from inspect_ai.util import JSONSchema

from envs.bfcl import package
from harness.trajectory import Message
from harness.verbatim_tools import verbatim

__all__ = ["check_version", "dataset_metadata", "hint_applied_by_loader", "language_hint",
           "model_result", "official_tool_objects", "official_tools", "select_categories"]


class SharedToolInfo(ToolInfo):
    """A tool schema Inspect shares instead of copying on every model call.

    Multi-turn entries offer up to 32 tools (~26 KB); Inspect deep-copies the tool list
    twice per call (`prepare_tools`, the model event's snapshot), which was 17% of
    harness time (benchmarks/harness_overhead.py), and its log writer copies every tool
    of every model event again (`walk_tools`, to swap a long description for an
    attachment reference). Nothing mutates a schema after it is built, so a copy that
    changes nothing is the schema itself (about a third of the copies of a BFCL run);
    a copy that changes a field is a shallow one.
    """

    def model_copy(self, *, update: Any = None, deep: bool = False) -> Any:
        # identity, not equality: comparing two schemas field by field costs more than
        # the copy it would save (the attachment pass hands back the same string object
        # when it keeps a description)
        if not update or all(getattr(self, k, _MISSING) is v for k, v in update.items()):
            return self
        return super().model_copy(update=update, deep=False)


_MISSING = object()


def language_hint(functions: list[dict[str, Any]], category: str) -> list[dict[str, Any]]:
    """The official language hint, applied in place: `model_handler.utils.
    func_doc_language_specific_pre_processing` (≤2025.8.6.2), `bfcl_eval.utils.
    _func_doc_language_specific_pre_processing` (V4)."""
    try:
        from bfcl_eval.model_handler.utils import (
            func_doc_language_specific_pre_processing as hint,
        )
    except ImportError:
        from bfcl_eval.utils import _func_doc_language_specific_pre_processing as hint
    return hint(functions, category)  # type: ignore[no-any-return]


def hint_applied_by_loader() -> bool:
    """V4 adds the language hint once, at load time, to the initially offered functions
    only (held-out docs are revealed without it); ≤2025.8.6.2 adds it at every
    `_compile_tools`, in place."""
    import bfcl_eval.model_handler.utils as handler_utils

    return not hasattr(handler_utils, "func_doc_language_specific_pre_processing")


def _model_style(name: str) -> Any:
    """`ModelStyle.OpenAI_Completions` / `OpenAI_Responses` (model_handler.model_style,
    ≤2025.8.6.2) or `ModelStyle.OPENAI_COMPLETIONS` / `OPENAI_RESPONSES` (constants.enums,
    V4)."""
    try:
        from bfcl_eval.model_handler.model_style import ModelStyle

        return getattr(ModelStyle, name)
    except ImportError:
        from bfcl_eval.constants.enums import ModelStyle

        return getattr(ModelStyle, name.upper())


def official_tool_objects(
    functions: list[dict[str, Any]], category: str, *, in_place: bool = False,
    hint: bool = True,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The tool objects bfcl-eval's OpenAI FC handlers send, built by their own code:
    (Chat Completions handler's, Responses handler's).

    `func_doc_language_specific_pre_processing` adds the language hint to descriptions,
    `convert_to_tool` maps BFCL types to JSON schema ("." in names becomes "_"); the
    Chat Completions form keeps every key of the function doc (BFCL's `response` output
    schema included), the Responses form has `type, name, description, parameters`.
    The official handler applies the hint *in place* to the entry's function list and
    recompiles after a held-out turn, so functions offered before the reveal end up
    with the hint twice; multi-turn passes `in_place=True` to reproduce that.
    """
    from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI
    from bfcl_eval.model_handler.utils import convert_to_tool

    if not in_place:
        functions = copy.deepcopy(functions)
    if hint:
        functions = language_hint(functions, category)
    chat = convert_to_tool(functions, GORILLA_TO_OPENAPI, _model_style("OpenAI_Completions"))
    responses = convert_to_tool(functions, GORILLA_TO_OPENAPI,
                                _model_style("OpenAI_Responses"))
    return chat, responses


def official_tools(
    functions: list[dict[str, Any]], category: str, *, in_place: bool = False,
    hint: bool = True,
) -> list[ToolInfo]:
    """Tools exactly as bfcl-eval's OpenAI FC handlers send them (`official_tool_objects`).

    The `ToolInfo` is Inspect's validated view of the schema (for Inspect's argument
    parsing and non-OpenAI providers); OpenAI-style providers send the official objects
    themselves, unchanged (`harness.verbatim_tools`).
    """
    key = (json.dumps(functions), category, in_place, hint)
    known = _TOOLS.get(key)
    if known is not None:  # same functions as an earlier entry: same tools, same edit
        after, cached = known
        if after is not None:
            for function, edited in zip(functions, json.loads(after), strict=True):
                function.clear()
                function.update(edited)
        return list(cached)
    tools = _official_tools(functions, category, in_place=in_place, hint=hint)
    if len(_TOOLS) >= _TOOLS_CAP:
        _TOOLS.clear()
    _TOOLS[key] = (json.dumps(functions) if in_place else None, tuple(tools))
    return tools


#: (functions JSON, category, in_place, hint) -> (the functions after the in-place
#: hint, or None; the tools). Entries share tool sets (BFCL multi-turn has a few hundred
#: distinct ones), and building one costs bfcl-eval's `convert_to_tool` (deep copies)
#: plus Inspect's validation of every schema.
_TOOLS: dict[tuple[str, str, bool, bool], tuple[str | None, tuple[ToolInfo, ...]]] = {}
_TOOLS_CAP = 1024


def _official_tools(functions: list[dict[str, Any]], category: str, *, in_place: bool,
                    hint: bool) -> list[ToolInfo]:
    chat, responses = official_tool_objects(functions, category, in_place=in_place,
                                            hint=hint)
    tools: list[ToolInfo] = []
    for item, responses_item in zip(chat, responses, strict=True):
        fn = item["function"]
        params = fn["parameters"]
        info = SharedToolInfo(
            name=fn["name"],
            description=fn.get("description", ""),
            parameters=ToolParams(
                properties={
                    k: JSONSchema.model_validate(v)
                    for k, v in params.get("properties", {}).items()
                },
                required=list(params.get("required", [])),
                # the official schema has no additionalProperties key
                additionalProperties=None,
            ),
        )
        tools.append(verbatim(info, item, responses_item))
    return tools


def dataset_metadata() -> dict[str, str]:
    """Recorded in every BFCL task's metadata: the pinned dataset version."""
    return package.version_info()


def check_version(requested: str | None) -> None:
    """`-T version=`: only the installed bfcl-eval release (or its data prefix) is allowed."""
    installed = package.bfcl_version()
    if requested in (None, "", installed, package.data_prefix()):
        return
    raise ValueError(
        f"BFCL version {requested!r} requested, but bfcl-eval {installed} "
        f"({package.data_prefix()} data) is installed; only the installed release can be "
        f"scored against (install another with `pip install --no-deps bfcl-eval==VERSION`)"
    )


#: Raw argument text recorded for a tool call Inspect failed to parse and whose raw
#: string is unknown: not JSON, so the official `json.loads` fails on it as well.
_UNPARSABLE = "<unparsable tool call arguments>"


def model_result(message: Message) -> list[dict[str, str]] | str:
    """What the official FC handler records for a message: `[{name: arguments_json}]`
    (the provider's own argument strings where they were captured), else the text."""
    if message.tool_calls:
        result = []
        for call in message.tool_calls:
            if call.raw_arguments is not None:
                arguments = call.raw_arguments
            elif call.parse_error is not None:
                arguments = _UNPARSABLE
            else:
                arguments = json.dumps(call.arguments)
            result.append({call.name: arguments})
        return result
    return message.content or ""


def select_categories(category: str | Sequence[str], expand: Callable[[str], Sequence[str]],
                      known: Sequence[str], unknown: Callable[[str, str], str],
                      nothing: str) -> list[str]:
    """The categories a `-T category=` value names, in order, without repeats: each
    comma-separated (or listed) name through `expand` (collections, official names), each
    result checked against `known` (`unknown(name, category)` is the error) and blank
    names skipped; `nothing` is the error when none is left."""
    names = category.split(",") if isinstance(category, str) else list(category)
    out: list[str] = []
    for name in (str(n).strip() for n in names):
        if not name:
            continue
        for cat in expand(name):
            if cat not in known:
                raise ValueError(unknown(name, cat))
            if cat not in out:
                out.append(cat)
    if not out:
        raise ValueError(nothing)
    return out
