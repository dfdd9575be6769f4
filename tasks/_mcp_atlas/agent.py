"""MCP-Atlas's agent loop on the harness's episode loop, as upstream's harness runs it.

Upstream (`services/agent-harness`, v2.0.0) sends the task's prompt as the only user
message — no system prompt — with the tools of the enabled list as OpenAI function
objects built from the servers' listings, and loops: each assistant message's tool calls
run in order and their results go back as tool messages; a message without tool calls
ends the run; at most 100 tool calls (calls past the limit never run); each call times
out after 60 s. Its environment (a FastAPI app over fastmcp) runs any tool of its
servers, offered or not, reuses the results of most servers for a repeated tool and
arguments (`CACHEABLE_SERVERS`: a search repeated after a write is stale), and answers a
failed call with an HTTP 500 whose body the harness shows the model as the tool's result.
Its cache and `/data` live as long as the container, across tasks; here both live one
sample (`Workspace`), so samples never see each other. The answer scored is the last assistant
message with text.

Here the loop is `harness.episode.Episode` with one scripted user turn; the servers are
started per sample from their pinned packages (`tasks._mcp_atlas.servers`) on a copy of
`/data` (`tasks._mcp_atlas.workspace`), behind `harness.tool_backends.McpBackend`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence

from inspect_ai.model import ChatMessageUser, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from envs.errors import ErrorKind
from harness import raw_arguments
from harness.episode import Episode, Invocation, Rules, ScriptedUser, Side, UserTurn
from harness.tool_backends import McpBackend, McpOutcome, Observation
from harness.trajectory import Message
from tasks._mcp_atlas.dataset import AtlasTask, cacheable_servers
from tasks._mcp_atlas.oracle import AtlasOracle
from tasks._mcp_atlas.servers import templates
from tasks._mcp_atlas.workspace import Workspace, launch

__all__ = ["MAX_TOOL_CALLS", "TOOL_TIMEOUT", "atlas_decode", "atlas_refuse", "atlas_render",
           "atlas_solver", "servers_to_start"]

#: upstream's harness defaults (agent-eval.ts, config.ts)
MAX_TOOL_CALLS = 100
TOOL_TIMEOUT = 60.0


def atlas_render(name: str, outcome: McpOutcome, timeout: float = TOOL_TIMEOUT) -> Observation:
    """The tool message upstream's model sees for one call.

    A result shows its text items (no text, e.g. only an image: `success`); a failed call
    — a server's error, arguments breaking the tool's schema (checked first, as
    upstream's fastmcp proxy does), a tool no running server has — shows the
    environment's error body, `{"detail":"Failed to call tool '<name>': <error>"}`
    (FastAPI's compact JSON); a timeout, the harness's own sentence."""
    if outcome.kind == "ok":
        if not any(t.strip() for t in outcome.texts):
            return Observation(text="success", ok=True)
        if outcome.non_text:
            # text beside an image or resource fails the harness's zod schema for tool
            # results; zod 3's message is its issues as indented JSON, whose first line
            # the harness shows (read from the code; not among the recorded cases)
            return Observation(text="Error: [", ok=False, error_kind=ErrorKind.FAILED)
        return Observation(text="\n".join(outcome.texts), ok=True)
    if outcome.kind == "timeout":
        return Observation(text=f"Tool call timed out after {timeout:g}s", ok=False,
                           error_kind=ErrorKind.TIMEOUT)
    # fastmcp's wording for a tool no running server has (ours names the offered ones)
    error = f"Unknown tool: {name}" if outcome.kind == "unknown_tool" else outcome.error
    return Observation(text=_compact({"detail": f"Failed to call tool '{name}': {error}"}),
                       ok=False, error_kind=ErrorKind(outcome.kind))


def _compact(body: object) -> str:
    """FastAPI's JSON for an error body (compact, non-ASCII kept)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def _node_json_error(raw: str) -> str | None:
    """The message Node's `JSON.parse` gives for `raw` (what upstream's harness shows the
    model for undecodable arguments), or None without Node."""
    node = shutil.which("node")
    if node is None:
        return None
    script = "try{JSON.parse(process.argv[1]);}catch(e){process.stdout.write(e.message);}"
    done = subprocess.run([node, "-e", script, raw], capture_output=True, text=True,
                          timeout=10, check=False)
    return done.stdout.split("\n")[0] or None


def atlas_decode(message: Message) -> list[Invocation]:
    """Upstream's decoding: `JSON.parse` of each call's raw arguments, then `args || {}`.

    What cannot run is refused with upstream's text (`atlas_refuse` sends it as is):
    unparseable arguments get `Error: ` and the parser's first line (Node's wording when
    Node is installed, Python's otherwise); falsy values (`null`, `0`, `""`, `false`)
    run with no arguments; any other non-object reaches upstream's environment, whose
    request validation answers with a 422 body."""
    invocations = []
    for call in message.tool_calls or []:
        raw = call.raw_arguments
        arguments, error = dict(call.arguments), call.parse_error
        if error is not None:
            error = f"Error: {error}"
        if raw is not None:
            try:
                parsed = json.loads(raw)
                error = None
            except ValueError as e:
                parsed = None
                error = f"Error: {_node_json_error(raw) or str(e).splitlines()[0]}"
            if error is None:
                if isinstance(parsed, dict):
                    arguments = parsed
                elif not parsed:
                    arguments = {}
                else:
                    error = _compact({"detail": [{
                        "type": "dict_type", "loc": ["body", "tool_args"],
                        "msg": "Input should be a valid dictionary", "input": parsed}]})
        invocations.append(Invocation(id=call.id, name=call.name,
                                      arguments=arguments if error is None else {},
                                      parse_error=error))
    return invocations


def atlas_refuse(invocation: Invocation) -> str:
    """The tool message for a call `atlas_decode` refused: its text, as upstream shows it."""
    return invocation.parse_error or ""


def servers_to_start(task: AtlasTask, available: Sequence[str]) -> list[str]:
    """The servers a sample starts: those owning an enabled tool that can run here, in
    the template's order (upstream's environment runs all of them; the others have
    nothing to offer this task)."""
    return [s for s in task.enabled_servers([t.name for t in templates()]) if s in available]


@solver
def atlas_solver(max_tool_calls: int = MAX_TOOL_CALLS, tool_timeout: float = TOOL_TIMEOUT,
                 available: Sequence[str] = ()) -> Solver:
    """One MCP-Atlas run: a fresh workspace and fresh servers for the sample, upstream's
    loop, and the episode's progress in the store (what the scorer reads). `available`
    lists the servers that can start here (the task decided it once, for all samples)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = AtlasTask.model_validate(state.metadata["task"])
        names = servers_to_start(task, available)
        enabled = set(task.enabled_tools)
        offered = {n: [t for t in enabled if t.startswith(n + "_")] for n in names}
        state.metadata["servers_started"] = names
        with Workspace(repos=task.repos()) as workspace:
            specs = [launch(name, workspace).model_copy(update={
                "tools": [t[len(name) + 1:] for t in offered[name]]}) for name in names]
            # upstream's one environment runs every server: the others start on a call
            standby = [launch(name, workspace) for name in available if name not in names]
            backend = McpBackend(specs, separator="_", official_objects=True,
                                 timeout=tool_timeout, rewrite=workspace,
                                 render=lambda n, o: atlas_render(n, o, tool_timeout),
                                 call_unoffered=True, validate_arguments=True,
                                 standby=standby, cached=cacheable_servers())
            async with backend:
                tools = backend.tools()
                state.metadata["tools_missing"] = sorted(enabled - {t.name for t in tools})
                state.messages = []
                agent = Side(role="assistant", model=get_model(), history=state.messages,
                             tools=tools)
                rules = Rules(decode=atlas_decode, refuse=atlas_refuse,
                              max_tool_calls=max_tool_calls)
                user = ScriptedUser([UserTurn([ChatMessageUser(content=task.prompt)])])
                # upstream re-sends each assistant message as the provider returned it
                with raw_arguments.resend(arguments=True):
                    await Episode(agent, backend, rules, user=user,
                                  gold=AtlasOracle(task)).run()
        return state

    return solve
