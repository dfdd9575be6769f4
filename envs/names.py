"""Qualified tool names: how a tool of one environment is named to the model.

A task spans one or more environments, so the model sees each tool as
`<environment><separator><tool>` (`calendar-add_event`, EnvFactory's "Server-tool"
convention). Trajectories, the tool graph, the episode's world, the tool backends and
the verl reward all build or split these names; this leaf module (no imports) is the
one place that says how, so a trajectory can name its calls without loading the
environments.

The EnvFactory release's environments are catalogued as `release/<Name>` but their
tools are named as the release's own datasets name them, `<Name>-<tool>`
(`Airline-book_reservation`): `model_facing` drops the prefix, and every name built or
split here goes through it, so gold calls of the released data match ours unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["RELEASE_PREFIX", "SEPARATOR", "model_facing", "qualify", "split_name"]

#: between environment and tool ("calendar-add_event"), as EnvFactory writes "Server-tool"
SEPARATOR = "-"
#: the catalogue prefix of the EnvFactory release's environments (`release/Airline`)
RELEASE_PREFIX = "release/"


def model_facing(env: str) -> str:
    """The name the model sees for environment `env`: `release/Airline` and
    `release/Airline@scenario_001` (a world started from a named scenario) are `Airline`."""
    if not env.startswith(RELEASE_PREFIX):
        return env
    return env.removeprefix(RELEASE_PREFIX).partition("@")[0]


def qualify(env: str, tool: str, separator: str = SEPARATOR) -> str:
    """The name the model sees for `tool` of `env`."""
    return f"{model_facing(env)}{separator}{tool}"


def split_name(qualified: str, envs: Mapping[str, Any],
               separator: str = SEPARATOR) -> tuple[str, str] | None:
    """(env, tool) for a qualified name, or None if no environment of `envs` owns it.
    `separator` is ours (`-`) unless a benchmark names tools its own way (MCP-Atlas's
    `server_tool`). The longest environment name wins, so `crm` and `crm-archive` can
    share a world. The env returned is the key of `envs` (`release/Airline` for
    `Airline-get_flight`)."""
    for env in sorted(envs, key=lambda e: len(model_facing(e)), reverse=True):
        prefix = model_facing(env) + separator
        if qualified.startswith(prefix):
            return env, qualified[len(prefix):]
    return None
