"""`envfactory train sft CONFIG`: supervised fine-tuning with LlamaFactory, from our config.

Our config (YAML, `SftConfig`) names a model, the training data (Trajectory files, exported
here, or an existing export directory) and a preset; it renders the LlamaFactory YAML
(`<output_dir>/llamafactory.yaml`), runs `llamafactory-cli train` as a subprocess with its
log in `<output_dir>/train.log` and a live progress bar read from LlamaFactory's
`trainer_log.jsonl`, and stamps the output directory and every `checkpoint-*` in it with
the provenance (base model, data and config hashes, step) that auto-scoring and the
leaderboard group by. A LoRA run can be merged (`merge: true`) into `<output_dir>/merged`,
a plain model directory any `hf/` evaluation loads.

Presets (any LlamaFactory key can still be overridden under `overrides:`):

- `paper`: the released recipe (notes/envfactory.md §10): full fine-tune, DeepSpeed ZeRO-3,
  `mask_history`, cutoff 16,384, batch 1 x 32 accumulation, lr 1e-6, 1 epoch, cosine,
  warmup 0.1, bf16 (GPUs);
- `cpu-smoke`: 2 full-FT steps, for plumbing tests (the tiny random Qwen3);
- `smollm2-lora`: LoRA r16, 30 steps, lr 1e-3 on the embedded SmolLM2 (notes/training.md
  §5: enough to make it emit real tool calls on 2 CPU cores).

LlamaFactory lives in the train environment (`make install-train` -> `.venv-train`, from
the lock file); run this command from there, or point `ENVFACTORY_LLAMAFACTORY_CLI` at
its `llamafactory-cli`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from envs.hashing import file_sha256
from envs.jsonl import complete_lines
from training.export import SFT_NAME, export
from training.provenance import CheckpointProvenance, base_model_id, write_provenance
from training.reporting import OnProgress

__all__ = ["PRESETS", "SftConfig", "SftResult", "dry_run", "llamafactory_cli", "render",
           "run_sft"]

PresetName = Literal["paper", "cpu-smoke", "smollm2-lora"]
STUBS = Path(__file__).parent / "stubs"
DEEPSPEED_Z3 = Path(__file__).parent / "configs" / "ds_z3.json"

_COMMON: dict[str, Any] = {
    "stage": "sft", "do_train": True, "mask_history": True, "overwrite_cache": True,
    "overwrite_output_dir": True, "plot_loss": False,
}

PRESETS: dict[str, dict[str, Any]] = {
    "paper": {
        **_COMMON, "finetuning_type": "full", "deepspeed": str(DEEPSPEED_Z3),
        "template": "qwen3", "cutoff_len": 16384, "max_samples": 1_000_000,
        "per_device_train_batch_size": 1, "gradient_accumulation_steps": 32,
        "learning_rate": 1.0e-6, "num_train_epochs": 1.0, "lr_scheduler_type": "cosine",
        "warmup_ratio": 0.1, "bf16": True, "save_strategy": "epoch", "logging_steps": 10,
        "report_to": "tensorboard", "preprocessing_num_workers": 16,
    },
    "cpu-smoke": {
        **_COMMON, "finetuning_type": "full", "template": "qwen3_nothink", "cutoff_len": 512,
        "per_device_train_batch_size": 2, "gradient_accumulation_steps": 1,
        "learning_rate": 1.0e-5, "lr_scheduler_type": "constant", "max_steps": 2,
        "save_strategy": "steps", "save_steps": 2, "save_only_model": True,
        "logging_steps": 1, "bf16": False, "fp16": False, "report_to": "none",
        "preprocessing_num_workers": 1, "dataloader_num_workers": 0,
    },
    "smollm2-lora": {
        **_COMMON, "finetuning_type": "lora", "lora_target": "all", "lora_rank": 16,
        "template": "qwen", "cutoff_len": 512, "per_device_train_batch_size": 4,
        "gradient_accumulation_steps": 1, "learning_rate": 1.0e-3,
        "lr_scheduler_type": "constant", "max_steps": 30, "save_strategy": "steps",
        "save_steps": 30, "logging_steps": 1, "bf16": False, "fp16": False,
        "report_to": "none", "preprocessing_num_workers": 1, "dataloader_num_workers": 0,
    },
}

#: model each preset trains when the config names none
DEFAULT_MODELS: dict[str, str] = {"paper": "Qwen/Qwen3-8B", "cpu-smoke": "tiny-qwen3",
                                  "smollm2-lora": "smollm2"}


class SftConfig(BaseModel):
    """What a user writes; everything else comes from the preset."""

    model_config = ConfigDict(extra="forbid")

    preset: PresetName = "cpu-smoke"
    #: a local model directory, a prepared local model ("smollm2", "tiny-qwen3") or a Hub id
    model: str | None = None
    #: Trajectory JSONL files, or one directory written by `envfactory train export`
    data: list[Path] = Field(min_length=1)
    output_dir: Path
    #: SFT layout when the data is exported here
    format: Literal["sharegpt", "alpaca"] = "sharegpt"
    #: tools listed per sample when exported here: all of the environments' or the used ones
    tools: Literal["all", "used"] = "all"
    #: LlamaFactory keys that replace the preset's
    overrides: dict[str, Any] = Field(default_factory=dict)
    #: LoRA only: merge the adapter into `<output_dir>/merged` after training
    merge: bool = False
    run_id: str | None = None


class SftResult(BaseModel):
    output_dir: Path
    checkpoints: list[Path]
    merged: Path | None
    steps: int
    first_loss: float | None
    last_loss: float | None
    wall_s: float
    config_sha256: str


def resolve_model(name: str) -> str:
    """A prepared local model's directory for its short name; anything else unchanged."""
    from training import local_models

    if name in local_models.known_models():
        return str(local_models.prepare(name))
    return name


