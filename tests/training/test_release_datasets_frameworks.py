"""The release datasets' exports through the frameworks' own loaders (the train venv,
`make test-train`): LlamaFactory's `get_dataset` keeps every SFT sample of the
hand-made `LARK-Lab/EnvFactory-SFT-FILTERED` rows (it drops samples whose roles do not
alternate, so the count is the check) and verl's `RLHFDataset` reads every RL row of
`LARK-Lab/EnvFactory-RL` with the fields its tool loop and reward manager use."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from tests.leaderboard.fake_hub import FakeHub, fake_hub_fixture  # noqa: F401
from tests.training.test_release_datasets import FILTERED, RECORDS, RL, publish, release_root

pytestmark = pytest.mark.train


@pytest.fixture(autouse=True)
def _train_env() -> None:
    if (os.environ.get("ENVFACTORY_TRAIN_ENV") != "1"
            and importlib.util.find_spec("llamafactory") is None):
        pytest.skip("needs the train stack (.venv-train): run `make test-train`")


@pytest.fixture
def smollm2() -> Path:
    from training.local_models import prepare_smollm2

    return prepare_smollm2()


def test_llamafactory_loader_keeps_every_release_sft_sample(
        fake_hub: FakeHub, smollm2: Path, tmp_path: Path) -> None:
    from llamafactory.data import get_dataset, get_template_and_fix_tokenizer
    from llamafactory.hparams import get_train_args
    from llamafactory.model import load_tokenizer

    from training.export import export_hub
    from training.sft import SftConfig, render

    commit = publish(fake_hub, FILTERED, {"train.json": RECORDS / "sft_filtered.json"})
    out = tmp_path / "sft-data"
    summary = export_hub(f"{FILTERED}@{commit}", out)
    assert summary.sft_samples == 3  # 6 hand-made rows, 3 of them bad on purpose
    config = SftConfig(preset="smollm2-lora", data=[out], output_dir=tmp_path / "run")
    args = render(config, str(smollm2), out / "sft")
    args.update(cutoff_len=4096, max_steps=1)
    model_args, data_args, training_args, _, _ = get_train_args(args)
    tokenizer_module = load_tokenizer(model_args)
    template = get_template_and_fix_tokenizer(tokenizer_module["tokenizer"], data_args)
    module = get_dataset(template, model_args, data_args, training_args, stage="sft",
                         **tokenizer_module)
    train = module["train_dataset"]
    assert len(train) == 3
    # mask_history: the target of the first sample is its tool call alone
    tokenizer = tokenizer_module["tokenizer"]
    first = train[0]
    target = tokenizer.decode([t for t, lab in zip(first["input_ids"], first["labels"],
                                                   strict=True) if lab != -100])
    assert "NotesAPI-create_note" in target and "<think>" in target


def test_verl_rlhf_dataset_reads_every_release_rl_row(
        fake_hub: FakeHub, smollm2: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    from training.export import export_hub

    monkeypatch.setenv("ENVFACTORY_RELEASE_DIR", str(release_root(tmp_path)))
    commit = publish(fake_hub, RL, {"rl_train.json": RECORDS / "rl_train.json",
                                    "rl_val.json": RECORDS / "rl_val.json"})
    out = tmp_path / "rl-data"
    summary = export_hub(f"{RL}@{commit}", out)
    assert (summary.rl_train_rows, summary.rl_val_rows) == (3, 1)
    rl = out / "rl"
    config = OmegaConf.create({"prompt_key": "prompt", "max_prompt_length": 16384,
                               "filter_overlong_prompts": False, "return_raw_chat": True,
                               "cache_dir": str(rl / "cache")})
    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    train = RLHFDataset(str(rl / "train.parquet"), tokenizer, config)
    val = RLHFDataset(str(rl / "val.parquet"), tokenizer, config)
    assert (len(train), len(val)) == (3, 1)
    batch = collate_fn([train[i] for i in range(3)])
    assert list(batch["agent_name"]) == ["tool_agent"] * 3
    row = train[1]
    assert [m["role"] for m in row["raw_prompt"]] == [
        "system", "user", "assistant", "user", "assistant", "user"]
    assert row["tools_kwargs"]["envfactory"]["environments"] == ["release/NotesAPI"]
    assert json.loads(row["reward_model"]["ground_truth"])[0]["name"] == "NotesAPI-tag_note"
    assert json.loads(row["extra_info"]["reward_settings"])["variant"] == "release"
