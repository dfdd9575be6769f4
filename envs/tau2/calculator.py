"""The `calculate` tool airline and retail share: upstream's arithmetic, without eval."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from envs.base import ToolError

__all__ = ["calculate_expression"]

CALCULATOR_CHARS = frozenset("0123456789+-*/(). ")
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos, ast.USub: operator.neg,
}
#: integer powers beyond this many bits are refused instead of computed for minutes
MAX_POWER_BITS = 100_000


def calculate_expression(expression: str) -> str:
    """Upstream's `calculate` without `eval`: the same character whitelist, Python's own
    parser (so syntax errors read exactly as eval's) and Python's operators on the parsed
    tree (so results and runtime errors match), then `str(round(float(x), 2))`.
    Only a runaway integer power is cut short, where eval would hang."""
    if not all(char in CALCULATOR_CHARS for char in expression):
        raise ToolError("Invalid characters in expression")
    if not isinstance(expression, str):  # a list of such characters reaches eval
        raise ToolError("eval() arg 1 must be a string, bytes or code object")
    try:
        # eval strips leading blanks before compiling; "<string>" is eval's file name
        tree = ast.parse(expression.lstrip(" "), filename="<string>", mode="eval")
        return str(round(float(_evaluate(tree.body)), 2))
    except ToolError:
        raise
    except Exception as e:  # noqa: BLE001 - upstream shows any evaluation error as text
        raise ToolError(str(e)) from e


def _evaluate(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if (isinstance(node.op, ast.Pow) and type(left) is int and type(right) is int
                and abs(left) > 1 and right * math.log2(abs(left)) > MAX_POWER_BITS):
            raise ToolError("Exponent too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Tuple):  # "()" parses as an empty tuple
        return tuple(_evaluate(e) for e in node.elts)
    if isinstance(node, ast.Call):  # "(2)(3)": calling a number fails as in eval
        return _evaluate(node.func)(*(_evaluate(a) for a in node.args))
    raise ToolError("unsupported expression")
