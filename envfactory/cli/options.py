"""The command-line model options shared by the synthesis commands.

`--model` names the default Inspect model, `-M key=value` passes model arguments to it,
`--model-role ROLE=MODEL` binds another model to one role, and `--max-tokens` caps every
reply of every role (without it a local `hf/` model may generate its full default budget
per call, which turns a CPU run of a few chains into hours).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import typer
from inspect_ai.model import GenerateConfig, Model, get_model

__all__ = ["model_arg", "pairs", "role_models"]


def pairs(items: Sequence[str], what: str) -> dict[str, str]:
    """`KEY=VALUE` strings as a dict; anything else is a usage error naming the option."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise typer.BadParameter(f"{what} {item!r}: expected KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def model_arg(value: str) -> Any:
    """A `-M` value: JSON when it parses (numbers, booleans), else the string."""
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def role_models(roles: Sequence[str], model: str | None, model_args: Sequence[str],
                model_roles: Sequence[str], max_tokens: int | None) -> dict[str, Model]:
    """One Inspect model per role: `--model` (with `-M`) unless `--model-role` names another.

    `max_tokens` goes into each model's own GenerateConfig, which Inspect merges into every
    `generate` call, so agents, solver rollouts and graph passes all honour it.
    """
    bound = pairs(model_roles, "--model-role")
    unknown = sorted(set(bound) - set(roles))
    if unknown:
        raise typer.BadParameter(f"unknown roles {unknown}; use {', '.join(roles)}")
    margs = {k: model_arg(v) for k, v in pairs(model_args, "-M").items()}
    config = GenerateConfig(max_tokens=max_tokens)
    main = get_model(model, config=config, **margs)
    return {r: get_model(bound[r], config=config) if r in bound else main for r in roles}
