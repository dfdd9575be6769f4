"""One τ² episode's world: the agent-side toolkit and, in telecom, the user's phone.

Both the live conversation and the reward's replays build their environments here, so
initialisation (task data, initialisation actions), execution by requestor and the
coupling step (`sync`) are one code path. It is an `envs.world.World` whose agent
toolkit (named after the domain) belongs to the assistant and whose phone
(`<domain>_user`) belongs to the user, with `sync` as the post-call hook.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from envs.base import ErrorKind, ToolResult
from envs.tau2.base import Tau2Environment
from envs.tau2.tasks import InitialState
from envs.world import ASSISTANT, USER, World

__all__ = ["DOMAINS", "Tau2World", "deep_merge"]

#: domain -> "module:factory" returning (agent env, user env or None)
DOMAINS = {
    "airline": "envs.tau2.airline:Airline",
    "retail": "envs.tau2.retail:Retail",
    "telecom": "envs.tau2.telecom:telecom_pair",
}


def deep_merge(base: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """`update` merged into `base` recursively (dicts merge, everything else replaces)."""
    out = dict(base)
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


class Tau2World(World):
    """The domain's environments, by requestor, coupled after every call."""

    def __init__(self, domain: str) -> None:
        if domain not in DOMAINS:
            raise ValueError(f"unknown τ² domain {domain!r}; known: {', '.join(DOMAINS)}")
        self.domain = domain
        module_name, _, attr = DOMAINS[domain].partition(":")
        made = getattr(importlib.import_module(module_name), attr)()
        self.agent: Tau2Environment
        self.user: Tau2Environment | None
        self.agent, self.user = made if isinstance(made, tuple) else (made, None)
        envs: dict[str, Tau2Environment] = {domain: self.agent}
        requestors = {domain: ASSISTANT}
        if self.user is not None:
            envs[f"{domain}_user"] = self.user
            requestors[f"{domain}_user"] = USER
        super().__init__(envs=envs, requestors=requestors)

    def env(self, requestor: str) -> Tau2Environment | None:
        return self.agent if requestor == ASSISTANT else self.user

    def initialize(self, initial_state: InitialState | None) -> None:
        """Apply the task's initialisation data and actions (upstream `set_state`)."""
        if initial_state is None:
            return
        data = initial_state.initialization_data
        for env, update in ((self.agent, data and data.agent_data),
                            (self.user, data and data.user_data)):
            if env is not None and update:
                env.restore(deep_merge(env.snapshot(), update))
        for action in initial_state.initialization_actions or []:
            target = self.env(action.env_type)
            if target is None:
                raise ValueError(f"{self.domain} has no {action.env_type} environment for "
                                 f"initialisation action {action.func_name}")
            target.run_function(action.func_name, action.arguments)
            self.sync()

    def execute(self, requestor: str, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """One tool call on the requestor's toolkit, then the coupling step; a name the
        toolkit lacks, or a user without tools, is answered in upstream's words (with
        our kind: the taxonomy reads the kind, never these words)."""
        collision = _dispatch_collision(arguments)
        if collision is not None:
            return ToolResult.failure(ErrorKind.INVALID_ARGUMENTS, collision)
        env = self.env(requestor)
        if env is None:
            return ToolResult.failure(ErrorKind.UNKNOWN_TOOL, "User tools not available")
        if not env.has_tool(name):
            return ToolResult.failure(ErrorKind.UNKNOWN_TOOL, f"Tool '{name}' not found.")
        return self.call(self.owned_by(requestor)[0], name, arguments, requestor=requestor)

    def after_call(self, env: str, tool: str, result: ToolResult) -> None:
        self.sync()

    def sync(self) -> None:
        """Couple agent DB and phone after every change (telecom's `sync_tools`)."""
        sync = getattr(self.agent, "sync_tools", None)
        if sync is not None and self.user is not None:
            sync(self.user)

    def db_hashes(self) -> tuple[str, str | None]:
        return self.agent.db_hash(), self.user.db_hash() if self.user is not None else None


def _dispatch_collision(arguments: Mapping[str, Any]) -> str | None:
    """Upstream dispatches with `env.make_tool_call(name, requestor=..., **arguments)`, so
    an argument named like one of that method's own parameters fails there, before any
    tool is looked up, with the TypeError Python raises for it."""
    if "requestor" in arguments:
        return ("tau2.environment.environment.Environment.make_tool_call() got multiple "
                "values for keyword argument 'requestor'")
    for key in arguments:
        if key in ("self", "tool_name"):
            return f"Environment.make_tool_call() got multiple values for argument '{key}'"
    return None
