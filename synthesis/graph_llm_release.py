"""The tool graph's LLM passes as the EnvFactory release sends and reads them (`--prompts release`).

The release (LARK-AI-Lab/EnvFactory@eff3b22) has two model passes in its graph build:
`ToolGraph._build_edge_with_llm` (`src/graph/tool_graph.py`) per server and
`batch_get_user_provided` (`src/graph/tool_node.py`) over every parameter. This module
renders their requests and reads their replies the way that code does, so that the same
tools give byte-identical requests (`tests/synthesis/test_graph_llm_release.py` checks
this against requests recorded from the release's own code). Every model-facing text, the
prompts (`src/graph/prompts.py`) and the fixed fragments inside those two files (the tool
rendering, the tool-context block, the retry feedback, the validation messages the model
is shown), is read from the pinned release as data through `release_prompts`; nothing of
it is in this repository.

What the release does, and so what this does:

- Edge pass, per environment: one user message, `Build_Tool_Dependency_Prompt` formatted
  with the tools rendered as the release's `str(Tool)` (one after another, each followed
  by a newline) and `str()` of the adjacency dict `{tool: [successors]}` over every edge
  already between two of them. The reply is read with the release's
  `parse_structured_output`; its `<adjacency_map>` must map names to lists of known names
  (the release checks the successors, not the sources, and adds a self-link if asked).
  Edges are added source by source as they are read; on any error the same request is
  sent again with `Error: {e}. Please retry.` appended, up to 3 requests.
- Label pass, over every parameter still unlabelled, in batches of 32 in tool order
  (inputs, then outputs): `Get_User_Provided_Prompt` formatted with the numbered
  parameter lines and the tool-context block. The reply is read with the release's
  `to_JSON`; a dict of exactly the batch's size, int-like keys in range and bool values
  is taken; an assertion failure re-sends the request with `# Attempt n failed...`
  appended. A reply that is not a dict, or whose key is not an integer, raises an error
  the release does not retry: its whole build stops there. Here that batch stops (no
  further request) and keeps its parameters unlabelled, and the other batches go on.

Differences that remain, by necessity: the release lists a batch's tool-context tools in
`set` order, which depends on Python's per-process string hashing; here they are in the
order of their first parameter in the batch (one of the orders the release produces). The
release's parameters are its own flattening (an object's fields replace the object); ours
keep the object's node too, which the release never asks about: in release mode it is
labelled user-provided exactly when every field the release labelled is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import networkx as nx
from inspect_ai.model import ChatMessageUser, Model

from envs.names import model_facing
from synthesis.querygen import release_prompts as rp
from synthesis.querygen.release_context import parse_structured_output

__all__ = ["SOURCES", "Batch", "BatchOutcome", "EnvOutcome", "FatalReply", "ReleaseParam",
           "ReleaseTool", "derive_object_labels", "edge_request", "label_batch",
           "label_batches", "label_reply", "label_request", "parse_structured_output",
           "refine_env", "release_tools", "source_problem", "to_json"]

TOOL_GRAPH = "src/graph/tool_graph.py"
TOOL_NODE = "src/graph/tool_node.py"
#: the release files the release mode reads
SOURCES = (rp.GRAPH, TOOL_GRAPH, TOOL_NODE)
#: the release's `max_retry` (both passes) and `batch_size` (labels)
MAX_REQUESTS = 3
BATCH_SIZE = 32

_EDGE = "ToolGraph._build_edge_with_llm"
_LABEL = "batch_get_user_provided"


def source_problem() -> str | None:
    """One line naming the release files release mode cannot read (None when all can be)."""
    return rp.source_problem(SOURCES, reader="--prompts release", instead="use --prompts ours")


@cache
def _fragment(relative: str, function: str, **where: int | str) -> str:
    return rp.inline(relative, function, **where)  # type: ignore[arg-type]


def _tool_part(nth: int) -> str:
    return _fragment(TOOL_NODE, "Tool.__str__", assigned="result", nth=nth)


# -- the release's Tool and Parameter -------------------------------------------------


@dataclass(frozen=True)
class ReleaseParam:
    """A parameter as the release's `Tool._parse_schema` makes it."""

    name: str
    description: str
    data_type: str

    def text(self) -> str:
        """`str(Parameter)`."""
        return _fragment(TOOL_NODE, "Parameter.__str__", returned=0).format(
            self.name, self.data_type, self.description)


