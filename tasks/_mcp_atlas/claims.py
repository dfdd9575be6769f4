"""MCP-Atlas claims: the task's ground-truth claims, and the judge's prompt and schema for one.

`extract_claims` turns a task's `GTFA_CLAIMS` (usually a Python-literal list string) into
the list of claims the judge sees, with the rules of upstream's
`services/scoring/score_claims.py` (`extract_claims` + `clean_claim_text`, commit 5b6220c):

- None or an empty/whitespace string: no claims; a list: each item, `str()`-ed and cleaned.
- A string that starts with `[` and ends with `]` (after stripping): JSON, else a Python
  literal (`ast.literal_eval`); a list found either way gives the claims.
- Otherwise the first of the separators ``\\n•``, ``\\n-``, ``\\n*``, ``\\n1.``, ``\\n2.``,
  ``;``, ``||`` that occurs (and leaves a claim) splits the text; failing all, its lines.
- Cleaning: strip; drop one leading bullet (``- * • · ◦ ‣ ⁃``) and then one leading
  ``12.`` / ``12)``; curly quotes become straight, en/em dashes ``-``, the ellipsis
  ``...``; a trailing run of quotes (and dots after them) goes; strip spaces, tabs and
  line breaks. Upstream's other trailing rule (quotes followed by one space at the end)
  cannot match text that was stripped first, so it has no counterpart here.
- Claims of 3 characters or fewer are dropped.

The judge's prompt and response schema are model-facing text, so they are not copied here:
they are read at run time from the pinned release's `score_claims.py` (`release()`), the
prompt from the f-string that `CoverageEvaluator._get_single_claim_evaluation_prompt`
returns, the schema from `get_single_claim_evaluation_schema`'s returned dict, and the
response cut-off from `evaluate_dataframe_async` (`MAX_RESPONSE_CHARS` and the suffix it
appends).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from tasks._mcp_atlas.release import release

__all__ = ["SCORER_FILE", "JudgeTemplate", "extract_claims", "judge_prompt", "judge_schema",
           "judge_template", "truncate_response"]

#: the upstream file the judge's prompt, schema and response cut-off are read from
SCORER_FILE = "services/scoring/score_claims.py"

_SEPARATORS = ("\n•", "\n-", "\n*", "\n1.", "\n2.", ";", "||")
_BULLET = re.compile(r"^[-*•·◦‣⁃]\s*")
_NUMBERING = re.compile(r"^\d+[.)]\s*")
_TRAILING_QUOTES = re.compile(r"[\"']+\.*$")
_CHARACTERS = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'",
                             "\u2013": "-", "\u2014": "-", "\u2026": "..."})
_MIN_LENGTH = 4


def _clean(text: str) -> str:
    text = _NUMBERING.sub("", _BULLET.sub("", text.strip()), count=1)
    text = _TRAILING_QUOTES.sub("", text.translate(_CHARACTERS))
    return text.strip(" \t\n\r")


def _kept(items: list[Any]) -> list[str]:
    return [c for c in (_clean(str(item)) for item in items) if len(c) >= _MIN_LENGTH]


def _as_list(blob: str) -> list[Any] | None:
    """The list a bracketed blob spells as JSON or, failing that, as a Python literal."""
    try:
        value = json.loads(blob)
    except ValueError:
        try:
            value = ast.literal_eval(blob)
        except (ValueError, SyntaxError):
            return None
    return value if isinstance(value, list) else None


def extract_claims(blob: Any) -> list[str]:
    """The cleaned claims of a task's `GTFA_CLAIMS` value (see the module docstring)."""
    if blob is None:
        return []
    if isinstance(blob, list):
        return _kept(blob)
    text = str(blob).strip()
    if not text:
        return []
    if text.startswith("[") and text.endswith("]") and (items := _as_list(text)) is not None:
        return _kept(items)
    for separator in _SEPARATORS:
        if separator in text and (claims := _kept(text.split(separator))):
            return claims
    return _kept(text.split("\n"))


