"""Where a checkpoint comes from: `envfactory_provenance.json` beside its weights.

Training launchers write one with `write_provenance(checkpoint_dir, prov)`; the scorer
(`training/autoscore/`) reads it back with `read_provenance` and copies it into the
metadata of every Inspect log it writes, so the leaderboard can group the checkpoints of
one run. A checkpoint scored by its Hub id gets a "base" record naming the id and the commit
that was downloaded, so a log says which published weights produced it. A directory
without the file (a plain HF model directory, e.g. the base model)
reads as None; the scorer then records it as method "base".
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from envs.jsonl import write_atomic

__all__ = ["PROVENANCE_FILE", "CheckpointProvenance", "base_model_id", "read_provenance",
           "write_provenance"]

PROVENANCE_FILE = "envfactory_provenance.json"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class CheckpointProvenance(BaseModel):
    """One checkpoint's origin: its run, method, base model, step, data and config."""

    run_id: str
    method: Literal["sft", "grpo", "base"]
    base_model: str
    step: int | None = None
    data: dict[str, str] = Field(default_factory=dict)
    """Training data files: path -> sha256 of the file's bytes."""
    config_sha256: str | None = None
    created: str = Field(default_factory=_now)
    """ISO 8601 time the checkpoint (or this record) was written."""
    hub_id: str | None = None
    """A checkpoint scored by its Hub model id (`envfactory score run OWNER/NAME[@REV]`)."""
    hub_revision: str | None = None
    """The commit of `hub_id` whose files were scored (40 hex digits)."""
    hub_requested: str | None = None
    """The revision asked for (a branch, tag or commit) that resolved to `hub_revision`."""


def write_provenance(checkpoint_dir: Path | str, prov: CheckpointProvenance) -> Path:
    """Write `prov` to `<checkpoint_dir>/envfactory_provenance.json` (atomically) and
    return the file's path. The directory must exist."""
    directory = Path(checkpoint_dir)
    if not directory.is_dir():
        raise FileNotFoundError(f"{directory}: not a directory; cannot write provenance")
    path = directory / PROVENANCE_FILE
    write_atomic(path, prov.model_dump_json(indent=2) + "\n")
    return path


def read_provenance(checkpoint_dir: Path | str) -> CheckpointProvenance | None:
    """The provenance written beside a checkpoint, or None when the directory has none.

    A file that exists but is not a valid record raises `ValueError` naming it: a
    checkpoint with broken provenance must not be scored as the base model.
    """
    path = Path(checkpoint_dir) / PROVENANCE_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        return CheckpointProvenance.model_validate_json(text)
    except ValidationError as e:
        raise ValueError(f"{path}: not a valid provenance record: {e}") from None


def base_model_id(model: str, model_path: str) -> str:
    """How provenance names the base model: a Hub id as given, a local directory (a
    prepared model's too) by its name — the name `envfactory score` gives a directory it
    scores without provenance, so the leaderboard pairs a run with its scored base model
    (its step 0 and the deltas)."""
    return Path(model_path).name if Path(model_path).is_dir() else model
