"""The `synth queries` runner: deterministic ids, split rules, kept trajectories that pass
`task_specs.check`, and resume after SIGKILL equal to an uninterrupted run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ChatMessage, Model, ModelOutput

from harness.trajectory import Trajectory
from synthesis.graph import ToolGraph
from synthesis.querygen import synthesize
from synthesis.querygen.run import (
    REJECTIONS,
    TRAJECTORIES,
    RunArgs,
    allowed_envs,
    chain_id,
    chain_seed,
    done_ids,
    run_queries,
)
from synthesis.task_specs import check
from testkit.waiting import wait_until
from tests.synthesis.graph_builders import Graph
from tests.synthesis.querygen_scripted import PLUMBER, model, ours, output, solver

SPLITS = {"train": ["email", "bank_ledger"], "heldout": ["pharmacy"]}


def _graph(path: Path) -> Path:
    """email search -> message id -> get_message; and a held-out pharmacy tool."""
    gr = Graph()
    gr.tool("email", "search_messages")
    gr.input("email", "search_messages", "query", user_provided=True)
    found = gr.output("email", "search_messages", "message_id")
    gr.tool("email", "get_message")
    wanted = gr.input("email", "get_message", "message_id", user_provided=False)
    gr.relate(found, wanted)
    gr.depend("email-search_messages", "email-get_message")
    gr.tool("pharmacy", "find_patient")
    gr.input("pharmacy", "find_patient", "query", user_provided=True)
    return ToolGraph(gr.g).save(path)


def _synth() -> Model:
    def respond(input: list[ChatMessage]) -> ModelOutput:
        prompt = input[0].text
        if "Invent the person" in prompt:
            return output("<persona>Priya Nair, a homeowner</persona>"
                          "<scenario>Her plumber sent an invoice she wants to pay.</scenario>")
        if "best solution" in prompt:
            return output("<choice>1</choice>")
        if "email-" in prompt:
            return output(f"<intent>find the invoice</intent><query>{PLUMBER}</query>")
        raise AssertionError(f"unexpected synth prompt: {prompt[:200]}")

    return model(respond)


def _models() -> dict[str, Model]:
    solve = solver()
    return {"synth": _synth(), "solver": solve, "user": solve, "judge": solve}


def _run(out: Path, graph: Path, n: int, **kw: Any) -> Any:
    args = RunArgs(graph=graph, out=out, n=n, seed=7, max_concurrency=3, **kw)
    return asyncio.run(run_queries(args, ours("sft_nonconv", pass_k=2), SPLITS, synthesize,
                                   _models()))


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def test_ids_and_seeds_are_stable() -> None:
    assert chain_id(7, 3) == "qg-7-000003"
    assert chain_seed(7, 3) == chain_seed(7, 3)
    assert len({chain_seed(7, i) for i in range(100)} | {chain_seed(8, 0)}) == 101


def test_heldout_environments_need_the_split() -> None:
    graph_envs = ["bank_ledger", "email", "pharmacy", "weather"]
    # environments in no split count as training ones; held-out ones are left out
    assert allowed_envs(graph_envs, SPLITS, "train", None) == ["bank_ledger", "email", "weather"]
    assert allowed_envs(graph_envs, SPLITS, "heldout", None) == ["pharmacy"]
    assert allowed_envs(graph_envs, SPLITS, "train", ["email"]) == ["email"]
    with pytest.raises(ValueError, match="not in split 'train'"):
        allowed_envs(graph_envs, SPLITS, "train", ["email", "pharmacy"])
    with pytest.raises(ValueError, match="not in the graph"):
        allowed_envs(graph_envs, SPLITS, "train", ["crm"])


def test_twenty_chains_give_checked_trajectories(tmp_path: Path) -> None:
    graph = _graph(tmp_path / "g.json")
    summary = _run(tmp_path / "out", graph, 20)
    trajs = [Trajectory.model_validate_json(line)
             for line in _lines(tmp_path / "out" / TRAJECTORIES)]
    rejections = [json.loads(line) for line in _lines(tmp_path / "out" / REJECTIONS)]
    assert len(trajs) + len(rejections) == 20
    assert summary.kept == len(trajs) > 0
    assert sorted([t.id for t in trajs] + [r["id"] for r in rejections]) == [
        f"qg-7-{i:06d}" for i in range(20)]
    for t in trajs:
        assert check(t) == []
        assert t.environments == ["email"]  # never the held-out pharmacy
        assert t.provenance.split == "train"
        assert t.provenance.model_dump()["seed"] == chain_seed(7, int(t.id.rsplit("-", 1)[1]))
    for r in rejections:
        assert {"id", "seed", "reason", "detail"} <= set(r)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["environments"] == ["email"]
    assert manifest["allowed_environments"] == ["email"]
    assert manifest["preset"] == "sft_nonconv" and manifest["seed"] == 7
    assert set(manifest["models"]) == {"synth", "solver", "user", "judge"}
    assert manifest["kept"] == len(trajs)


def test_torn_last_line_is_dropped_and_done_ids_skipped(tmp_path: Path) -> None:
    graph = _graph(tmp_path / "g.json")
    whole = tmp_path / "whole"
    _run(whole, graph, 4)
    cut = tmp_path / "cut"
    cut.mkdir()
    kept = _lines(whole / TRAJECTORIES)
    (cut / TRAJECTORIES).write_text(kept[0] + "\n" + kept[1][:40], encoding="utf-8")
    assert list(done_ids(cut)) == [json.loads(kept[0])["id"]]
    summary = _run(cut, graph, 4)
    assert summary.skipped == 1
    assert sorted(_lines(cut / TRAJECTORIES)) == sorted(kept)
    assert _lines(cut / REJECTIONS) == _lines(whole / REJECTIONS)


SCRIPT = """
import asyncio, sys
from pathlib import Path
from tests.synthesis import test_querygen_run as t
from synthesis.querygen import preset, synthesize
from synthesis.querygen.run import RunArgs, run_queries

