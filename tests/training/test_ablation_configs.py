"""training/configs/ablations/: one launchable config per ablation the paper reports.

Each GRPO config goes through `envfactory train grpo CONFIG --dry-run` unchanged (copied
into a temporary checkout layout whose `runs/ablations/data/` holds a real export), and the
verl command it prints carries the reward that ablation varies. Each SFT config validates
as `SftConfig` and goes through `envfactory train sft CONFIG --dry-run`, which prints the
LlamaFactory YAML it would run.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from envfactory.cli import app
from training.export import export
from training.sft import SftConfig

REPO = Path(__file__).resolve().parents[2]
ABLATIONS = REPO / "training" / "configs" / "ablations"
TRAIN = REPO / "tasks" / "envfactory" / "data" / "train.jsonl"
KWARGS = "+reward.custom_reward_function.reward_kwargs."

#: GRPO config -> (model, the reward verl gets: variant, α, γ; its data folder)
GRPO = {
    "sft-rl.yaml": ("runs/ablations/sft-qwen3-4b", "release", "0.5", "0.05", "rl-85"),
    "direct-rl.yaml": ("Qwen/Qwen3-4B", "release", "0.5", "0.05", "rl-85"),
    "alpha-0.3.yaml": ("runs/ablations/sft-qwen3-4b", "release", "0.3", "0.05", "rl-85"),
    "alpha-0.7.yaml": ("runs/ablations/sft-qwen3-4b", "release", "0.7", "0.05", "rl-85"),
    "gamma-0.yaml": ("runs/ablations/sft-qwen3-4b", "release", "0.5", "0.0", "rl-85"),
    "gamma-0.1.yaml": ("runs/ablations/sft-qwen3-4b", "release", "0.5", "0.1", "rl-85"),
    "envs-50.yaml": ("runs/ablations/sft-qwen3-4b", "release", "0.5", "0.05", "rl-50"),
}
SFT = {
    "sft-only-qwen3-4b.yaml": ("Qwen/Qwen3-4B", "sft"),
    "sft-only-qwen3-1.7b.yaml": ("Qwen/Qwen3-1.7B", "sft"),
    "refinement-on.yaml": ("Qwen/Qwen3-4B", "sft-refined"),
    "refinement-off.yaml": ("Qwen/Qwen3-4B", "sft-unrefined"),
}


def launch_line(path: Path) -> str:
    match = re.search(r"^# Launch: envfactory train (sft|grpo) (\S+)", path.read_text(),
                      re.MULTILINE)
    assert match, f"{path.name} names no launch command"
    assert match.group(2) == f"training/configs/ablations/{path.name}"
    return match.group(1)


def test_every_ablation_has_its_config_and_launch_line() -> None:
    names = {p.name for p in ABLATIONS.glob("*.yaml")}
    assert names == set(GRPO) | set(SFT)
    for name in names:
        assert launch_line(ABLATIONS / name) == ("grpo" if name in GRPO else "sft")


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkout layout: the configs where they live, an export at each data path."""
    root = tmp_path_factory.mktemp("checkout")
    shutil.copytree(ABLATIONS, root / "training" / "configs" / "ablations")
    data = root / "runs" / "ablations" / "data"
    export([TRAIN], data / "rl-85")
    (data / "rl-50").symlink_to(data / "rl-85")
    return root


@pytest.mark.parametrize("name", sorted(GRPO))
def test_grpo_ablation_dry_run(checkout: Path, name: str) -> None:
    model, variant, alpha, gamma, data = GRPO[name]
    config = checkout / "training" / "configs" / "ablations" / name
    result = CliRunner().invoke(app, ["train", "grpo", str(config), "--dry-run"])
    assert result.exit_code == 0, result.output
    args = shlex.split(result.stdout.strip())[3:]
    assert f"actor_rollout_ref.model.path={model}" in args
    assert [a.removeprefix(KWARGS) for a in args if a.startswith(KWARGS)] == [
        f"variant={variant}", f"alpha={alpha}", f"gamma={gamma}"]
    rl = (checkout / "runs" / "ablations" / "data" / data / "rl").resolve()
    assert f"data.train_files={rl / 'train.parquet'}" in args
    out = (checkout / "runs" / "ablations" / yaml.safe_load(config.read_text())["output_dir"]
           .rpartition("/")[2]).resolve()
    assert f"trainer.default_local_dir={out}" in args
    assert "actor_rollout_ref.rollout.n=8" in args  # the paper preset


@pytest.mark.parametrize("name", sorted(SFT))
def test_sft_ablation_validates_and_dry_runs(name: str) -> None:
    model, data = SFT[name]
    raw = yaml.safe_load((ABLATIONS / name).read_text())
    config = SftConfig.model_validate(raw)
    assert (config.preset, config.model, config.format) == ("paper", model, "alpaca")
    assert [p.name for p in config.data] == [data]
    result = CliRunner().invoke(app, ["train", "sft", str(ABLATIONS / name), "--dry-run"])
    assert result.exit_code == 0, result.output
    rendered = yaml.safe_load(result.stdout)
    assert rendered["model_name_or_path"] == model
    assert (rendered["learning_rate"], rendered["num_train_epochs"],
            rendered["finetuning_type"]) == (1.0e-6, 1.0, "full")
