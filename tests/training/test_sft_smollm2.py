"""A real learning signal: SmolLM2 after a short LoRA SFT on our train split calls tools.

The base model never emits a tool call (notes/training.md §4.1). After `envfactory train
sft` with the `smollm2-lora` preset (30 steps, only the tools each trajectory uses, merged),
the tuned model is asked the first user turn of held-out tasks (environments it never saw
in training) with the same system prompt and the turn's gold tools, rendered by the same
chat template Inspect's `hf/` provider uses; a reply counts when it holds a well-formed
`<tool_call>` naming an offered tool. Both rates are printed for the closing note.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.train, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tasks" / "envfactory" / "data"
PROMPTS = 20


@pytest.fixture(autouse=True)
def _train_env() -> None:
    if (os.environ.get("ENVFACTORY_TRAIN_ENV") != "1"
            and importlib.util.find_spec("llamafactory") is None):
        pytest.skip("needs the train stack (.venv-train): run `make test-train-slow`")


def tool_call_rate(model_dir: Path, n: int = PROMPTS) -> float:
    """Share of held-out first turns answered with a well-formed call of an offered tool."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from envs.world import World
    from harness.prompts import AGENT_SYSTEM_PROMPT
    from harness.trajectory import read_jsonl
    from training.verl.reward import parse_tool_calls

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    hits = 0
    tasks = read_jsonl(DATA / "heldout.jsonl")[:n]
    for task in tasks:
        turn = task.turns[0]
        wanted = {c.qualified_name for c in turn.gold_calls}
        tools = [{"type": "function", "function": {"name": name, "description": spec.description,
                                                   "parameters": spec.parameters}}
                 for name, spec in World(task.environments).tools() if name in wanted]
        ids = tokenizer.apply_chat_template(
            [{"role": "system", "content": AGENT_SYSTEM_PROMPT},
             {"role": "user", "content": turn.user}],
            tools=tools, add_generation_prompt=True, return_tensors="pt", return_dict=True)
        with torch.inference_mode():
            out = model.generate(**ids, max_new_tokens=64, do_sample=False)
        reply = tokenizer.decode(out[0][ids["input_ids"].shape[1]:], skip_special_tokens=True)
        calls, _ = parse_tool_calls(reply)
        hits += any(c["name"] in wanted for c in calls)
    return hits / len(tasks)


def test_lora_sft_makes_smollm2_call_tools(tmp_path: Path) -> None:
    from training.local_models import prepare_smollm2
    from training.sft import SftConfig, run_sft

    base = prepare_smollm2()
    result = run_sft(SftConfig(preset="smollm2-lora", model=str(base),
                               data=[DATA / "train.jsonl"], output_dir=tmp_path / "run",
                               tools="used", merge=True))
    assert result.merged is not None and result.steps == 30
    before, after = tool_call_rate(base), tool_call_rate(result.merged)
    print(json.dumps({"sft_wall_s": round(result.wall_s, 1), "loss_first": result.first_loss,
                      "loss_last": result.last_loss, "tool_call_rate_base": before,
                      "tool_call_rate_tuned": after}))
    (tmp_path / "figures.yaml").write_text(yaml.safe_dump({"before": before, "after": after}))
    assert result.last_loss is not None and result.first_loss is not None
    assert result.last_loss < result.first_loss
    assert after > before
