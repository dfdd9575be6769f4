"""Chain sampling over the tool graph: TopologySampler, RandomWalkSampler, validation, turn split.

The samplers follow the released EnvFactory behaviour (notes/envfactory.md §8) with its constants,
but draw from a private ``random.Random(seed)`` and iterate in sorted order, so
``sample_chain(graph, seed)`` is a pure function of the graph and the seed.

The graph is read through its ``networkx`` structure (``graph.g``, shared contract 2), so the
sampler depends only on node and edge attributes, not on ``ToolGraph``'s helper methods.

Satisfiable input (our statement of the release's ``validate_parameter``): an input parameter is
satisfied before step *i* when it is marked ``user_provided`` (``None`` counts as not
user-provided), or a tool called at an earlier step outputs a parameter with the same name in the
same environment ("direct" production: in the release one parameter node is shared by producer
and consumer), or an earlier step's output parameter has a ``Parameter_Relate`` edge into it.
A chain is valid when every *required* input of every step is satisfied by the steps before it.

Where we differ from the release: a tool appears at most once in a chain (the release allows
repeats), and a tool whose priors are being inserted already counts against the 3-environment
cap, so priors cannot push the chain past it.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import networkx as nx

from envs.names import qualify
from synthesis.chain import MAX_TOOLS_PER_TURN, ChainStep, ToolChain

SamplerName = Literal["topology", "random_walk"]

MAX_ENVIRONMENTS = 3
MAX_PRIOR_DEPTH = 5
P_OPTIONAL_INPUT = 0.4
P_SATISFIED_INPUT = 0.1
MAX_ATTEMPTS = 50


class HasGraph(Protocol):
    """Anything carrying the contract-2 ``networkx.DiGraph`` at ``.g`` (``ToolGraph`` does)."""

    g: nx.DiGraph


@dataclass(frozen=True)
class _Input:
    param: str
    name: str
    required: bool
    user_provided: bool


@dataclass
class _Index:
    """Sorted, precomputed views of the graph the samplers and the validator need."""

    env: dict[str, str] = field(default_factory=dict)
    tool_name: dict[str, str] = field(default_factory=dict)
    inputs: dict[str, list[_Input]] = field(default_factory=dict)
    output_names: dict[str, frozenset[str]] = field(default_factory=dict)
    # input param -> tools whose output relates to it / all producing tools (sorted)
    relate_sources: dict[str, frozenset[str]] = field(default_factory=dict)
    successors: dict[str, list[str]] = field(default_factory=dict)
    producers: dict[str, list[str]] = field(default_factory=dict)

    @property
    def tools(self) -> list[str]:
        return sorted(self.env)


def _index(graph: HasGraph, envs: Iterable[str] | None = None) -> _Index:
    g = graph.g
    allowed = None if envs is None else set(envs)
    idx = _Index()
    for node, data in g.nodes(data=True):
        if data.get("kind") == "tool" and (allowed is None or data["env"] in allowed):
            idx.env[node] = data["env"]
            idx.tool_name[node] = data["tool"]
    by_env_output: dict[tuple[str, str], set[str]] = {}
    for tool in idx.tools:
        names: set[str] = set()
        for _, param, edata in g.out_edges(tool, data=True):
            if edata.get("kind") == "Tool_Output":
                name = g.nodes[param]["name"]
                names.add(name)
                by_env_output.setdefault((idx.env[tool], name), set()).add(tool)
        idx.output_names[tool] = frozenset(names)
    for tool in idx.tools:
        inputs: list[_Input] = []
        for param, _, edata in g.in_edges(tool, data=True):
            if edata.get("kind") != "Tool_Input":
                continue
            pdata = g.nodes[param]
            inputs.append(
                _Input(
                    param=param,
                    name=pdata["name"],
                    required=bool(edata.get("required", pdata.get("required", False))),
                    user_provided=pdata.get("user_provided") is True,
                )
            )
            related = {
                _owner(g, src)
                for src, _, rdata in g.in_edges(param, data=True)
                if rdata.get("kind") == "Parameter_Relate"
            }
            related = {t for t in related if t in idx.env}
            idx.relate_sources[param] = frozenset(related)
            direct = by_env_output.get((idx.env[tool], pdata["name"]), set())
            idx.producers[param] = sorted((related | direct) - {tool})
        idx.inputs[tool] = sorted(inputs, key=lambda i: i.param)
        idx.successors[tool] = sorted(
            dst
            for _, dst, edata in g.out_edges(tool, data=True)
            if edata.get("kind") == "Tool_Depend" and dst in idx.env and dst != tool
        )
    return idx


def _owner(g: nx.DiGraph, param: str) -> str:
    """The tool node an output parameter belongs to (its Tool_Output source)."""
    for src, _, edata in g.in_edges(param, data=True):
        if edata.get("kind") == "Tool_Output":
            return str(src)
    data = g.nodes[param]
    return qualify(data['env'], data['tool'])


def _satisfied(idx: _Index, tool: str, inp: _Input, earlier: Sequence[str]) -> bool:
    if inp.user_provided:
        return True
    env = idx.env[tool]
    for prev in earlier:
        if idx.env[prev] == env and inp.name in idx.output_names[prev]:
            return True
        if prev in idx.relate_sources[inp.param]:
            return True
    return False


def unproducible_required_inputs(graph: HasGraph) -> list[str]:
    """Required input params that are not user-provided and that no tool can produce (sorted).

    No chain can contain their tools; the orphan audit (``synthesis.graph_llm``) reports them.
    """
    idx = _index(graph)
    return sorted(
        inp.param
        for tool in idx.tools
        for inp in idx.inputs[tool]
        if inp.required and not inp.user_provided and not idx.producers[inp.param]
    )


def _problems(idx: _Index, steps: Sequence[ChainStep], max_envs: int) -> list[str]:
    if not steps:
        return ["empty chain"]
    problems: list[str] = []
    envs = list(dict.fromkeys(s.env for s in steps))
    if len(envs) > max_envs:
        problems.append(f"{len(envs)} environments, at most {max_envs}")
    earlier: list[str] = []
    for i, step in enumerate(steps):
        tool = step.qualified
        if tool not in idx.env:
            problems.append(f"step {i}: unknown tool {tool}")
            continue
        for inp in idx.inputs[tool]:
            if inp.required and not _satisfied(idx, tool, inp, earlier):
                problems.append(
                    f"step {i}: {tool} required input {inp.name!r} is neither user-provided"
                    " nor produced earlier"
                )
        earlier.append(tool)
    return problems


def validate_chain(
    graph: HasGraph, steps: Sequence[ChainStep], *, max_envs: int = MAX_ENVIRONMENTS
) -> list[str]:
    """Problems of a chain (empty = valid): unknown tools, env cap, unmet required inputs."""
    return _problems(_index(graph), steps, max_envs)


class _Sampler(ABC):
    """Shared BFS loop of the release: pop, insert priors, append, enqueue successors."""

    name: SamplerName

    def __init__(self, idx: _Index, rng: random.Random, max_nodes: int) -> None:
        self.idx = idx
        self.rng = rng
        self.max_nodes = max_nodes
        self.chain: list[str] = []
        # tools waiting for their priors: their environments count against the cap already
        self.pending: list[str] = []

    def _envs(self) -> set[str]:
        return {self.idx.env[t] for t in (*self.chain, *self.pending)}

    def _within_cap(self, tool: str) -> bool:
        envs = self._envs()
        return self.idx.env[tool] in envs or len(envs) < MAX_ENVIRONMENTS

    def run(self) -> list[str]:
        start = self.rng.choice(self.idx.tools)
        queue: deque[str] = deque([start])
        while queue and len(self.chain) < self.max_nodes:
            node = queue.popleft()
            if node in self.chain or not self._within_cap(node):
                continue
            self._insert_priors(node, depth=0)
            self.chain.append(node)  # priors never include the node: it is pending meanwhile
            queue.extend(self._next(node) or self._same_env_fallback(node))
        return self.chain

    def _insert_priors(self, tool: str, depth: int) -> None:
        """Put producers of the tool's inputs before it (skips and depth as released)."""
        self.pending.append(tool)
        for inp in self.idx.inputs[tool]:
            if not inp.required and self.rng.random() >= P_OPTIONAL_INPUT:
                continue
            satisfied = _satisfied(self.idx, tool, inp, self.chain)
            if satisfied and self.rng.random() >= P_SATISFIED_INPUT:
                continue
            producers = [
                p
                for p in self.idx.producers[inp.param]
                if p not in self.chain and p not in self.pending and self._within_cap(p)
            ]
            if not producers:
                continue
            producer = self.rng.choice(producers)
            if depth < MAX_PRIOR_DEPTH:
                self._insert_priors(producer, depth + 1)
            if producer not in self.chain and self._within_cap(producer):
                self.chain.append(producer)
        self.pending.pop()

    def _candidates(self, tool: str) -> list[str]:
        return [s for s in self.idx.successors[tool] if s not in self.chain and self._within_cap(s)]

    @abstractmethod
    def _next(self, tool: str) -> list[str]:
        """Successors to enqueue after ``tool``."""

    def _same_env_fallback(self, tool: str) -> list[str]:
        env = self.idx.env[tool]
        pool = [t for t in self.idx.tools if self.idx.env[t] == env and t not in self.chain]
        return [self.rng.choice(pool)] if pool else []


