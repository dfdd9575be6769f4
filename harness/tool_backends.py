"""Where a sample's tool calls run: in-process, or through MCP servers.

Both backends expose the same thing to a solver — the qualified tools of a `World`
(`env-tool`), an async `call`, and the final snapshots — so a task can switch
transport with one option and the two give identical results on the same calls.
The MCP backend starts one `envfactory env serve NAME` stdio server per environment
per sample (EnvFactory's approach) through Inspect's `mcp_server_stdio`, sets the
start state with `load_scenario` and reads the end state with `save_scenario`.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from inspect_ai.tool import ToolDef, ToolError, ToolInfo, ToolParams, mcp_server_stdio
from inspect_ai.util import JSONSchema

from envs.base import ToolResult, ToolSpec
from envs.world import World, qualify, split_name

__all__ = ["InProcessBackend", "McpBackend", "ToolBackend", "tool_info"]


def tool_info(name: str, spec: ToolSpec) -> ToolInfo:
    params = spec.parameters
    return ToolInfo(
        name=name,
        description=spec.description,
        parameters=ToolParams(
            properties={k: JSONSchema.model_validate(v)
                        for k, v in params.get("properties", {}).items()},
            required=list(params.get("required", [])),
        ),
    )


class ToolBackend:
    """Interface: async context manager with tools, call and snapshot."""

    async def __aenter__(self) -> ToolBackend:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        return None

    def tools(self) -> list[ToolInfo]:
        raise NotImplementedError

    async def call(self, qualified: str, arguments: Mapping[str, Any]) -> ToolResult:
        raise NotImplementedError

    async def snapshot(self) -> dict[str, dict[str, Any]]:
        raise NotImplementedError


class InProcessBackend(ToolBackend):
    def __init__(self, envs: list[str], states: Mapping[str, Mapping[str, Any]]) -> None:
        self.world = World(envs, states)

    def tools(self) -> list[ToolInfo]:
        return [tool_info(name, spec) for name, spec in self.world.tools()]

    async def call(self, qualified: str, arguments: Mapping[str, Any]) -> ToolResult:
        return self.world.call_qualified(qualified, arguments)

    async def snapshot(self) -> dict[str, dict[str, Any]]:
        return self.world.snapshot()


class McpBackend(ToolBackend):
    """One `envfactory env serve` stdio process per environment, for this sample only."""

    def __init__(self, envs: list[str], states: Mapping[str, Mapping[str, Any]]) -> None:
        self.states = states
        self.servers = {
            env: mcp_server_stdio(name=env, command=sys.executable,
                                  args=["-m", "envfactory", "env", "serve", env])
            for env in envs
        }
        self.defs: dict[str, dict[str, ToolDef]] = {}
        self.specs: dict[str, list[ToolSpec]] = {}
        self._stack = contextlib.AsyncExitStack()

    async def __aenter__(self) -> McpBackend:
        for env, server in self.servers.items():
            await self._stack.enter_async_context(server)
            self.defs[env] = {d.name: d for d in (ToolDef(t) for t in await server.tools())}
            if env in self.states:
                await self._raw(env, "load_scenario", {"scenario": dict(self.states[env])})
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self._stack.aclose()

    def tools(self) -> list[ToolInfo]:
        infos = []
        for env, defs in self.defs.items():
            for name, d in defs.items():
                if name in ("load_scenario", "save_scenario"):
                    continue
                info = ToolInfo(name=qualify(env, name), description=d.description,
                                parameters=d.parameters)
                infos.append(info)
        return infos

    async def _raw(self, env: str, tool: str, arguments: Mapping[str, Any]) -> str:
        result = await self.defs[env][tool].tool(**arguments)
        items = result if isinstance(result, list) else [result]
        return "".join(getattr(i, "text", str(i)) for i in items)

    async def call(self, qualified: str, arguments: Mapping[str, Any]) -> ToolResult:
        parts = split_name(qualified, self.defs)
        if parts is None or parts[1] not in self.defs[parts[0]]:
            return ToolResult(ok=False, error=f"Unknown tool {qualified!r}.")
        if not isinstance(arguments, Mapping):
            return ToolResult(ok=False, error=f"Arguments for tool {qualified!r} must be an "
                              "object.")
        try:
            text = await self._raw(*parts, arguments)
        except ToolError as e:
            return ToolResult(ok=False, error=e.message)
        try:
            return ToolResult(ok=True, content=json.loads(text))
        except json.JSONDecodeError:
            return ToolResult(ok=True, content=text)

    async def snapshot(self) -> dict[str, dict[str, Any]]:
        return {env: json.loads(await self._raw(env, "save_scenario", {}))
                for env in self.servers}
