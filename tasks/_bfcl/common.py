"""Pieces both BFCL tasks share: official tool conversion and dataset-version metadata."""

from __future__ import annotations

import copy
from typing import Any

from inspect_ai.tool import ToolInfo, ToolParams
from inspect_ai.util import JSONSchema

from envs.bfcl import package

__all__ = ["dataset_metadata", "official_tools"]


def official_tools(
    functions: list[dict[str, Any]], category: str, *, in_place: bool = False
) -> list[ToolInfo]:
    """Tools exactly as bfcl-eval's OpenAI FC handler compiles them.

    `func_doc_language_specific_pre_processing` adds the language hint to descriptions,
    `convert_to_tool` maps BFCL types to JSON schema ("." in names becomes "_").
    The official handler applies the hint *in place* to the entry's function list and
    recompiles after a held-out turn, so functions offered before the reveal end up
    with the hint twice; multi-turn passes `in_place=True` to reproduce that.
    """
    from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI
    from bfcl_eval.model_handler.model_style import ModelStyle
    from bfcl_eval.model_handler.utils import (
        convert_to_tool,
        func_doc_language_specific_pre_processing,
    )

    if not in_place:
        functions = copy.deepcopy(functions)
    functions = func_doc_language_specific_pre_processing(functions, category)
    style = getattr(ModelStyle, "OpenAI_Completions", None) or ModelStyle.OpenAI
    converted = convert_to_tool(functions, GORILLA_TO_OPENAPI, style)
    tools = []
    for item in converted:
        fn = item.get("function", item)
        params = fn["parameters"]
        tools.append(
            ToolInfo(
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
        )
    return tools


def dataset_metadata() -> dict[str, str]:
    """Recorded in every BFCL task's metadata: the pinned dataset version."""
    return package.version_info()


def check_version(requested: str | None) -> None:
    """`-T version=`: only the installed bfcl-eval release can be scored against."""
    installed = package.bfcl_version()
    if requested not in (None, "", installed, package.data_prefix()):
        raise ValueError(
            f"BFCL version {requested!r} requested, but bfcl-eval {installed} "
            f"({package.data_prefix()}) is installed; install the release you want with "
            f"`pip install --no-deps bfcl-eval=={requested}`"
        )
