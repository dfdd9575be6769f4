"""Where an episode's tool calls run: one protocol, four implementations.

The episode loop (`harness.episode`) sees only `ToolBackend`: the tools each role is
offered, `call(name, arguments, role)` returning an `Observation` (the exact text that
role's model is shown, plus whether the call succeeded), and `snapshot()` of the world.

* `InProcessBackend` — the environments of a `World` in this process, qualified
  `env-tool` names (the EnvFactory tasks, QueryGen rollouts).
* `RequestorBackend` — τ²-style worlds where the agent and the user each have their own
  toolkit; a role may be offered the other side's tools (τ² solo), which then run on
  their owner's side. τ²'s roles are offered the release's own tool objects
  (`tau2_tools`), sent verbatim to OpenAI-style APIs.
* `BfclBackend` — BFCL's backends run by bfcl-eval's own executor, whose result
  strings are the model's tool messages byte for byte.
* `McpBackend` — any MCP servers (a command over stdio, an HTTP URL, or a command in an
  Inspect sandbox); `McpBackend.for_environments` serves our own environments with
  `envfactory env serve`, one process per environment per sample.

Every backend executes only the tools it offered (a server's `load_scenario` is not
the model's to call) and answers anything else with `envs.errors.unknown_tool`'s wording.
Every failed call's `Observation` carries its `ErrorKind`; where a benchmark's own
executor words the error (BFCL, τ², VitaBench, MCP-Atlas), the text stays the
benchmark's and only the kind is added, so what the model is sent never changes.
Schemas reach the model whole: `$ref`/`$defs` are inlined (`envs.schemas.inline_refs`,
also applied by our MCP server, since Inspect's MCP client drops `$defs`).
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from types import TracebackType
from typing import Any, Literal, Protocol

import anyio
import jsonschema
from inspect_ai.model import ContentText
from inspect_ai.tool import (
    MCPServer,
    ToolDef,
    ToolError,
    ToolInfo,
    ToolParams,
    mcp_server_http,
    mcp_server_sandbox,
    mcp_server_stdio,
)
from inspect_ai.util import JSONSchema
from pydantic import BaseModel, model_validator

from envs import errors
from envs.base import Environment, ErrorKind, ToolResult, ToolSpec
from envs.names import SEPARATOR, qualify, split_name
from envs.schemas import inline_refs
from envs.tau2.tool_objects import official_tools
from envs.world import World
from harness import inspect_compat
from harness.trajectory import Role
from harness.verbatim_tools import verbatim

__all__ = [
    "BfclBackend",
    "InProcessBackend",
    "McpBackend",
    "McpOutcome",
    "McpServerSpec",
    "Observation",
    "RequestorBackend",
    "Rewrite",
    "ToolBackend",
    "default_render",
    "official_tool_info",
    "tau2_tools",
    "tool_info",
]

SCENARIO_TOOLS = ("load_scenario", "save_scenario")


class Observation(BaseModel):
    """What one tool call gave: the text its caller's model is shown, success, and on a
    failure its kind (required then: the taxonomy and training read it, not the text)."""

    text: str
    ok: bool
    content: Any = None
    error_kind: ErrorKind | None = None

    @model_validator(mode="after")
    def _kind_iff_failed(self) -> Observation:
        if self.ok == (self.error_kind is not None):
            raise ValueError("a failed Observation needs an error kind, a success none")
        return self


def tool_info(name: str, spec: ToolSpec) -> ToolInfo:
    """The Inspect tool a model is offered for one environment tool (refs inlined)."""
    params = inline_refs(spec.parameters)
    return ToolInfo(
        name=name,
        description=spec.description,
        parameters=ToolParams(
            properties={k: JSONSchema.model_validate(v)
                        for k, v in params.get("properties", {}).items()},
            required=list(params.get("required", [])),
        ),
    )


def official_tool_info(official: Mapping[str, Any]) -> ToolInfo:
    """The Inspect tool for a benchmark's official Chat Completions tool object: OpenAI
    providers send the object itself, unchanged (`harness.verbatim_tools`: `$defs`,
    titles, key order); the `ToolInfo` carries the same name and description and an
    inlined schema, for argument parsing and every other provider."""
    function = official["function"]
    params = inline_refs(function.get("parameters", {}))
    info = ToolInfo(
        name=function["name"],
        description=function.get("description", ""),
        parameters=ToolParams(
            properties={k: JSONSchema.model_validate(v)
                        for k, v in params.get("properties", {}).items()},
            required=list(params.get("required", [])),
        ),
    )
    return verbatim(info, official)


def tau2_tools(toolkit: str, env: Environment) -> list[ToolInfo]:
    """What the official τ² harness offers for one toolkit (`airline`, ..., `telecom_user`),
    in its order, checked against the tools `env` runs: a model is never offered a tool
    that cannot run, nor kept from one that can."""
    objects = official_tools(toolkit)
    offered = [o["function"]["name"] for o in objects]
    runs = {spec.name for spec in env.tools()}
    if set(offered) != runs:
        raise ValueError(f"τ² {toolkit}: the release offers {sorted(set(offered) - runs)} "
                         f"that {type(env).__name__} lacks, and it has "
                         f"{sorted(runs - set(offered))} that the release does not offer")
    return [official_tool_info(o) for o in objects]


def _result_text(result: ToolResult) -> str:
    return result.text()


class ToolBackend:
    """The protocol: an async context manager offering tools per role."""

    async def __aenter__(self) -> ToolBackend:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        return None

    def tools(self, role: Role = "assistant") -> list[ToolInfo]:
        raise NotImplementedError

    def requestor(self, role: Role, name: str) -> Role:
        """Whose toolkit runs `role`'s call of `name` (its own, unless told otherwise)."""
        return role

    async def call(self, name: str, arguments: Mapping[str, Any],
                   role: Role = "assistant") -> Observation:
        raise NotImplementedError

    async def snapshot(self) -> dict[str, dict[str, Any]] | None:
        """The world's state, for the record; None where the benchmark keeps none
        (τ²'s DBs are megabytes and its reward replays the calls instead)."""
        raise NotImplementedError