async def slow(chain, config, **kw):
    await asyncio.sleep(0.3)
    return await synthesize(chain, config, **kw)

args = RunArgs(graph=Path(sys.argv[1]), out=Path(sys.argv[2]), n=8, seed=7, max_concurrency=2)
asyncio.run(run_queries(args, t.ours("sft_nonconv", pass_k=2), t.SPLITS, slow, t._models()))
"""


@pytest.mark.slow
def test_resume_after_sigkill_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    graph = _graph(tmp_path / "g.json")
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    _run(whole, graph, 8, max_nodes=10)
    root = Path(__file__).resolve().parents[2]
    cmd = [sys.executable, "-c", SCRIPT, str(graph), str(killed)]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.Popen(cmd, cwd=root, env=env)
    wait_until(lambda: proc.poll() is not None or len(_lines(killed / TRAJECTORIES))
               + len(_lines(killed / REJECTIONS)) >= 2, timeout=60, what="two results written")
    assert proc.poll() is None, "the run ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = len(_lines(killed / TRAJECTORIES)) + len(_lines(killed / REJECTIONS))
    assert 2 <= partial < 8
    subprocess.run(cmd, cwd=root, env=env, check=True)
    for name in (TRAJECTORIES, REJECTIONS):
        got = _lines(killed / name)
        assert len(got) == len(set(got))
        assert got == _lines(whole / name)


def test_cli_records_rejections_and_heldout_only_when_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    import synthesis.querygen
    from envfactory.cli import app
    from synthesis.querygen import Rejected

    seen: list[dict[str, str]] = []

    async def refuse(chain: Any, config: Any, *, traj_id: str, models: Any) -> Rejected:
        seen.append({role: str(m) for role, m in models.items()})
        return Rejected(reason="no_candidate_passed", detail=traj_id, turn=0)

    # the plumbing only (the real synthesize is driven by the tests above)
    monkeypatch.setattr(synthesis.querygen, "synthesize", refuse)

    graph = _graph(tmp_path / "g.json")
    splits = tmp_path / "splits.json"
    splits.write_text(json.dumps(SPLITS), encoding="utf-8")
    base = ["synth", "queries", "--graph", str(graph), "--n", "2", "--splits", str(splits),
            "--model", "mockllm/model", "--model-role", "judge=mockllm/model",
            "--pipeline", "ours"]  # the plumbing; the release pipeline needs its source files
    runner = CliRunner()
    barred = runner.invoke(app, [*base, "--out-dir", str(tmp_path / "no"),
                                       "--envs", "pharmacy"])
    assert barred.exit_code == 2 and "pass --split" in barred.output
    result = runner.invoke(app, [*base, "--out-dir", str(tmp_path / "held"),
                                       "--split", "heldout"])
    # every chain was rejected: a failure, with the files kept
    assert result.exit_code == 1, result.output
    assert f"all 2 chains failed (no_candidate_passed 2); the reasons are in " \
           f"{tmp_path / 'held' / REJECTIONS}" in " ".join(result.output.split())
    rejections = [json.loads(line) for line in _lines(tmp_path / "held" / REJECTIONS)]
    assert [(r["id"], r["detail"]) for r in rejections] == [
        ("qg-0-000000", "qg-0-000000"), ("qg-0-000001", "qg-0-000001")]
    assert [r["environments"] for r in rejections] == [["pharmacy"], ["pharmacy"]]
    assert len(seen) == 2 and set(seen[0]) == {"synth", "solver", "user", "judge"}
    manifest = json.loads((tmp_path / "held" / "manifest.json").read_text())
    assert manifest["split"] == "heldout" and manifest["environments"] == ["pharmacy"]
    assert manifest["rejected"] == {"no_candidate_passed": 2}
    assert manifest["models"] == seen[0]
    # the refinement ablation's switch overrides the preset's (sft_conv refines) and is
    # recorded with the config
    off = runner.invoke(app, [*base, "--out-dir", str(tmp_path / "off"), "--split", "heldout",
                              "--preset", "sft_conv", "--no-refine"])
    assert off.exit_code == 1, off.output  # every chain refused by the stand-in, as above
    config = json.loads((tmp_path / "off" / "manifest.json").read_text())["config"]
    assert (config["preset"], config["refine"]) == ("sft_conv", False)
