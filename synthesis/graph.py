"""The tool graph: which tool's outputs can feed which tool's inputs, across environments.

QueryGen samples tool chains from this graph, so an edge means "a result of A can plausibly
supply an argument of B". Nodes and edges (shared contract 2):

- tool nodes `"{env}-{tool}"` (`envs.names.qualify`: a release environment `release/Airline`
  or `release/Airline@scenario_002` gives `Airline-{tool}`, the node's `env` attribute keeps
  the catalogue name) and parameter nodes `"{tool node}:in:{path}"` /
  `"{tool node}:out:{path}"` for every input and output property; object properties and
  object-typed array items are flattened one level as `parent.child` (the parent keeps its
  own node). A result schema that is not an object with properties (a list, a string, an
  open dict) becomes one output named `result` (its object items flattened as `result.x`).
- `Tool_Input` param -> tool (attr `required`; a nested input is required iff its base is),
  `Tool_Output` tool -> param, `Parameter_Relate` output -> input when the cosine of their
  embedding texts `"{name} ({type}): {description}"` exceeds the embedder's threshold, and
  `Tool_Depend` A -> B when any output of A relates to any input of B (score = best pair).
  Pairs within one tool are skipped; pairs across environments are kept. All pairs come from
  one matrix product (outputs x inputs), so building over ~700 tools takes seconds once the
  texts are embedded (and the embedding cache makes rebuilds cheaper still).

Calibrating MiniLM's threshold. The release built its graph with BGE-M3 at 0.85: 75 servers,
623 tools, 4,158 parameters and 10,620 edges of all kinds. MiniLM's cosine scale is not
BGE-M3's, so `MINILM_THRESHOLD` was chosen on the 88 metadata files by sweeping the
threshold and taking the value whose count of relation edges (Parameter_Relate +
Tool_Depend) per parameter matches the release's: release relation edges = 10,620 minus its
Tool_Input/Tool_Output edges (one per parameter, 4,158), i.e. 6,462 over 4,158 parameters.
`calibrate_threshold` does the sweep. Over all 88 files (683 tools, 4,982 parameters:
more than the release's 623 tools since every file is used) the density is 1.716 at 0.75,
1.588 at 0.76 and 1.480 at 0.77 against the release's 1.554, so MiniLM's threshold is 0.76.
A check on 25 hand-labelled pairs (`tests/data/graph_pairs.json`) agrees: at 0.76, 12 of
13 true pairs link and 2 of 12 false ones do (precision 0.86, recall 0.92); 0.78 drops both
false links at the same recall, so thresholds in 0.76-0.78 are defensible.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
from pydantic import BaseModel

from envs.base import ToolSpec
from envs.jsonl import write_atomic
from envs.names import RELEASE_PREFIX, qualify
from envs.schemas import ref_target
from synthesis.embedders import Embedder

__all__ = [
    "BuildTiming",
    "GraphStats",
    "NotAGraph",
    "ParamInfo",
    "ToolGraph",
    "build_graph",
    "calibrate_threshold",
    "declared_output_schema",
    "flatten_schema",
    "relation_counts",
    "specs_from_envfactory_dir",
    "specs_from_metadata_dir",
    "specs_from_registry",
    "with_declared_outputs",
    "timed_build",
]

# Release figures (notes/envfactory.md §5): the graph notebook's build run.
RELEASE_PARAMS = 4158
RELEASE_EDGES = 10620

# node-link keys for edge ends: "source" is taken by the edges' own provenance attribute
_LINK_KEYS = {"source": "from", "target": "to"}

Progress = Callable[[str, int, int], None]  # (stage, done, total)


class NotAGraph(ValueError):
    """A file given as a tool graph that is not one (`file[:line]: what was expected`)."""


class ParamInfo(BaseModel):
    """One flattened schema property."""

    path: str
    type: str
    description: str
    required: bool


def _resolve(schema: Any, root: Mapping[str, Any]) -> dict[str, Any]:
    """Follow a local `$ref` and unwrap `Optional[...]` (anyOf/oneOf with a null member)."""
    if not isinstance(schema, dict):
        return {}
    seen = 0
    while "$ref" in schema and isinstance(schema["$ref"], str) and seen < 10:
        target = ref_target(root, schema)
        schema = {**(target if isinstance(target, dict) else {}),
                  **{k: v for k, v in schema.items() if k != "$ref"}}
        seen += 1
    for key in ("anyOf", "oneOf"):
        members = [m for m in schema.get(key, []) if isinstance(m, dict)
                   and m.get("type") != "null"]
        if len(members) == 1:
            inner = _resolve(members[0], root)
            schema = {**inner, **{k: v for k, v in schema.items() if k != key}}
    return schema


def _type_of(schema: Mapping[str, Any], root: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        return "|".join(kinds) or "null"
    if isinstance(kind, str):
        return kind
    for key in ("anyOf", "oneOf"):
        if key in schema:
            names = sorted({_type_of(_resolve(m, root), root) for m in schema[key]} - {"null"})
            return "|".join(names) or "any"
    if "properties" in schema:
        return "object"
    if "enum" in schema:
        return "string"
    return "any"


def _children(schema: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    """Properties one level down: of an object, or of an array's object items."""
    if isinstance(schema.get("properties"), dict) and schema["properties"]:
        return dict(schema["properties"])
    items = _resolve(schema.get("items"), root)
    if isinstance(items.get("properties"), dict):
        return dict(items["properties"])
    return {}


