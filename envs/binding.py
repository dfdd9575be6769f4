"""What Python says when keyword arguments do not bind to a method.

Benchmarks ported here call tools as upstream does, `method(**arguments)` with the model's
arguments unconverted, so a call that does not bind reads the `TypeError` CPython gives for
upstream's method (named after upstream's class). Shared by the τ² and VitaBench ports.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["binding_error"]


def binding_error(qualname: str, signature: inspect.Signature,
                  arguments: Mapping[str, Any]) -> str | None:
    """The `TypeError` message CPython (3.10+) gives for `method(**arguments)` on a bound
    method with `signature` (its first parameter, `self`, bound), or None if it binds.
    Keywords are checked first, in the order given, then missing arguments."""
    params = list(signature.parameters.values())
    bound_self, rest = params[0].name, params[1:]
    names = {p.name for p in rest}
    for key in arguments:
        if key == bound_self:
            return f"{qualname}() got multiple values for argument '{key}'"
        if key not in names:
            return f"{qualname}() got an unexpected keyword argument '{key}'"
    for kind, label in ((inspect.Parameter.POSITIONAL_OR_KEYWORD, "positional"),
                        (inspect.Parameter.KEYWORD_ONLY, "keyword-only")):
        missing = [p.name for p in rest if p.kind == kind and p.default is p.empty
                   and p.name not in arguments]
        if missing:
            plural = "s" if len(missing) > 1 else ""
            return (f"{qualname}() missing {len(missing)} required {label} "
                    f"argument{plural}: {_name_list(missing)}")
    return None


def _name_list(names: Sequence[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    if len(quoted) == 1:
        return quoted[0]
    if len(quoted) == 2:
        return f"{quoted[0]} and {quoted[1]}"
    return ", ".join(quoted[:-1]) + f", and {quoted[-1]}"
