"""QueryGen on a release environment: `synth queries`' runner over a tool graph built from
the release's Airline server (`release/Airline@scenario_002`: eff3b22's `envs/tools/
Airline.py` with its checkpoint's second scenario), with scripted models.

The graph comes from the executable server through the registry (`specs_from_registry`),
cut to two tools so the scripted models can answer every sampled chain: reading a
reservation and cancelling it. Chains start from the scenario (the world's own starting
state), the solver's calls run on the release's code, and the expected states and answers
come from that code run directly (the server file imported as a plain module, its `api`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ChatMessage, ChatMessageUser, Model, ModelOutput
from inspect_ai.tool import ToolCall

from envs.names import qualify
from harness.trajectory import Trajectory
from synthesis.graph import build_graph, specs_from_registry
from synthesis.querygen import preset, synthesize
from synthesis.querygen.run import REJECTIONS, TRAJECTORIES, RunArgs, run_queries
from synthesis.task_specs import check
from tests.shared_data import ENVFACTORY_RELEASE as RELEASE
from tests.shared_data import release_api
from tests.synthesis.querygen_scripted import judge, model, output, user
from tests.synthesis.test_graph_release import NameEmbedder

SERVER = RELEASE / "envs" / "tools" / "Airline.py"
ENV = "release/Airline@scenario_002"
READ, CANCEL = qualify(ENV, "get_reservation_details"), qualify(ENV, "cancel_reservation")
RESERVATION = "RES_001"  # scenario_002's one reservation

pytestmark = pytest.mark.skipif(not SERVER.is_file(),
                                reason=f"no EnvFactory release copy at {RELEASE}")


def plain(state: Any) -> dict[str, Any]:
    return dict(json.loads(json.dumps(state)))


def synth() -> Model:
    """Planner, query writer (the query names the operations its prompt asks for, which
    the scripted solver reads back) and selector."""

    def respond(input: list[ChatMessage]) -> ModelOutput:
        prompt = input[0].text
        if "Invent the person" in prompt:
            return output("<persona>Sarah Johnson, a frequent flyer</persona>"
                          "<scenario>Her plans changed; she checks and cancels a trip.</scenario>")
        if "best solution" in prompt:
            return output("<choice>1</choice>")
        wanted = prompt.partition("exactly these operations")[2] or prompt
        ops = sorted((t for t in (READ, CANCEL) if t in wanted), key=wanted.index)
        assert ops, f"unexpected synth prompt: {prompt[:300]}"
        return output(f"<intent>handle the trip</intent><query>About reservation "
                      f"{RESERVATION}, please: {', '.join(ops)}.</query>")

    return model(respond)


def solver() -> Model:
    """Calls the operations the query names, in order, on the reservation; then answers."""
    ids = itertools.count()

    def respond(input: list[ChatMessage]) -> ModelOutput:
        last = max(i for i, m in enumerate(input) if isinstance(m, ChatMessageUser))
        query, step = input[last].text, sum(m.role == "assistant" for m in input[last:])
        plan = re.findall("|".join(map(re.escape, (READ, CANCEL))), query)
        if step < len(plan):
            return output(calls=[ToolCall(id=f"t{next(ids)}", function=plan[step],
                                          arguments={"reservation_id": RESERVATION})])
        return output("Done.")

    return model(respond)


def graph_file(tmp_path: Path) -> Path:
    full = build_graph(specs_from_registry([ENV]), NameEmbedder())
    cut = full.subgraph([READ, CANCEL])
    assert cut.successors(READ) == [CANCEL]  # reservation_id out -> reservation_id in
    # what `graph-refine`'s label pass decides: the user can say the reservation id (its
    # own words); cancel's id then comes from the read's output
    for param in cut.inputs(READ):
        cut.g.nodes[param]["user_provided"] = True
    return cut.save(tmp_path / "graph.json")


def test_querygen_on_a_release_environment_keeps_checked_trajectories(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVFACTORY_RELEASE_DIR", str(RELEASE))
    out = tmp_path / "out"
    args = RunArgs(graph=graph_file(tmp_path), out=out, n=4, seed=3, max_concurrency=2)
    models = {"synth": synth(), "solver": solver(), "user": user(), "judge": judge()}
    # our pipeline's prompts, which these scripted models answer (the release's prompts
    # are the default, `pipeline="release"`)
    config = preset("sft_nonconv", pass_k=2, pipeline="ours")
    summary = asyncio.run(run_queries(args, config,
                                      {"train": [], "heldout": []}, synthesize, models))
    lines = (out / TRAJECTORIES).read_text(encoding="utf-8").splitlines()
    kept = [Trajectory.model_validate_json(line) for line in lines]
    rejected = ((out / REJECTIONS).read_text(encoding="utf-8").splitlines()
                if (out / REJECTIONS).exists() else [])
    assert summary.kept == len(kept) == 4 and rejected == []

    start = plain(release_api("Airline", "scenario_002").save_scenario())
    for t in kept:
        assert check(t) == [], t.id
        assert t.environments == [ENV]
        assert t.initial_state == {ENV: start}  # the chain starts from the scenario
        # the gold's final state is what the release's own code makes of the gold calls
        api = release_api("Airline", "scenario_002")
        for call in t.gold_calls():
            assert call.env == ENV and call.arguments == {"reservation_id": RESERVATION}
            getattr(api, call.name)(**call.arguments)
        assert t.final_state == {ENV: plain(api.save_scenario())}
        names = [c.qualified_name for c in t.gold_calls()]
        assert set(names) <= {READ, CANCEL}
    assert any(CANCEL in [c.qualified_name for c in t.gold_calls()] for t in kept)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["allowed_environments"] == [ENV]
