"""QueryGen harness overhead: CPU per LLM call and per kept trajectory, and graph build time.

    python benchmarks/querygen.py [--quick] [--chains N] [--pass-k K] [--embedder SPEC]

Trajectories: `synthesis.querygen.run.run_queries` (the `envfactory synth queries`
runner: sampling, synthesize, check, ordered fsync'd writes) over a two-tool email graph
(search_messages -> get_message) with zero-latency scripted models for every role, so
the time measured is ours and Inspect's, never a model's. Every chain is expected to be
kept; the script exits 1 otherwise.

Graph: `synthesis.graph.timed_build` over every pool environment's tools. The default
embedder is a hashed bag of words (instant, deterministic), so the figure is the graph
code itself (nodes, one matrix product, edges); `--embedder minilm` (or any
`get_embedder` spec) measures a real model, whose cache is kept under a temporary
directory so every run embeds afresh.

Prints a table and ends with one JSON line (`ms_per_llm_call`, `ms_per_kept`,
`graph_build_s`). `--quick` (CI): 4 chains, k = 2.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import networkx as nx  # noqa: E402
import numpy as np  # noqa: E402
from inspect_ai.model import ChatMessage, ChatMessageUser, Model, ModelOutput  # noqa: E402
from inspect_ai.tool import ToolCall  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from envs.pool import pool_classes  # noqa: E402
from harness.providers.responder import reply, responder_model  # noqa: E402
from synthesis.graph import ToolGraph, specs_from_registry, timed_build  # noqa: E402
from synthesis.querygen import preset, synthesize  # noqa: E402
from synthesis.querygen.run import RunArgs, run_queries  # noqa: E402

console = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)
QUERY = "Did the plumber send me an invoice?"
PLAN = [("email-search_messages", {"query": "invoice"}),
        ("email-get_message", {"message_id": "msg-0036"})]


class HashedWords:
    """A deterministic bag-of-words embedder: the graph's own cost, no model."""

    name = "hashed-words"
    threshold = 0.85
    dim = 256

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, int(hashlib.md5(word.encode()).hexdigest()[:8], 16) % self.dim] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


