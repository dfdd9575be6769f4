"""Checkpoint auto-scoring (training/autoscore/, `envfactory score run|watch`).

The command lines are checked field by field as pure functions; the end-to-end runs go
through real `inspect eval-set` subprocesses against the recording OpenAI-compatible
server (testkit/recording_server.py) answering "I cannot help.", so they need no model
and no network. The real SmolLM2 run is marked slow.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from inspect_ai._util.config import parse_cli_args
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log
from typer.testing import CliRunner

from envfactory.cli import app
from envs.hashing import file_sha256
from testkit.recording_server import Api, RecordingServer, Reply
from training import autoscore
from training.autoscore import (
    DEFAULT_LIMITS,
    REPO_ROOT,
    SCORED_FILE,
    SUITES,
    NotAModelDir,
    ScoredState,
    ScoreError,
    ScoreResult,
    SuiteTask,
    TaskScore,
    checkpoint_complete,
    checkpoint_hf_target,
    checkpoint_label,
    eval_set_argv,
    find_checkpoints,
    hf_target,
    inspect_checkpoint,
    needs_merge,
    provenance_metadata,
    resolve_provenance,
    results_dir,
    score_checkpoint,
    url_target,
    vllm_command,
)
from training.provenance import (
    PROVENANCE_FILE,
    CheckpointProvenance,
    base_model_id,
    read_provenance,
    write_provenance,
)

PROV = CheckpointProvenance(
    run_id="sft-run1", method="sft", base_model="HuggingFaceTB/SmolLM2-135M-Instruct", step=10,
    data={"data/sft/train.json": "ab" * 32, "data/sft/val.json": "cd" * 32},
    config_sha256="ef" * 32, created="2026-01-02T03:04:05+00:00")


def model_dir(path: Path, *, lora_base: str | None = None) -> Path:
    """A directory that looks like a saved model (or LoRA adapter); weights are empty."""
    path.mkdir(parents=True, exist_ok=True)
    if lora_base is None:
        (path / "config.json").write_text('{"model_type": "llama"}')
        (path / "model.safetensors").write_bytes(b"")
    else:
        (path / "adapter_config.json").write_text(
            json.dumps({"base_model_name_or_path": lora_base, "peft_type": "LORA"}))
        (path / "adapter_model.safetensors").write_bytes(b"")
    return path


def options(argv: list[str], flag: str) -> list[str]:
    """Every value given to `flag` in argv."""
    return [argv[i + 1] for i, arg in enumerate(argv) if arg == flag]


# --- provenance ------------------------------------------------------------------------


def test_provenance_round_trips_and_a_plain_dir_has_none(tmp_path: Path) -> None:
    assert read_provenance(tmp_path) is None
    path = write_provenance(tmp_path, PROV)
    assert path == tmp_path / PROVENANCE_FILE == tmp_path / "envfactory_provenance.json"
    assert read_provenance(tmp_path) == PROV
    assert [p.name for p in tmp_path.iterdir()] == [PROVENANCE_FILE]  # no temp file left
    path.write_text('{"run_id": "x"}')
    with pytest.raises(ValueError, match="envfactory_provenance.json: not a valid"):
        read_provenance(tmp_path)
    with pytest.raises(FileNotFoundError, match="not a directory"):
        write_provenance(tmp_path / "missing", PROV)


def test_provenance_defaults_and_file_hash(tmp_path: Path) -> None:
    prov = CheckpointProvenance(run_id="r", method="grpo", base_model="b")
    assert (prov.step, prov.data, prov.config_sha256) == (None, {}, None)
    assert prov.created.endswith("+00:00")
    (tmp_path / "f").write_bytes(b"abc")
    assert file_sha256(tmp_path / "f") == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")


def test_a_base_model_is_named_as_score_names_it_scored_alone(tmp_path: Path) -> None:
    """A run's base model (a local directory) and that directory scored without provenance
    carry the same `base_model`, so the leaderboard can pair them."""
    local = model_dir(tmp_path / "models" / "smollm2-135m-instruct")
    assert base_model_id("smollm2", str(local)) == "smollm2-135m-instruct"
    assert resolve_provenance(inspect_checkpoint(local)).base_model == "smollm2-135m-instruct"
    assert base_model_id("Qwen/Qwen3-8B", "Qwen/Qwen3-8B") == "Qwen/Qwen3-8B"  # a Hub id


def test_resolve_provenance_own_then_run_then_base(tmp_path: Path) -> None:
    run = tmp_path / "run"
    ckpt = model_dir(run / "checkpoint-20")
    info = inspect_checkpoint(ckpt)
    base = resolve_provenance(info)
    assert (base.method, base.run_id, base.base_model, base.step) == (
        "base", "checkpoint-20", "checkpoint-20", 20)
    assert resolve_provenance(info, run).run_id == "run"  # watched: grouped by the run
    write_provenance(run, PROV)
    inherited = resolve_provenance(info, run)
    assert inherited == PROV.model_copy(update={"step": 20})
    own = PROV.model_copy(update={"step": 21, "run_id": "own"})
    write_provenance(ckpt, own)
    assert resolve_provenance(info, run) == own
    lora = inspect_checkpoint(model_dir(tmp_path / "adapter", lora_base="/models/base"))
    assert resolve_provenance(lora).base_model == "/models/base"


# --- checkpoint directories -------------------------------------------------------------


def test_inspect_checkpoint_kinds_and_errors(tmp_path: Path) -> None:
    full = inspect_checkpoint(model_dir(tmp_path / "full"))
    assert (full.kind, full.base_model) == ("model", None)
    lora = inspect_checkpoint(model_dir(tmp_path / "lora", lora_base="/m/base"))
    assert (lora.kind, lora.base_model) == ("lora", "/m/base")
    with pytest.raises(NotAModelDir, match=f"{tmp_path / 'nope'}: no such directory"):
        inspect_checkpoint(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(NotAModelDir, match=f"{tmp_path / 'empty'}: not a model directory"):
        inspect_checkpoint(tmp_path / "empty")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "adapter_config.json").write_text("{}")
    with pytest.raises(NotAModelDir, match="no base_model_name_or_path"):
        inspect_checkpoint(tmp_path / "bad")


def test_checkpoint_complete(tmp_path: Path) -> None:
    assert checkpoint_complete(model_dir(tmp_path / "checkpoint-1"))
    assert checkpoint_complete(model_dir(tmp_path / "checkpoint-2", lora_base="/b"))
    config_only = tmp_path / "checkpoint-3"
    config_only.mkdir()
    (config_only / "config.json").write_text("{}")
    assert not checkpoint_complete(config_only)  # weights not written yet
    writing = model_dir(tmp_path / "checkpoint-4")
    (writing / "optimizer.pt.tmp").write_bytes(b"")
    assert not checkpoint_complete(writing)
    assert not checkpoint_complete(model_dir(tmp_path / "checkpoint-5.tmp"))
    sharded = tmp_path / "checkpoint-6"
    sharded.mkdir()
    (sharded / "config.json").write_text("{}")
    (sharded / "model.safetensors.index.json").write_text(json.dumps(
        {"weight_map": {"a": "model-00001-of-00002.safetensors",
                        "b": "model-00002-of-00002.safetensors"}}))
    (sharded / "model-00001-of-00002.safetensors").write_bytes(b"")
    assert not checkpoint_complete(sharded)
    (sharded / "model-00002-of-00002.safetensors").write_bytes(b"")
    assert checkpoint_complete(sharded)
    assert [p.name for p in find_checkpoints(tmp_path)] == [
        "checkpoint-1", "checkpoint-2", "checkpoint-6"]


def test_verl_steps_and_a_merged_model_are_checkpoints_too(tmp_path: Path) -> None:
    run = tmp_path / "run"
    model_dir(run / "global_step_20" / "actor" / "huggingface")
    model_dir(run / "global_step_4" / "actor" / "huggingface")
    (run / "global_step_8" / "actor").mkdir(parents=True)  # FSDP shards only, no hf_model
    model_dir(run / "checkpoint-10")
    merged = model_dir(run / "merged")
    found = find_checkpoints(run)
    assert [checkpoint_label(p) for p in found] == [
        "global_step_4", "checkpoint-10", "global_step_20"]  # merged: not stamped yet
    write_provenance(merged, PROV)
    assert [checkpoint_label(p) for p in find_checkpoints(run)][-1] == "merged"
    # a verl step takes the run's provenance and its step from the step directory's name
    write_provenance(run, PROV.model_copy(update={"run_id": "grpo-a", "step": None}))
    info = inspect_checkpoint(found[0])
    prov = resolve_provenance(info, run)
    assert (prov.run_id, prov.step) == ("grpo-a", 4)
    assert results_dir(tmp_path / "s", prov, found[0], 5) == (
        tmp_path / "s" / "grpo-a" / "global_step_4" / "limit-5")


def test_lora_checkpoints_need_a_merged_model_unless_hf_can_load_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info = inspect_checkpoint(model_dir(tmp_path / "lora", lora_base="/m/base"))
    full = inspect_checkpoint(model_dir(tmp_path / "full"))
    monkeypatch.setattr(autoscore.serving, "peft_available", lambda: False)
    reason = needs_merge(info, "hf")
    assert reason is not None and "needs a merged model" in reason and str(info.path) in reason
    assert needs_merge(full, "hf") is None and needs_merge(full, "vllm") is None
    assert needs_merge(info, "http://127.0.0.1:1/v1") is None  # the server's business
    vllm_reason = needs_merge(info, "vllm")
    assert vllm_reason is not None and "--enable-lora" in vllm_reason
    monkeypatch.setattr(autoscore.serving, "peft_available", lambda: True)
    assert needs_merge(info, "hf") is None
    # transformers loads the adapter dir itself; the tokenizer comes from the base model
    target = checkpoint_hf_target(info)
    assert target.model_args == {"model_path": str(info.path), "device": "cpu",
                                 "do_sample": False, "tokenizer_path": "/m/base"}
    (info.path / "tokenizer_config.json").write_text("{}")
    assert "tokenizer_path" not in checkpoint_hf_target(info).model_args


def test_a_lora_checkpoint_is_recorded_as_needing_a_merge(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(autoscore.serving, "peft_available", lambda: False)
    said: list[str] = []
    results: list[Any] = []
    result = score_checkpoint(model_dir(tmp_path / "lora", lora_base="/m/base"),
                              log_root=tmp_path / "scores", say=said.append,
                              on_result=results.append)
    assert result.status == "needs_merged_model" and "needs a merged model" in result.message
    assert not (tmp_path / "scores").exists()
    assert said == [f"skipped {result.message}"] and results == []  # nothing was scored


# --- the eval-set command line --------------------------------------------------------


def test_suites_name_existing_task_files_and_functions() -> None:
    assert [t.task for t in SUITES["quick"]] == [
        "tasks/envfactory/envfactory.py@envfactory",
        "tasks/bfcl_multiturn/bfcl_multiturn.py@bfcl_multiturn"]
    assert [t.task for t in SUITES["full"]] == [
        "tasks/envfactory/envfactory.py@envfactory",
        "tasks/bfcl_multiturn/bfcl_multiturn.py@bfcl_multiturn",
        "tasks/bfcl_singleturn/bfcl_singleturn.py@bfcl_singleturn",
        "tasks/tau2/tau2.py@tau2_airline", "tasks/tau2/tau2.py@tau2_retail",
        "tasks/tau2/tau2.py@tau2_telecom"]
    assert [(t.task, t.args, t.max_samples) for t in SUITES["demo"]] == [
        ("tasks/envfactory/envfactory.py@envfactory",
         {"split": "heldout", "turns": "first", "max_turn_steps": 1}, 40)]
    # the paper's table: every benchmark, BFCL stratified by category, MCP-Atlas on what
    # can run here; user and judge required
    assert [(t.task, t.args, t.stratify) for t in SUITES["paper"]] == [
        ("tasks/bfcl_multiturn/bfcl_multiturn.py@bfcl_multiturn", {}, "category"),
        ("tasks/bfcl_singleturn/bfcl_singleturn.py@bfcl_singleturn", {}, "category"),
        ("tasks/tau2/tau2.py@tau2_airline", {}, None),
        ("tasks/tau2/tau2.py@tau2_retail", {}, None),
        ("tasks/tau2/tau2.py@tau2_telecom", {}, None),
        ("tasks/vitabench/vitabench.py@vitabench_delivery", {}, None),
        ("tasks/vitabench/vitabench.py@vitabench_instore", {}, None),
        ("tasks/vitabench/vitabench.py@vitabench_ota", {}, None),
        ("tasks/mcp_atlas/mcp_atlas.py@mcp_atlas", {"subset": "available"}, None)]
    assert autoscore.SUITE_ROLES == {"paper": ("user", "judge")}
    assert SUITES["quick"][0].args == {"split": "heldout"}
    assert DEFAULT_LIMITS == {"quick": 5, "full": None, "demo": 24, "paper": None}
    for task in (*SUITES["full"], *SUITES["demo"], *SUITES["paper"]):
        file, name = task.task.split("@")
        source = (REPO_ROOT / file).read_text(encoding="utf-8")
        assert f"@task\ndef {name}(" in source, task.task
        for option in task.args:
            assert f" {option}: " in source or f"({option}: " in source  # a parameter


def test_hf_argv_field_by_field() -> None:
    ckpt = Path("/ckpts/sft-run1/checkpoint-10")
    argv = eval_set_argv(SUITES["quick"][0], hf_target(ckpt), Path("/s/sft-run1/c/limit-5"),
                         limit=5, max_tokens=64, metadata=provenance_metadata(PROV, ckpt),
                         inspect=["inspect"])
    assert argv[:9] == ["inspect", "eval-set", "tasks/envfactory/envfactory.py@envfactory",
                        "--log-dir", "/s/sft-run1/c/limit-5", "--log-dir-allow-dirty",
                        "--display", "plain", "--model"]
    assert options(argv, "--model") == ["hf/local"]
    assert options(argv, "--model-base-url") == []
    assert options(argv, "-M") == ["model_path=/ckpts/sft-run1/checkpoint-10", "device=cpu",
                                   "do_sample=false"]
    assert options(argv, "-T") == ["split=heldout"]
    assert options(argv, "--limit") == ["5"]
    assert options(argv, "--max-tokens") == ["64"]
    assert "--temperature" not in argv  # crashes hf; do_sample=false is greedy
    assert parse_cli_args(options(argv, "--metadata")) == {
        "envfactory_run_id": "sft-run1", "envfactory_method": "sft",
        "envfactory_base_model": "HuggingFaceTB/SmolLM2-135M-Instruct",
        "envfactory_step": 10, "envfactory_config_sha256": "ef" * 32,
        "envfactory_data": PROV.data, "envfactory_created": "2026-01-02T03:04:05+00:00",
        "envfactory_checkpoint": "/ckpts/sft-run1/checkpoint-10"}
    assert parse_cli_args(options(argv, "-M")) == {
        "model_path": "/ckpts/sft-run1/checkpoint-10", "device": "cpu", "do_sample": False}


def test_url_argv_field_by_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ENVFACTORY_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    target = url_target("http://10.0.0.5:8000/v1", "sft-run1/checkpoint-10")
    assert target.env == {"ENVFACTORY_API_KEY": "unused"}
    ckpt = Path("/ckpts/checkpoint-10")
    for task in SUITES["full"]:
        argv = eval_set_argv(task, target, Path("/s"), limit=None, max_tokens=None,
                             metadata=provenance_metadata(PROV, ckpt), extra_args=["--x", "1"],
                             inspect=["inspect"])
        assert argv[:3] == ["inspect", "eval-set", task.task]
        assert options(argv, "--model") == ["openai-api/envfactory/sft-run1/checkpoint-10"]
        assert options(argv, "--model-base-url") == ["http://10.0.0.5:8000/v1"]
        assert options(argv, "-M") == []  # openai-api speaks Chat Completions by default
        assert options(argv, "-T") == [f"{k}={v}" for k, v in task.args.items()]
        assert options(argv, "--limit") == [] and options(argv, "--max-tokens") == []
        assert len(options(argv, "--metadata")) == 8
        assert argv[-2:] == ["--x", "1"]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real")
    assert url_target("http://h/v1", "m").env == {"ENVFACTORY_API_KEY": "sk-real"}


def test_awkward_values_reach_inspect_unchanged() -> None:
    prov = CheckpointProvenance(run_id="on", method="base", base_model="1e5", step=None,
                                data={"a,b.json": "x", "é.json": "null"},
                                config_sha256="0123", created="2026-01-02")
    ckpt = Path("/m/yes")
    argv = eval_set_argv(SuiteTask(task="t.py@t"), hf_target(ckpt), Path("/s"), limit=1,
                         metadata=provenance_metadata(prov, ckpt), inspect=["inspect"])
    assert parse_cli_args(options(argv, "--metadata")) == provenance_metadata(prov, ckpt)
    assert parse_cli_args(options(argv, "-M"))["model_path"] == "/m/yes"
    with pytest.raises(ScoreError, match="contains a comma"):
        eval_set_argv(SuiteTask(task="t.py@t"), hf_target(Path("/m/a,b")), Path("/s"),
                      limit=1, inspect=["inspect"])


def test_results_dir_layout(tmp_path: Path) -> None:
    ckpt = Path("/c/checkpoint-10")
    assert results_dir(tmp_path, PROV, ckpt, 5) == tmp_path / "sft-run1/checkpoint-10/limit-5"
    assert results_dir(tmp_path, PROV, ckpt, None) == tmp_path / "sft-run1/checkpoint-10/all"
    with pytest.raises(ScoreError, match="run id"):
        results_dir(tmp_path, PROV.model_copy(update={"run_id": "a/b"}), ckpt, 5)


# --- end to end against the recording server --------------------------------------------


def cannot_help(api: Api, body: Mapping[str, Any]) -> Reply:
    return Reply(content="I cannot help.")


@pytest.fixture(scope="module")
def server() -> Iterator[RecordingServer]:
    with RecordingServer(cannot_help) as running:
        yield running


def headers(directory: Path) -> list[EvalLog]:
    return [read_eval_log(info, header_only=True)
            for info in list_eval_logs(str(directory), recursive=False)]


def log_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.eval"))


def test_score_run_against_a_server_writes_provenance_and_resumes(
        tmp_path: Path, server: RecordingServer) -> None:
    ckpt = model_dir(tmp_path / "ckpts" / "checkpoint-10")
    write_provenance(ckpt, PROV)
    command = ["score", "run", str(ckpt), "--serve", server.url, "--limit", "1",
               "--log-dir", str(tmp_path / "scores"), "--json"]
    before = len(server.requests)
    first = CliRunner().invoke(app, command)
    assert first.exit_code == 0, first.output
    result = json.loads(first.stdout)
    expected_dir = tmp_path / "scores" / "sft-run1" / "checkpoint-10" / "limit-1"
    assert result["status"] == "scored" and result["log_dir"] == str(expected_dir)
    assert [t["status"] for t in result["tasks"]] == ["success", "success"]
    assert result["tasks"][1]["headline"] == {"overall": 0.0}
    logs = headers(expected_dir)
    assert sorted(log.eval.task for log in logs) == ["bfcl_multiturn", "envfactory"]
    for log in logs:
        assert log.status == "success" and log.eval.config.limit == 1
        assert log.eval.model == "openai-api/envfactory/scripted"  # the server's one model
        meta = log.eval.metadata or {}
        assert {k: v for k, v in meta.items() if k.startswith("envfactory_")} == {
            "envfactory_run_id": "sft-run1", "envfactory_method": "sft",
            "envfactory_base_model": PROV.base_model, "envfactory_step": 10,
            "envfactory_config_sha256": PROV.config_sha256, "envfactory_data": PROV.data,
            "envfactory_created": PROV.created, "envfactory_checkpoint": str(ckpt.resolve())}
    requests = server.requests[before:]
    assert requests and {r.path for r in requests} == {"/v1/chat/completions"}
    files = log_files(tmp_path / "scores")
    assert len(files) == 2

    # the same command again: eval-set finds both tasks finished and runs nothing
    asked = len(server.requests)
    again = CliRunner().invoke(app, command)
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["status"] == "scored"
    assert log_files(tmp_path / "scores") == files
    assert len(server.requests) == asked


def test_score_run_on_a_dir_that_is_not_a_model(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    result = CliRunner().invoke(app, ["score", "run", str(tmp_path / "notes")])
    assert result.exit_code == 1
    assert f"{tmp_path / 'notes'}: not a model directory" in " ".join(result.output.split())


def test_score_run_refuses_a_broken_provenance_file(tmp_path: Path) -> None:
    ckpt = model_dir(tmp_path / "m")
    (ckpt / PROVENANCE_FILE).write_text('{"method": "sft"}')
    result = CliRunner().invoke(app, ["score", "run", str(ckpt)])
    assert result.exit_code == 1
    assert f"{ckpt / PROVENANCE_FILE}: not a valid provenance record" in " ".join(
        result.output.split())


def test_score_run_bad_serve_and_suite(tmp_path: Path) -> None:
    ckpt = model_dir(tmp_path / "m")
    bad_serve = CliRunner().invoke(app, ["score", "run", str(ckpt), "--serve", "ollama"])
    assert bad_serve.exit_code == 1
    assert "use hf, vllm, inspect or an http(s)" in " ".join(bad_serve.output.split())
    bad_suite = CliRunner().invoke(app, ["score", "run", str(ckpt), "--suite", "huge"])
    assert bad_suite.exit_code == 2
    assert "use one of quick, full" in " ".join(bad_suite.output.split())


@pytest.fixture
def envfactory_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The quick suite cut to its first task, for tests about checkpoints, not tasks."""
    monkeypatch.setitem(SUITES, "quick", SUITES["quick"][:1])


