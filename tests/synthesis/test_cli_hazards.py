"""What a new user hits in the synthesis commands (issue 24): no benchmark environment in a
graph or a sampled chain, a run whose chains all failed exits 1, bad input is one line
(exit 2), the contamination check compares every benchmark we report and says which
references it read."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.cli.synth_graph import _registry_sources
from harness.trajectory import Provenance, Trajectory, Turn
from synthesis import contamination as c
from synthesis.graph import NotAGraph, ToolGraph
from synthesis.querygen import Kept, Rejected, preset, synthesize
from synthesis.querygen.run import REJECTIONS, BadRunArgs, RunArgs, allowed_envs, run_queries
from tests.shared_data import (
    MCP_ATLAS_DATA,
    VITABENCH_OFFICIAL,
    needs_mcp_atlas,
    needs_vitabench,
)
from tests.synthesis.graph_builders import Graph
from tests.synthesis.test_querygen_run import SPLITS, _graph, _models

BENCH = "bfcl/VehicleControlAPI"


def _one_line_error(output: str) -> str:
    """The output of a failed command is one `error:` line (rich may wrap it)."""
    text = " ".join(output.split())
    assert text.startswith("error: ") and "Traceback" not in output, output
    assert output.count("error:") == 1, output
    return text


def _graph_with_benchmark(path: Path) -> Path:
    """_graph's email and pharmacy tools plus one BFCL backend tool."""
    g = ToolGraph.load(_graph(path))
    gr = Graph(g.g)
    gr.tool(BENCH, "startEngine")
    gr.input(BENCH, "startEngine", "ignitionMode", user_provided=True)
    return ToolGraph(gr.g).save(path)


# -- 1. no benchmark environment in training data ---------------------------------------


def test_allowed_envs_leave_out_benchmark_environments() -> None:
    graph_envs = ["email", BENCH, "tau2/airline", "weather"]
    assert allowed_envs(graph_envs, SPLITS, "train", None) == ["email", "weather"]
    with pytest.raises(BadRunArgs, match="bfcl/VehicleControlAPI: a benchmark's "
                                         r"environments \(BFCL v3\)") as e:
        allowed_envs(graph_envs, SPLITS, "train", ["email", BENCH])
    assert e.value.option == "--envs"
    with pytest.raises(BadRunArgs, match="besides benchmark environments"):
        allowed_envs([BENCH, "tau2/airline"], SPLITS, "train", None)


def test_querygen_run_manifest_lists_no_benchmark_environment(tmp_path: Path) -> None:
    """A scripted run over a graph holding a BFCL backend: every chain is email's."""
    graph = _graph_with_benchmark(tmp_path / "g.json")
    assert BENCH in ToolGraph.load(graph).environments()
    out = tmp_path / "out"
    summary = asyncio.run(run_queries(
        RunArgs(graph=graph, out=out, n=4, seed=7, max_concurrency=2),
        preset("sft_nonconv", pass_k=2, pipeline="ours"), SPLITS, synthesize, _models()))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["allowed_environments"] == ["email"]
    assert manifest["excluded_benchmark_environments"] == [BENCH]
    assert manifest["environments"] == ["email"]
    assert summary.excluded == [BENCH] and summary.kept == 4
    records = [json.loads(line) for name in ("trajectories.jsonl", REJECTIONS)
               if (out / name).exists() for line in (out / name).read_text().splitlines()]
    assert {e for r in records for e in r["environments"]} == {"email"}


def test_graph_all_leaves_out_benchmark_environments() -> None:
    pytest.importorskip("bfcl_eval")
    console = Console(record=True, width=400)
    sources = _registry_sources(["all"], console)
    assert "calendar" in sources and "email" in sources
    assert not [n for n in sources if n.startswith(("bfcl/", "tau2/"))]
    printed = console.export_text()
    assert "left out" in printed and BENCH in printed


def test_graph_refuses_a_named_benchmark_environment(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["synth", "graph", "--envs", f"calendar,{BENCH}",
                                      "--out-dir", str(tmp_path / "g")])
    assert result.exit_code == 2
    assert "--envs: bfcl/VehicleControlAPI: a benchmark's environments (BFCL v3), never " \
           "training data" in _one_line_error(result.output)
    assert not (tmp_path / "g").exists()


