"""`push_model` against the fake Hub: a training output directory (tiny random Qwen3 + our
provenance and configs + auto-scored Inspect logs) -> model files and a card with
model-index; read back with `AutoModelForCausalLM.from_pretrained` in a fresh process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from huggingface_hub import ModelCard
from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalScore,
    EvalSpec,
    write_eval_log,
)

from leaderboard.hub import push_model
from tests.leaderboard.fake_hub import TOKEN, FakeHub, fake_hub_fixture, run_client  # noqa: F401

RUN_ID = "sft-tiny"
PROVENANCE = {"run_id": RUN_ID, "method": "sft", "base_model": "Qwen/Qwen3-0.6B", "step": 2,
              "data": {"data/train.jsonl": "ab" * 32}, "config_sha256": "cd" * 32,
              "created": "2025-06-01T12:00:00+00:00"}


def write_log(path: Path, task: str, metrics: dict[str, float], samples: int,
              status: str = "success", created: str = "2025-06-01T13:00:00+00:00") -> None:
    """A real Inspect log file (header and results, no samples) as auto-scoring leaves."""
    spec = EvalSpec(created=created, task=task, task_id=f"{task}-{samples}-{status}",
                    dataset=EvalDataset(name=task, samples=samples), model="hf/local",
                    config=EvalConfig(),
                    metadata={"envfactory_run_id": RUN_ID, "envfactory_step": 2})
    results = EvalResults(total_samples=samples, completed_samples=samples, scores=[
        EvalScore(name=f"{task}_scorer", scorer=f"{task}_scorer",
                  metrics={k: EvalMetric(name=k, value=v) for k, v in metrics.items()})])
    write_eval_log(EvalLog(eval=spec, status=status, results=results), str(path))


def training_output(out: Path) -> Path:
    """What `envfactory train sft` leaves beside the final model: provenance, configs, a log,
    a checkpoint-N folder and auto-scoring's hidden state file."""
    (out / "checkpoint-2").mkdir(parents=True, exist_ok=True)
    (out / "checkpoint-2" / "config.json").write_text("{}", encoding="utf-8")
    (out / "envfactory_provenance.json").write_text(json.dumps(PROVENANCE), encoding="utf-8")
    (out / "envfactory_sft.json").write_text(json.dumps({"preset": "cpu-smoke"}),
                                             encoding="utf-8")
    (out / "llamafactory.yaml").write_text("stage: sft\nlearning_rate: 1.0e-05\nmax_steps: 2\n",
                                           encoding="utf-8")
    (out / "train.log").write_text("step 1 loss 5.5\n", encoding="utf-8")
    (out / ".envfactory_scored.json").write_text("{}", encoding="utf-8")
    return out


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A training output directory whose model files are stand-ins (the card and the file
    selection do not read weights)."""
    out = tmp_path / "runs" / RUN_ID
    out.mkdir(parents=True)
    (out / "config.json").write_text(json.dumps({"model_type": "qwen3"}), encoding="utf-8")
    (out / "generation_config.json").write_text("{}", encoding="utf-8")
    (out / "model.safetensors").write_bytes(b"\1" * 256)
    return training_output(out)


def test_push_model_files_and_card(fake_hub: FakeHub, run_dir: Path, tmp_path: Path) -> None:
    scores = tmp_path / "scores"
    logs = scores / RUN_ID / RUN_ID / "limit-5"
    logs.mkdir(parents=True)
    write_log(logs / "a_envfactory.eval", "envfactory", {"overall": 0.25, "stderr": 0.1}, 5)
    write_log(logs / "b_bfcl.eval", "bfcl_multiturn", {"accuracy": 0.6, "stderr": 0.2}, 5)
    write_log(logs / "c_bfcl.eval", "bfcl_multiturn", {"accuracy": 0.9}, 3)  # fewer samples
    write_log(logs / "d_tau2.eval", "tau2_airline", {"accuracy": 1.0}, 5, status="error")

    result = push_model(run_dir, "tester/tiny-model", log_root=scores,
                        datasets=["tester/trajectories"])

    assert result.url == f"{fake_hub.url}/tester/tiny-model" and result.changed
    assert sorted(fake_hub.files("tester/tiny-model")) == [
        ".gitattributes", "README.md", "config.json", "envfactory_provenance.json",
        "envfactory_sft.json", "generation_config.json", "llamafactory.yaml",
        "model.safetensors"]
    text = fake_hub.read("tester/tiny-model", "README.md").decode()
    card = ModelCard(text)
    assert card.data.base_model == "Qwen/Qwen3-0.6B"
    assert card.data.datasets == ["tester/trajectories"]
    assert card.data.library_name == "transformers"
    assert {(r.dataset_type, r.metric_type): r.metric_value
            for r in card.data.eval_results} == {("bfcl_multiturn", "accuracy"): 0.6,
                                                 ("envfactory", "overall"): 0.25}
    assert "learning_rate: 1.0e-05" in text and RUN_ID in text and TOKEN not in text

    again = push_model(run_dir, "tester/tiny-model", log_root=scores,
                       datasets=["tester/trajectories"])
    assert not again.changed and again.commit == result.commit


@pytest.mark.slow
def test_pushed_model_loads_with_from_pretrained(fake_hub: FakeHub, tmp_path: Path) -> None:
    """A tiny random Qwen3 (1 layer, vocab 256) pushed, then loaded by transformers from the
    Hub in a fresh process: every parameter equals the local one."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    run_dir = tmp_path / "runs" / RUN_ID
    config = Qwen3Config(vocab_size=256, hidden_size=16, intermediate_size=32,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                         head_dim=8, max_position_embeddings=64)
    torch.manual_seed(0)
    Qwen3ForCausalLM(config).save_pretrained(run_dir)
    training_output(run_dir)
    push_model(run_dir, "tester/tiny-model", logs=[])
    assert "model.safetensors" in fake_hub.files("tester/tiny-model")

    code = f"""
import json, torch
from transformers import AutoModelForCausalLM
hub = AutoModelForCausalLM.from_pretrained("tester/tiny-model")
local = AutoModelForCausalLM.from_pretrained({str(run_dir)!r})
local_params = dict(local.named_parameters())
diff = max(float((p - local_params[n]).abs().max()) for n, p in hub.named_parameters())
print(json.dumps({{"type": hub.config.model_type, "params": len(local_params), "diff": diff}}))
"""
    got = run_client(code, fake_hub, tmp_path / "reader-home")
    assert got["type"] == "qwen3" and got["params"] > 0 and got["diff"] == 0.0