def test_watch_once_scores_each_complete_checkpoint_once(
        tmp_path: Path, server: RecordingServer, envfactory_only: None) -> None:
    run = tmp_path / "run"
    run.mkdir()
    write_provenance(run, PROV.model_copy(update={"run_id": "sft-run2", "step": None}))
    model_dir(run / "checkpoint-5")
    model_dir(run / "checkpoint-10")
    (run / "checkpoint-15").mkdir()  # being written: config, no weights yet
    (run / "checkpoint-15" / "config.json").write_text("{}")
    command = ["score", "watch", str(run), "--once", "--serve", server.url, "--limit", "1",
               "--log-dir", str(tmp_path / "scores")]
    first = CliRunner().invoke(app, command)
    assert first.exit_code == 0, first.output
    assert "2 checkpoint(s) handled" in first.output
    state = ScoredState.load(run)
    assert sorted(state.checkpoints) == ["checkpoint-10", "checkpoint-5"]
    for name, step in (("checkpoint-5", 5), ("checkpoint-10", 10)):
        entry = state.checkpoints[name]["quick/limit-1"]
        assert entry.status == "scored" and entry.attempts == 1
        assert entry.log_dir == str(tmp_path / "scores" / "sft-run2" / name / "limit-1")
        [log] = headers(Path(entry.log_dir))
        meta = log.eval.metadata or {}
        assert (meta["envfactory_run_id"], meta["envfactory_step"]) == ("sft-run2", step)
    assert json.loads((run / SCORED_FILE).read_text())["checkpoints"].keys() == {
        "checkpoint-5", "checkpoint-10"}
    files = log_files(tmp_path / "scores")
    assert len(files) == 2

    asked = len(server.requests)
    second = CliRunner().invoke(app, command)
    assert second.exit_code == 0, second.output
    assert "0 checkpoint(s) handled: nothing new" in second.output
    assert log_files(tmp_path / "scores") == files and len(server.requests) == asked