class TopologySampler(_Sampler):
    """k ~ U{1..|candidates|} successors per node, drawn without replacement."""

    name: SamplerName = "topology"

    def _next(self, tool: str) -> list[str]:
        candidates = self._candidates(tool)
        if not candidates:
            return []
        return self.rng.sample(candidates, self.rng.randint(1, len(candidates)))


class RandomWalkSampler(_Sampler):
    """One random unvisited successor per node."""

    name: SamplerName = "random_walk"

    def _next(self, tool: str) -> list[str]:
        candidates = self._candidates(tool)
        return [self.rng.choice(candidates)] if candidates else []


_SAMPLERS: dict[str, type[_Sampler]] = {
    "topology": TopologySampler,
    "random_walk": RandomWalkSampler,
}


def _keep_valid(idx: _Index, chain: Sequence[str]) -> list[str]:
    """Drop, front to back, each step whose required inputs the kept steps before it don't meet."""
    kept: list[str] = []
    for tool in chain:
        if all(_satisfied(idx, tool, i, kept) for i in idx.inputs[tool] if i.required):
            kept.append(tool)
    return kept


def split_turns(n_steps: int, rng: random.Random) -> list[list[int]]:
    """Close the current turn after n tools with probability n/5 (always at 5)."""
    turns: list[list[int]] = []
    current: list[int] = []
    for i in range(n_steps):
        current.append(i)
        n = len(current)
        if n >= MAX_TOOLS_PER_TURN or rng.random() < n / MAX_TOOLS_PER_TURN:
            turns.append(current)
            current = []
    if current:
        turns.append(current)
    return turns