def flatten_schema(schema: Mapping[str, Any] | None, *, output: bool = False) -> list[ParamInfo]:
    """Parameters of an input (arguments) or output (result) schema, nested one level.

    An output schema that is not an object with properties is one parameter, `result`.
    """
    if not schema:
        return []
    root = schema
    top = _resolve(dict(schema), root)
    properties = top.get("properties")
    if not (isinstance(properties, dict) and properties):
        if not output:
            return []
        properties = {"result": top}
    required = set(top.get("required", [])) if not output else set()
    params: list[ParamInfo] = []
    for name, raw in properties.items():
        prop = _resolve(raw, root)
        base_required = name in required
        params.append(ParamInfo(path=name, type=_type_of(prop, root),
                                description=str(prop.get("description", "")).strip(),
                                required=base_required))
        for child, raw_child in _children(prop, root).items():
            sub = _resolve(raw_child, root)
            params.append(ParamInfo(path=f"{name}.{child}", type=_type_of(sub, root),
                                    description=str(sub.get("description", "")).strip(),
                                    required=base_required))
    return params


def embedding_text(name: str, type_: str, description: str) -> str:
    return f"{name} ({type_}): {description}"


# -- tool sources ---------------------------------------------------------------------


def specs_from_registry(names: Iterable[str]) -> dict[str, list[ToolSpec]]:
    """Our registered environments (pool, τ², BFCL adapters, release servers,
    `module:Class`) by name. A release server (`release/<Name>`) is imported and its tools
    carry the result schemas their docstrings declare (`with_declared_outputs`)."""
    from envs import registry

    return {name: with_declared_outputs(registry.get(name).specs())
            if name.startswith(RELEASE_PREFIX) else registry.get(name).specs()
            for name in names}


def specs_from_metadata_dir(directory: Path) -> dict[str, list[ToolSpec]]:
    """EnvFactory `*_metadata.json` files (schemas only), keyed by class name."""
    from envs.metadata import load_metadata_dir

    return {
        env.class_name: [
            ToolSpec(name=t.name, description=t.description, parameters=t.input_schema,
                     write=t.write, output_schema=t.output_schema or None)
            for t in env.tools
        ]
        for env in load_metadata_dir(Path(directory))
    }


def specs_from_envfactory_dir(directory: Path) -> dict[str, list[ToolSpec]]:
    """Imported EnvFactory-format server files (`envs.envfactory_format`), by server name."""
    from envs.envfactory_format import load_directory

    return {name: with_declared_outputs(factory().tools())
            for name, factory in load_directory(Path(directory)).items()}


# An EnvFactory-format server's wrappers return a bare `dict` (721 of the release's 829
# annotated wrappers), so FastMCP derives no result schema; what a server says it returns
# is its Google-style docstring's `Returns:` section, one `name (type): description` line
# per field (577 of the release's 673 tools have one). That section is part of the tool
# description an MCP client is shown, so it is the executable server's own declaration.
_SECTION = re.compile(r"(Args|Arguments|Parameters|Returns?|Raises|Yields|Examples?|Notes?"
                      r"|Properties):")