def test_watch_records_a_failure_and_retries_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    model_dir(run / "checkpoint-1")
    calls: list[Path] = []

    def fail(checkpoint: Path, **kwargs: Any) -> Any:
        calls.append(checkpoint)
        raise ScoreError(f"{checkpoint}: server down")

    monkeypatch.setattr(autoscore.watching, "score_checkpoint", fail)
    said: list[str] = []
    for attempt in (1, 2, 3, 3):
        results = autoscore.watch(run, once=True, say=said.append)
        entry = ScoredState.load(run).checkpoints["checkpoint-1"]["quick/limit-5"]
        assert (entry.status, entry.attempts) == ("failed", attempt)
        assert "server down" in entry.message
    assert len(calls) == 3 and results == []  # given up after MAX_ATTEMPTS
    assert said == [f"{run / 'checkpoint-1'}: server down"] * 3  # one line per failure


FAKE_VLLM = """\
import os, sys, time
sys.path.insert(0, {root!r})
from testkit.recording_server import RecordingServer, Reply
args = sys.argv[1:]
assert args[0] == "serve", args
port = int(args[args.index("--port") + 1])
with open({record!r}, "w") as f:
    f.write(str(os.getpid()) + "\\n" + " ".join(args))
server = RecordingServer(lambda api, body: Reply(content="I cannot help."), port=port)
print("fake vllm ready", flush=True)
server._httpd.serve_forever()
"""