def render(config: SftConfig, model_path: str, dataset_dir: Path) -> dict[str, Any]:
    """The LlamaFactory training YAML for `config` (as a dict)."""
    return {**PRESETS[config.preset], "model_name_or_path": model_path,
            "dataset": SFT_NAME, "dataset_dir": str(dataset_dir),
            "output_dir": str(config.output_dir), **config.overrides}


def llamafactory_cli() -> str:
    """The `llamafactory-cli` to run: $ENVFACTORY_LLAMAFACTORY_CLI, this Python's, or PATH's."""
    explicit = os.environ.get("ENVFACTORY_LLAMAFACTORY_CLI")
    candidates = [explicit] if explicit else [
        str(Path(sys.executable).parent / "llamafactory-cli"), shutil.which("llamafactory-cli")]
    for c in candidates:
        if c and Path(c).is_file():
            return c
    raise FileNotFoundError(
        "llamafactory-cli not found: install the train stack (`make install-train`, which "
        "builds .venv-train from training/requirements-train.lock) and run this command from "
        "that environment, or set ENVFACTORY_LLAMAFACTORY_CLI")


def _export_dir(config: SftConfig) -> Path | None:
    """The `envfactory train export` directory the config names, None for Trajectory
    files (exported by the run itself)."""
    if len(config.data) == 1 and config.data[0].is_dir():
        export_dir = config.data[0]
        if not (export_dir / "sft" / "dataset_info.json").is_file():
            raise FileNotFoundError(f"{export_dir}: not an export directory with SFT data "
                                    "(no sft/dataset_info.json); give Trajectory files or "
                                    "an export of an SFT dataset instead")
        return export_dir
    return None


def _data_dir(config: SftConfig) -> tuple[Path, dict[str, str]]:
    """The LlamaFactory dataset_dir and the hashes of the data that fed it."""
    export_dir = _export_dir(config)
    if export_dir is not None:
        manifest = json.loads((export_dir / "manifest.json").read_text(encoding="utf-8"))
        return export_dir / "sft", dict(manifest["inputs"])
    export_dir = config.output_dir / "data"
    summary = export(config.data, export_dir, fmt=config.format, tools=config.tools)
    return export_dir / "sft", summary.inputs


def dry_run(config: SftConfig) -> dict[str, Any]:
    """The LlamaFactory YAML `run_sft` would write, without the train stack and without
    writing anything: the model as named (a prepared local model is not prepared), the
    dataset_dir of the export named, or of the one the run would write from Trajectory
    files."""
    export_dir = _export_dir(config)
    dataset_dir = (export_dir if export_dir is not None else config.output_dir / "data") / "sft"
    return render(config, config.model or DEFAULT_MODELS[config.preset], dataset_dir.resolve())


def _env() -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE=os.environ.get("HF_HUB_OFFLINE", "1"))
    # LlamaFactory imports torchaudio at module level; the stub stands in (notes §1.5)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(STUBS), env.get("PYTHONPATH")) if p)
    return env