_FIELD = re.compile(r"(?:[-*]\s+)?([A-Za-z_][\w.]*)\s*(?:\(([^)]*)\))?\s*:\s*(.*)")
_PY_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean",
             "list": "array", "tuple": "array", "set": "array", "dict": "object",
             "none": "null"}


def _json_type(annotation: str) -> str | None:
    """JSON type of a docstring's `(type)`: `str`, `List[dict]`, `Optional[int]`,
    `int, optional`; None for a type JSON does not name (a model class)."""
    text = annotation.strip().lower().split(",")[0].strip()
    text = re.sub(r"^optional\[(.*)\]$", r"\1", text)
    return _PY_TYPES.get(re.split(r"[\[|\s]", text, maxsplit=1)[0])


def declared_output_schema(description: str) -> dict[str, Any] | None:
    """The result schema a tool's docstring declares: an object whose properties are the
    `Returns:` section's `name (type): description` lines (a line that is none continues
    the previous description), or, when the section names no field, `{"description":
    text}` (one `result` parameter in the graph); None without a `Returns:` section."""
    lines = description.splitlines()
    start = next((i for i, line in enumerate(lines)
                  if re.fullmatch(r"Returns?:", line.strip())), None)
    if start is None:
        return None
    properties: dict[str, dict[str, Any]] = {}
    loose: list[str] = []
    last: dict[str, Any] | None = None
    for line in lines[start + 1:]:
        text = line.strip()
        if not text:
            continue
        if _SECTION.fullmatch(text):
            if text == "Properties:":  # a sub-heading some servers write before the fields
                continue
            break
        field = _FIELD.fullmatch(text)
        if field and (field.group(2) is not None or field.group(3)):
            name, kind, about = field.groups()
            prop: dict[str, Any] = {"description": about.strip()}
            json_type = _json_type(kind) if kind is not None else None
            if json_type:
                prop["type"] = json_type
            properties[name] = last = prop
        elif last is not None:
            last["description"] = f"{last['description']} {text}".strip()
        else:
            loose.append(text)
    if properties:
        return {"type": "object", "properties": properties}
    return {"description": " ".join(loose)} if loose else None


def with_declared_outputs(specs: Iterable[ToolSpec]) -> list[ToolSpec]:
    """`specs` with `output_schema` filled from the docstring where the tool has none."""
    out = []
    for spec in specs:
        declared = None if spec.output_schema is not None else declared_output_schema(
            spec.description)
        out.append(spec if declared is None
                   else spec.model_copy(update={"output_schema": declared}))
    return out


# -- the graph ------------------------------------------------------------------------


class GraphStats(BaseModel):
    environments: int
    tools: int
    params: int
    input_params: int
    output_params: int
    edges: int
    edges_by_kind: dict[str, int]
    cross_env_tool_depend: int
    cross_env_parameter_relate: int
    orphan_required_inputs: int