def test_serve_vllm_starts_the_server_runs_and_stops_it(
        tmp_path: Path, envfactory_only: None) -> None:
    script = tmp_path / "fake_vllm.py"
    record = tmp_path / "vllm.txt"
    script.write_text(FAKE_VLLM.format(root=str(REPO_ROOT), record=str(record)))
    ckpt = model_dir(tmp_path / "ckpts" / "checkpoint-3")
    write_provenance(ckpt, PROV.model_copy(update={"step": 3}))
    result = score_checkpoint(ckpt, serve="vllm", limit=1, log_root=tmp_path / "scores",
                              vllm_cmd=[sys.executable, str(script)],
                              vllm_args=["--max-model-len", "4096"])
    assert result.status == "scored", result.message
    assert result.model == "openai-api/envfactory/sft-run1/checkpoint-3"
    pid_line, args = record.read_text().splitlines()
    assert args.split() == [
        "serve", str(ckpt.resolve()), "--host", "127.0.0.1", "--port", args.split()[5],
        "--served-model-name", "sft-run1/checkpoint-3", "--enable-auto-tool-choice",
        "--tool-call-parser", "hermes", "--max-model-len", "4096"]
    with pytest.raises(ProcessLookupError):  # stopped and reaped
        os.kill(int(pid_line), 0)
    with socket.socket() as s, pytest.raises(ConnectionRefusedError):  # nothing listens
        s.connect(("127.0.0.1", int(args.split()[5])))


