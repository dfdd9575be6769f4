"""The texts the release's QueryGen inserts into its prompts, built as its code builds them.

The prompts themselves are data (`release_prompts`); what fills their variables is code of
the release (`src/gen/query_gen/utils.py`, `src/graph/tool_chain.py`, `tool_node.py`,
`src/utils/utils.py` at eff3b22), reproduced here in behaviour: a conversation is the
release's `[Turn i] (Previous|Current)` listing of steps, a tool list is Python's `str()` of
each OpenAI-style function dict as its MCP client lists the server (raw docstring, the
argument schema with titles, registration order), the planner's tool trace is the graph
node built from the release's metadata, a tool result is the text FastMCP sends back, a
server's data is `## MCP Server <name>` and `str()` of its state, and model replies are
read with the release's `parse_structured_output` (text before `</think>` is the thought,
a last unclosed tag is closed, each tag's content is JSON when it parses, a repeated tag
becomes a list).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic_core import to_json

from envs import registry
from envs.envfactory_format import EnvFactoryFormatEnvironment
from envs.names import RELEASE_PREFIX as PREFIX
from envs.names import qualify
from envs.release_envs import get_release
from envs.tools import ToolSpec

__all__ = ["GraphTool", "Step", "conversation", "function_dict", "generated_schemas",
           "graph_tool", "mcp_text", "parse_structured_output", "scenario_schema_source",
           "server_scenario", "solutions", "tool_list", "tool_trace", "trajectory_text",
           "user_knowledge"]

#: one entry of a release turn's `steps` / `pass_k_trace`: {"role", "content", "think"?}
Step = dict[str, Any]

_UNCLOSED = re.compile(r"<([a-zA-Z_][a-zA-Z0-9_-]*)\s*>[^<]*$")
_TAGGED = re.compile(r"(?s)<([a-zA-Z_][a-zA-Z0-9_-]*)>(.*?)</\1>")


def parse_structured_output(text: str) -> dict[str, Any]:
    """The release's reading of a reply: `think`, `non_think` and one key per tag."""
    result: dict[str, Any] = {}
    non_think = text.strip()
    end = text.find("</think>")
    if end != -1:
        result["think"] = text[:end].strip()
        non_think = text[end + len("</think>"):].strip()
    result["non_think"] = non_think
    unclosed = _UNCLOSED.findall(non_think)
    if unclosed and f"</{unclosed[-1]}>" not in non_think:
        non_think += f"</{unclosed[-1]}>"
    for tag, content in _TAGGED.findall(non_think):
        try:
            value: Any = json.loads(content)
        except json.JSONDecodeError:
            value = content
        if tag not in result:
            result[tag] = value
        elif isinstance(result[tag], list):
            result[tag].append(value)
        else:
            result[tag] = [result[tag], value]
    return result


def server_scenario(states: Mapping[str, Any], servers: Sequence[str] | None = None) -> str:
    """`get_mcp_server_scenario`: each server's state under `## MCP Server <name>`."""
    return "".join(f"## MCP Server {name}\n{state}\n" for name, state in states.items()
                   if servers is None or name in servers)


def function_dict(env: str, spec: ToolSpec) -> dict[str, Any]:
    """A tool as the release's MCP manager lists it (`tool["function"]`)."""
    return {"name": qualify(env, spec.name), "description": spec.description,
            "parameters": spec.parameters}


def _listed(env: str) -> list[dict[str, Any]]:
    """`env`'s tools as `MCPManager.filter_tools` returns their `function` dicts: for an
    EnvFactory-format server what its MCP `list_tools` answers (raw docstring, the
    argument schema with titles, registration order); for others our `ToolSpec`s.
    Importing a server takes most of a second, so a release server's listing is kept
    per file version."""
    stamp = None
    if env.startswith(PREFIX):
        server = get_release(env).server
        stamp = (str(server), server.stat().st_mtime_ns)
    return [dict(f) for f in _listing(env, stamp)]


