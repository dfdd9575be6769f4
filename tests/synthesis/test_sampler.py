"""Sampler: hand-checked chains on a tiny graph, the turn split, properties over random graphs."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthesis.chain import ChainStep, ToolChain
from synthesis.chain_stats import chain_stats
from synthesis.graph import ToolGraph
from synthesis.sampler import (
    MAX_ENVIRONMENTS,
    sample_chain,
    split_turns,
    unproducible_required_inputs,
    validate_chain,
)
from tests.synthesis.graph_builders import Graph, random_graph, shop


class _Fixed:
    """A stand-in generator whose ``random()`` returns one fixed value."""

    def __init__(self, value: float) -> None:
        self.value = value

    def random(self) -> float:
        return self.value


@pytest.mark.parametrize("sampler", ["topology", "random_walk"])
@pytest.mark.parametrize("seed", range(20))
def test_shop_chain_is_search_then_buy(seed: int, sampler: str) -> None:
    # buy needs item_id, which only search produces; refund's ticket has no producer and is not
    # user-provided, so refund can never be kept. Whatever the start, the chain is search, buy.
    chain = sample_chain(shop(), seed, sampler=sampler)  # type: ignore[arg-type]
    assert [s.tool for s in chain.steps] == ["search", "buy"]
    assert chain.environments == ["shop"]


def test_validate_chain_names_the_unmet_input() -> None:
    graph = shop()
    assert validate_chain(graph, [ChainStep(env="shop", tool="search"),
                                  ChainStep(env="shop", tool="buy")]) == []
    problems = validate_chain(graph, [ChainStep(env="shop", tool="buy")])
    assert len(problems) == 1 and "'item_id'" in problems[0]
    assert validate_chain(graph, [ChainStep(env="shop", tool="nope")]) == [
        "step 0: unknown tool shop-nope"
    ]


def test_direct_production_by_name_in_the_same_env() -> None:
    # no Parameter_Relate edge: a same-named output of an earlier same-env tool satisfies it,
    # the same name in another environment does not
    gr = Graph()
    for env in ("a", "b"):
        gr.tool(env, "make")
        gr.output(env, "make", "token")
    gr.tool("a", "use")
    gr.input("a", "use", "token", user_provided=False)
    use = ChainStep(env="a", tool="use")
    assert validate_chain(gr, [ChainStep(env="a", tool="make"), use]) == []
    assert validate_chain(gr, [ChainStep(env="b", tool="make"), use]) != []


def test_split_turns_closes_with_probability_n_over_5() -> None:
    # 0.5 closes once n/5 > 0.5, i.e. after 3 tools
    assert split_turns(7, _Fixed(0.5)) == [[0, 1, 2], [3, 4, 5], [6]]  # type: ignore[arg-type]
    # 0.99 never closes early: the cap of 5 does
    assert split_turns(7, _Fixed(0.99)) == [[0, 1, 2, 3, 4], [5, 6]]  # type: ignore[arg-type]
    # 0.0 closes after every tool
    assert split_turns(3, _Fixed(0.0)) == [[0], [1], [2]]  # type: ignore[arg-type]


def test_env_filter_keeps_other_envs_out() -> None:
    graph = random_graph(3)
    for seed in range(30):
        chain = sample_chain(graph, seed, envs=["env1", "env2"])
        assert set(chain.environments) <= {"env1", "env2"}


def test_env_cap_on_a_fully_connected_graph() -> None:
    # every tool depends on every other across 6 envs, all inputs user-provided:
    # without the cap chains would wander into more than 3 environments
    gr = Graph()
    tools = [gr.tool(f"e{e}", f"t{t}") for e in range(6) for t in range(2)]
    for a in tools:
        for b in tools:
            if a != b:
                gr.depend(a, b)
    seen = set()
    for seed in range(50):
        chain = sample_chain(gr, seed, max_nodes=10)
        assert len(chain.environments) <= MAX_ENVIRONMENTS
        seen.add(len(chain.environments))
    assert MAX_ENVIRONMENTS in seen


def test_unsatisfiable_graph_raises() -> None:
    gr = Graph()
    gr.tool("x", "t")
    gr.input("x", "t", "secret", user_provided=None)
    with pytest.raises(ValueError, match="no valid chain"):
        sample_chain(gr, 0)


@settings(max_examples=150, deadline=None)
@given(
    graph_seed=st.integers(0, 10_000),
    seed=st.integers(0, 2**31),
    sampler=st.sampled_from(["topology", "random_walk"]),
    max_nodes=st.integers(1, 15),
)
def test_properties(graph_seed: int, seed: int, sampler: str, max_nodes: int) -> None:
    graph = random_graph(graph_seed)
    try:
        chain = sample_chain(graph, seed, sampler=sampler, max_nodes=max_nodes)  # type: ignore[arg-type]
    except ValueError:
        return  # a random graph may have no tool whose required inputs can all be met
    assert validate_chain(graph, chain.steps) == []
    assert len(chain.environments) <= MAX_ENVIRONMENTS
    assert len({s.qualified for s in chain.steps}) == len(chain.steps)
    again = sample_chain(graph, seed, sampler=sampler, max_nodes=max_nodes)  # type: ignore[arg-type]
    assert again == chain
    assert [i for t in chain.turns for i in t] == list(range(len(chain.steps)))
    assert all(1 <= len(t) <= 5 for t in chain.turns)
    assert ToolChain.model_validate_json(chain.model_dump_json()) == chain


def test_chain_stats_on_the_shop_graph() -> None:
    stats = chain_stats(shop(), range(10))
    # every seed gives search, buy (see above): length 2, one environment, no failures
    assert (stats.chains, stats.failed_seeds) == (10, 0)
    assert (stats.length_min, stats.length_max, stats.length_mean) == (2, 2, 2.0)
    assert stats.envs_per_chain == {1: 10}
    assert stats.cross_env_share == 0.0 and stats.all_valid


def test_unproducible_required_inputs() -> None:
    # refund's ticket: required, not user-provided, nothing outputs it
    assert unproducible_required_inputs(shop()) == ["shop-refund:in:ticket"]


def test_same_chain_from_a_saved_and_loaded_tool_graph(tmp_path: Path) -> None:
    graph = ToolGraph(random_graph(7).g)
    chains = [sample_chain(graph, seed) for seed in range(20)]
    loaded = ToolGraph.load(graph.save(tmp_path / "graph.json"))
    assert [sample_chain(loaded, seed) for seed in range(20)] == chains
