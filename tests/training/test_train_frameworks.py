"""Our exports and adapters through the frameworks' own code (the train venv, `make test-train`).

- LlamaFactory's own loader (`get_dataset`, as `llamafactory-cli train` calls it) reads the
  SFT export in both layouts and keeps every sample (it silently drops samples whose roles
  do not alternate, so the count is the check);
- verl's `RLHFDataset` + `collate_fn` read the RL parquet with the fields verl's tool loop
  and reward manager use;
- verl's Hydra config composes with our GRPO overrides (every key exists);
- verl's tool registry builds our `EnvTool`s from the exported tools.yaml, and a verl
  `AgentData` carries the trajectory's world from call to call into `compute_score`;
- `envfactory train sft` runs a real 2-step LlamaFactory SFT of the tiny Qwen3 and leaves
  a checkpoint stamped with provenance.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.train

REPO = Path(__file__).resolve().parents[2]
TRAIN = REPO / "tasks" / "envfactory" / "data" / "train.jsonl"


@pytest.fixture(autouse=True)
def _train_env() -> None:
    if (os.environ.get("ENVFACTORY_TRAIN_ENV") != "1"
            and importlib.util.find_spec("llamafactory") is None):
        pytest.skip("needs the train stack (.venv-train): run `make test-train`")


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from training.export import export

    root = tmp_path_factory.mktemp("exports")
    return {fmt: (export([TRAIN], root / fmt, fmt=fmt), root / fmt)[1]  # type: ignore[arg-type]
            for fmt in ("sharegpt", "alpaca")}


@pytest.fixture(scope="module")
def smollm2() -> Path:
    from training.local_models import prepare_smollm2

    return prepare_smollm2()


@pytest.mark.parametrize("fmt", ["sharegpt", "alpaca"])
def test_llamafactory_loader_keeps_every_sft_sample(
        fmt: str, exports: dict[str, Path], smollm2: Path, tmp_path: Path) -> None:
    from llamafactory.data import get_dataset, get_template_and_fix_tokenizer
    from llamafactory.hparams import get_train_args
    from llamafactory.model import load_tokenizer

    from training.sft import SftConfig, render

    manifest = json.loads((exports[fmt] / "manifest.json").read_text())
    config = SftConfig(preset="smollm2-lora", data=[exports[fmt]], output_dir=tmp_path)
    args = render(config, str(smollm2), exports[fmt] / "sft")
    args.update(cutoff_len=4096, max_steps=1)
    model_args, data_args, training_args, _, _ = get_train_args(args)
    tokenizer_module = load_tokenizer(model_args)
    template = get_template_and_fix_tokenizer(tokenizer_module["tokenizer"], data_args)
    module = get_dataset(template, model_args, data_args, training_args, stage="sft",
                         **tokenizer_module)
    train = module["train_dataset"]
    assert len(train) == manifest["sft_samples"] > 500
    # mask_history: only the last assistant step is a target
    tokenizer = tokenizer_module["tokenizer"]
    first = train[0]
    target = tokenizer.decode([t for t, lab in zip(first["input_ids"], first["labels"],
                                                   strict=True) if lab != -100])
    assert "bank_ledger-find_customer" in target and "<tool_call>" in target


def test_verl_rlhf_dataset_reads_the_rl_parquet(exports: dict[str, Path],
                                                smollm2: Path) -> None:
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    rl = exports["sharegpt"] / "rl"
    manifest = json.loads((exports["sharegpt"] / "manifest.json").read_text())
    config = OmegaConf.create({"prompt_key": "prompt", "max_prompt_length": 16384,
                               "filter_overlong_prompts": False, "return_raw_chat": True,
                               "cache_dir": str(rl / "cache")})
    data = RLHFDataset(str(rl / "train.parquet"), AutoTokenizer.from_pretrained(smollm2),
                       config)
    assert len(data) == manifest["rl_train_rows"]
    batch = collate_fn([data[i] for i in range(4)])
    assert list(batch["agent_name"]) == ["tool_agent"] * 4
    row = data[0]
    assert row["raw_prompt"][0]["role"] == "system"
    assert row["tools_kwargs"]["envfactory"]["environments"] == ["bank_ledger"]
    assert json.loads(row["reward_model"]["ground_truth"])[0]["name"].startswith("bank_ledger-")
    assert "bank_ledger-find_customer" in row["extra_info"]["tool_selection"]


def test_grpo_overrides_compose_with_verls_config(exports: dict[str, Path],
                                                  tmp_path: Path) -> None:
    import verl
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from training.grpo import GrpoConfig, overrides

    config_dir = Path(verl.__file__).parent / "trainer" / "config"
    for preset in ("paper", "gpu-smoke"):
        cfg = GrpoConfig(preset=preset, model="Qwen/Qwen3-1.7B", data=exports["sharegpt"],
                         output_dir=tmp_path / preset)
        with initialize_config_dir(config_dir=str(config_dir), version_base=None):
            composed = compose(config_name="ppo_trainer", overrides=overrides(cfg))
        c = OmegaConf.to_container(composed, resolve=False)
        assert isinstance(c, dict)
        rollout = c["actor_rollout_ref"]["rollout"]
        assert rollout["multi_turn"]["enable"] is True
        assert rollout["multi_turn"]["max_tool_response_length"] == 512
        assert c["reward"]["custom_reward_function"]["name"] == "compute_score"
        assert c["algorithm"]["adv_estimator"] == "grpo"
        if preset == "paper":
            assert (rollout["n"], rollout["temperature"]) == (8, 0.7)
            assert c["actor_rollout_ref"]["actor"]["optim"]["lr"] == 1e-6
            assert c["data"]["train_batch_size"] == 256
            assert c["actor_rollout_ref"]["actor"]["ppo_mini_batch_size"] == 64
            assert rollout["multi_turn"]["max_assistant_turns"] == 10
            assert c["reward"]["custom_reward_function"]["reward_kwargs"]["alpha"] == 0.5


def test_verl_tools_carry_the_world_into_the_reward(exports: dict[str, Path]) -> None:
    import pandas as pd
    from verl.experimental.agent_loop.tool_agent_loop import AgentData
    from verl.tools.tool_registry import initialize_tools_from_config

    from training.verl.reward import compute_score

    rl = exports["sharegpt"] / "rl"
    tools = {t.name: t for t in initialize_tools_from_config(str(rl / "tools.yaml"))}
    frame = pd.read_parquet(rl / "train.parquet")
    row = next(r for _, r in frame.iterrows()
               if "add_payee" in r["reward_model"]["ground_truth"])
    info: dict[str, Any] = json.loads(json.dumps(row["extra_info"].tolist()
                                                 if hasattr(row["extra_info"], "tolist")
                                                 else row["extra_info"], default=list))
    gold = json.loads(row["reward_model"]["ground_truth"])
    agent = AgentData(messages=[], image_data=None, video_data=None, audio_data=None,
                      mm_processor_kwargs=None, metrics={}, request_id="req-1",
                      tools_kwargs=info["tools_kwargs"])

    async def run() -> None:
        for call in gold:  # what verl's loop does per call: create, execute, release
            tool = tools[call["name"]]
            instance, _ = await tool.create()
            await tool.execute(instance, call["arguments"], agent_data=agent)
            await tool.release(instance)

    asyncio.run(run())
    # what verl's loop renders for the policy is the full schema the evaluation shows
    shown = tools[gold[0]["name"]].tool_schema.model_dump(exclude_unset=True, exclude_none=True)
    spec = next(t for t in yaml.safe_load((rl / "tools.yaml").read_text())["tools"]
                if t["config"]["function"]["name"] == gold[0]["name"])
    assert shown == {"type": "function", "function": spec["config"]["function"]}
    text = "".join(f"<tool_call>{json.dumps({'name': c['name'], 'arguments': c['arguments']})}"
                   "</tool_call>" for c in gold)
    score = compute_score(row["data_source"], text, row["reward_model"]["ground_truth"],
                          {**info, **agent.extra_fields})
    assert score["score"] == 1.0 and score["r_state"] == 1.0


def test_two_step_sft_of_the_tiny_qwen3_leaves_a_stamped_checkpoint(
        exports: dict[str, Path], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from envfactory.cli import app
    from training.provenance import read_provenance

    config = tmp_path / "sft.yaml"
    config.write_text(yaml.safe_dump({"preset": "cpu-smoke", "data": [str(TRAIN)],
                                      "output_dir": str(tmp_path / "run")}))
    result = CliRunner().invoke(app, ["train", "sft", str(config)])
    assert result.exit_code == 0, result.output + (
        (tmp_path / "run" / "train.log").read_text()[-3000:]
        if (tmp_path / "run" / "train.log").exists() else "")
    ckpt = tmp_path / "run" / "checkpoint-2"
    assert (ckpt / "config.json").is_file()
    prov = read_provenance(ckpt)
    # the prepared model's directory name: what `score` calls that model scored alone
    assert prov is not None and (prov.method, prov.step, prov.base_model) == (
        "sft", 2, "tiny-qwen3-random")
    assert list(prov.data.values()) == [json.loads(
        (tmp_path / "run" / "data" / "manifest.json").read_text())["inputs"][str(TRAIN)]]
    losses = [json.loads(line)["loss"] for line in
              (tmp_path / "run" / "trainer_log.jsonl").read_text().splitlines()
              if "loss" in json.loads(line)]
    assert len(losses) == 2