def _observe(result: ToolResult, render: Callable[[ToolResult], str]) -> Observation:
    return Observation(text=render(result), ok=result.ok,
                       content=result.content if result.ok else None, error_kind=result.kind)


class InProcessBackend(ToolBackend):
    """The environments of one `World`, in this process, under qualified names; calls
    run through `World.call_qualified`, as a verl rollout's do (`training.verl.session`)."""

    def __init__(self, envs: list[str], states: Mapping[str, Mapping[str, Any]],
                 render: Callable[[ToolResult], str] = _result_text) -> None:
        self.world = World(envs, states)
        self.render = render
        self._infos = [tool_info(name, spec) for name, spec in self.world.tools()]

    def tools(self, role: Role = "assistant") -> list[ToolInfo]:
        return self._infos if role == "assistant" else []

    async def call(self, name: str, arguments: Mapping[str, Any],
                   role: Role = "assistant") -> Observation:
        if role != "assistant":  # the user has no tools here: answered as the agent's
            result = ToolResult.failure(ErrorKind.UNKNOWN_TOOL, errors.unknown_tool(
                name, self.world.tool_names()))
            return _observe(result, self.render)
        return _observe(self.world.call_qualified(name, arguments), self.render)

    async def snapshot(self) -> dict[str, dict[str, Any]]:
        return self.world.snapshot()


class RequestorBackend(ToolBackend):
    """Two toolkits, the agent's and the user's, on a world that executes by requestor.

    `execute(requestor, name, arguments)` runs a call on that side (and whatever coupling
    the world does after it); `offered[role]` lists `(ToolInfo, owner)` for each tool a
    role may call. A name the role was not offered runs on the role's own side, so the
    environment answers it with its own unknown-tool error, as the benchmark does.
    """

    def __init__(self, execute: Callable[[Role, str, Mapping[str, Any]], ToolResult],
                 offered: Mapping[Role, Sequence[tuple[ToolInfo, Role]]],
                 snapshot: Callable[[], dict[str, dict[str, Any]]] | None = None,
                 render: Callable[[ToolResult], str] = _result_text) -> None:
        self._execute = execute
        self._offered = {role: list(items) for role, items in offered.items()}
        self._owner = {role: {info.name: owner for info, owner in items}
                       for role, items in self._offered.items()}
        self._snapshot = snapshot
        self.render = render

    def tools(self, role: Role = "assistant") -> list[ToolInfo]:
        return [info for info, _ in self._offered.get(role, [])]

    def requestor(self, role: Role, name: str) -> Role:
        return self._owner.get(role, {}).get(name, role)

    async def call(self, name: str, arguments: Mapping[str, Any],
                   role: Role = "assistant") -> Observation:
        return _observe(self._execute(self.requestor(role, name), name, arguments),
                        self.render)

    async def snapshot(self) -> dict[str, dict[str, Any]] | None:
        return self._snapshot() if self._snapshot is not None else None