@lru_cache(maxsize=256)
def _listing(env: str, stamp: tuple[str, int] | None) -> tuple[dict[str, Any], ...]:
    instance = registry.create(env)
    if isinstance(instance, EnvFactoryFormatEnvironment):
        return tuple({"name": qualify(env, name), "description": description,
                      "parameters": parameters}
                     for name, description, parameters in instance.mcp_listing())
    return tuple(function_dict(env, spec) for spec in registry.get(env).specs())


def tool_list(envs: Sequence[str], *, only: set[str] | None = None,
              without: set[str] | None = None) -> str:
    """`get_mcp_server_tools`: one `str(function dict)` line per tool of `envs`."""
    return "".join(f"{f}\n" for env in envs for f in _listed(env)
                   if (only is None or f["name"] in only) and f["name"] not in (without or set()))


def mcp_text(value: Any) -> str:
    """A tool's return value as the release reads it back over MCP: FastMCP's content
    conversion (a string as is, a list item by item, anything else
    `pydantic_core.to_json(indent=2)`, None nothing), the texts joined with "," as
    `MCPManager._call_tool_async` joins them."""
    def texts(v: Any) -> list[str]:
        if v is None:
            return []
        if isinstance(v, list | tuple):
            return [t for item in v for t in texts(item)]
        return [v if isinstance(v, str) else to_json(v, fallback=str, indent=2).decode()]
    return ",".join(texts(value))


def generated_schemas(schemas: Mapping[str, Any]) -> str:
    """`get_generated_schemas`: the databases written so far, or "None"."""
    text = "".join(f"## MCP Server: {name}\n{schema}\n\n" for name, schema in schemas.items())
    return text or "None"


def solutions(traces: Mapping[int, list[Step]], decisions: Mapping[int, bool]) -> str:
    """`get_solutions`: every candidate that passed, step by step."""
    out = ""
    for k, trace in traces.items():
        if decisions.get(k):
            out += f"## Solution {k}:\n"
            out += "".join(f"- Step {i}[{s['role']}]: {s['content']}\n"
                           for i, s in enumerate(trace))
    return out


def trajectory_text(trace: Sequence[Step]) -> str:
    """The step listing the filter and step-typing prompts receive."""
    return "".join(f"- Step {i}[{s['role']}]: {s['content']}\n" for i, s in enumerate(trace))


_LABELS = {"user": "User", "assistant": "Assistant", "tool_call": "Tool Call",
           "tool_response": "Tool Response"}


def _node_text(steps: Sequence[Step]) -> str:
    return "".join(f"- {_LABELS[s['role']]}: {s['content']}\n" for s in steps
                   if s["role"] in _LABELS)


def conversation(turns: Sequence[Sequence[Step]], targets: Sequence[Sequence[str]],
                 turn: int) -> str:
    """`ToolQueryChain.get_conversation(turn)`: previous turns' steps, then the current
    turn's steps (or its target tools while it has none)."""
    out = ""
    for i in range(min(turn + 1, len(turns))):
        if i < turn:
            out += f"[Turn {i + 1}] (Previous)\n{_node_text(turns[i])}\n"
        else:
            out += f"[Turn {i + 1}] (Current)\n"
            if not turns[i]:
                out += "".join(f"- Target Tool Name {j + 1}: {name}\n"
                               for j, name in enumerate(targets[i]))
            else:
                out += f"{_node_text(turns[i])}\n"
    return out.strip()


def _param_lines(schema: Mapping[str, Any] | None) -> str:
    """`Tool._parse_schema`'s text: one `name (type): description` per parameter, object
    properties and object-typed array items flattened one level."""
    text = ""
    for name, info in ((schema or {}).get("properties") or {}).items():
        kind = info.get("type", "unknown")
        items = info.get("items")
        nested: Mapping[str, Any] | None = None
        if kind == "array" and isinstance(items, dict) and items.get("type") == "object" \
                and "properties" in items:
            nested = items["properties"]
        elif kind == "object" and info.get("properties"):
            nested = info["properties"]
        if nested is None:
            text += f"{name} ({kind}): {info.get('description', '')}\n"
        else:
            text += "".join(f"{name}.{n} ({i.get('type', 'unknown')}): "
                            f"{i.get('description', '')}\n" for n, i in nested.items())
    return text


