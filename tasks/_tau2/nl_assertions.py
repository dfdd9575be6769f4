"""τ²'s NL-assertion judge prompt, read from the pinned release as data.

What the judge reads decides the NL_ASSERTION reward, so it is upstream's, never ours:
v0.2.0's `NLAssertionsEvaluator.evaluate_nl_assertions`
(`src/tau2/evaluator/evaluator_nl_assertions.py`) sends a system message (its TASK /
FORMAT prompt, indentation and all) and one user message filled from an f-string:
"conversation:" with every message of the trajectory as `role: content` (a message
without content reads `None`, as Python formats it; none is dropped) joined by a newline,
then "expectedOutcomes:" with the assertion list as Python prints a list. The file is
parsed with `ast`, never executed; `render` fills the same f-strings with the same values,
at upstream's judge temperature (`tau2/config.py`'s `DEFAULT_LLM_NL_ASSERTIONS_ARGS`,
0.0). A release whose code has another shape is an error naming the file and what is
missing, never a fallback prompt.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from envs.tau2 import data
from harness.trajectory import Message

__all__ = ["NLAssertionPrompt", "nl_assertion_prompt"]

_FUNCTION = "evaluate_nl_assertions"


def _shape_error(what: str) -> ValueError:
    return ValueError(f"{data.NL_ASSERTIONS_SOURCE}: {what} not found in the expected shape; "
                      f"this code reads τ² {data.RELEASE}'s judge (set TAU2_SOURCE_DIR to an "
                      f"extracted copy of that release)")


@dataclass(frozen=True)
class _FString:
    """An f-string's literal parts and its `{name}` / `{name.attr}` fields, in order."""

    #: (literal text, None) or (variable, attribute or None)
    parts: tuple[tuple[str, str | None], ...]
    where: str

    @classmethod
    def parse(cls, node: ast.expr, where: str) -> _FString:
        if not isinstance(node, ast.JoinedStr):
            raise _shape_error(f"the f-string {where}")
        parts: list[tuple[str, str | None]] = []
        for piece in node.values:
            if isinstance(piece, ast.Constant) and isinstance(piece.value, str):
                parts.append((piece.value, None))
                continue
            if not (isinstance(piece, ast.FormattedValue) and piece.conversion == -1
                    and piece.format_spec is None):
                raise _shape_error(f"a plain field in the f-string {where}")
            value = piece.value
            if isinstance(value, ast.Name):
                parts.append((value.id, ""))
            elif isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
                parts.append((value.value.id, value.attr))
            else:
                raise _shape_error(f"a `{{name}}` or `{{name.attr}}` field in {where}")
        return cls(tuple(parts), where)

    def names(self) -> set[str]:
        return {text for text, attr in self.parts if attr is not None}

    def render(self, values: Mapping[str, Any]) -> str:
        # `format(value, "")` is what an f-string field without spec or conversion does
        return "".join(text if attr is None else format(
            getattr(values[text], attr) if attr else values[text], "")
            for text, attr in self.parts)


@dataclass(frozen=True)
class NLAssertionPrompt:
    """The judge request as upstream builds it: system prompt, user f-string, and the
    line each trajectory message becomes."""

    system: str
    user: _FString
    line: _FString
    separator: str
    #: the variables the user f-string fills: the joined trajectory, the assertion list
    trajectory_var: str
    assertions_var: str
    temperature: float

    def render(self, messages: Sequence[Message], assertions: Sequence[str]) -> str:
        """The user message for `messages` judged against `assertions`: every message,
        upstream's role labels (`assistant`, `user`, `tool`)."""
        (item,) = self.line.names()
        lines = [self.line.render({item: m}) for m in messages]
        return self.user.render({self.trajectory_var: self.separator.join(lines),
                                 self.assertions_var: list(assertions)})


def _function(tree: ast.Module) -> ast.FunctionDef:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == _FUNCTION:
            return node
    raise _shape_error(f"function `{_FUNCTION}`")


def _assignments(function: ast.FunctionDef) -> dict[str, ast.expr]:
    return {node.targets[0].id: node.value for node in function.body
            if isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)}


def _joined_lines(value: ast.expr | None) -> tuple[str, _FString]:
    """`"<sep>".join([f"..." for message in trajectory])` -> (sep, the item f-string)."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and value.func.attr == "join" and isinstance(value.func.value, ast.Constant)
            and isinstance(value.func.value.value, str) and len(value.args) == 1
            and isinstance(value.args[0], ast.ListComp | ast.GeneratorExp)
            and len(value.args[0].generators) == 1
            and isinstance(value.args[0].generators[0].target, ast.Name)):
        raise _shape_error("`trajectory_str = \"\\n\".join([f\"...\" for message in ...])`")
    comp = value.args[0]
    line = _FString.parse(comp.elt, "of each trajectory line")
    target = comp.generators[0].target
    assert isinstance(target, ast.Name)
    if line.names() != {target.id}:
        raise _shape_error("a trajectory line made of the message's own fields")
    return value.func.value.value, line


def _temperature(config: ast.Module) -> float:
    values = {node.targets[0].id: node.value for node in config.body
              if isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Name)}
    args = values.get("DEFAULT_LLM_NL_ASSERTIONS_ARGS")
    if isinstance(args, ast.Dict):
        for key, value in zip(args.keys, args.values, strict=True):
            if isinstance(key, ast.Constant) and key.value == "temperature":
                found = values.get(value.id) if isinstance(value, ast.Name) else value
                if isinstance(found, ast.Constant) and isinstance(found.value, int | float):
                    return float(found.value)
    raise ValueError(f"{data.CONFIG_SOURCE}: `DEFAULT_LLM_NL_ASSERTIONS_ARGS` with a numeric "
                     f"temperature not found (τ² {data.RELEASE}'s config)")


@cache
def nl_assertion_prompt() -> NLAssertionPrompt:
    """The pinned release's judge prompt (read once; the file is fetched the first time,
    or read from `TAU2_SOURCE_DIR`)."""
    tree = ast.parse(data.TAU2.source_text(data.NL_ASSERTIONS_SOURCE))
    assigned = _assignments(_function(tree))
    system = assigned.get("system_prompt")
    if not (isinstance(system, ast.Constant) and isinstance(system.value, str)):
        raise _shape_error("the string `system_prompt`")
    user = assigned.get("user_prompt")
    if user is None:
        raise _shape_error("`user_prompt`")
    user_prompt = _FString.parse(user, "`user_prompt`")
    separator, line = _joined_lines(assigned.get("trajectory_str"))
    fields = user_prompt.names()
    if "trajectory_str" not in fields or len(fields) != 2:
        raise _shape_error("`user_prompt` filled with `trajectory_str` and the assertions")
    (assertions_var,) = fields - {"trajectory_str"}
    temperature = _temperature(ast.parse(data.TAU2.source_text(data.CONFIG_SOURCE)))
    return NLAssertionPrompt(system=system.value, user=user_prompt, line=line,
                             separator=separator, trajectory_var="trajectory_str",
                             assertions_var=assertions_var, temperature=temperature)
