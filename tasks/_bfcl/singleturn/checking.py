"""The official verdict for one model result: the FC handlers' `decode_ast`, the format
checks of `bfcl_eval.utils` (re-stated: importing it creates folders), and the official
`ast_checker` called directly (language by category); relevance categories pass on
whether decoding yields a call.

The AST checker imports `bfcl_eval.constants.model_config`, which imports every provider
SDK; under the light (`--no-deps`) install a stub with the one model config the checker
reads (`underscore_to_dot`) is registered instead (`ensure_model_config`).
"""

from __future__ import annotations

import json
import sys
import types
from functools import cache
from typing import Any

from envs.bfcl.categories import RELEVANCE_CATEGORIES
from tasks._bfcl.singleturn.dataset import LANGUAGE, Entry

#: A model of bfcl-eval's MODEL_CONFIG_MAPPING with `underscore_to_dot=True` (in every
#: release): our tool names are sanitised "." → "_", so the checker must compare GT
#: names the same way. Contains no "_", so the checker's "_"→"/" unescaping is a no-op.
CHECKER_MODEL_NAME = "gpt-4o-2024-11-20-FC"

_MODEL_CONFIG_MODULE = "bfcl_eval.constants.model_config"


def decode_ast(result: Any) -> list[dict[str, Any]]:
    """The FC handlers' `decode_ast`: raises on anything it cannot decode."""
    decoded = []
    for invoked_function in result:
        name = list(invoked_function.keys())[0]
        params = json.loads(invoked_function[name])
        decoded.append({name: params})
    return decoded


def is_function_calling_format_output(decoded: Any) -> bool:
    """`bfcl_eval.utils.is_function_calling_format_output` (not imported: it pulls in
    eval_config, which creates folders)."""
    if type(decoded) is not list:
        return False
    for item in decoded:
        if type(item) is not dict or len(item) != 1:
            return False
        if type(list(item.values())[0]) is not dict:
            return False
    return True


def is_empty_output(decoded: Any) -> bool:
    """`bfcl_eval.utils.is_empty_output`."""
    if not is_function_calling_format_output(decoded):
        return True
    if len(decoded) == 0:
        return True
    return len(decoded) == 1 and len(decoded[0]) == 0


def ensure_model_config() -> None:
    """Make `bfcl_eval.constants.model_config` importable without the provider SDKs.

    The real module (full install) is used when something already imported it; otherwise
    a stub holding the one model config the AST checker reads is registered.
    """
    if _MODEL_CONFIG_MODULE in sys.modules:
        return
    stub = types.ModuleType(_MODEL_CONFIG_MODULE)
    stub.__doc__ = "envfactory stub: provider SDKs are not installed (bfcl-eval --no-deps)."
    stub.MODEL_CONFIG_MAPPING = {  # type: ignore[attr-defined]
        CHECKER_MODEL_NAME: types.SimpleNamespace(
            model_name=CHECKER_MODEL_NAME, underscore_to_dot=True, is_fc_model=True
        )
    }
    sys.modules[_MODEL_CONFIG_MODULE] = stub


@cache
def official_ast_checker() -> Any:
    ensure_model_config()
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    return ast_checker


@cache
def _language_argument(language: str) -> Any:
    """2025.8.6.2 takes "Python"/"Java"/"JavaScript"; V4 the `Language` enum."""
    try:
        from bfcl_eval.constants.enums import Language
    except ImportError:
        return language
    return {"Python": Language.PYTHON, "Java": Language.JAVA,
            "JavaScript": Language.JAVASCRIPT}[language]


def check(
    category: str,
    functions: list[dict[str, Any]],
    ground_truth: list[dict[str, Any]] | None,
    result: Any,
    test_category: str | None = None,
) -> dict[str, Any]:
    """Official verdict for one entry: {"valid", "error", "error_type", "decoded"}."""
    test_category = test_category or category
    if category in RELEVANCE_CATEGORIES:
        try:
            decoded: Any = decode_ast(result)
            contains_call = not is_empty_output(decoded)
            decode_error = None
        except Exception as e:  # noqa: BLE001 - official catches everything
            decoded, contains_call, decode_error = None, False, str(e)
        if "irrelevance" in category:
            if not contains_call:
                return {"valid": True, "error": [], "error_type": None, "decoded": decoded}
            return {"valid": False,
                    "error": ["Valid syntax. Successfully decode AST when it should not."],
                    "error_type": "irrelevance_error:decoder_success", "decoded": decoded}
        if contains_call:
            return {"valid": True, "error": [], "error_type": None, "decoded": decoded}
        return {"valid": False,
                "error": ["Invalid syntax. Failed to decode AST when it should have. "
                          f"{decode_error}"],
                "error_type": "relevance_error:decoder_failed", "decoded": decoded}

    try:
        decoded = decode_ast(result)
    except Exception as e:  # noqa: BLE001
        return {"valid": False, "error": [f"Invalid syntax. Failed to decode AST. {e}"],
                "error_type": "ast_decoder:decoder_failed", "decoded": None}
    if not is_function_calling_format_output(decoded):
        return {"valid": False,
                "error": ["Did not output in the specified format. Note: the model_result "
                          "is wrapped in a string to ensure json serializability."],
                "error_type": "ast_decoder:decoder_wrong_output_format", "decoded": decoded}
    verdict = official_ast_checker()(
        functions,
        decoded,
        ground_truth,
        _language_argument(LANGUAGE.get(category, "Python")),
        test_category,
        CHECKER_MODEL_NAME,
    )
    return {"valid": bool(verdict["valid"]), "error": verdict.get("error", []),
            "error_type": None if verdict["valid"] else verdict.get("error_type"),
            "decoded": decoded}


def check_entry(entry: Entry, result: Any) -> dict[str, Any]:
    return check(entry.category, entry.functions, entry.ground_truth, result,
                 entry.test_category)
