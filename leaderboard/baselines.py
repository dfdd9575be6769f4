"""Published baselines (EnvFactory, EnvScaler, AWM, base Qwen3) as "reported" rows.

They ship as `leaderboard/baselines.json`, every row with its source. The numbers of one
file come from one paper: EnvScaler's own paper reports other values for the same models
than the EnvFactory paper does, and base-model numbers differ between papers too, so a
column that mixed papers would compare numbers measured under different set-ups. The
loader refuses a file whose rows cite another paper than the file's `paper`.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from leaderboard.columns import ALL_COLUMNS
from leaderboard.records import Cell, RowInfo

__all__ = ["BASELINES_FILE", "BaselineFile", "BaselineRow", "load_baselines", "reported_rows"]

BASELINES_FILE = Path(__file__).with_name("baselines.json")
_KNOWN = {c.key for c in ALL_COLUMNS}


class BaselineRow(BaseModel):
    system: str
    method: str
    size: str
    base_model: str
    source: str
    values: dict[str, float]
    """Column key -> percentage as printed."""
    notes: dict[str, str] = Field(default_factory=dict)


class BaselineFile(BaseModel):
    paper: str
    note: str = ""
    columns: dict[str, str] = Field(default_factory=dict)
    rows: list[BaselineRow]


def load_baselines(path: Path = BASELINES_FILE) -> BaselineFile:
    """Read and check a baselines file; errors name the file and the row or field."""
    try:
        data = BaselineFile.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except OSError as e:
        raise ValueError(f"{path}: cannot read baselines: {e}") from None
    except (json.JSONDecodeError, ValidationError) as e:
        raise ValueError(f"{path}: not a valid baselines file: {e}") from None
    for i, row in enumerate(data.rows):
        where = f"{path}: rows[{i}] ({row.system} {row.size})"
        if not row.source.startswith(data.paper):
            raise ValueError(f"{where}: source {row.source!r} is not the file's paper "
                             f"{data.paper!r}; one file (one column) never mixes papers")
        unknown = sorted(set(row.values) - _KNOWN)
        if unknown:
            raise ValueError(f"{where}: unknown column(s) {unknown}; known: {sorted(_KNOWN)}")
        for key, value in row.values.items():
            if not 0.0 <= value <= 100.0:
                raise ValueError(f"{where}: {key}={value} is not a percentage")
    return data


def _key(row: BaselineRow) -> str:
    return f"reported:{row.system} {row.size}"


def reported_rows(data: BaselineFile) -> list[RowInfo]:
    """The file's rows as table rows (values as fractions), each delta against the base
    row of the same base model (the paper's own "(+x)" figures)."""
    base = {r.base_model: r for r in data.rows if r.method == "base"}
    out = []
    for row in data.rows:
        ref = base.get(row.base_model) if row.method != "base" else None
        cells = {}
        for key, value in row.values.items():
            delta = None
            if ref is not None and key in ref.values:
                delta = round((value - ref.values[key]) / 100.0, 6)
            cells[key] = Cell(value=value / 100.0, n=0, reported=True, delta=delta,
                              note=row.notes.get(key), source=row.source)
        out.append(RowInfo(key=_key(row), label=f"{row.system} {row.size} (reported)",
                           kind="reported", method=row.method, size=row.size,
                           base_model=row.base_model, source=row.source,
                           base_row=_key(ref) if ref is not None else None, cells=cells))
    return out