@dataclass(frozen=True)
class GraphTool:
    """A tool as a node of the release's tool graph holds it (`src/graph/tool_node.Tool`)."""

    name: str
    description: str
    input_schema: Mapping[str, Any] | None
    output_schema: Mapping[str, Any] | None


def graph_tool(env: str, spec: ToolSpec) -> GraphTool:
    """The release builds its graph from `envs/metadata` (`build_tool_graph`), so a
    release environment's tool is its metadata entry; other environments' tools are
    our `ToolSpec` (their only description)."""
    if env.startswith(PREFIX):
        path = get_release(env).metadata
        if path is not None:
            data = json.loads(path.read_text(encoding="utf-8"))
            for tool in data.get("tools") or []:
                if isinstance(tool, dict) and tool.get("name") == spec.name:
                    return GraphTool(qualify(env, spec.name), str(tool.get("description", "")),
                                     tool.get("input_schema"), tool.get("output_schema"))
    return GraphTool(qualify(env, spec.name), spec.description, spec.parameters,
                     spec.output_schema)


def tool_trace(tools: Sequence[GraphTool]) -> str:
    """`ToolQueryChain.trace`: `## Tool i` and the tool node's text, for the planner."""
    out = ""
    for i, tool in enumerate(tools):
        text = f"Tool name: {tool.name}\nTool description: {tool.description}\n"
        inputs = _param_lines(tool.input_schema).strip()
        required = (tool.input_schema or {}).get("required", [])
        text += (f"Input parameters (Required: {required}):\n{inputs}\n" if inputs
                 else "Input parameters: None\n")
        outputs = _param_lines(tool.output_schema).strip()
        text += f"Output fields:\n{outputs}\n" if outputs else "Output fields: None\n"
        out += f"## Tool {i}\n{text.rstrip()}\n"
    return out


def user_knowledge(envs: Sequence[str], provided: Mapping[str, bool | None]) -> str:
    """`get_user_knowledge`: input parameter names a user can / cannot state (`provided`
    maps `<qualified tool>.<param>` to the graph's user-provided label)."""
    yes: list[str] = []
    no: list[str] = []
    for env in envs:
        for spec in registry.get(env).specs():
            for param in (spec.parameters.get("properties") or {}):
                label = provided.get(f"{qualify(env, spec.name)}.{param}")
                (yes if label else no).append(param)
    text = ""
    if yes:
        text += f"The User Providable parameters are: {', '.join(yes)}\n"
    if no:
        text += f"The Non User Providable parameters are: {', '.join(no)}\n"
    return text


def scenario_schema_source(env: str) -> str:
    """`read_scenario_schema(server, mode="Pydantic")`: the source of the classes the
    server lists in `Scenario_Schema` (release-format files); for other environments
    the JSON schema of their `State` model, the nearest equivalent they have."""
    instance = registry.create(env)
    path: Path | None = getattr(instance, "path", None)
    head = f"## MCP Server: {qualify(env, '').rstrip('-')}\n"
    if path is not None and path.suffix == ".py":
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, filename=str(path))
        classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        listed: list[str] = []
        for node in tree.body:
            if (isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "Scenario_Schema" for t in node.targets)
                    and isinstance(node.value, ast.List)):
                listed = [e.id for e in node.value.elts if isinstance(e, ast.Name)]
        parts = [ast.get_source_segment(source, classes[n]) or "" for n in listed if n in classes]
        if parts:
            # inspect.getsource ends with the class's last newline; the release adds one
            return head + "".join(f"{p}\n\n" for p in parts) + "\n"
    schema = type(instance).State.model_json_schema() if hasattr(type(instance), "State") \
        else {}
    return head + f"{schema}\n\n"
