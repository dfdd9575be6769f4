"""QueryGen per chain, offline, with the scripted models of tests/synthesis/querygen_scripted."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path

import anyio
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage, Model

from envs.world import World
from harness.trajectory import write_jsonl
from synthesis.chain import ChainStep, ToolChain
from synthesis.querygen import Kept, Rejected, synthesize
from synthesis.querygen.prompts import parse_tags
from synthesis.task_specs import check
from tasks.envfactory.envfactory import envfactory
from tests.synthesis import querygen_scripted as scripted

CHAIN = ToolChain(seed=7, sampler="topology", steps=[
    ChainStep(env="email", tool="search_messages"), ChainStep(env="email", tool="get_message"),
    ChainStep(env="bank_ledger", tool="find_customer"),
    ChainStep(env="bank_ledger", tool="add_payee")], turns=[[0, 1], [2, 3]])


def run(chain: ToolChain, solver: Model | None = None, states: list[str] | None = None
        ) -> Kept | Rejected:
    config = scripted.ours("sft_nonconv", initial_state="llm" if states else "default")
    roles = {"synth": scripted.synth(states), "solver": solver or scripted.solver()}
    return anyio.run(lambda: synthesize(chain, config, traj_id="qg-1", models=roles))


def test_kept_trajectory_passes_check_and_records_provenance() -> None:
    out = run(CHAIN)
    assert isinstance(out, Kept), out
    t = out.trajectory
    assert t.environments == ["email", "bank_ledger"]
    assert t.initial_state == World(["email", "bank_ledger"]).snapshot()
    assert [t.user for t in t.turns] == [scripted.PLUMBER, scripted.PAYEE]
    assert [[c.qualified_name for c in turn.gold_calls] for turn in t.turns] == [
        ["email-search_messages", "email-get_message"],
        ["bank_ledger-find_customer", "bank_ledger-add_payee"]]
    assert t.turns[1].gold_calls[1].arguments == scripted.PAYEE_ARGS
    payees = t.final_state["bank_ledger"]["payees"]  # type: ignore[index]
    assert any(p["name"] == "Brightline Plumbing LLC" for p in
               (payees.values() if isinstance(payees, dict) else payees))
    assert check(t) == []
    # all 4 candidates agree on both turns: difficulty 4/4
    assert out.accept_rate == 1.0
    p = t.provenance
    assert (p.source, p.split, p.preset, p.seed) == ("querygen", "train", "sft_nonconv", 7)  # type: ignore[attr-defined]
    assert p.chain == CHAIN.model_dump(mode="json")  # type: ignore[attr-defined]
    assert p.turn_accept_rates == [1.0, 1.0]  # type: ignore[attr-defined]


def test_disagreeing_candidates_are_rejected() -> None:
    names = (f"Payee {i}" for i in itertools.count())
    out = run(CHAIN, solver=scripted.solver(lambda: next(names)))
    assert isinstance(out, Rejected)
    assert (out.reason, out.turn) == ("candidates_disagree", 1)


def test_invalid_written_state_is_retried_with_the_error() -> None:
    defaults = World(["email", "bank_ledger"]).snapshot()
    bad = copy.deepcopy(defaults["email"])
    bad["messages"] = "not a list"
    seen: list[list[ChatMessage]] = []
    synth = scripted.synth([json.dumps(bad), json.dumps(defaults["email"]),
                            json.dumps(defaults["bank_ledger"])])
    generate = synth.generate

    async def recording(input: list[ChatMessage], *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        seen.append(list(input))
        return await generate(input, *args, **kwargs)  # type: ignore[arg-type]

    synth.generate = recording  # type: ignore[method-assign,assignment]
    config = scripted.ours("sft_nonconv", initial_state="llm")
    out = anyio.run(lambda: synthesize(CHAIN, config, traj_id="qg-2",
                                       models={"synth": synth, "solver": scripted.solver()}))
    assert isinstance(out, Kept), out
    assert out.trajectory.initial_state == defaults
    retried = [m for m in seen if "starting data" in m[0].text and len(m) == 3]
    assert len(retried) == 1 and "messages" in retried[0][2].text


def test_state_writer_that_never_validates_is_rejected() -> None:
    out = run(CHAIN, states=['{"messages": 1}'] * 3)
    assert isinstance(out, Rejected) and out.reason == "initial_state_invalid"


def test_parse_tags_takes_the_last_and_names_the_missing() -> None:
    assert parse_tags("<a>draft</a> ... <A> final </A>", ["a"]) == {"a": "final"}
    try:
        parse_tags("<a>x</a>", ["a", "b"])
    except ValueError as e:
        assert "<b>" in str(e)
    else:
        raise AssertionError("missing tag not reported")


def test_kept_trajectory_scores_one_with_the_oracle(tmp_path: Path) -> None:
    out = run(CHAIN)
    assert isinstance(out, Kept)
    write_jsonl(tmp_path / "train.jsonl", [out.trajectory])
    write_jsonl(tmp_path / "heldout.jsonl", [])
    (log,) = inspect_eval(envfactory(split="train", data_dir=str(tmp_path)),
                          model="envfactory/oracle", log_dir=str(tmp_path / "logs"),
                          display="none")
    assert log.status == "success", log.error
    (sample,) = log.samples or []
    value = next(iter((sample.scores or {}).values())).value
    assert isinstance(value, dict) and value["reward"] == 1.0


def test_rl_nonconv_masks_what_the_step_filter_names() -> None:
    out = anyio.run(lambda: synthesize(CHAIN, scripted.ours("rl_nonconv"), traj_id="qg-3", models={
        "synth": scripted.synth(), "solver": scripted.solver()}))
    assert isinstance(out, Kept), out
    masks = [[c.masked_arguments for c in t.gold_calls] for t in out.trajectory.turns]
    assert masks == [[["query"], []], [[], []]]


def test_sft_conv_talks_with_the_simulated_user_and_is_judged() -> None:
    out = anyio.run(lambda: synthesize(CHAIN, scripted.ours("sft_conv"), traj_id="qg-4", models={
        "synth": scripted.synth(), "solver": scripted.solver(), "user": scripted.user(),
        "judge": scripted.judge()}))
    assert isinstance(out, Kept), out
    t = out.trajectory
    assert [turn.user for turn in t.turns] == [scripted.PLUMBER, scripted.PAYEE]
    assert t.provenance.patterns == ["implicit_reference"]
    assert check(t) == []


def test_solver_that_skips_the_chain_tools_is_rejected() -> None:
    lazy = scripted.model(lambda input: scripted.output("Done."))
    out = run(CHAIN, solver=lazy)
    assert isinstance(out, Rejected)
    assert (out.reason, out.turn) == ("no_candidate_passed", 0)


def test_synthesize_runs_inside_an_inspect_sample(tmp_path: Path) -> None:
    """The runner may run synthesis as an eval: rollouts then share the sample's context."""
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import Generate, TaskState, solver
    from inspect_ai.util import store

    @solver
    def synth_solver():  # type: ignore[no-untyped-def]
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            store().set("mine", 1)
            out = await synthesize(CHAIN, scripted.ours("sft_nonconv"), traj_id="qg-5", models={
                "synth": scripted.synth(), "solver": scripted.solver()})
            state.metadata["kept"] = isinstance(out, Kept)
            state.metadata["store_kept"] = store().get("mine") == 1 and (
                "EpisodeProgress:messages" not in store())
            return state
        return solve

    (log,) = inspect_eval(Task(dataset=[Sample(input="go")], solver=synth_solver()),
                          model="mockllm/model", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    (sample,) = log.samples or []
    assert sample.metadata["kept"] and sample.metadata["store_kept"]