class Scripted:
    """Zero-latency models for every role; counts the calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.ids = itertools.count()

    def _model(self, respond: Any) -> Model:
        def counted(input: list[ChatMessage]) -> ModelOutput:
            self.calls += 1
            return respond(input)

        return responder_model(counted)

    _out = staticmethod(reply)

    def synth(self, input: list[ChatMessage]) -> ModelOutput:
        prompt = input[0].text
        if "Invent the person" in prompt:
            return self._out("<persona>Priya Nair, a homeowner</persona>"
                             "<scenario>Her plumber sent an invoice.</scenario>")
        if "best solution" in prompt:
            return self._out("<choice>1</choice>")
        return self._out(f"<intent>find the invoice</intent><query>{QUERY}</query>")

    def solver(self, input: list[ChatMessage]) -> ModelOutput:
        last = max(i for i, m in enumerate(input) if isinstance(m, ChatMessageUser))
        step = sum(m.role == "assistant" for m in input[last:])
        if step < len(PLAN):
            name, args = PLAN[step]
            return self._out(calls=[ToolCall(id=f"t{next(self.ids)}", function=name,
                                             arguments=args)])
        return self._out("Done.")

    def models(self) -> dict[str, Model]:
        solve = self._model(self.solver)
        return {"synth": self._model(self.synth), "solver": solve, "user": solve,
                "judge": solve}


def email_graph(path: Path) -> Path:
    g = nx.DiGraph()
    for tool in ("search_messages", "get_message"):
        g.add_node(f"email-{tool}", kind="tool", env="email", tool=tool, description=tool,
                   write=False)
    params = [("search_messages", "in", "query", True), ("search_messages", "out",
                                                         "message_id", None),
              ("get_message", "in", "message_id", False)]
    for tool, way, name, user in params:
        node = f"email-{tool}:{way}:{name}"
        g.add_node(node, kind="param", env="email", tool=tool, name=name, type="string",
                   description=name, direction="input" if way == "in" else "output",
                   required=way == "in", user_provided=user)
        if way == "in":
            g.add_edge(node, f"email-{tool}", kind="Tool_Input", required=True)
        else:
            g.add_edge(f"email-{tool}", node, kind="Tool_Output")
    g.add_edge("email-search_messages:out:message_id", "email-get_message:in:message_id",
               kind="Parameter_Relate", score=0.9, source="embedding")
    g.add_edge("email-search_messages", "email-get_message", kind="Tool_Depend",
               source="embedding", score=None)
    return ToolGraph(g).save(path)


def trajectories(chains: int, pass_k: int, tmp: Path) -> dict[str, Any]:
    scripted = Scripted()
    args = RunArgs(graph=email_graph(tmp / "graph.json"), out=tmp / "out", n=chains, seed=0,
                   max_concurrency=4)
    config = preset("sft_nonconv", pass_k=pass_k, pipeline="ours")  # its script answers ours
    splits = {"train": ["email"]}
    t0, c0 = time.perf_counter(), time.process_time()
    summary = asyncio.run(run_queries(args, config, splits, synthesize, scripted.models()))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"chains": chains, "pass_k": pass_k, "kept": summary.kept,
            "rejected": summary.rejected, "llm_calls": scripted.calls,
            "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
            "ms_per_llm_call": round(cpu / max(scripted.calls, 1) * 1e3, 2),
            "ms_per_kept": round(cpu / max(summary.kept, 1) * 1e3, 1)}


def graph_build(spec: str | None, tmp: Path) -> dict[str, Any]:
    from synthesis.embedders import get_embedder

    embedder = (HashedWords() if spec is None
                else get_embedder(spec, cache_dir=tmp / "embed-cache"))
    sources = specs_from_registry(sorted(pool_classes()))
    t0, c0 = time.perf_counter(), time.process_time()
    graph, timing = timed_build(sources, embedder)
    stats = graph.stats()
    return {"embedder": getattr(embedder, "name", spec), "envs": len(sources),
            "tools": timing.tools, "params": timing.params,
            "wall_s": round(time.perf_counter() - t0, 3),
            "cpu_s": round(time.process_time() - c0, 3),
            "nodes_s": round(timing.nodes_s, 3), "embed_s": round(timing.embed_s, 3),
            "match_s": round(timing.match_s, 3), "edges": stats.model_dump(mode="json")}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="4 chains, k = 2 (CI)")
    p.add_argument("--chains", type=int, default=40)
    p.add_argument("--pass-k", type=int, default=4)
    p.add_argument("--embedder", default=None,
                   help="get_embedder spec for the graph (default: hashed words, no model)")
    args = p.parse_args(argv)
    if args.quick:
        args.chains, args.pass_k = 4, 2
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        traj = trajectories(args.chains, args.pass_k, tmp)
        graph = graph_build(args.embedder, tmp)

    table = Table(title="QueryGen harness (zero-latency scripted models)")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("chains / kept / LLM calls",
                  f"{traj['chains']} / {traj['kept']} / {traj['llm_calls']}")
    table.add_row("LLM calls per kept trajectory",
                  f"{traj['llm_calls'] / max(traj['kept'], 1):.1f}")
    table.add_row("CPU ms per LLM call", f"{traj['ms_per_llm_call']:.2f}")
    table.add_row("CPU ms per kept trajectory", f"{traj['ms_per_kept']:.1f}")
    table.add_row("wall / CPU s", f"{traj['wall_s']:.2f} / {traj['cpu_s']:.2f}")
    table.add_row(f"graph: {graph['envs']} envs, {graph['tools']} tools, {graph['params']} "
                  f"params ({graph['embedder']})",
                  f"{graph['wall_s']:.2f} s (nodes {graph['nodes_s']:.2f}, embed "
                  f"{graph['embed_s']:.2f}, match {graph['match_s']:.2f})")
    console.print(table)
    payload = {"benchmark": "querygen", "quick": args.quick,
               "ms_per_llm_call": traj["ms_per_llm_call"], "ms_per_kept": traj["ms_per_kept"],
               "graph_build_s": graph["wall_s"], "trajectories": traj, "graph": graph}
    print(json.dumps(payload, separators=(",", ":")))
    return 0 if traj["kept"] == traj["chains"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