class ToolGraph:
    """A `networkx.DiGraph` (`.g`) with the queries the sampler and QueryGen need."""

    def __init__(self, g: nx.DiGraph | None = None,
                 embeddings: tuple[list[str], np.ndarray] | None = None) -> None:
        self.g: nx.DiGraph = g if g is not None else nx.DiGraph()
        # parameter node ids and their unit vectors (row i <-> ids[i]), when built here
        self.embeddings = embeddings

    @staticmethod
    def tool_id(env: str, tool: str) -> str:
        return qualify(env, tool)

    def tools(self) -> list[str]:
        return sorted(n for n, d in self.g.nodes(data=True) if d.get("kind") == "tool")

    def env_of(self, tool_id: str) -> str:
        return str(self.g.nodes[tool_id]["env"])

    def environments(self) -> list[str]:
        return sorted({d["env"] for _, d in self.g.nodes(data=True) if d.get("kind") == "tool"})

    def tools_of(self, env: str) -> list[str]:
        return sorted(n for n, d in self.g.nodes(data=True)
                      if d.get("kind") == "tool" and d["env"] == env)

    def inputs(self, tool_id: str) -> list[str]:
        return sorted(p for p, _, k in self.g.in_edges(tool_id, data="kind")
                      if k == "Tool_Input")

    def outputs(self, tool_id: str) -> list[str]:
        return sorted(p for _, p, k in self.g.out_edges(tool_id, data="kind")
                      if k == "Tool_Output")

    def successors(self, tool_id: str) -> list[str]:
        return sorted(t for _, t, k in self.g.out_edges(tool_id, data="kind")
                      if k == "Tool_Depend")

    def predecessors(self, tool_id: str) -> list[str]:
        return sorted(t for t, _, k in self.g.in_edges(tool_id, data="kind")
                      if k == "Tool_Depend")

    def producers(self, param_id: str) -> list[str]:
        """Tools that can supply this parameter: for an input, the tools whose outputs relate
        to it; for an output, the tool that returns it."""
        data = self.g.nodes[param_id]
        if data.get("direction") == "output":
            return [self.tool_id(data["env"], data["tool"])]
        return sorted({self.tool_id(self.g.nodes[o]["env"], self.g.nodes[o]["tool"])
                       for o, _, k in self.g.in_edges(param_id, data="kind")
                       if k == "Parameter_Relate"})

    def required_inputs(self, tool_id: str) -> list[str]:
        return [p for p in self.inputs(tool_id) if self.g.nodes[p].get("required")]

    def stats(self) -> GraphStats:
        nodes = self.g.nodes
        kinds = Counter(k for _, _, k in self.g.edges(data="kind"))
        params = [n for n, d in nodes(data=True) if d.get("kind") == "param"]
        inputs = [p for p in params if nodes[p]["direction"] == "input"]
        cross_dep = sum(1 for a, b, k in self.g.edges(data="kind")
                        if k == "Tool_Depend" and nodes[a]["env"] != nodes[b]["env"])
        cross_rel = sum(1 for a, b, k in self.g.edges(data="kind")
                        if k == "Parameter_Relate" and nodes[a]["env"] != nodes[b]["env"])
        orphans = sum(1 for p in inputs if nodes[p].get("required")
                      and nodes[p].get("user_provided") is not True and not self.producers(p))
        return GraphStats(
            environments=len(self.environments()), tools=len(self.tools()),
            params=len(params), input_params=len(inputs),
            output_params=len(params) - len(inputs), edges=self.g.number_of_edges(),
            edges_by_kind={k: kinds.get(k, 0) for k in
                           ("Tool_Input", "Tool_Output", "Parameter_Relate", "Tool_Depend")},
            cross_env_tool_depend=cross_dep, cross_env_parameter_relate=cross_rel,
            orphan_required_inputs=orphans)

    def subgraph(self, tool_ids: Iterable[str]) -> ToolGraph:
        """These tools with their parameters and the edges among them."""
        keep = set(tool_ids)
        for t in list(keep):
            keep.update(self.inputs(t))
            keep.update(self.outputs(t))
        return ToolGraph(self.g.subgraph(keep).copy())

    # -- persistence ----------------------------------------------------------------

    @staticmethod
    def _embeddings_path(path: Path) -> Path:
        return path.with_name(path.stem + ".embeddings.npz")

    def save(self, path: Path | str) -> Path:
        """Node-link JSON at `path`; vectors (if any) beside it as `<stem>.embeddings.npz`.

        Nodes and edges are written sorted, so the same graph gives the same bytes however
        its edges were added (LLM passes add them as replies arrive); the file is replaced
        atomically, so a pass interrupted while saving leaves the previous graph intact.
        """
        path = Path(path)
        data = nx.node_link_data(self.g, edges="edges", **_LINK_KEYS)
        data["nodes"].sort(key=lambda n: n["id"])
        data["edges"].sort(key=lambda e: (e["from"], e["to"]))
        write_atomic(path, json.dumps(data, ensure_ascii=False, indent=1))
        if self.embeddings is not None:
            ids, vectors = self.embeddings
            side = self._embeddings_path(path)
            partial = side.with_name(side.name + ".partial")
            with partial.open("wb") as f:  # a file object: numpy adds no suffix to it
                np.savez_compressed(f, ids=np.asarray(ids, dtype=str),
                                    vectors=vectors.astype(np.float32))
            partial.replace(side)
        return path

    @classmethod
    def load(cls, path: Path | str) -> ToolGraph:
        """The graph `save` wrote; a file that is not one raises `NotAGraph` naming the
        file (and line) and what was expected."""
        path = Path(path)
        expected = "a tool graph (node-link JSON written by `envfactory synth graph`)"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise NotAGraph(f"{path}:{e.lineno}: not JSON ({e.msg}); expected {expected}"
                            ) from None
        except UnicodeDecodeError:
            raise NotAGraph(f"{path}: not text; expected {expected}") from None
        if not (isinstance(data, dict) and isinstance(data.get("nodes"), list)
                and isinstance(data.get("edges"), list)):
            raise NotAGraph(f"{path}: JSON without 'nodes' and 'edges' lists; expected "
                            f"{expected}")
        try:
            g = nx.node_link_graph(data, directed=True, multigraph=False, edges="edges",
                                  **_LINK_KEYS)
        except (KeyError, TypeError, nx.NetworkXError) as e:
            raise NotAGraph(f"{path}: a node or edge lacks {e}; expected {expected}") from None
        embeddings = None
        side = cls._embeddings_path(path)
        if side.exists():
            with np.load(side) as npz:
                embeddings = ([str(i) for i in npz["ids"]], npz["vectors"].astype(np.float32))
        return cls(g, embeddings)


