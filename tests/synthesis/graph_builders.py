"""Small tool graphs in the contract-2 ``networkx`` layout, for sampler and refinement tests.

Built by hand (not through ``synthesis.graph``) so the expected chains in the tests depend only on
structures written here.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import networkx as nx


@dataclass
class Graph:
    """Stand-in carrying ``.g`` as ``ToolGraph`` does."""

    g: nx.DiGraph = field(default_factory=nx.DiGraph)

    def tool(self, env: str, tool: str, description: str = "", write: bool = False) -> str:
        node = f"{env}-{tool}"
        self.g.add_node(node, kind="tool", env=env, tool=tool, description=description, write=write)
        return node

    def input(
        self, env: str, tool: str, name: str, *, required: bool = True,
        user_provided: bool | None = None, type_: str = "string",
    ) -> str:
        node = f"{env}-{tool}:in:{name}"
        self.g.add_node(node, kind="param", env=env, tool=tool, direction="input", name=name,
                        type=type_, description=name, required=required,
                        user_provided=user_provided)
        self.g.add_edge(node, f"{env}-{tool}", kind="Tool_Input", required=required)
        return node

    def output(self, env: str, tool: str, name: str, type_: str = "string") -> str:
        node = f"{env}-{tool}:out:{name}"
        self.g.add_node(node, kind="param", env=env, tool=tool, direction="output", name=name,
                        type=type_, description=name, required=False, user_provided=None)
        self.g.add_edge(f"{env}-{tool}", node, kind="Tool_Output")
        return node

    def relate(self, out_param: str, in_param: str, score: float = 0.9) -> None:
        self.g.add_edge(out_param, in_param, kind="Parameter_Relate", score=score,
                        source="embedding")

    def depend(self, src: str, dst: str, source: str = "embedding") -> None:
        self.g.add_edge(src, dst, kind="Tool_Depend", source=source, score=None)


def shop() -> Graph:
    """search(query: user) -> item_id -> buy(item_id); plus refund(ticket), which nothing makes."""
    gr = Graph()
    gr.tool("shop", "search")
    gr.input("shop", "search", "query", user_provided=True)
    search_out = gr.output("shop", "search", "item_id")
    gr.tool("shop", "buy", write=True)
    buy_in = gr.input("shop", "buy", "item_id", user_provided=False)
    gr.output("shop", "buy", "order_id")
    gr.relate(search_out, buy_in)
    gr.depend("shop-search", "shop-buy")
    gr.tool("shop", "refund", write=True)
    gr.input("shop", "refund", "ticket", user_provided=False)
    return gr


def random_graph(seed: int, n_envs: int = 5, tools_per_env: int = 4) -> Graph:
    """A random multi-environment graph: some orphan inputs, cross-env relations and depends."""
    rng = random.Random(seed)
    gr = Graph()
    outputs: list[tuple[str, str]] = []  # (tool node, out param)
    pending_inputs: list[tuple[str, str]] = []
    for e in range(n_envs):
        env = f"env{e}"
        for t in range(tools_per_env):
            tool = f"t{t}"
            node = gr.tool(env, tool)
            for i in range(rng.randint(0, 3)):
                param = gr.input(env, tool, f"p{i}", required=rng.random() < 0.6,
                                 user_provided=rng.choice([True, False, None]))
                pending_inputs.append((node, param))
            for o in range(rng.randint(0, 2)):
                outputs.append((node, gr.output(env, tool, f"p{o}")))
    tools = sorted(n for n, d in gr.g.nodes(data=True) if d["kind"] == "tool")
    for consumer, in_param in pending_inputs:
        for producer, out_param in rng.sample(outputs, min(len(outputs), rng.randint(0, 2))):
            if producer != consumer:
                gr.relate(out_param, in_param)
                gr.depend(producer, consumer)
    for _ in range(len(tools)):
        a, b = rng.sample(tools, 2)
        gr.depend(a, b, source="llm")
    return gr
