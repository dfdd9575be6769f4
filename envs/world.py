"""A `World`: the named environments of one multi-environment episode.

Tasks span one or more environments; the model sees their tools under qualified
names (`calendar-add_event`, EnvFactory's "Server-tool" convention). The world routes a
qualified call to its environment, and snapshots/restores all of them together.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envs import registry
from envs.base import Environment, ToolResult, ToolSpec

__all__ = ["SEPARATOR", "World", "qualify", "split_name"]

SEPARATOR = "-"


def qualify(env: str, tool: str) -> str:
    return f"{env}{SEPARATOR}{tool}"


def split_name(qualified: str, envs: Mapping[str, Any]) -> tuple[str, str] | None:
    """(env, tool) for a qualified name, or None if no environment of the world owns it."""
    for env in sorted(envs, key=len, reverse=True):  # longest match first
        prefix = env + SEPARATOR
        if qualified.startswith(prefix):
            return env, qualified[len(prefix):]
    return None


class World:
    """Fresh instances of the named environments, optionally from given snapshots."""

    def __init__(self, names: list[str],
                 states: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.envs: dict[str, Environment] = {}
        for name in names:
            env = registry.create(name)
            if states and name in states:
                env.restore(states[name])
            self.envs[name] = env

    def tools(self) -> list[tuple[str, ToolSpec]]:
        """(qualified name, spec) for every tool of every environment."""
        return [(qualify(name, spec.name), spec)
                for name, env in self.envs.items() for spec in env.tools()]

    def call(self, env: str, tool: str, arguments: Mapping[str, Any] | None) -> ToolResult:
        if env not in self.envs:
            return ToolResult(ok=False, error=f"Unknown environment {env!r}; this episode has "
                              f"{', '.join(self.envs)}.")
        return self.envs[env].call(tool, arguments)

    def call_qualified(self, qualified: str, arguments: Mapping[str, Any] | None) -> ToolResult:
        parts = split_name(qualified, self.envs)
        if parts is None:
            return ToolResult(ok=False, error=f"Unknown tool {qualified!r}.")
        return self.call(*parts, arguments)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        return {name: env.snapshot() for name, env in self.envs.items()}
