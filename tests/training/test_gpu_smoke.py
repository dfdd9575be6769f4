"""The GPU path (training/gpu/smoke.py, `make install-gpu`, training/requirements-gpu.lock)
checked on a CPU: the exact argv of every stage, the real CLI accepting it (the export
run for real, `train grpo --dry-run` on the written config, `score run --serve vllm`
stopping only at the missing vLLM), the lock's CUDA stack, the Makefile's targets, and the
figures read from hand-written verl metrics and Inspect logs. The run itself is the
`gpu`-marked test at the end (needs CUDA and .venv-gpu); the composition with verl's Hydra
config is `train`-marked (needs verl, .venv-train)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from envfactory.cli import app
from training.gpu import smoke
from training.gpu.smoke import SmokeOptions, grpo_config, grpo_figures, plan, score_figures

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "training" / "requirements-gpu.lock"
TRAIN = REPO / "tasks" / "envfactory" / "data" / "train.jsonl"


def _cli() -> list[str]:
    exe = Path(sys.executable).parent / "envfactory"
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "envfactory.cli"]


def _lock_pins() -> dict[str, str]:
    pins = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==(\S+)", line)
        if m:
            pins[m.group(1).lower().replace("_", "-")] = m.group(2)
    return pins


def test_the_plan_is_these_commands(tmp_path: Path) -> None:
    out = tmp_path / "run"
    stages = plan(SmokeOptions(out=out))
    model = str(out / "model" / "smollm2")
    cli = _cli()
    assert [s.name for s in stages] == ["model", "score", "export", "grpo"]
    assert [s.argv for s in stages] == [
        [*cli, "models", "prepare", "smollm2", "--out-dir", model],
        [*cli, "score", "run", model, "--suite", "quick", "--serve", "vllm", "--limit", "5",
         "--log-dir", str(out / "scores"), "--json",
         "--vllm-arg=--gpu-memory-utilization=0.5"],
        [*cli, "train", "export", str(TRAIN), "--out-dir", str(out / "export"),
         "--overwrite"],
        [*cli, "train", "grpo", str(out / "grpo.yaml")],
    ]
    assert stages[3].env["VERL_FILE_LOGGER_PATH"] == str(out / "grpo" / "metrics.jsonl")
    assert all(s.env["HF_HUB_OFFLINE"] == "1" for s in stages)
    # a local directory is scored and trained as it is: no model stage
    local = tmp_path / "tuned"
    stages = plan(SmokeOptions(out=out, model=str(local), limit=2))
    assert [s.name for s in stages] == ["score", "export", "grpo"]
    assert stages[0].argv[3] == str(local) and stages[0].argv[9] == "2"


def test_grpo_config_caps_prompts_to_the_models_context(tmp_path: Path) -> None:
    out = tmp_path / "run"
    cfg = grpo_config(SmokeOptions(out=out))
    assert cfg == {"preset": "gpu-smoke", "model": str(out / "model" / "smollm2"),
                   "data": str(out / "export"), "output_dir": str(out / "grpo"),
                   "run_id": "gpu-smoke",
                   # SmolLM2-135M's 8,192 positions minus the preset's 2,048 response tokens
                   "overrides": ["trainer.logger=[console,file]", "data.max_prompt_length=6144"]}
    roomy = tmp_path / "roomy"
    roomy.mkdir()
    (roomy / "config.json").write_text(json.dumps({"max_position_embeddings": 32768}))
    assert grpo_config(SmokeOptions(out=out, model=str(roomy)))["overrides"] == [
        "trainer.logger=[console,file]"]
    (roomy / "config.json").write_text(json.dumps({"max_position_embeddings": 2048}))
    with pytest.raises(ValueError, match="config.json: a context of 2048 tokens"):
        grpo_config(SmokeOptions(out=out, model=str(roomy)))


def test_dry_run_prints_the_plan_and_writes_nothing(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert smoke.main(["--out", str(out), "--dry-run"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["grpo_config"] == grpo_config(SmokeOptions(out=out))
    assert [s["argv"] for s in printed["stages"]] == [s.argv for s in plan(SmokeOptions(out=out))]
    assert not out.exists()


def test_without_cuda_the_run_refuses_before_starting_anything(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the refusal is for machines without it")
    lines: list[str] = []
    assert smoke.main(["--out", str(tmp_path / "run")], say=lines.append) == 2
    assert lines and lines[0].startswith("error: ") and "make install-gpu" in lines[0]
    assert not (tmp_path / "run").exists()


def test_the_export_and_grpo_stages_run_through_the_real_cli(tmp_path: Path) -> None:
    """The export stage for real, then `train grpo --dry-run` on the config the script
    writes: the verl command holds the preset, the sdpa actor and the script's overrides
    after them (Hydra takes the last value of a key)."""
    out = tmp_path / "run"
    opts = SmokeOptions(out=out)
    stages = {s.name: s for s in plan(opts)}
    n = len(_cli())
    runner = CliRunner()
    result = runner.invoke(app, stages["export"].argv[n:])
    assert result.exit_code == 0, result.output
    assert (out / "export" / "rl" / "train.parquet").is_file()
    out.mkdir(exist_ok=True)
    (out / "grpo.yaml").write_text(yaml.safe_dump(grpo_config(opts), sort_keys=False))
    result = runner.invoke(app, [*stages["grpo"].argv[n:], "--dry-run"])
    assert result.exit_code == 0, result.output
    argv = shlex.split(result.stdout.strip())
    assert argv[1:3] == ["-m", "verl.trainer.main_ppo"]
    args = argv[3:]
    for expected in ("trainer.total_training_steps=2", "trainer.n_gpus_per_node=1",
                     "actor_rollout_ref.rollout.name=vllm",
                     "+actor_rollout_ref.model.override_config.attn_implementation=sdpa",
                     "actor_rollout_ref.model.use_remove_padding=False",
                     f"actor_rollout_ref.model.path={out / 'model' / 'smollm2'}",
                     f"data.train_files={out / 'export' / 'rl' / 'train.parquet'}",
                     f"trainer.default_local_dir={out / 'grpo'}",
                     "+reward.custom_reward_function.reward_kwargs.variant=release"):
        assert expected in args, expected
    assert args[-2:] == ["trainer.logger=[console,file]", "data.max_prompt_length=6144"]
    assert args.index("data.max_prompt_length=8192") < args.index("data.max_prompt_length=6144")


def test_the_score_stage_argv_is_accepted_and_stops_only_at_the_missing_vllm(
        tmp_path: Path) -> None:
    """Its flags parse (no usage error, exit 2); without vLLM it says so (exit 1)."""
    pytest.importorskip("transformers")
    if shutil.which("vllm"):
        pytest.skip("vLLM is installed here: the gpu-marked run covers the stage")
    from training.local_models import prepare_tiny_qwen3

    model = prepare_tiny_qwen3(tmp_path / "tiny")
    stage = plan(SmokeOptions(out=tmp_path / "run", model=str(model)))[0]
    result = CliRunner().invoke(app, stage.argv[len(_cli()):])
    assert result.exit_code == 1, result.output
    assert "--serve vllm: vLLM is not installed" in " ".join(result.output.split())


def test_the_lock_is_the_cuda_stack_verl_vllm_pins() -> None:
    """verl 0.9.1's `vllm` extra (its wheel's METADATA) pins torch 2.11.0, vllm 0.24.0 and
    transformers 5.9.0; the lock holds PyPI's CUDA torch (nvidia-* wheels), never a
    `+cpu` build, and every `==` pin of the .in."""
    text = LOCK.read_text(encoding="utf-8")
    pins = _lock_pins()
    assert (pins["verl"], pins["vllm"], pins["torch"], pins["transformers"]) == (
        "0.9.1", "0.24.0", "2.11.0", "5.9.0")
    assert pins["tensordict"] == "0.10.0" and pins["inspect-ai"] == "0.3.285"
    assert not re.search(r"^torch==\S*\+cpu", text, re.M)
    assert "--extra-index-url" not in text and "download.pytorch.org" not in text
    assert any(name.startswith("nvidia-") for name in pins)
    assert "transferqueue" in pins  # verl-core, which the vllm extra pulls
    source = (REPO / "training" / "requirements-gpu.in").read_text(encoding="utf-8")
    for line in source.splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==(\S+)$", line.strip())
        if m:
            assert pins[m.group(1).lower().replace("_", "-")] == m.group(2), line
    assert "--python-platform x86_64-manylinux_2_28 --python-version 3.11" in text


def _make(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_make_install_gpu_installs_that_lock_into_venv_gpu() -> None:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    recipe = _make("-n", "-B", "install-gpu", "GPU_FORCE=1").stdout
    assert ".venv-gpu/bin/python -m pip install -r training/requirements-gpu.lock" in recipe
    assert "python3.11 -m venv .venv-gpu" in recipe
    assert "download.pytorch.org" not in recipe  # CUDA torch from PyPI, as locked
    assert re.search(r"\.venv-gpu/bin/python -m pip install --no-deps -e \.", recipe)
    lock = _make("-n", "lock-gpu").stdout
    assert ("uv pip compile training/requirements-gpu.in --python-platform "
            "x86_64-manylinux_2_28 --python-version 3.11") in lock
    smoke_recipe = _make("-n", "gpu-smoke", "GPU_FORCE=1", "-o", "install-gpu",
                         "-o", ".venv-gpu/.installed").stdout
    assert ".venv-gpu/bin/python -m training.gpu.smoke --out runs/gpu-smoke" in smoke_recipe


def test_make_install_gpu_refuses_where_there_is_no_gpu() -> None:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    if subprocess.run(["sh", "-c", "nvidia-smi -L"], capture_output=True).returncode == 0:
        pytest.skip("this machine has an NVIDIA GPU: install-gpu would install")
    existed = (REPO / ".venv-gpu").exists()
    result = _make("-B", "install-gpu")
    assert result.returncode != 0
    assert "install-gpu: no NVIDIA GPU here" in result.stdout
    assert (REPO / ".venv-gpu").exists() == existed


def test_grpo_figures_from_verls_file_logger(tmp_path: Path) -> None:
    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text(
        json.dumps({"step": 1, "data": {"critic/score/mean": 0.25, "perf/time_per_step": 40.0,
                                        "perf/throughput": 512.5,
                                        "perf/total_num_tokens": 20500,
                                        "response_length/mean": 300.0}}) + "\n"
        + json.dumps({"step": 2, "data": {"critic/score/mean": 0.5, "perf/time_per_step": 10.0,
                                          "perf/throughput": 2000.0,
                                          "perf/total_num_tokens": 20000}}) + "\n")
    figures = grpo_figures(metrics)
    assert figures["reward_per_step"] == [0.25, 0.5]
    assert [s["steps_per_s"] for s in figures["steps"]] == [0.025, 0.1]
    assert [s["tokens_per_s"] for s in figures["steps"]] == [512.5, 2000.0]
    assert figures["steps_per_s"] == 2 / 50.0
    assert figures["steps"][1]["response_length_mean"] is None
    assert grpo_figures(tmp_path / "absent.jsonl")["steps"] == []


def test_score_figures_read_tokens_from_the_inspect_logs(tmp_path: Path) -> None:
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSpec, EvalStats, write_eval_log
    from inspect_ai.model import ModelUsage

    log = EvalLog(status="success",
                  eval=EvalSpec(created="2026-06-01T10:00:00+00:00", task="envfactory",
                                model="openai-api/envfactory/smollm2", dataset=EvalDataset(),
                                config=EvalConfig()),
                  stats=EvalStats(started_at="2026-06-01T10:00:00+00:00",
                                  completed_at="2026-06-01T10:00:40+00:00",
                                  model_usage={"openai-api/envfactory/smollm2": ModelUsage(
                                      input_tokens=9000, output_tokens=1000,
                                      total_tokens=10000)}))
    write_eval_log(log, str(tmp_path / "a.eval"))
    result = {"checkpoint": "/m", "status": "scored", "suite": "quick", "serve": "vllm",
              "model": "openai-api/envfactory/smollm2", "limit": 5, "seconds": 90.0,
              "log_dir": str(tmp_path),
              "tasks": [{"task": "envfactory", "status": "success", "samples": 5,
                         "headline": {"reward": 0.1}, "seconds": 45.0, "log": "a.eval"},
                        {"task": "bfcl_multiturn", "status": "error", "samples": 0,
                         "headline": {}, "seconds": 3.0, "log": None}]}
    (tmp_path / "score.json").write_text(json.dumps(result))
    figures = score_figures(tmp_path / "score.json")
    assert figures["tasks"][0]["output_tokens"] == 1000
    assert figures["tasks"][0]["eval_seconds"] == 40.0
    assert figures["tasks"][0]["output_tokens_per_s"] == 25.0
    assert "output_tokens" not in figures["tasks"][1]
    assert figures["output_tokens_per_s"] == 25.0
    (tmp_path / "score.json").write_text("")
    assert "did not finish" in score_figures(tmp_path / "score.json")["error"]


@pytest.mark.train
def test_the_smoke_config_composes_with_verls_hydra_config(tmp_path: Path) -> None:
    """The run's full override list (preset, paths, the script's caps) through verl's own
    `ppo_trainer` config: prompt + response fit SmolLM2's context, sdpa attention."""
    if os.environ.get("ENVFACTORY_TRAIN_ENV") != "1":
        pytest.importorskip("verl", reason="needs the train stack (.venv-train): "
                                           "run `make test-train`")
    import verl
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from training.export import export
    from training.grpo import GrpoConfig, overrides

    out = tmp_path / "run"
    export([TRAIN], out / "export")
    cfg = GrpoConfig.model_validate(grpo_config(SmokeOptions(out=out)))
    config_dir = Path(verl.__file__).parent / "trainer" / "config"
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        composed = compose(config_name="ppo_trainer", overrides=overrides(cfg))
    c = OmegaConf.to_container(composed, resolve=True)
    assert isinstance(c, dict)
    model = c["actor_rollout_ref"]["model"]
    assert model["override_config"]["attn_implementation"] == "sdpa"
    assert model["use_remove_padding"] is False
    assert c["data"]["max_prompt_length"] + c["data"]["max_response_length"] == 8192
    assert c["trainer"]["logger"] == ["console", "file"]
    assert c["trainer"]["total_training_steps"] == 2
    assert c["actor_rollout_ref"]["rollout"]["name"] == "vllm"


@pytest.mark.gpu
def test_the_smoke_run_on_a_gpu(tmp_path: Path) -> None:
    """The whole script on one GPU (in .venv-gpu): the score and 2 GRPO steps, figures."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU and .venv-gpu (`make install-gpu`)")
    out = tmp_path / "gpu-smoke"
    proc = subprocess.run([sys.executable, "-m", "training.gpu.smoke", "--out", str(out),
                           "--limit", "1"], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"}, timeout=7200)
    summary = json.loads((out / "summary.json").read_text())
    assert proc.returncode == 0, (proc.stderr[-4000:], summary["stages"])
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == summary
    assert summary["score"]["status"] == "scored" and summary["score"]["serve"] == "vllm"
    assert [s["step"] for s in summary["grpo"]["steps"]] == [1, 2]
    assert all(s["tokens_per_s"] and s["tokens_per_s"] > 0 for s in summary["grpo"]["steps"])
    assert all(r is not None for r in summary["grpo"]["reward_per_step"])
    assert (out / "grpo" / "global_step_2").is_dir()