def _log_rows(output_dir: Path) -> list[dict[str, Any]]:
    # the trainer may be writing its last line: only whole lines count, and stay its
    return [json.loads(line) for line in
            complete_lines(output_dir / "trainer_log.jsonl", trim=False)]


def _run(argv: list[str], log: Path, output_dir: Path, on_progress: OnProgress | None,
         what: str) -> list[dict[str, Any]]:
    """Run a LlamaFactory command, its output to `log`; `on_progress(what, step, total)`
    follows trainer_log.jsonl once a second."""
    with log.open("ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=_env())
        while proc.poll() is None:
            time.sleep(1.0)
            rows = _log_rows(output_dir)
            if rows and on_progress is not None:
                on_progress(what, int(rows[-1].get("current_steps", 0)),
                            rows[-1].get("total_steps"))
    if proc.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
        raise RuntimeError(f"{what} failed (exit {proc.returncode}); last lines of {log}:\n"
                           + "\n".join(tail))
    return _log_rows(output_dir)


def run_sft(config: SftConfig, on_progress: OnProgress | None = None) -> SftResult:
    """Train, stamp provenance, optionally merge; see the module docstring.
    `on_progress(stage, step, total)` follows the training ("SFT") and merge ("merge")
    steps as LlamaFactory logs them."""
    started = time.perf_counter()
    cli = llamafactory_cli()  # before any work: without the train stack nothing can run
    out = config.output_dir
    out.mkdir(parents=True, exist_ok=True)
    base = config.model or DEFAULT_MODELS[config.preset]
    model_path = resolve_model(base)
    dataset_dir, data_hashes = _data_dir(config)
    lf_yaml = out / "llamafactory.yaml"
    lf_yaml.write_text(yaml.safe_dump(render(config, model_path, dataset_dir.resolve()),
                                      sort_keys=True), encoding="utf-8")
    (out / "envfactory_sft.json").write_text(config.model_dump_json(indent=2) + "\n",
                                             encoding="utf-8")
    config_sha = file_sha256(lf_yaml)
    run_id = config.run_id or out.name

    def stamp(directory: Path, step: int | None) -> None:
        write_provenance(directory, CheckpointProvenance(
            run_id=run_id, method="sft", base_model=base_model_id(base, model_path),
            step=step, data=data_hashes,
            config_sha256=config_sha))

    # the run's provenance first, so that `score watch` credits checkpoints saved while
    # training runs (not stamped yet) to this run, with the step from their names
    stamp(out, None)
    rows = _run([cli, "train", str(lf_yaml)], out / "train.log", out, on_progress, "SFT")
    losses = [r["loss"] for r in rows if "loss" in r]
    steps = max((int(r.get("current_steps", 0)) for r in rows), default=0)
    checkpoints = sorted((p for p in out.glob("checkpoint-*") if p.is_dir()),
                         key=lambda p: int(p.name.rpartition("-")[2]))

    for ckpt in checkpoints:
        stamp(ckpt, int(ckpt.name.rpartition("-")[2]))
    stamp(out, steps)
    merged = None
    if config.merge:
        merged = _merge(config, model_path, out, cli, on_progress)
        stamp(merged, steps)
    return SftResult(output_dir=out, checkpoints=checkpoints, merged=merged, steps=steps,
                     first_loss=losses[0] if losses else None,
                     last_loss=losses[-1] if losses else None,
                     wall_s=time.perf_counter() - started, config_sha256=config_sha)


def _merge(config: SftConfig, model_path: str, out: Path, cli: str,
           on_progress: OnProgress | None) -> Path:
    preset = {**PRESETS[config.preset], **config.overrides}
    if preset.get("finetuning_type") != "lora":
        raise ValueError("merge: true needs a LoRA run (finetuning_type: lora)")
    merged = out / "merged"
    export_yaml = out / "llamafactory_export.yaml"
    export_yaml.write_text(yaml.safe_dump({
        "model_name_or_path": model_path, "adapter_name_or_path": str(out.resolve()),
        "template": preset["template"], "finetuning_type": "lora",
        "export_dir": str(merged.resolve()), "export_size": 2,
        "export_legacy_format": False}, sort_keys=True), encoding="utf-8")
    _run([cli, "export", str(export_yaml)], out / "export.log", out, on_progress, "merge")
    return merged
