"""`envfactory train grpo --dry-run`: the verl command a config launches (no verl needed)."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml
from typer.testing import CliRunner

from envfactory.cli import app
from training.export import export

TRAIN = Path(__file__).resolve().parents[2] / "tasks" / "envfactory" / "data" / "train.jsonl"


def test_dry_run_prints_main_ppo_with_preset_paths_and_overrides(tmp_path: Path) -> None:
    export([TRAIN], tmp_path / "export")
    config = tmp_path / "grpo.yaml"
    config.write_text(yaml.safe_dump({"preset": "paper", "model": "Qwen/Qwen3-1.7B",
                                      "data": "export", "output_dir": "runs/grpo",
                                      "overrides": ["trainer.total_epochs=1"]}))
    result = CliRunner().invoke(app, ["train", "grpo", str(config), "--dry-run"])
    assert result.exit_code == 0, result.output
    argv = shlex.split(result.stdout.strip())
    assert argv[1:3] == ["-m", "verl.trainer.main_ppo"]
    args = argv[3:]
    rl = (tmp_path / "export" / "rl").resolve()
    for expected in ("algorithm.adv_estimator=grpo", "actor_rollout_ref.rollout.n=8",
                     "actor_rollout_ref.actor.optim.lr=1e-6", "data.tool_config_path=null",
                     "actor_rollout_ref.model.path=Qwen/Qwen3-1.7B",
                     f"data.train_files={rl / 'train.parquet'}",
                     f"data.val_files={rl / 'val.parquet'}",
                     f"actor_rollout_ref.rollout.multi_turn.tool_config_path={rl / 'tools.yaml'}",
                     "reward.custom_reward_function.name=compute_score",
                     f"trainer.default_local_dir={(tmp_path / 'runs' / 'grpo').resolve()}"):
        assert expected in args, expected
    assert args[-1] == "trainer.total_epochs=1"  # the user's overrides come last
    reward = next(a for a in args if a.startswith("reward.custom_reward_function.path="))
    assert reward.endswith("training/verl/reward.py") and Path(reward.partition("=")[2]).is_file()
    # the paper preset optimises the release's reward, and the command line records it
    kwargs = [a for a in args if a.startswith("+reward.custom_reward_function.reward_kwargs.")]
    assert kwargs == ["+reward.custom_reward_function.reward_kwargs.variant=release",
                      "+reward.custom_reward_function.reward_kwargs.alpha=0.5",
                      "+reward.custom_reward_function.reward_kwargs.gamma=0.05"]


def test_a_configs_reward_replaces_the_presets(tmp_path: Path) -> None:
    export([TRAIN], tmp_path / "export")
    config = tmp_path / "grpo.yaml"
    config.write_text(yaml.safe_dump({"preset": "paper", "model": "m", "data": "export",
                                      "output_dir": "out",
                                      "reward": {"variant": "strict", "alpha": 0.3}}))
    result = CliRunner().invoke(app, ["train", "grpo", str(config), "--dry-run"])
    assert result.exit_code == 0, result.output
    args = shlex.split(result.stdout.strip())
    assert [a.partition("reward_kwargs.")[2] for a in args if "reward_kwargs" in a] == [
        "variant=strict", "alpha=0.3", "gamma=0.05"]
    config.write_text(yaml.safe_dump({"model": "m", "data": "export", "output_dir": "out",
                                      "reward": {"variant": "paper"}}))
    result = CliRunner().invoke(app, ["train", "grpo", str(config), "--dry-run"])
    assert result.exit_code == 1 and "variant" in result.output


def test_a_directory_that_is_not_an_export_is_named(tmp_path: Path) -> None:
    config = tmp_path / "grpo.yaml"
    config.write_text(yaml.safe_dump({"model": "m", "data": "nowhere", "output_dir": "out"}))
    result = CliRunner().invoke(app, ["train", "grpo", str(config), "--dry-run"])
    assert result.exit_code == 1
    assert "not an `envfactory train export` directory" in " ".join(result.output.split())