def _parse_schema(schema: Any) -> tuple[list[ReleaseParam], list[Any]]:
    """The release's `Tool._parse_schema`: (parameters, `required`). Object properties and
    arrays of objects are replaced by their fields, one level down; types and descriptions
    are taken as written (no `$ref` or `anyOf` is followed)."""
    if not schema:
        return [], []
    required = schema.get("required", [])
    if "properties" not in schema or schema["properties"] is None:
        return [], required
    params: list[ReleaseParam] = []
    for name, info in schema["properties"].items():
        kind = info.get("type", "unknown")
        items = info.get("items") if kind == "array" else None
        if (kind == "array" and "items" in info and isinstance(items, dict)
                and items.get("type") == "object" and "properties" in items):
            nested = items["properties"]
        elif kind == "object" and "properties" in info and info["properties"]:
            nested = info["properties"]
        else:
            params.append(ReleaseParam(name, info.get("description", ""), kind))
            continue
        params += [ReleaseParam(f"{name}.{child}", sub.get("description", ""),
                                sub.get("type", "unknown")) for child, sub in nested.items()]
    return params, required


@dataclass(frozen=True, eq=False)  # one object per tool, compared by identity
class ReleaseTool:
    """A tool node of ours as the release's `Tool` sees it."""

    node: str  # our node id, which is also the release's name (`{class_name}-{tool}`)
    description: str
    server: str
    inputs: list[ReleaseParam]
    required: list[Any]
    outputs: list[ReleaseParam]

    @property
    def name(self) -> str:
        return self.node

    def text(self) -> str:
        """`str(Tool)`."""
        result = _tool_part(0).format(self.name) + _tool_part(1).format(self.description)
        inputs = "".join(p.text() + "\n" for p in self.inputs).strip()
        if inputs:
            result += _tool_part(2).format(self.required) + _tool_part(3).format(inputs)
        else:
            result += _tool_part(4)
        outputs = "".join(p.text() + "\n" for p in self.outputs).strip()
        result += _tool_part(5).format(outputs) if outputs else _tool_part(6)
        return result.rstrip()


def release_tools(g: nx.DiGraph, env: str | None = None) -> list[ReleaseTool]:
    """The tools (of `env`, or all), in the order the graph was built from its sources."""
    found = []
    for node, data in g.nodes(data=True):
        if data.get("kind") != "tool" or (env is not None and data["env"] != env):
            continue
        if "order" not in data or "input_schema" not in data:
            raise ValueError(f"tool node {node} has no schemas or order: the graph predates "
                             "--prompts release; rebuild it with `envfactory synth graph "
                             "--overwrite`, or use --prompts ours")
        inputs, required = _parse_schema(data["input_schema"])
        outputs, _ = _parse_schema(data.get("output_schema"))
        found.append((data["order"], ReleaseTool(
            node=node, description=str(data.get("description") or ""),
            server=model_facing(data["env"]), inputs=inputs, required=required,
            outputs=outputs)))
    return [t for _, t in sorted(found, key=lambda ot: ot[0])]


# -- reading replies as the release does (src/utils/utils.py; its parse_structured_output
# is release_context's, shared with QueryGen) ------------------------------------------


def to_json(text: str) -> Any:
    """The release's `to_JSON`: the text as JSON, else its outermost `{...}`, else its
    outermost `[...]`, else the text itself."""
    for opening, closing in (None, None), ("{", "}"), ("[", "]"):
        candidate = text
        if opening is not None and closing is not None:
            start, end = text.find(opening), text.rfind(closing)
            if not (start != -1 and end != -1 and end > start):
                continue
            candidate = text[start:end + 1]
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    return text


# -- the edge pass ----------------------------------------------------------------------