# -- building -------------------------------------------------------------------------


class BuildTiming(BaseModel):
    tools: int
    params: int
    nodes_s: float
    embed_s: float
    match_s: float
    total_s: float


def _add_nodes(g: nx.DiGraph, sources: Mapping[str, Sequence[ToolSpec]]) -> None:
    # a tool keeps its schemas as given and its place in the sources (`order`): the
    # release's LLM passes render tools from them, in that order (synthesis.graph_llm_release)
    order = 0
    for env, specs in sources.items():
        for spec in specs:
            tid = ToolGraph.tool_id(env, spec.name)
            g.add_node(tid, kind="tool", env=env, tool=spec.name,
                       description=spec.description, write=spec.write, order=order,
                       input_schema=spec.parameters, output_schema=spec.output_schema)
            order += 1
            for direction, schema, tag in (("input", spec.parameters, "in"),
                                           ("output", spec.output_schema, "out")):
                for p in flatten_schema(schema, output=direction == "output"):
                    pid = f"{tid}:{tag}:{p.path}"
                    attrs: dict[str, Any] = dict(
                        kind="param", env=env, tool=spec.name, direction=direction,
                        name=p.path, type=p.type, description=p.description,
                        user_provided=None)
                    if direction == "input":
                        attrs["required"] = p.required
                        g.add_node(pid, **attrs)
                        g.add_edge(pid, tid, kind="Tool_Input", required=p.required)
                    else:
                        attrs["required"] = False
                        g.add_node(pid, **attrs)
                        g.add_edge(tid, pid, kind="Tool_Output")


def _relate(g: nx.DiGraph, ids: list[str], vectors: np.ndarray, threshold: float,
            progress: Progress | None, block: int = 2048) -> None:
    nodes = g.nodes
    index = {pid: i for i, pid in enumerate(ids)}
    outs = [p for p in ids if nodes[p]["direction"] == "output"]
    ins = [p for p in ids if nodes[p]["direction"] == "input"]
    if not outs or not ins:
        return
    tool_of = {p: ToolGraph.tool_id(nodes[p]["env"], nodes[p]["tool"]) for p in ids}
    tool_codes = {t: i for i, t in enumerate(sorted(set(tool_of.values())))}
    in_vecs = vectors[[index[p] for p in ins]]
    in_tools = np.asarray([tool_codes[tool_of[p]] for p in ins])
    best: dict[tuple[str, str], float] = {}
    for start in range(0, len(outs), block):
        chunk = outs[start:start + block]
        scores = vectors[[index[p] for p in chunk]] @ in_vecs.T
        out_tools = np.asarray([tool_codes[tool_of[p]] for p in chunk])
        scores[out_tools[:, None] == in_tools[None, :]] = -1.0  # never within one tool
        for r, c in zip(*np.nonzero(scores > threshold), strict=True):
            o, i, s = chunk[r], ins[c], float(scores[r, c])
            g.add_edge(o, i, kind="Parameter_Relate", score=round(s, 6), source="embedding")
            pair = (tool_of[o], tool_of[i])
            best[pair] = max(best.get(pair, -1.0), s)
        if progress:
            progress("match", min(start + block, len(outs)), len(outs))
    for (a, b), s in best.items():
        g.add_edge(a, b, kind="Tool_Depend", source="embedding", score=round(s, 6))