class BfclBackend(ToolBackend):
    """BFCL's backends of one entry, executed by bfcl-eval's own executor.

    The executor runs every decoded call, offered or not (functions held out until a
    later turn still execute, as in the official runner), and its result string —
    including `Error during execution: ...` — is the tool message. The error's kind is
    worked out beside it: a name no backend of the entry has is `unknown_tool`, arguments
    its method cannot bind are `invalid_arguments`, anything else `failed`.
    """

    ERROR_PREFIX = "Error during execution: "

    def __init__(self, world: Any, tools: Callable[[], list[ToolInfo]]) -> None:
        self.world = world
        self._tools = tools

    def tools(self, role: Role = "assistant") -> list[ToolInfo]:
        return self._tools() if role == "assistant" else []

    async def call(self, name: str, arguments: Mapping[str, Any],
                   role: Role = "assistant") -> Observation:
        from envs.bfcl.environment import call_string

        (text,) = self.world.execute([call_string(name, arguments)])
        if not text.startswith(self.ERROR_PREFIX):
            return Observation(text=text, ok=True)
        return Observation(text=text, ok=False, error_kind=self._kind(name, arguments))

    def _kind(self, name: str, arguments: Mapping[str, Any]) -> ErrorKind:
        methods = (getattr(env.backend, name, None) for env in self.world.envs.values())
        method = next((m for m in methods if callable(m)), None)
        if method is None or name.startswith("_"):
            return ErrorKind.UNKNOWN_TOOL
        try:
            inspect.signature(method).bind(**arguments)
        except TypeError:
            return ErrorKind.INVALID_ARGUMENTS
        return ErrorKind.FAILED

    async def snapshot(self) -> dict[str, dict[str, Any]]:
        return {c: env.snapshot() for c, env in self.world.envs.items()}