def edge_request(g: nx.DiGraph, tools: Sequence[ReleaseTool]) -> str:
    """The release's request for one server: its tools and the edges already among them."""
    line = _fragment(TOOL_GRAPH, _EDGE, assigned="tool_desc", nth=1)
    tool_desc = "".join(line.format(t.text()) for t in tools)
    adjacency = {a.name: [b.name for b in tools if g.has_edge(a.node, b.node)] for a in tools}
    return rp.build_tool_dependency(tool_desc=tool_desc, adjacency_map=str(adjacency))


def _apply_edges(g: nx.DiGraph, reply: str, tools: Sequence[ReleaseTool],
                 added: list[tuple[str, str]]) -> None:
    """Read one reply and add its edges, exactly as far as the release gets; any
    exception is the release's error for the retry."""
    names = {t.name for t in tools}
    by_name = {t.name: t for t in tools}
    new = parse_structured_output(reply)["adjacency_map"]
    for src, dsts in new.items():
        if not isinstance(dsts, list):
            raise ValueError(_fragment(TOOL_GRAPH, _EDGE, raised=0).format(src, type(dsts)))
        invalid = [d for d in dsts if d not in names]
        if invalid:
            raise ValueError(_fragment(TOOL_GRAPH, _EDGE, raised=1).format(src, invalid))
    for src, dsts in new.items():
        a = by_name[src]
        for dst in dsts:
            b = by_name[dst]
            if not g.has_edge(a.node, b.node):
                g.add_edge(a.node, b.node, kind="Tool_Depend", source="llm", score=None)
                added.append((a.node, b.node))


@dataclass
class EnvOutcome:
    """What the release's edge pass did for one environment."""

    added: list[tuple[str, str]] = field(default_factory=list)
    requests: int = 0
    error: str | None = None


async def refine_env(g: nx.DiGraph, env: str, model: Model,
                     max_requests: int = MAX_REQUESTS) -> EnvOutcome:
    """The release's `_build_edge_with_llm` over `env`'s tools."""
    tools = release_tools(g, env)
    prompt = edge_request(g, tools)
    outcome = EnvOutcome()
    retry = _fragment(TOOL_GRAPH, _EDGE, assigned="error_msg", nth=1)
    for _ in range(max_requests):
        output = await model.generate([ChatMessageUser(content=prompt)])
        outcome.requests += 1
        try:
            _apply_edges(g, output.completion, tools, outcome.added)
        except Exception as e:  # noqa: BLE001 (the release retries on any error)
            outcome.error = str(e)
            prompt += retry.format(e)
            continue
        outcome.error = None
        break
    return outcome


# -- the label pass ---------------------------------------------------------------------


@dataclass(frozen=True)
class Batch:
    """One label request: the release's parameters with our node ids (None: no node)."""

    params: list[tuple[ReleaseParam, ReleaseTool, str | None]]


def label_batches(g: nx.DiGraph, *, only_unknown: bool = True,
                  batch_size: int = BATCH_SIZE) -> list[Batch]:
    """Every tool's parameters (inputs, then outputs) in build order, those still
    unlabelled (all with `only_unknown=False`), in batches of `batch_size`."""
    params: list[tuple[ReleaseParam, ReleaseTool, str | None]] = []
    for tool in release_tools(g):
        for tag, listed in (("in", tool.inputs), ("out", tool.outputs)):
            for p in listed:
                node = f"{tool.node}:{tag}:{p.name}"
                ours = node if node in g else None
                if only_unknown and ours is not None and g.nodes[ours].get("user_provided") \
                        is not None:
                    continue
                params.append((p, tool, ours))
    return [Batch(params[i:i + batch_size]) for i in range(0, len(params), batch_size)]


def label_request(batch: Batch) -> str:
    """The release's request for one batch."""
    line = _fragment(TOOL_NODE, _LABEL, assigned="param_line", nth=0)
    tool_tag = _fragment(TOOL_NODE, _LABEL, assigned="param_line", nth=1)
    text = "\n".join(line.format(i, p.name, p.data_type, p.description) + tool_tag.format(t.name)
                     for i, (p, t, _) in enumerate(batch.params))
    tools = list(dict.fromkeys(t for _, t, _ in batch.params))
    context = ""
    if tools:
        context = "".join(_fragment(TOOL_NODE, _LABEL, assigned="batch_tool_context", nth=n)
                          for n in (1, 2))
        for t in tools:
            context += "".join(
                _fragment(TOOL_NODE, _LABEL, assigned="batch_tool_context", nth=n).format(v)
                for n, v in ((3, t.name), (4, t.description), (5, t.server)))
    return rp.get_user_provided(tool_context=context, text=text)