def test_queries_refuses_a_named_benchmark_environment(tmp_path: Path) -> None:
    graph = _graph_with_benchmark(tmp_path / "g.json")
    splits = tmp_path / "splits.json"
    splits.write_text(json.dumps(SPLITS), encoding="utf-8")
    result = CliRunner().invoke(app, [
        "synth", "queries", "--graph", str(graph), "--splits", str(splits), "--n", "1",
        "--out-dir", str(tmp_path / "o"), "--envs", BENCH, "--model", "mockllm/model",
        "--pipeline", "ours"])  # ours: the release pipeline first needs its source files
    assert result.exit_code == 2
    assert "--envs: bfcl/VehicleControlAPI: a benchmark's environments" in \
        _one_line_error(result.output)


# -- 2. a run whose chains all failed exits 1; a partial one says how many --------------


def _cli_queries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep: set[str],
                 out: str = "o") -> Any:
    import synthesis.querygen

    good = asyncio.run(run_queries(  # one real kept trajectory to hand back
        RunArgs(graph=_graph(tmp_path / "good.json"), out=tmp_path / "good", n=1, seed=7),
        preset("sft_nonconv", pass_k=2, pipeline="ours"), SPLITS, synthesize, _models()))
    assert good.kept == 1
    trajectory = Trajectory.model_validate_json(
        (tmp_path / "good" / "trajectories.jsonl").read_text().splitlines()[0])

    async def stand_in(chain: Any, config: Any, *, traj_id: str, models: Any) -> Any:
        if traj_id in keep:
            return Kept(trajectory=trajectory.model_copy(update={"id": traj_id}),
                        accept_rate=1.0)
        return Rejected(reason="no_candidate_passed", detail="scripted", turn=0)

    monkeypatch.setattr(synthesis.querygen, "synthesize", stand_in)
    splits = tmp_path / "splits.json"
    splits.write_text(json.dumps(SPLITS), encoding="utf-8")
    return CliRunner().invoke(app, [
        "synth", "queries", "--graph", str(_graph(tmp_path / "g.json")), "--splits",
        str(splits), "--n", "3", "--out-dir", str(tmp_path / out),
        "--model", "mockllm/model", "--pipeline", "ours"])