class McpServerSpec(BaseModel):
    """One MCP server of an episode: a command (stdio, optionally inside an Inspect
    sandbox) or a streamable-HTTP URL. `tools` limits what the model is offered;
    `setup` are calls made once right after it starts, never offered (MCP-Atlas sets
    desktop-commander's allowed directories this way, as upstream's environment does)."""

    name: str
    command: str | None = None
    args: list[str] = []
    env: dict[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    sandbox: str | None = None
    tools: list[str] | None = None
    setup: list[tuple[str, dict[str, Any]]] = []

    def server(self) -> MCPServer:
        if self.url is not None:
            return mcp_server_http(name=self.name, url=self.url)
        if self.command is None:
            raise ValueError(f"MCP server {self.name!r}: give a command or a url")
        if self.sandbox is not None:
            return mcp_server_sandbox(name=self.name, command=self.command, args=self.args,
                                      env=self.env, cwd=self.cwd, sandbox=self.sandbox)
        return mcp_server_stdio(name=self.name, command=self.command, args=self.args,
                                env=self.env, cwd=self.cwd)


class Rewrite(Protocol):
    """A translation between what the model sees and what the servers see (MCP-Atlas's
    per-sample copy of `/data`): applied to every call's arguments on the way in and to
    every result or error text on the way out."""

    def arguments(self, arguments: dict[str, Any]) -> dict[str, Any]: ...

    def text(self, text: str) -> str: ...


class McpOutcome(BaseModel):
    """What one MCP call gave, before a benchmark renders it for the model: the text of
    each text item and the kinds of the others (`image`, `audio`, ...), or the error's
    kind and message."""

    kind: Literal["ok"] | ErrorKind
    texts: list[str] = []
    non_text: list[str] = []
    error: str | None = None


def default_render(name: str, outcome: McpOutcome) -> Observation:
    """Ours: the result's text, or `Error: <message>`."""
    if outcome.kind != "ok":
        return Observation(text=f"Error: {outcome.error}", ok=False,
                           error_kind=ErrorKind(outcome.kind))
    text = "".join(outcome.texts + [f"({kind} omitted)" for kind in outcome.non_text])
    try:
        content = json.loads(text)
    except json.JSONDecodeError:
        content = text
    return Observation(text=text, ok=True, content=content)


class McpBackend(ToolBackend):
    """MCP servers started for this episode only and stopped when it ends.

    Tools are offered as `server-tool` (or with another `separator`: MCP-Atlas's
    `server_tool`). With `states`, each server's world is set with its `load_scenario`
    tool on entry and read with `save_scenario` (our environments, EnvFactory's
    servers); those two are never offered to, or callable by, the model. A server that
    fails to start stops the ones already started.

    Benchmarks with an official harness adjust what differs: `official_objects` sends
    each tool as the Chat Completions object that harness builds from the server's
    listing (`{name, description, parameters: inputSchema, strict: false}`, verbatim),
    `timeout` bounds each call, `call_unoffered` lets the model run any tool of a started
    server (MCP-Atlas's environment executes every tool it hosts, offered or not; the
    servers a task offers nothing of wait in `standby` until one of their tools is called),
    `validate_arguments` checks each call against the tool's `inputSchema` first, as an
    MCP proxy does (`Input validation error: <jsonschema's message>`), `cached` servers'
    successful results are reused for a repeated tool and arguments (MCP-Atlas's
    environment does so, stale after a write included), `rewrite`
    translates arguments, results and the tools' descriptions and schemas, and `render`
    turns each `McpOutcome` into the text the model is shown.
    """

    def __init__(self, servers: Sequence[McpServerSpec],
                 states: Mapping[str, Mapping[str, Any]] | None = None, *,
                 separator: str = SEPARATOR, official_objects: bool = False,
                 timeout: float | None = None, rewrite: Rewrite | None = None,
                 render: Callable[[str, McpOutcome], Observation] = default_render,
                 call_unoffered: bool = False, validate_arguments: bool = False,
                 standby: Sequence[McpServerSpec] = (), cached: Collection[str] = ()) -> None:
        self.specs = {s.name: s for s in servers}
        #: servers started only when the model first calls one of their tools (with
        #: `call_unoffered`: an environment that hosts more servers than a task offers)
        self.standby = {s.name: s for s in standby if s.name not in self.specs}
        #: servers whose successful results are reused for the same tool and arguments
        self.cached = frozenset(cached)
        self._results: dict[tuple[str, str], McpOutcome] = {}
        self.states = dict(states or {})
        self.separator, self.official_objects = separator, official_objects
        self.timeout, self.rewrite, self.render = timeout, rewrite, render
        self.call_unoffered, self.validate_arguments = call_unoffered, validate_arguments
        self.defs: dict[str, dict[str, ToolDef]] = {}
        #: each server's tools as it listed them (`mcp.types.Tool`), in its order
        self.listed: dict[str, list[Any]] = {}
        self._infos: list[ToolInfo] = []
        self._stack = contextlib.AsyncExitStack()

    @classmethod
    def for_environments(cls, envs: Sequence[str],
                         states: Mapping[str, Mapping[str, Any]]) -> McpBackend:
        """Our environments, one `envfactory env serve NAME` stdio process each, with
        this process's environment variables (the MCP client would pass only a few, and
        servers need e.g. `TAU2_DATA_DIR`)."""
        return cls([McpServerSpec(name=env, command=sys.executable,
                                  args=["-m", "envfactory", "env", "serve", env],
                                  env=dict(os.environ))
                    for env in envs], states)

    async def __aenter__(self) -> McpBackend:
        try:
            for name, spec in self.specs.items():
                await self._start(name, spec)
        except BaseException:
            await self._stack.aclose()
            raise
        self._infos = [self._info(server, tool)
                       for server, tools in self.listed.items() for tool in tools
                       if self._offers(server, tool.name)]
        return self

    async def _start(self, name: str, spec: McpServerSpec) -> None:
        server = await self._stack.enter_async_context(spec.server())
        self.defs[name] = {d.name: d for d in (ToolDef(t) for t in await server.tools())}
        self.listed[name] = inspect_compat.mcp_listed_tools(server)
        for tool, arguments in spec.setup:
            await self._raw(name, tool, arguments)
        if name in self.states:
            await self._raw(name, "load_scenario", {"scenario": dict(self.states[name])})

    async def _wake(self, name: str) -> None:
        """Start the standby server a tool name points at, if any (none offers tools)."""
        parts = split_name(name, self.standby, self.separator) if self.call_unoffered else None
        if parts is not None and parts[0] not in self.defs:
            spec = self.standby.pop(parts[0])
            self.specs[spec.name] = spec.model_copy(update={"tools": []})
            await self._start(spec.name, self.specs[spec.name])

    def _info(self, server: str, tool: Any) -> ToolInfo:
        d = self.defs[server][tool.name]
        name = qualify(server, tool.name, self.separator)
        if self.official_objects:
            description, schema = tool.description, dict(tool.inputSchema)
            if self.rewrite is not None:  # a server may print its real paths in them
                description = None if description is None else self.rewrite.text(description)
                schema = json.loads(self.rewrite.text(json.dumps(schema)))
            official = {"type": "function", "function": {
                "name": name, "description": description, "parameters": schema,
                "strict": False}}
            params = ToolParams.model_validate(d.parameters.model_dump(exclude_none=True))
            return verbatim(ToolInfo(name=name, description=description or "",
                                     parameters=params), official)
        return ToolInfo(name=name, description=d.description,
                        parameters=ToolParams.model_validate(inline_refs(
                            d.parameters.model_dump(exclude_none=True))))

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self._stack.aclose()

    def _offers(self, server: str, tool: str) -> bool:
        allowed = self.specs[server].tools
        hidden = server in self.states and tool in SCENARIO_TOOLS
        return not hidden and (allowed is None or tool in allowed)

    def tools(self, role: Role = "assistant") -> list[ToolInfo]:
        return self._infos if role == "assistant" else []

    async def _raw(self, server: str, tool: str, arguments: Mapping[str, Any]) -> str:
        result = await self.defs[server][tool].tool(**arguments)
        items = result if isinstance(result, list) else [result]
        return "".join(getattr(i, "text", str(i)) for i in items)

    def _callable(self, name: str) -> tuple[str, str] | None:
        parts = split_name(name, self.defs, self.separator)
        if parts is None or parts[1] not in self.defs[parts[0]]:
            return None
        hidden = parts[0] in self.states and parts[1] in SCENARIO_TOOLS
        if hidden or not (self.call_unoffered or self._offers(*parts)):
            return None
        return parts

    async def call(self, name: str, arguments: Mapping[str, Any],
                   role: Role = "assistant") -> Observation:
        if role == "assistant":
            await self._wake(name)
        parts = self._callable(name) if role == "assistant" else None
        if parts is None:
            error = errors.unknown_tool(name, [info.name for info in self._infos])
            return self._shown(name, McpOutcome(kind=ErrorKind.UNKNOWN_TOOL, error=error))
        if not isinstance(arguments, Mapping):
            return self._shown(name, McpOutcome(
                kind=ErrorKind.INVALID_ARGUMENTS,
                error=errors.invalid_arguments(name, [errors.not_an_object(arguments)])))
        key = (name, json.dumps(arguments, sort_keys=True))
        if parts[0] in self.cached and key in self._results:
            return self._shown(name, self._results[key])
        invalid = self._invalid(*parts, arguments) if self.validate_arguments else None
        if invalid is not None:
            return self._shown(name, McpOutcome(kind=ErrorKind.INVALID_ARGUMENTS,
                                                error=invalid))
        outcome = await self._run(parts, arguments)
        if parts[0] in self.cached and outcome.kind == "ok":
            self._results[key] = outcome
        return self._shown(name, outcome)

    async def _run(self, parts: tuple[str, str], arguments: Mapping[str, Any]) -> McpOutcome:
        if self.rewrite is not None:
            arguments = self.rewrite.arguments(dict(arguments))
        try:
            with anyio.fail_after(self.timeout):
                result = await self.defs[parts[0]][parts[1]].tool(**arguments)
        except TimeoutError:
            assert self.timeout is not None  # only a bounded call times out
            return McpOutcome(kind=ErrorKind.TIMEOUT,
                              error=errors.timeout(qualify(*parts, self.separator),
                                                   self.timeout))
        except Exception as e:  # noqa: BLE001 - every server failure is the model's to see
            # (a server's own refusals and argument errors arrive as text: `failed` here)
            return McpOutcome(kind=ErrorKind.FAILED,
                              error=e.message if isinstance(e, ToolError) else str(e))
        items = result if isinstance(result, list) else [result]
        return McpOutcome(kind="ok", texts=[i.text for i in items if isinstance(i, ContentText)],
                          non_text=[getattr(i, "type", type(i).__name__) for i in items
                                    if not isinstance(i, ContentText)])

    def _invalid(self, server: str, tool: str, arguments: Mapping[str, Any]) -> str | None:
        """The MCP SDK server's wording when `arguments` break the tool's schema."""
        schema = next((t.inputSchema for t in self.listed[server] if t.name == tool), None)
        try:
            jsonschema.validate(instance=dict(arguments), schema=schema or {})
        except jsonschema.ValidationError as e:
            return f"Input validation error: {e.message}"
        return None

    def _shown(self, name: str, outcome: McpOutcome) -> Observation:
        if self.rewrite is not None:
            outcome = outcome.model_copy(update={
                "texts": [self.rewrite.text(t) for t in outcome.texts],
                "error": None if outcome.error is None else self.rewrite.text(outcome.error)})
        return self.render(name, outcome)

    async def snapshot(self) -> dict[str, dict[str, Any]]:
        return {name: json.loads(await self._raw(name, "save_scenario", {}))
                for name in self.specs if name in self.states}

