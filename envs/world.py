"""A `World`: the named environments of one episode, and who may call which.

Tasks span one or more environments; the model sees their tools under qualified
names (`calendar-add_event`, EnvFactory's "Server-tool" convention). The world routes a
qualified call to its environment, and snapshots/restores all of them together.

Each environment belongs to one requestor (`"assistant"` by default; τ²'s telecom
phone belongs to the simulated `"user"`): a requestor can only call the tools of its
own environments. `after_call` runs after every call that reached an environment,
so couplings between environments (τ² telecom's `sync_tools`) live in one place.
A call the world cannot route (no such environment or tool, or another requestor's) is
an `unknown_tool` error naming the qualified tools the requestor has, in `envs.errors`'
wording: the same text wherever a model meets a `World` (evaluation, QueryGen, verl).
Every benchmark's episode world is this class or a thin subclass of it
(`envs.tau2.world.Tau2World`, `envs.bfcl.world.BfclWorld`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envs import errors, registry
from envs.base import (
    Environment,
    ErrorKind,
    SnapshotEnvironment,
    StateError,
    ToolResult,
    ToolSpec,
)
from envs.names import qualify, split_name

__all__ = ["ASSISTANT", "USER", "World"]

ASSISTANT = "assistant"
USER = "user"


class World:
    """The environments of one episode: registry names (fresh instances, optionally
    from given snapshots) and/or ready instances, each owned by a requestor."""

    def __init__(self, names: list[str] | None = None,
                 states: Mapping[str, Mapping[str, Any]] | None = None, *,
                 envs: Mapping[str, Environment] | None = None,
                 requestors: Mapping[str, str] | None = None) -> None:
        self.envs: dict[str, Environment] = {}
        states = states or {}
        built: set[str] = set()
        for name in names or []:
            factory = registry.get(name).factory
            if (name in states and isinstance(factory, type)
                    and issubclass(factory, Environment)
                    and not issubclass(factory, SnapshotEnvironment)):
                # built from its snapshot: the default (seeded) world is never made
                self.envs[name] = factory(states[name])
                built.add(name)
            else:
                self.envs[name] = factory()
        self.envs.update(envs or {})
        for name, snapshot in states.items():
            if name in self.envs and (name not in built or name in (envs or {})):
                self.envs[name].restore(snapshot)
        self.requestors: dict[str, str] = {
            name: (requestors or {}).get(name, ASSISTANT) for name in self.envs}

    def owned_by(self, requestor: str) -> list[str]:
        """Names of the environments whose tools `requestor` may call."""
        return [name for name, owner in self.requestors.items() if owner == requestor]

    def tools(self, requestor: str | None = None) -> list[tuple[str, ToolSpec]]:
        """(qualified name, spec) for every tool of every environment (of `requestor`)."""
        return [(qualify(name, spec.name), spec)
                for name, env in self.envs.items()
                if requestor is None or self.requestors[name] == requestor
                for spec in env.tools()]

    def tool_names(self, requestor: str = ASSISTANT) -> list[str]:
        """The qualified names `requestor` may call (what an unknown-tool error lists)."""
        return [name for name, _ in self.tools(requestor)]

    def _unknown(self, qualified: str, requestor: str) -> ToolResult:
        return ToolResult.failure(ErrorKind.UNKNOWN_TOOL,
                                  errors.unknown_tool(qualified, self.tool_names(requestor)))

    def call(self, env: str, tool: str, arguments: Mapping[str, Any] | None,
             requestor: str = ASSISTANT) -> ToolResult:
        """One call on `env`'s tool by `requestor`. An environment's own unknown-tool
        answer is reworded with the qualified names, as the model sees them."""
        if env not in self.envs or self.requestors[env] != requestor:
            return self._unknown(qualify(env, tool), requestor)
        result = self.envs[env].call(tool, arguments)
        self.after_call(env, tool, result)
        if result.kind is ErrorKind.UNKNOWN_TOOL:
            return self._unknown(qualify(env, tool), requestor)
        return result

    def call_qualified(self, qualified: str, arguments: Mapping[str, Any] | None,
                       requestor: str = ASSISTANT) -> ToolResult:
        parts = split_name(qualified, self.envs)
        if parts is None:
            return self._unknown(qualified, requestor)
        return self.call(*parts, arguments, requestor=requestor)

    def after_call(self, env: str, tool: str, result: ToolResult) -> None:
        """Hook run after every call that reached an environment (default: nothing)."""

    def may_have_changed(self, qualified: str, result: ToolResult) -> bool:
        """Whether the call `qualified` that gave `result` may have changed the world:
        False only where the contract says it cannot (a read tool; a call that never ran;
        a failed write of an environment whose writes are atomic) and no `after_call`
        coupling runs, so a caller recording states can keep the last one."""
        if type(self).after_call is not World.after_call:
            return True
        if result.kind in (ErrorKind.UNKNOWN_TOOL, ErrorKind.INVALID_ARGUMENTS):
            return False
        parts = split_name(qualified, self.envs)
        if parts is None:
            return False
        env = self.envs[parts[0]]
        found = env._lookup(parts[1])
        if found is None:
            return False
        if getattr(found, "write", True) is False:
            return False
        return result.ok or not env._needs_checkpoint(found)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        return {name: env.snapshot() for name, env in self.envs.items()}

    def restore(self, snapshots: Mapping[str, Mapping[str, Any]]) -> None:
        """Restore the named environments from `snapshot()`'s output, all or none: if
        one refuses its snapshot, those already restored get their state back and the
        error propagates (an unknown name is a `StateError`)."""
        unknown = [name for name in snapshots if name not in self.envs]
        if unknown:
            raise StateError(f"Unknown environment(s) {', '.join(map(repr, unknown))}; "
                             f"this world has {', '.join(self.envs)}.")
        done: dict[str, dict[str, Any]] = {}
        try:
            for name, snapshot in snapshots.items():
                before = self.envs[name].snapshot()
                self.envs[name].restore(snapshot)
                done[name] = before
        except Exception:
            for name, before in done.items():
                self.envs[name].restore(before)
            raise