class FatalReply(Exception):
    """A reply on which the release's build stops (an error it does not retry)."""


def label_reply(reply: str, n: int) -> dict[int, bool]:
    """Labels from one reply as the release reads them: `AssertionError` (retried, its
    message shown) or `FatalReply` (the release stops) when it cannot be used; an index
    the reply leaves out stays unlabelled, as in the release."""
    found = to_json(reply)
    if not isinstance(found, dict):
        raise FatalReply(_fragment(TOOL_NODE, _LABEL, raised=0).format(type(found), found))
    if len(found) != n:  # the release's asserts, in its order (never stripped by -O here)
        raise AssertionError(_fragment(TOOL_NODE, _LABEL, asserted=0).format())
    for idx, value in found.items():
        try:
            in_range = 0 <= int(idx) < n
        except ValueError as e:  # the release's int(idx): a ValueError it does not retry
            raise FatalReply(str(e)) from e
        if not in_range:
            raise AssertionError(_fragment(TOOL_NODE, _LABEL, asserted=1).format(idx))
        if not isinstance(value, bool):
            raise AssertionError(_fragment(TOOL_NODE, _LABEL, asserted=2).format(value))
    return {int(idx): value for idx, value in found.items()}


def _retried_value_error(message: str) -> bool:
    """Whether the release retries (without feedback) a ValueError with this message:
    only one that looks like a failed API call and not like an authentication error."""
    low = message.lower()
    if any(w in low for w in ("authentication", "401", "api key", "invalid")):
        return False
    return "api call failed" in low or "returned none" in low


@dataclass
class BatchOutcome:
    labels: dict[int, bool] | None = None
    requests: int = 0
    error: str | None = None


async def label_batch(batch: Batch, model: Model,
                      max_requests: int = MAX_REQUESTS) -> BatchOutcome:
    """The release's loop for one batch of `batch_get_user_provided`."""
    prompt = label_request(batch)
    retry = _fragment(TOOL_NODE, _LABEL, assigned="error_msg", nth=0)
    outcome = BatchOutcome()
    for attempt in range(max_requests):
        output = await model.generate([ChatMessageUser(content=prompt)])
        outcome.requests += 1
        try:
            outcome.labels, outcome.error = label_reply(output.completion, len(batch.params)), None
            return outcome
        except AssertionError as e:
            outcome.error = str(e)
            if attempt < max_requests - 1:
                prompt += retry.format(attempt + 1, e)
        except FatalReply as e:
            outcome.error = str(e)
            if not _retried_value_error(str(e)):
                outcome.error = f"the release stops its build on this reply: {e}"
                return outcome
    return outcome


def derive_object_labels(g: nx.DiGraph) -> int:
    """Label our object nodes the release never asks about (it lists their fields
    instead): user-provided exactly when every one of their fields is labelled and
    user-provided, False when all are labelled and one is not. Returns how many."""
    asked = {f"{t.node}:{tag}:{p.name}" for t in release_tools(g)
             for tag, listed in (("in", t.inputs), ("out", t.outputs)) for p in listed}
    fields: dict[str, list[Any]] = {}
    for node, data in g.nodes(data=True):
        if data.get("kind") == "param" and "." in data["name"]:
            parent = f"{node[:-len(data['name'])]}{data['name'].rsplit('.', 1)[0]}"
            fields.setdefault(parent, []).append(data.get("user_provided"))
    done = 0
    for node, labels in fields.items():
        data = g.nodes.get(node)
        if data is None or node in asked:
            continue
        if all(v is not None for v in labels):  # recomputed: a redo may change the fields
            data["user_provided"] = all(labels)
            done += 1
    return done