@dataclass(frozen=True)
class JudgeTemplate:
    """What the release's scorer sends the judge, read from its source."""

    #: the prompt's literal parts and its `{claim}` / `{response}` slots, in order
    parts: tuple[tuple[str, bool], ...]
    #: the structured-output schema (`get_single_claim_evaluation_schema()`)
    schema: dict[str, Any]
    #: responses longer than this are cut ...
    max_response_chars: int
    #: ... and this is appended to what is left
    truncation_suffix: str

    def render(self, claim: str, response: str) -> str:
        values = {"claim": claim, "response": response}
        return "".join(values[text] if slot else text for text, slot in self.parts)


def _shape_error(what: str) -> ValueError:
    return ValueError(f"{SCORER_FILE}: {what} not found in the expected shape; this code reads "
                      f"the scorer of MCP-Atlas commit 5b6220c (set MCP_ATLAS_SOURCE_DIR to a "
                      f"checkout of it)")


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return node
    raise _shape_error(f"function `{name}`")


def _returned(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.expr | None:
    returns = [node.value for node in function.body if isinstance(node, ast.Return)]
    return returns[0] if len(returns) == 1 else None


def _prompt_parts(tree: ast.Module) -> tuple[tuple[str, bool], ...]:
    name = "_get_single_claim_evaluation_prompt"
    value = _returned(_function(tree, name))
    if not isinstance(value, ast.JoinedStr):
        raise _shape_error(f"the f-string `{name}` returns")
    parts = []
    for piece in value.values:
        if isinstance(piece, ast.Constant) and isinstance(piece.value, str):
            parts.append((piece.value, False))
        elif (isinstance(piece, ast.FormattedValue) and isinstance(piece.value, ast.Name)
              and piece.value.id in ("claim", "response") and piece.conversion == -1
              and piece.format_spec is None):
            parts.append((piece.value.id, True))
        else:
            raise _shape_error(f"a plain `{{claim}}` / `{{response}}` field in `{name}`")
    if {text for text, slot in parts if slot} != {"claim", "response"}:
        raise _shape_error(f"both `{{claim}}` and `{{response}}` in `{name}`")
    return tuple(parts)


def _schema(tree: ast.Module) -> dict[str, Any]:
    name = "get_single_claim_evaluation_schema"
    value = _returned(_function(tree, name))
    try:
        schema = ast.literal_eval(value) if value is not None else None
    except ValueError:
        schema = None
    if not isinstance(schema, dict):
        raise _shape_error(f"the literal dict `{name}` returns")
    return schema


def _truncation(tree: ast.Module) -> tuple[int, str]:
    """`MAX_RESPONSE_CHARS = <int>` and `response = response[:MAX_RESPONSE_CHARS] + <str>`."""
    function = _function(tree, "evaluate_dataframe_async")
    limit = suffix = None
    for node in ast.walk(function):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            continue
        target, value = node.targets[0].id, node.value
        if (target == "MAX_RESPONSE_CHARS" and isinstance(value, ast.Constant)
                and isinstance(value.value, int)):
            limit = value.value
        elif (target == "response" and isinstance(value, ast.BinOp)
              and isinstance(value.op, ast.Add) and isinstance(value.left, ast.Subscript)
              and isinstance(value.right, ast.Constant) and isinstance(value.right.value, str)):
            suffix = value.right.value
    if limit is None or suffix is None:
        raise _shape_error("the response cut-off (`MAX_RESPONSE_CHARS` and its suffix) in "
                           "`evaluate_dataframe_async`")
    return limit, suffix


@lru_cache(maxsize=4)
def _parse(source: str) -> JudgeTemplate:
    tree = ast.parse(source)
    limit, suffix = _truncation(tree)
    return JudgeTemplate(parts=_prompt_parts(tree), schema=_schema(tree),
                         max_response_chars=limit, truncation_suffix=suffix)


def judge_template() -> JudgeTemplate:
    """The release's judge template (parsed once per distinct source text)."""
    return _parse(release().source_text(SCORER_FILE))


def judge_prompt(claim: str, response: str) -> str:
    """The prompt upstream's judge gets for one claim and response."""
    return judge_template().render(claim, response)


def judge_schema() -> dict[str, Any]:
    """The judge's structured-output schema (a fresh copy)."""
    return json.loads(json.dumps(judge_template().schema))


def truncate_response(response: str) -> str:
    """The response as the judge sees it: cut to the release's limit, with its suffix."""
    template = judge_template()
    if len(response) <= template.max_response_chars:
        return response
    return response[:template.max_response_chars] + template.truncation_suffix
