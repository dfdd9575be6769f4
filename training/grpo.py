"""`envfactory train grpo CONFIG`: GRPO on upstream verl with our environments and reward.

Our config (YAML, `GrpoConfig`) names a preset of Hydra overrides
(`training/verl/configs/<preset>.yaml`: `paper`, the released recipe; `gpu-smoke`, two
steps on one GPU), the policy model, an export directory (`envfactory train export`:
`rl/train.parquet`, `rl/val.parquet`, `rl/tools.yaml`) and an output directory; it
launches `python -m verl.trainer.main_ppo` with those overrides plus the paths:

- `data.train_files` / `data.val_files`: the export's parquet;
- `actor_rollout_ref.rollout.multi_turn.tool_config_path`: the export's `tools.yaml`
  (one `training.verl.tools.EnvTool` per environment tool);
- `reward.custom_reward_function.path=training/verl/reward.py`, `name=compute_score`, and
  `reward_kwargs.variant/alpha/gamma`: the config's `reward` (`harness.rewards.RewardSettings`)
  or, when it sets none, the preset's (both presets: `release`, α 0.5, γ 0.05, the reward
  the paper trained with), so the command line and `verl_overrides.txt` record it;
- `trainer.default_local_dir`: the output directory, whose `global_step_*` checkpoints
  are stamped with provenance afterwards (auto-scoring groups them by run).

verl's trainer needs GPUs (NCCL and a vLLM/SGLang server; notes/training.md §3.2), in an
environment of its own (`.venv-gpu`, `make install-gpu`): the command refuses to start
without CUDA instead of hanging. Everything on our side of the rollout (tools, sessions,
reward) runs and is tested on CPU.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from envs.hashing import file_sha256
from harness.rewards import RewardSettings
from training.provenance import CheckpointProvenance, base_model_id, write_provenance

__all__ = ["GrpoConfig", "command", "overrides", "reward_settings", "run_grpo"]

CONFIGS = Path(__file__).parent / "verl" / "configs"
REWARD = Path(__file__).parent / "verl" / "reward.py"
ROOT = Path(__file__).resolve().parents[1]


class GrpoConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    preset: Literal["paper", "gpu-smoke"] = "gpu-smoke"
    #: the policy: a local HF directory (e.g. a merged SFT model) or a Hub id
    model: str
    #: an `envfactory train export` directory
    data: Path
    output_dir: Path
    #: the reward optimised (default: the preset's, the release's)
    reward: RewardSettings | None = None
    #: extra Hydra overrides, applied last
    overrides: list[str] = Field(default_factory=list)
    run_id: str | None = None


def _preset(preset: str) -> dict[str, Any]:
    """A shipped preset file: `overrides` (Hydra) and `reward` (`RewardSettings`)."""
    data: dict[str, Any] = yaml.safe_load((CONFIGS / f"{preset}.yaml").read_text(
        encoding="utf-8"))
    return data


def preset_overrides(preset: str) -> list[str]:
    return [str(o) for o in _preset(preset)["overrides"]]


def reward_settings(config: GrpoConfig) -> RewardSettings:
    """The reward the run optimises: the config's, else its preset's."""
    return config.reward or RewardSettings.model_validate(_preset(config.preset)["reward"])


def overrides(config: GrpoConfig) -> list[str]:
    """Every Hydra override of the run, in order (preset, paths, the user's)."""
    rl = config.data / "rl"
    for name in ("train.parquet", "val.parquet", "tools.yaml"):
        if not (rl / name).is_file():
            raise FileNotFoundError(f"{rl / name} is missing: {config.data} is not an "
                                    "`envfactory train export` directory")
    return [
        *preset_overrides(config.preset),
        f"actor_rollout_ref.model.path={config.model}",
        f"data.train_files={(rl / 'train.parquet').resolve()}",
        f"data.val_files={(rl / 'val.parquet').resolve()}",
        f"actor_rollout_ref.rollout.multi_turn.tool_config_path={(rl / 'tools.yaml').resolve()}",
        f"reward.custom_reward_function.path={REWARD}",
        "reward.custom_reward_function.name=compute_score",
        *(f"+reward.custom_reward_function.reward_kwargs.{key}={value}"
          for key, value in reward_settings(config).model_dump().items()),
        f"trainer.default_local_dir={config.output_dir.resolve()}",
        f"trainer.experiment_name={config.run_id or config.output_dir.name}",
        "trainer.project_name=envfactory",
        *config.overrides,
    ]


def command(config: GrpoConfig) -> list[str]:
    return [sys.executable, "-m", "verl.trainer.main_ppo", *overrides(config)]


def run_grpo(config: GrpoConfig) -> list[Path]:
    """Run verl's trainer; returns the stamped `global_step_*` checkpoint directories."""
    try:
        import torch
        import verl  # noqa: F401
    except ImportError as e:
        raise RuntimeError(f"GRPO needs the train stack with verl ({e}); see "
                           "`make install-train`, and on a GPU machine `make install-gpu`") from e
    if not torch.cuda.is_available():
        raise RuntimeError("verl's trainer needs CUDA GPUs (NCCL and a vLLM/SGLang rollout "
                           "server); it cannot run on this machine. Our tools and reward "
                           "run on CPU: see tests/training/test_verl_*.py")
    argv = command(config)
    config.output_dir.mkdir(parents=True, exist_ok=True)
    (config.output_dir / "verl_overrides.txt").write_text("\n".join(argv[3:]) + "\n",
                                                          encoding="utf-8")
    data = {str(p): file_sha256(p) for p in sorted((config.data / "rl").glob("*.parquet"))}
    config_sha = file_sha256(config.output_dir / "verl_overrides.txt")

    def provenance(step: int | None) -> CheckpointProvenance:
        return CheckpointProvenance(run_id=config.run_id or config.output_dir.name,
                                    method="grpo",
                                    base_model=base_model_id(config.model, config.model),
                                    step=step,
                                    data=data, config_sha256=config_sha)

    # the run's record first: `score watch` credits steps saved during training to it
    write_provenance(config.output_dir, provenance(None))
    with (config.output_dir / "train.log").open("ab") as log:
        # the reward and tools import `training.*`: run from the checkout's root
        code = subprocess.call(argv, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    if code != 0:
        raise RuntimeError(f"verl exited with {code}; see {config.output_dir / 'train.log'}")
    stamped = []
    for step_dir in sorted(config.output_dir.glob("global_step_*")):
        hf = step_dir / "actor" / "huggingface"
        target = hf if hf.is_dir() else step_dir
        write_provenance(target, provenance(int(step_dir.name.rpartition("_")[2])))
        stamped.append(target)
    return stamped
