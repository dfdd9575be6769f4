"""Sampler statistics over many seeds, on the metadata-file graph or on our pool.

Builds the tool graph with the offline MiniLM embedder, then samples one chain per seed with both
samplers and prints `ChainStats` as JSON lines: first with the graph's labels as built (no
user-provided classification: every label None), then after the orphan-input audit's patch (orphan
required inputs marked user-provided), which is how the release makes orphan tools sampleable.

    python benchmarks/sampler_stats.py meta                  # ../shared/data/envfactory_metadata
    python benchmarks/sampler_stats.py pool --seeds 1000
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from synthesis.chain_stats import chain_stats
from synthesis.embedders import get_embedder
from synthesis.graph import build_graph, specs_from_metadata_dir, specs_from_registry
from synthesis.graph_llm import audit_orphans

METADATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "envfactory_metadata"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", choices=["meta", "pool"])
    parser.add_argument("--seeds", type=int, default=1000, help="one chain per seed 0..N-1")
    parser.add_argument("--max-nodes", type=int, default=10)
    parser.add_argument("--metadata-dir", type=Path, default=METADATA)
    parser.add_argument("--embedder", default="minilm")
    args = parser.parse_args()
    source, seeds, max_nodes = args.source, args.seeds, args.max_nodes
    metadata_dir, embedder = args.metadata_dir, args.embedder
    if source == "meta":
        sources = specs_from_metadata_dir(metadata_dir)
    else:
        from envs.pool import pool_classes

        sources = specs_from_registry(sorted(pool_classes()))
    start = time.perf_counter()
    graph = build_graph(sources, get_embedder(embedder))
    print(json.dumps({"build_s": round(time.perf_counter() - start, 2),
                      **graph.stats().model_dump()}))
    for labels in ("as_built", "orphans_patched"):
        if labels == "orphans_patched":
            print(json.dumps({"orphans_patched": len(audit_orphans(graph, auto_patch=True))}))
        for sampler in ("topology", "random_walk"):
            stats = chain_stats(graph, range(seeds), sampler=sampler, max_nodes=max_nodes)
            print(json.dumps({"labels": labels, **stats.model_dump()}))


if __name__ == "__main__":
    main()