def test_lora_adapter_and_explicit_logs(fake_hub: FakeHub, tmp_path: Path) -> None:
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text(json.dumps(
        {"base_model_name_or_path": "HuggingFaceTB/SmolLM2-135M-Instruct", "r": 16}),
        encoding="utf-8")
    (adapter / "adapter_model.safetensors").write_bytes(b"\0" * 64)
    log = tmp_path / "one.eval"
    write_log(log, "envfactory", {"overall": 0.5}, 4)

    push_model(adapter, "tester/lora", logs=[log])

    card = ModelCard(fake_hub.read("tester/lora", "README.md").decode())
    assert card.data.library_name == "peft"
    assert card.data.base_model == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert [(r.dataset_type, r.metric_value) for r in card.data.eval_results] == [
        ("envfactory", 0.5)]
    assert fake_hub.files("tester/lora")["adapter_model.safetensors"].lfs


def test_not_a_model_directory(fake_hub: FakeHub, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="neither config.json .* nor adapter_config.json"):
        push_model(tmp_path, "tester/nothing")
    assert fake_hub.repos == {}


def test_default_logs_are_where_score_run_puts_them(tmp_path: Path) -> None:
    """`score run` names a verl step's `global_step_N/actor/huggingface` `global_step_N`."""
    from leaderboard.hub import _default_logs

    scores = tmp_path / "scores"
    step = tmp_path / "run" / "global_step_20" / "actor" / "huggingface"
    sft = tmp_path / "run" / "checkpoint-30"
    for folder in (scores / "grpo-a" / "global_step_20", scores / "sft-a" / "checkpoint-30"):
        folder.mkdir(parents=True)
    assert _default_logs(step, {"run_id": "grpo-a"}, scores) == [
        scores / "grpo-a" / "global_step_20"]
    assert _default_logs(sft, {"run_id": "sft-a"}, scores) == [scores / "sft-a" / "checkpoint-30"]
    assert _default_logs(sft, None, scores) == []  # run id: the name, no such folder
