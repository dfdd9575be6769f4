"""Checkpoints: what a directory is (full model or LoRA adapter), whether it is complete,
which checkpoints a training run has saved, their labels, and the provenance each log of a
checkpoint carries (`training/provenance.py`, else the run's, else a "base" record).
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from training.autoscore.suites import ScoreError
from training.provenance import CheckpointProvenance, read_provenance


class NotAModelDir(ScoreError):
    """The checkpoint path is not a transformers model or LoRA adapter directory."""


class CheckpointInfo(BaseModel):
    """What kind of directory a checkpoint is."""

    path: Path
    kind: Literal["model", "lora"]
    base_model: str | None = None
    """A LoRA adapter's `base_model_name_or_path` (None for a full model)."""


def inspect_checkpoint(path: Path) -> CheckpointInfo:
    """Classify `path`: a full model (config.json) or a LoRA adapter (adapter_config.json
    only). Raises `NotAModelDir` naming the directory otherwise."""
    if not path.is_dir():
        raise NotAModelDir(f"{path}: no such directory")
    if (path / "config.json").is_file():
        return CheckpointInfo(path=path, kind="model")
    adapter = path / "adapter_config.json"
    if adapter.is_file():
        try:
            config = json.loads(adapter.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise NotAModelDir(f"{adapter}: cannot read it: {e}") from None
        base = config.get("base_model_name_or_path") if isinstance(config, dict) else None
        if not isinstance(base, str) or not base:
            raise NotAModelDir(f"{adapter}: no base_model_name_or_path; the adapter's base "
                               "model is unknown")
        return CheckpointInfo(path=path, kind="lora", base_model=base)
    raise NotAModelDir(f"{path}: not a model directory: it has neither config.json (a "
                       "transformers model) nor adapter_config.json (a LoRA adapter)")


_WEIGHTS = ("model.safetensors", "pytorch_model.bin", "adapter_model.safetensors",
            "adapter_model.bin")
_INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")


def checkpoint_complete(path: Path) -> bool:
    """Whether a checkpoint directory is finished: a config (config.json or
    adapter_config.json), its weights (every shard an index names), and nothing still
    being written (no `*.tmp` entry, the name not ending in `.tmp`)."""
    if path.name.endswith(".tmp") or not path.is_dir():
        return False
    try:
        names = {p.name for p in path.iterdir()}
    except OSError:  # deleted meanwhile (save_total_limit)
        return False
    if any(name.endswith(".tmp") for name in names):
        return False
    if not names & {"config.json", "adapter_config.json"}:
        return False
    if names & set(_WEIGHTS):
        return True
    for index in names & set(_INDEXES):
        try:
            weight_map = json.loads((path / index).read_text(encoding="utf-8"))["weight_map"]
        except (OSError, ValueError, KeyError, TypeError):
            return False
        if set(weight_map.values()) <= names:
            return True
    return False


_STEP = re.compile(r"^(?:checkpoint-|global_step_)(\d+)$")
VERL_HF_DIR = Path("actor") / "huggingface"
"""Where verl saves a step's model in transformers format (`save_contents` has hf_model)."""


def checkpoint_label(path: Path) -> str:
    """A checkpoint's name in its run: the directory's name, or for verl's
    `global_step_N/actor/huggingface` the step directory's (`global_step_N`)."""
    if path.parts[-2:] == VERL_HF_DIR.parts and len(path.parts) > 2:
        return path.parts[-3]
    return path.name


def _step_of(name: str) -> int | None:
    match = _STEP.search(name)
    return int(match.group(1)) if match else None


def resolve_provenance(info: CheckpointInfo, run_dir: Path | None = None
                       ) -> CheckpointProvenance:
    """The checkpoint's own provenance; else (in a watched run) the run directory's, with
    the step taken from the `checkpoint-N` name; else a record as method "base" (run id
    and base model: the directory's name; a LoRA adapter's base model, if it names one)."""
    own = read_provenance(info.path)
    if own is not None:
        return own
    step = _step_of(checkpoint_label(info.path))
    if run_dir is not None:
        parent = read_provenance(run_dir)
        if parent is not None:
            return parent.model_copy(update={"step": step})
    created = datetime.fromtimestamp(info.path.stat().st_mtime, UTC)
    return CheckpointProvenance(
        run_id=run_dir.name if run_dir is not None else info.path.name,
        method="base", base_model=info.base_model or info.path.name, step=step,
        created=created.isoformat(timespec="seconds"))


def provenance_metadata(prov: CheckpointProvenance, checkpoint: Path) -> dict[str, Any]:
    """The eval metadata every log of this checkpoint carries (`--metadata`)."""
    return {
        "envfactory_run_id": prov.run_id,
        "envfactory_method": prov.method,
        "envfactory_base_model": prov.base_model,
        "envfactory_step": prov.step,
        "envfactory_config_sha256": prov.config_sha256,
        # a mapping (file -> sha256), not a JSON string: inspect's --metadata splits string
        # values at commas, and a JSON object of two files has one
        "envfactory_data": prov.data,
        "envfactory_created": prov.created,
        "envfactory_checkpoint": str(checkpoint),
        # a Hub checkpoint: which published weights (the leaderboard pairs its row with the
        # reported one by `hub_id`)
        **({"envfactory_hub_id": prov.hub_id, "envfactory_hub_revision": prov.hub_revision,
            "envfactory_hub_requested": prov.hub_requested} if prov.hub_id else {}),
    }


HUB_RUN_ID = "hub"
"""The run id (and first results folder) of checkpoints scored by Hub id."""


def hub_provenance(hub_id: str, commit: str, requested: str, folder: Path
                   ) -> CheckpointProvenance:
    """The record of a checkpoint downloaded by Hub id: method "base" named by the id (so
    the leaderboard's row is the id), the commit scored and the revision asked for. The
    repository's own `envfactory_provenance.json`, if it has one, is not used: a released
    checkpoint is compared as the published weights, whoever trained them."""
    created = datetime.fromtimestamp(folder.stat().st_mtime, UTC)
    return CheckpointProvenance(run_id=HUB_RUN_ID, method="base", base_model=hub_id,
                                hub_id=hub_id, hub_revision=commit, hub_requested=requested,
                                created=created.isoformat(timespec="seconds"))


def leaf_name(limit: int | None, suite: str | None = None) -> str:
    """The last results folder: `limit-N | all`, `paper-limit-N | paper-all` for the paper
    suite (its pinned user and judge make other logs of the same tasks incomparable: they
    must not be reused by its eval-set)."""
    leaf = f"limit-{limit}" if limit is not None else "all"
    return f"{suite}-{leaf}" if suite == "paper" else leaf


def _folder_part(checkpoint: Path | str, label: str, part: str | None) -> str:
    if not part or part in (".", "..") or "/" in part or os.sep in part:
        raise ScoreError(f"{checkpoint}: {label} {part!r} cannot name a folder")
    return part


def results_dir(log_root: Path, prov: CheckpointProvenance, checkpoint: Path,
                limit: int | None, suite: str | None = None) -> Path:
    """`<log_root>/<run_id>/<checkpoint label>/<leaf_name>` (absolute); a Hub checkpoint's
    is `<log_root>/hub/<Owner>--<Name>/<commit>/<leaf_name>`."""
    leaf = leaf_name(limit, suite)
    named: list[tuple[str, str | None]] = (
        [("run id", HUB_RUN_ID), ("Hub id", prov.hub_id.replace("/", "--")),
         ("Hub revision", prov.hub_revision)] if prov.hub_id else
        [("run id", prov.run_id), ("checkpoint name", checkpoint_label(checkpoint))])
    folders = [_folder_part(checkpoint, label, part) for label, part in named]
    return log_root.joinpath(*folders, leaf).resolve()


def find_checkpoints(run_dir: Path) -> list[Path]:
    """The complete checkpoints of a run, by step: `checkpoint-N` (HF Trainer /
    LlamaFactory), verl's `global_step_N/actor/huggingface`, then a LoRA run's `merged`
    model (`envfactory train sft` with merge: its final step)."""
    found = [p for p in run_dir.glob("checkpoint-*") if checkpoint_complete(p)]
    found += [p for p in run_dir.glob(f"global_step_*/{VERL_HF_DIR.as_posix()}")
              if checkpoint_complete(p)]

    def order(path: Path) -> tuple[bool, int, str]:
        step = _step_of(checkpoint_label(path))
        return step is None, step or 0, checkpoint_label(path)

    found.sort(key=order)
    merged = run_dir / "merged"
    # LlamaFactory's export writes the model, then we stamp provenance: only then it is done
    if checkpoint_complete(merged) and read_provenance(merged) is not None:
        found.append(merged)
    return found
