"""Serve any environment over MCP (stdio or streamable HTTP) with the official SDK.

Every MCP session gets its own environment instance, created on the session's first
request from the configured start state, so two clients never see each other's
writes. Besides the environment's tools the server offers `load_scenario(scenario)`
and `save_scenario()`, the names EnvFactory-format clients use to set and read state.
A tool whose result type is known publishes it as `outputSchema` and returns its
result as `structuredContent` too (MCP structured tool output; a result that is not a
JSON object is wrapped as `{"result": ...}`, as the SDK does); the text content is the
same JSON either way. Tool errors come back as MCP tool errors (`isError`) whose text
is the reason; a scenario that is not a valid state is refused with the fields named,
and the session's state stays as it was. Over HTTP, `envs.mcp_guard` bounds and checks
each request first.
"""

from __future__ import annotations

import contextlib
import json
import weakref
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server

from envs.base import Environment, ErrorKind
from envs.mcp_guard import DEFAULT_MAX_BODY_BYTES, RequestGuard, quiet_sdk_logs
from envs.schemas import inline_refs

__all__ = ["ERROR_KIND_META", "SCENARIO_TOOLS", "build_server", "serve_http", "serve_stdio"]

LOAD_SCENARIO = "load_scenario"
SAVE_SCENARIO = "save_scenario"

#: the control tools every served environment has beside its own (`env show` lists them)
SCENARIO_TOOLS = [
    types.Tool(
        name=LOAD_SCENARIO,
        description="Replace this session's environment state with `scenario` (a snapshot "
        "as returned by save_scenario).",
        inputSchema={"type": "object", "properties": {"scenario": {"type": "object"}},
                     "required": ["scenario"]},
    ),
    types.Tool(
        name=SAVE_SCENARIO,
        description="Return this session's environment state as JSON.",
        inputSchema={"type": "object", "properties": {}},
    ),
]


#: where an error result's `ErrorKind` rides in MCP's `_meta` (clients may ignore it;
#: the text is the model's either way)
ERROR_KIND_META = "envfactory/error_kind"


def _error(text: str, kind: ErrorKind) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                isError=True, _meta={ERROR_KIND_META: kind.value})


def _ok(value: Any, wrapped: bool | None = None) -> types.CallToolResult:
    """A success; `wrapped` None: no structured content (the tool has no output schema),
    False: the value is the structured content, True: it is `{"result": value}`."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    structured = None if wrapped is None else {"result": value} if wrapped else value
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structuredContent=structured)


def _output_schema(schema: dict[str, Any] | None) -> tuple[dict[str, Any] | None, bool]:
    """(MCP `outputSchema`, whether results are wrapped) for a tool's result schema.

    MCP wants an object schema; anything else (a list, a string, an optional object) is
    described as `{"result": <schema>}`, with a recursive schema's `$defs` kept at the top.
    """
    if schema is None:
        return None, False
    if schema.get("type") == "object":
        return schema, False
    inner = dict(schema)
    defs = inner.pop("$defs", None)
    wrapper: dict[str, Any] = {"type": "object", "properties": {"result": inner},
                               "required": ["result"]}
    if defs is not None:
        wrapper["$defs"] = defs
    return wrapper, True


def build_server(
    name: str,
    factory: Callable[[], Environment],
    start_state: Mapping[str, Any] | None = None,
) -> Server[Any, Any]:
    """An MCP server whose sessions each own a fresh `factory()` environment.

    `start_state` is checked here, once: an invalid one raises the environment's
    `StateError` now instead of failing every session's first request.
    """
    server: Server[Any, Any] = Server(name)
    sessions: weakref.WeakKeyDictionary[Any, Environment] = weakref.WeakKeyDictionary()
    probe = factory()
    if start_state is not None:
        probe.restore(start_state)
    outputs = {s.name: _output_schema(s.output_schema) for s in probe.tools()}
    tools = [
        types.Tool(name=s.name, description=s.description,
                   inputSchema=inline_refs(s.parameters),
                   outputSchema=outputs[s.name][0],
                   annotations=types.ToolAnnotations(readOnlyHint=not s.write))
        for s in probe.tools()
    ] + SCENARIO_TOOLS

    def session_env() -> Environment:
        session = server.request_context.session
        env = sessions.get(session)
        if env is None:
            env = factory()
            if start_state is not None:
                env.restore(start_state)
            sessions[session] = env
        return env

    @server.list_tools()  # type: ignore[no-untyped-call, untyped-decorator]
    async def list_tools() -> list[types.Tool]:
        return tools

    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def call_tool(tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        env = session_env()
        if tool == LOAD_SCENARIO:
            scenario = arguments.get("scenario")
            if not isinstance(scenario, Mapping):
                return _error("load_scenario needs a 'scenario' object",
                              ErrorKind.INVALID_ARGUMENTS)
            backup = env.snapshot()
            try:
                env.restore(scenario)
            except Exception as e:  # noqa: BLE001 - report, keep the old state
                # only when the refusal changed something: a state that does not pass
                # its own model (a release server's default) cannot be restored, and an
                # atomic restore (contract environments, the release's) left it as it was
                if env.snapshot() != backup:
                    env.restore(backup)
                return _error(f"load_scenario rejected the scenario: {e}",
                              ErrorKind.INVALID_ARGUMENTS)
            return _ok("Successfully loaded scenario")
        if tool == SAVE_SCENARIO:
            return _ok(env.snapshot())
        result = env.call(tool, arguments)
        if not result.ok:
            assert result.kind is not None  # a failed ToolResult always has one
            return _error(result.error or "failed", result.kind)
        schema, wrapped = outputs.get(tool, (None, False))
        return _ok(result.content, None if schema is None else wrapped)

    return server


async def serve_stdio(server: Server[Any, Any]) -> None:
    from mcp.server.stdio import stdio_server

    quiet_sdk_logs()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_http(server: Server[Any, Any], host: str = "127.0.0.1", port: int = 8000,
               max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
    """Streamable HTTP at http://HOST:PORT/mcp, with or without the trailing slash
    (stateful: one instance per session); request bodies over `max_body_bytes` are refused
    with HTTP 413."""
    import uvicorn
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Route
    from starlette.types import Receive, Scope, Send

    manager = StreamableHTTPSessionManager(app=server, stateless=False)

    async def handle(scope: Scope, receive: Receive, send: Send) -> None:
        await manager.handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    quiet_sdk_logs()
    guarded = RequestGuard(handle, max_body_bytes=max_body_bytes)
    # two routes, not a Mount: a Mount answers `/mcp` with a bare 307 to `/mcp/`, which
    # clients that do not follow redirects on POST report as a failure
    app = Starlette(routes=[Route(path, guarded) for path in ("/mcp", "/mcp/")],
                    lifespan=lifespan)
    uvicorn.run(app, host=host, port=port, log_level="warning")