def test_queries_all_failed_exits_1_and_keeps_output(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    result = _cli_queries(tmp_path, monkeypatch, keep=set())
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert (f"error: all 3 chains failed (no_candidate_passed 3); the reasons are in "
            f"{tmp_path / 'o' / REJECTIONS}") in text
    assert len((tmp_path / "o" / REJECTIONS).read_text().splitlines()) == 3


def test_queries_partial_failure_exits_0_with_the_count(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _cli_queries(tmp_path, monkeypatch, keep={"qg-0-000001"})
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "1 kept, 2 failed (no_candidate_passed 2)" in text
    assert f"2 of 3 chains failed; reasons in {tmp_path / 'o' / REJECTIONS}" in text


# -- 3. one-line errors -----------------------------------------------------------------


def test_graph_unknown_env_names_it_and_the_known_ones(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["synth", "graph", "--envs", "nosuchenv",
                                      "--out-dir", str(tmp_path / "g")])
    assert result.exit_code == 2
    text = _one_line_error(result.output)
    assert "--envs: unknown environment nosuchenv; known: " in text
    assert "calendar" in text and "bfcl/" not in text and "envfactory env list" in text


def test_graph_bogus_embedder_lists_the_allowed_ones(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["synth", "graph", "--envs", "calendar", "--embedder",
                                      "bogus", "--out-dir", str(tmp_path / "g")])
    assert result.exit_code == 2
    assert ("--embedder: unknown embedder spec 'bogus'; use minilm, bge-m3[:PATH] or "
            "openai:<base_url>#<model>") in _one_line_error(result.output)


def test_graph_keeps_an_existing_graph_without_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "g"
    out.mkdir()
    (out / "graph.json").write_text("refined", encoding="utf-8")
    result = CliRunner().invoke(app, ["synth", "graph", "--envs", "calendar",
                                      "--out-dir", str(out)])
    assert result.exit_code == 2
    assert "pass --overwrite to replace it" in _one_line_error(result.output)
    assert (out / "graph.json").read_text() == "refined"


@pytest.mark.parametrize(("text", "expected"), [
    ('{"nodes": []}\nhello\n', "garbage.jsonl:2: not JSON (Extra data)"),
    ("hello\n", "garbage.jsonl:1: not JSON (Expecting value)"),
    ('[{"nodes": []}]', "garbage.jsonl: JSON without 'nodes' and 'edges' lists"),
])
def test_graph_view_names_file_line_and_what_was_expected(tmp_path: Path, text: str,
                                                          expected: str) -> None:
    bad = tmp_path / "garbage.jsonl"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(NotAGraph, match="expected a tool graph"):
        ToolGraph.load(bad)
    result = CliRunner().invoke(app, ["synth", "graph-view", str(bad),
                                      "--out", str(tmp_path / "v.html")])
    assert result.exit_code == 2
    assert f"GRAPH_FILE: {tmp_path / expected}" in _one_line_error(result.output)
    assert not (tmp_path / "v.html").exists()


def test_envgen_build_refuses_the_oracle_naming_its_roles(tmp_path: Path) -> None:
    description = tmp_path / "Notes_metadata.json"
    description.write_text("{}", encoding="utf-8")
    result = CliRunner().invoke(app, ["envgen", "build", str(description), "--out-dir",
                                      str(tmp_path / "o"), "--model", "envfactory/oracle"])
    assert result.exit_code == 2
    text = _one_line_error(result.output)
    assert "envfactory/oracle cannot play the EnvGen roles coder, tester" in text
    assert "give a model that generates" in text
    assert not (tmp_path / "o").exists()


def test_queries_refuses_a_gold_player_for_one_role(tmp_path: Path) -> None:
    splits = tmp_path / "splits.json"
    splits.write_text(json.dumps(SPLITS), encoding="utf-8")
    result = CliRunner().invoke(app, [
        "synth", "queries", "--graph", str(_graph(tmp_path / "g.json")), "--splits",
        str(splits), "--out-dir", str(tmp_path / "o"), "--model", "mockllm/model",
        "--model-role", "judge=envfactory/oracle"])
    assert result.exit_code == 2
    assert "envfactory/oracle cannot play the QueryGen role judge" in \
        _one_line_error(result.output)


def test_envgen_build_where_every_environment_failed_exits_1(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import synthesis.envgen.pipeline as pipeline

    async def failing(paths: Any, out: Path, models: Any, config: Any,
                      on_event: Any = None) -> list[pipeline.EnvReport]:
        return [pipeline.EnvReport(
            name="notes", source=str(paths[0]), verdict="failed", all_passed=False,
            criteria={}, failing_criteria=["behaviour"], tests_passed=0, tests_failed=2,
            revisions_used=3, revisions=[], tokens={}, registered_as=None, failures=[])]

    monkeypatch.setattr(pipeline, "build", failing)
    description = tmp_path / "Notes_metadata.json"
    description.write_text("{}", encoding="utf-8")
    result = CliRunner().invoke(app, ["envgen", "build", str(description), "--out-dir",
                                      str(tmp_path / "o"), "--model", "mockllm/model"])
    assert result.exit_code == 1
    assert "error: none of the 1 environments passed its tests" in result.output


# -- 4. contamination: every benchmark we report, progress, loaded/missing --------------


def _traj(id: str, user: str, envs: tuple[str, ...] = ("email",)) -> Trajectory:
    return Trajectory(id=id, environments=list(envs), initial_state={},
                      turns=[Turn(user=user)], provenance=Provenance(source="test"))


#: the first 16 words of VitaBench delivery task 10711001's English instructions
VITA_10711001 = ("It's pouring rain outside, and your stomach isn't feeling well today. You "
                 "decide to order some mild rice noodles to your department.")
#: MCP-Atlas sample task 5c6d7e8f9a's prompt (sample_tasks.csv, first row)
ATLAS_5C6D = ("Please check the files on my pc and find the average profit for the first five "
              "weeks at the pet store.")


@needs_vitabench
def test_vitabench_references(use_vitabench_data: Path) -> None:
    prompts, status = c.vitabench_prompts()
    assert status.compared and status.name == "vitabench prompts (delivery, instore)"
    [hit] = c.ngram_pairs(c.user_turns([_traj("v", "Hello. " + VITA_10711001)]), prompts)
    assert (hit.source, hit.prompt_id) == ("vitabench", "delivery/tasks_en.json#10711001")
    apis, api_status = c.vitabench_apis()
    assert api_status.compared
    delivery = next(a for a in apis if a.env == "vitabench/delivery")
    # tests/data/vitabench/official/tools/delivery_en.json, first tool object
    assert delivery.tools[0].name == "delivery_distance_to_time"
    assert delivery.tools[0].params == ["distance"]
    assert (VITABENCH_OFFICIAL / "tools" / "delivery_en.json").is_file()


@needs_mcp_atlas
def test_mcp_atlas_references(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_ATLAS_TASKS", str(MCP_ATLAS_DATA / "sample_tasks.csv"))
    monkeypatch.setenv("MCP_ATLAS_DATA_DIR", str(MCP_ATLAS_DATA))
    prompts, status = c.mcp_atlas_prompts()
    assert status.compared and status.count == 10  # the 10 public sample tasks
    [hit] = c.ngram_pairs(c.user_turns([_traj("m", ATLAS_5C6D)]), prompts)
    assert (hit.source, hit.prompt_id) == ("mcp_atlas", "5c6d7e8f9a")
    apis, api_status = c.mcp_atlas_apis()
    assert api_status.compared and "names only" in (api_status.reason or "")
    filesystem = next(a for a in apis if a.env == "mcp_atlas/filesystem")
    assert "filesystem_read_file" in [t.name for t in filesystem.tools]


def test_mcp_atlas_missing_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.delenv("MCP_ATLAS_TASKS", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    for loader in (c.mcp_atlas_prompts, c.mcp_atlas_apis):
        items, status = loader()
        assert items == [] and not status.compared
        assert "set MCP_ATLAS_TASKS" in (status.reason or "")


def test_benchmark_environment_in_the_data_is_flagged() -> None:
    report = c.check([_traj("a", "start the car", (BENCH,)), _traj("b", "hi")], data=["d"],
                     prompts=[], benchmark_apis=[], sources=[])
    assert report.benchmark_envs == {BENCH: "BFCL v3"}
    assert report.flagged == {"a": ["benchmark_env"]}
    assert BENCH in c.markdown(report)


def test_check_reports_progress_per_stage() -> None:
    class Ones:
        name, threshold = "ones", 0.5

        def embed(self, texts: Any) -> Any:
            import numpy as np

            return np.ones((len(texts), 2), np.float32) / np.sqrt(2)

    seen: list[tuple[str, int, int | None]] = []
    prompts = [c.BenchmarkPrompt(source="tau2", id=f"p{i}", text=f"prompt {i}")
               for i in range(c.EMBED_CHUNK + 1)]
    c.check([_traj("a", "hello")], data=["d"], prompts=prompts, benchmark_apis=[], sources=[],
            embedder=Ones(), on_progress=lambda *a: seen.append(a))
    assert ("13-gram overlap (user turns)", 1, 1) in seen
    assert ("embedding user turns", 1, 1) in seen
    assert [s for s in seen if s[0] == "embedding benchmark texts"] == [
        ("embedding benchmark texts", c.EMBED_CHUNK, c.EMBED_CHUNK + 1),
        ("embedding benchmark texts", c.EMBED_CHUNK + 1, c.EMBED_CHUNK + 1)]


def test_load_references_reads_every_benchmark_we_report(
        monkeypatch: pytest.MonkeyPatch) -> None:
    called: list[str] = []

    def absent(name: str) -> Any:
        def load() -> tuple[list[Any], c.SourceStatus]:
            called.append(name)
            return [], c.SourceStatus(name=name, compared=False, reason="absent")
        return load

    for name in c.LOADERS:
        monkeypatch.setattr(c, name, absent(name))
    progress: list[int] = []
    refs = c.load_references(lambda stage, done, total: progress.append(done))
    assert called == list(c.LOADERS) and progress == list(range(1, len(c.LOADERS) + 1))
    assert {n.split("_")[0] for n in c.LOADERS} == {"bfcl", "tau2", "vitabench", "mcp"}
    assert [s.name for s in refs.sources] == list(c.LOADERS)
