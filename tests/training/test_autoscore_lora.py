"""A LoRA checkpoint scored as it is: Inspect's hf/ provider loads an adapter directory
directly when peft is installed (transformers reads adapter_config.json, loads the base
model it names, then the adapter), so `score watch` needs no merge in the train venv.

Marked `train` (peft is in .venv-train only) and slow: `make test-train-slow`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = [pytest.mark.train, pytest.mark.slow]


def test_watch_scores_a_lora_adapter_checkpoint_with_hf(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if os.environ.get("ENVFACTORY_TRAIN_ENV") != "1":
        pytest.importorskip("peft", reason="needs peft (the train stack: make test-train-slow)")
    from inspect_ai.log import list_eval_logs, read_eval_log
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from training import autoscore, local_models
    from training.provenance import CheckpointProvenance, write_provenance

    base = local_models.prepare("tiny-qwen3")
    run = tmp_path / "run"
    adapter = run / "checkpoint-2"
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(base),
                           LoraConfig(r=2, target_modules=["q_proj", "v_proj"]))
    model.save_pretrained(adapter)  # adapter_config.json + weights, no tokenizer
    write_provenance(run, CheckpointProvenance(run_id="lora-run", method="sft",
                                               base_model="tiny-qwen3"))
    assert autoscore.peft_available()
    monkeypatch.setitem(autoscore.SUITES, "quick", autoscore.SUITES["quick"][:1])

    [result] = autoscore.watch(run, once=True, limit=1, max_tokens=8,
                               log_root=tmp_path / "scores")
    assert result.status == "scored", result.message
    [info] = list_eval_logs(str(tmp_path / "scores" / "lora-run" / "checkpoint-2" / "limit-1"))
    log = read_eval_log(info, header_only=True)
    assert log.status == "success" and log.eval.model == "hf/local"
    assert log.eval.model_args == {"model_path": str(adapter), "device": "cpu",
                                   "do_sample": False, "tokenizer_path": str(base)}
    meta = log.eval.metadata or {}
    assert (meta["envfactory_run_id"], meta["envfactory_method"], meta["envfactory_step"]) == (
        "lora-run", "sft", 2)
    assert log.stats.model_usage["hf/local"].output_tokens > 0