def test_serve_vllm_without_vllm_is_a_clear_error(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setattr(autoscore.serving.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(autoscore.serving.shutil, "which", lambda name: None)
    with pytest.raises(ScoreError, match="vLLM is not installed.*--serve URL"):
        vllm_command()


def test_serve_url_with_a_dead_server_names_it(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(ScoreError, match=f"--serve {url}: GET {url}/models failed"):
        score_checkpoint(model_dir(tmp_path / "m"), serve=url, log_root=tmp_path / "s")


# --- the real local model -------------------------------------------------------------


@pytest.mark.slow
def test_smollm2_base_model_scored_with_hf(tmp_path: Path) -> None:
    pytest.importorskip("transformers", reason="needs the `local` extra (make install)")
    from training import local_models

    try:
        smollm2 = local_models.prepare("smollm2")  # what `envfactory models prepare` gives
    except local_models.LocalModelUnavailable as e:
        pytest.skip(str(e))
    started = time.monotonic()
    result = CliRunner().invoke(app, [
        "score", "run", str(smollm2), "--serve", "hf", "--suite", "quick", "--limit", "1",
        "--max-tokens", "64", "--log-dir", str(tmp_path / "scores"), "--json"])
    wall = time.monotonic() - started
    print(f"\nSmolLM2 quick suite (--limit 1, --max-tokens 64, hf on CPU): {wall:.0f} s wall")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    print("per task:", {t["task"]: t["seconds"] for t in summary["tasks"]})
    out = tmp_path / "scores" / smollm2.name / smollm2.name / "limit-1"
    logs = headers(out)
    assert sorted(log.eval.task for log in logs) == ["bfcl_multiturn", "envfactory"]
    for log in logs:
        assert log.status == "success" and log.eval.model == "hf/local"
        meta = log.eval.metadata or {}
        assert (meta["envfactory_method"], meta["envfactory_run_id"],
                meta["envfactory_base_model"]) == ("base", smollm2.name, smollm2.name)
        assert (log.eval.model_args or {})["model_path"] == str(smollm2)
        assert log.stats.model_usage["hf/local"].output_tokens > 0


def test_a_suite_task_caps_the_run_limit() -> None:
    capped = SuiteTask(task="tasks/x.py@x", max_samples=1)
    assert (capped.limit(None), capped.limit(5), SuiteTask(task="t.py@t").limit(5)) == (1, 1, 5)
    argv = eval_set_argv(SUITES["demo"][0], hf_target(Path("/m")), Path("/s"),
                         limit=SUITES["demo"][0].limit(50), inspect=["inspect"])
    assert options(argv, "--limit") == ["40"]
    assert options(argv, "-T") == ["split=heldout", "turns=first", "max_turn_steps=1"]


@pytest.mark.slow
def test_checkpoints_saved_during_training_are_scored_beside_it(
        tmp_path: Path, server: RecordingServer) -> None:
    """`train sft|grpo --score`: a real `score watch` process scores checkpoint-5 while the
    "trainer" (this block) still runs; checkpoint-10, saved at the end, is scored by the
    last pass; the watcher is gone afterwards."""
    run = tmp_path / "run"
    run.mkdir()
    write_provenance(run, PROV.model_copy(update={"run_id": "sft-live", "step": None}))
    scores = tmp_path / "scores"
    said: list[str] = []
    with autoscore.scoring_beside(run, suite="demo", limit=1, log_root=scores,
                                  say=said.append, interval=1.0,
                                  options=["--serve", server.url]) as watcher:
        model_dir(run / "checkpoint-5")
        deadline = time.monotonic() + 240
        while "checkpoint-5" not in ScoredState.load(run).checkpoints:
            assert watcher.poll() is None, (run / "score-watch.log").read_text()
            assert time.monotonic() < deadline, (run / "score-watch.log").read_text()
            time.sleep(0.5)
        model_dir(run / "checkpoint-10")
    assert watcher.poll() is not None
    state = ScoredState.load(run)
    assert {name: entry["demo/limit-1"].status for name, entry in state.checkpoints.items()
            } == {"checkpoint-5": "scored", "checkpoint-10": "scored"}
    for name, step in (("checkpoint-5", 5), ("checkpoint-10", 10)):
        logs = headers(scores / "sft-live" / name / "limit-1")
        # the demo suite is held-out first turns alone
        assert [log.eval.task for log in logs] == ["envfactory"]
        assert {(log.eval.metadata or {})["envfactory_step"] for log in logs} == {step}
        assert {log.results.total_samples for log in logs if log.results} == {1}
    assert said[0].startswith("scoring checkpoints on `demo` as they are saved (pid ")
    assert said[1] == "scoring the checkpoints not scored during training"


def test_the_score_command_prints_a_table_per_scoring() -> None:
    """`envfactory score run|watch`'s rendering of a result (`on_result`): a row per task,
    the log folder and, when unfinished, what to do; brackets in paths print as they are."""
    import io

    from rich.console import Console

    from envfactory.cli.score import print_score

    out = io.StringIO()
    result = ScoreResult(checkpoint="/runs/[a]/checkpoint-2", status="failed", suite="demo",
                         serve="hf", limit=1, log_dir="/scores/[a]", seconds=12.0,
                         message="not finished: x (rerun to resume)",
                         tasks=[TaskScore(task="tasks/x.py@envfactory", returncode=0,
                                          seconds=3.0, status="success", samples=1,
                                          headline={"overall": 0.5})])
    print_score(result, Console(file=out, width=200))
    text = out.getvalue()
    assert "/runs/[a]/checkpoint-2: failed (12 s)" in text
    assert "envfactory" in text and "overall 0.500" in text and "success" in text
    assert "logs: /scores/[a]" in text and "not finished: x (rerun to resume)" in text