class ChainSampler:
    """Samples and validates many chains over one graph, indexing it once.

    The index is a snapshot: build a new ``ChainSampler`` after changing the graph (new edges,
    new user-provided labels).
    """

    def __init__(self, graph: HasGraph, envs: Iterable[str] | None = None) -> None:
        self.idx = _index(graph, envs)
        self.full = self.idx if envs is None else _index(graph)

    def validate(self, steps: Sequence[ChainStep], max_envs: int = MAX_ENVIRONMENTS) -> list[str]:
        """``validate_chain`` against the whole graph."""
        return _problems(self.full, steps, max_envs)

    def sample(
        self, seed: int, sampler: SamplerName = "topology", max_nodes: int = 10
    ) -> ToolChain:
        """See ``sample_chain``."""
        idx = self.idx
        if not idx.tools:
            raise ValueError("the graph has no tools in the requested environments")
        rng = random.Random(seed)
        cls = _SAMPLERS[sampler]
        for _ in range(MAX_ATTEMPTS):
            kept = _keep_valid(idx, cls(idx, rng, max_nodes).run())
            if kept:
                steps = [ChainStep(env=idx.env[t], tool=idx.tool_name[t]) for t in kept]
                turns = split_turns(len(steps), rng)
                return ToolChain(seed=seed, sampler=sampler, steps=steps, turns=turns)
        raise ValueError(
            f"no valid chain in {MAX_ATTEMPTS} attempts (seed {seed}):"
            " are user-provided inputs classified?"
        )


def sample_chain(
    graph: HasGraph,
    seed: int,
    sampler: SamplerName = "topology",
    max_nodes: int = 10,
    envs: Iterable[str] | None = None,
) -> ToolChain:
    """A valid chain and its turn split, a pure function of (graph, seed, sampler, max_nodes, envs).

    The raw BFS chain can hold steps whose required inputs nothing before them provides (no
    producer, or the prior depth ran out); those steps are dropped front to back. If nothing
    survives, sampling is repeated from the same generator (up to 50 attempts), so the result
    still depends on the seed alone.
    ``envs`` restricts sampling to those environments (e.g. to leave held-out ones out).
    For many chains over one graph, use ``ChainSampler`` (indexes the graph once).
    """
    return ChainSampler(graph, envs).sample(seed, sampler, max_nodes)
