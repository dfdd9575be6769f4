"""Statistics of sampled chains over many seeds: what the sampler produces on a given graph.

Used to report the sampler on the metadata-file graph and on our pool (chain length, environments
per chain, share of cross-environment chains, and that every chain validates).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel

from synthesis.sampler import ChainSampler, HasGraph, SamplerName


class ChainStats(BaseModel):
    """Summary of chains sampled from one graph, one per seed."""

    sampler: str
    max_nodes: int
    chains: int
    failed_seeds: int
    length_mean: float
    length_min: int
    length_max: int
    turns_mean: float
    envs_per_chain: dict[int, int]
    cross_env_share: float
    all_valid: bool


def chain_stats(
    graph: HasGraph,
    seeds: Iterable[int],
    sampler: SamplerName = "topology",
    max_nodes: int = 10,
    envs: Iterable[str] | None = None,
) -> ChainStats:
    """One chain per seed, summarised; seeds with no valid chain are counted, not hidden."""
    chains = ChainSampler(graph, None if envs is None else sorted(envs))
    lengths: list[int] = []
    turns: list[int] = []
    env_counts: Counter[int] = Counter()
    failed = 0
    valid = True
    for seed in seeds:
        try:
            chain = chains.sample(seed, sampler=sampler, max_nodes=max_nodes)
        except ValueError:
            failed += 1
            continue
        lengths.append(len(chain.steps))
        turns.append(len(chain.turns))
        env_counts[len(chain.environments)] += 1
        valid = valid and not chains.validate(chain.steps)
    n = len(lengths)
    return ChainStats(
        sampler=sampler,
        max_nodes=max_nodes,
        chains=n,
        failed_seeds=failed,
        length_mean=sum(lengths) / n if n else 0.0,
        length_min=min(lengths, default=0),
        length_max=max(lengths, default=0),
        turns_mean=sum(turns) / n if n else 0.0,
        envs_per_chain=dict(sorted(env_counts.items())),
        cross_env_share=sum(c for k, c in env_counts.items() if k > 1) / n if n else 0.0,
        all_valid=valid and n > 0,
    )
