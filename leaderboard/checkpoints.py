"""Which released checkpoint produced each reported row (`leaderboard/checkpoints.json`).

A reported row (`leaderboard/baselines.json`) is a number printed in a paper; scoring the
weights that produced it, by their Hub id, is how a reproduction gap is measured. The file
maps every reported row to its checkpoint (or says, in a note, that none is public), each
with the page that names the id, so that `envfactory score reproduce ROW` never guesses.

A ROW is named on the command line by its id in the file (`envfactory-4b`, `qwen3-1.7b`,
`awm-8b`), or by the reported row's label (`"EnvFactory 4B"`), case-insensitively. The
loader checks the file against the baselines: every row has an entry, every entry a row.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, ValidationError

from leaderboard.baselines import BASELINES_FILE, load_baselines, reported_key

__all__ = ["CHECKPOINTS_FILE", "CheckpointFile", "ReleasedCheckpoint", "load_checkpoints",
           "released", "reported_row_of"]

CHECKPOINTS_FILE = Path(__file__).with_name("checkpoints.json")
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


class ReleasedCheckpoint(BaseModel):
    """One reported row and the public checkpoint behind it (hub_id None: none public)."""

    row: str
    """The id a command line names the row by."""
    system: str
    size: str
    hub_id: str | None
    revision: str | None = None
    """A pinned commit, where the file pins one; None: resolve at download time."""
    source: str | None
    """The page(s) that name the Hub id."""
    note: str = ""

    @property
    def reported_key(self) -> str:
        """The reported row's key in the leaderboard (`leaderboard.baselines`)."""
        return reported_key(self.system, self.size)

    @property
    def label(self) -> str:
        return f"{self.system} {self.size}"


class CheckpointFile(BaseModel):
    note: str = ""
    checkpoints: list[ReleasedCheckpoint]


def load_checkpoints(path: Path = CHECKPOINTS_FILE,
                     baselines: Path = BASELINES_FILE) -> CheckpointFile:
    """Read and check the mapping; errors name the file, the entry and the field."""
    try:
        data = CheckpointFile.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except OSError as e:
        raise ValueError(f"{path}: cannot read checkpoints: {e}") from None
    except (json.JSONDecodeError, ValidationError) as e:
        raise ValueError(f"{path}: not a valid checkpoints file: {e}") from None
    rows = {reported_key(r.system, r.size) for r in load_baselines(baselines).rows}
    seen: set[str] = set()
    keys: set[str] = set()
    for i, entry in enumerate(data.checkpoints):
        where = f"{path}: checkpoints[{i}] ({entry.row})"
        if entry.row.lower() in seen:
            raise ValueError(f"{where}: row id used twice")
        seen.add(entry.row.lower())
        if entry.reported_key not in rows:
            raise ValueError(f"{where}: {entry.label!r} is no row of {baselines}")
        keys.add(entry.reported_key)
        if entry.hub_id is None:
            if not entry.note:
                raise ValueError(f"{where}: hub_id is null without a note saying why")
            continue
        if not _HUB_ID.match(entry.hub_id):
            raise ValueError(f"{where}: hub_id {entry.hub_id!r} is not an 'owner/name' id")
        if not entry.source:
            raise ValueError(f"{where}: hub_id {entry.hub_id!r} has no source")
        if entry.revision is not None and not _COMMIT.match(entry.revision):
            raise ValueError(f"{where}: revision {entry.revision!r} is not a 40-hex commit")
    missing = sorted(rows - keys)
    if missing:
        raise ValueError(f"{path}: no entry for the reported row(s) {missing} of {baselines}; "
                         f"add one (hub_id null with a note where none is public)")
    return data


def _find(row: str, data: CheckpointFile) -> ReleasedCheckpoint:
    wanted = row.strip().lower()
    for entry in data.checkpoints:
        if wanted in (entry.row.lower(), entry.label.lower(), entry.reported_key.lower()):
            return entry
    known = ", ".join(e.row for e in data.checkpoints)
    raise ValueError(f"{CHECKPOINTS_FILE}: no reported row {row!r}; known rows: {known}")


def released(row: str, data: CheckpointFile | None = None) -> ReleasedCheckpoint:
    """The released checkpoint of a reported row, by id or label (`envfactory-4b`,
    `"EnvFactory 4B"`); a clear error when the row is unknown or has no public weights."""
    entry = _find(row, data if data is not None else load_checkpoints())
    if entry.hub_id is None:
        raise ValueError(f"{CHECKPOINTS_FILE}: reported row {entry.row!r} ({entry.label}) has "
                         f"no public checkpoint: {entry.note}")
    return entry


def reported_row_of(hub_id: str, data: CheckpointFile | None = None) -> ReleasedCheckpoint | None:
    """The reported row a model scored by this Hub id reproduces (case-insensitive, as the
    Hub resolves ids), or None when it is none of the released checkpoints."""
    wanted = hub_id.strip().lower()
    for entry in (data if data is not None else load_checkpoints()).checkpoints:
        if entry.hub_id is not None and entry.hub_id.lower() == wanted:
            return entry
    return None