def _build(sources: Mapping[str, Sequence[ToolSpec]], embedder: Embedder,
           threshold: float | None, progress: Progress | None) -> tuple[ToolGraph, BuildTiming]:
    t0 = time.perf_counter()
    g = nx.DiGraph(embedder=embedder.name,
                   threshold=embedder.threshold if threshold is None else threshold)
    _add_nodes(g, sources)
    ids = sorted(n for n, d in g.nodes(data=True) if d.get("kind") == "param")
    texts = [embedding_text(g.nodes[p]["name"], g.nodes[p]["type"], g.nodes[p]["description"])
             for p in ids]
    t1 = time.perf_counter()
    # Embed each distinct text once (a fifth of the metadata files' texts repeat), in large
    # chunks so sentence-transformers' length sorting keeps padding low across the batch.
    unique = list(dict.fromkeys(texts))
    chunks = []
    step = 1024
    for start in range(0, len(unique), step):
        chunks.append(embedder.embed(unique[start:start + step]))
        if progress:
            progress("embed", min(start + step, len(unique)), len(unique))
    if chunks:
        row = {t: i for i, t in enumerate(unique)}
        vectors = np.concatenate(chunks).astype(np.float32)[[row[t] for t in texts]]
    else:
        vectors = np.zeros((0, 0), np.float32)
    t2 = time.perf_counter()
    _relate(g, ids, vectors, float(g.graph["threshold"]), progress)
    t3 = time.perf_counter()
    graph = ToolGraph(g, (ids, vectors))
    timing = BuildTiming(tools=len(graph.tools()), params=len(ids), nodes_s=t1 - t0,
                         embed_s=t2 - t1, match_s=t3 - t2, total_s=t3 - t0)
    return graph, timing


def build_graph(sources: Mapping[str, Sequence[ToolSpec]], embedder: Embedder, *,
                threshold: float | None = None, progress: Progress | None = None) -> ToolGraph:
    """The tool graph over `{env: [ToolSpec]}`; `threshold` overrides the embedder's."""
    return _build(sources, embedder, threshold, progress)[0]


def timed_build(sources: Mapping[str, Sequence[ToolSpec]], embedder: Embedder, *,
                threshold: float | None = None, progress: Progress | None = None
                ) -> tuple[ToolGraph, BuildTiming]:
    """`build_graph` plus wall-clock seconds per phase (nodes, embedding, matching)."""
    return _build(sources, embedder, threshold, progress)


def relation_counts(graph: ToolGraph, thresholds: Sequence[float]) -> dict[float, tuple[int, int]]:
    """(Parameter_Relate, Tool_Depend) counts each threshold would give, from the stored
    vectors (one matrix product; the graph itself is not changed)."""
    if graph.embeddings is None:
        raise ValueError("graph has no embeddings to re-threshold")
    ids, vectors = graph.embeddings
    nodes = graph.g.nodes
    outs = [i for i, p in enumerate(ids) if nodes[p]["direction"] == "output"]
    ins = [i for i, p in enumerate(ids) if nodes[p]["direction"] == "input"]
    tool = [ToolGraph.tool_id(nodes[p]["env"], nodes[p]["tool"]) for p in ids]
    codes = {t: k for k, t in enumerate(sorted(set(tool)))}
    out_t = np.asarray([codes[tool[i]] for i in outs])
    in_t = np.asarray([codes[tool[i]] for i in ins])
    scores = vectors[outs] @ vectors[ins].T
    scores[out_t[:, None] == in_t[None, :]] = -1.0
    result = {}
    for th in thresholds:
        r, c = np.nonzero(scores > th)
        pairs = len(set(zip(out_t[r].tolist(), in_t[c].tolist(), strict=True)))
        result[float(th)] = (len(r), pairs)
    return result


def calibrate_threshold(graph: ToolGraph, thresholds: Sequence[float], *,
                        release_params: int = RELEASE_PARAMS,
                        release_edges: int = RELEASE_EDGES) -> tuple[float, dict[float, float]]:
    """The threshold whose relation edges (Parameter_Relate + Tool_Depend) per parameter come
    closest to the release's BGE-M3 graph; also the density at every threshold tried."""
    n_params = sum(1 for _, d in graph.g.nodes(data=True) if d.get("kind") == "param")
    target = (release_edges - release_params) / release_params
    density = {th: (rel + dep) / n_params
               for th, (rel, dep) in relation_counts(graph, thresholds).items()}
    best = min(density, key=lambda th: abs(density[th] - target))
    return best, density
