"""Published baselines (EnvFactory, EnvScaler, AWM, base Qwen3) as "reported" rows.

They ship as `leaderboard/baselines.json`, every row with its source. The numbers of one
file come from one paper: EnvScaler's own paper reports other values for the same models
than the EnvFactory paper does, and base-model numbers differ between papers too, so a
column that mixed papers would compare numbers measured under different set-ups. The
loader refuses a file whose rows (or ablations) cite another paper than the file's `paper`.

A row's Overall is the paper's printed value where the file has one (`values.overall`),
else computed the paper's way from the row's other values (`leaderboard.overall`), with a
note saying so and, where a part is missing, marked partial. The paper's ablations are a
table of their own (`ablations`), each number with its source, rendered under the main
table.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from leaderboard.columns import ALL_COLUMNS
from leaderboard.overall import OVERALL_KEY, paper_overall
from leaderboard.records import AblationRow, Cell, RowInfo

__all__ = ["BASELINES_FILE", "BaselineFile", "BaselineRow", "PaperProtocol", "load_baselines",
           "reported_key", "reported_rows"]

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


class PaperProtocol(BaseModel):
    """The paper's evaluation settings, as far as it states them (None: not stated); a
    reproduction gap's cells are checked against these (`leaderboard.gap`)."""

    user: str | None = None
    """The user-simulator model (τ²-bench, VitaBench)."""
    judge: str | None = None
    """The judge model (VitaBench rubrics, MCP-Atlas claims)."""
    subset: str | None = None
    """A subset the paper scored instead of every sample; None: none named."""
    note: str = ""


class BaselineFile(BaseModel):
    paper: str
    note: str = ""
    columns: dict[str, str] = Field(default_factory=dict)
    protocol: PaperProtocol = Field(default_factory=PaperProtocol)
    rows: list[BaselineRow]
    ablations: list[AblationRow] = Field(default_factory=list)
    """The paper's ablations, one number each (percentages as printed)."""
    ablations_note: str = ""
    """What the ablations table does not hold, and why."""


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
    for i, ablation in enumerate(data.ablations):
        where = f"{path}: ablations[{i}] ({ablation.ablation}: {ablation.setting})"
        if not ablation.source.startswith(data.paper):
            raise ValueError(f"{where}: source {ablation.source!r} is not the file's paper "
                             f"{data.paper!r}")
        if ablation.column not in _KNOWN:
            raise ValueError(f"{where}: unknown column {ablation.column!r}")
        if not 0.0 <= ablation.value <= 100.0:
            raise ValueError(f"{where}: {ablation.value} is not a percentage")
    return data


def _overall(row: BaselineRow) -> float | None:
    """The row's Overall: printed, or computed in full (a partial one is no reference)."""
    if OVERALL_KEY in row.values:
        return row.values[OVERALL_KEY]
    overall = paper_overall(row.values)
    return overall.value if overall is not None and not overall.partial else None


def _computed_overall(row: BaselineRow, ref: BaselineRow | None) -> Cell | None:
    """The Overall the paper does not print for `row`, computed its way from the row's
    values; the delta only between two complete ones."""
    overall = paper_overall(row.values)
    if overall is None:
        return None
    base = _overall(ref) if ref is not None else None
    delta = (round((overall.value - base) / 100.0, 6)
             if base is not None and not overall.partial else None)
    return Cell(value=overall.value / 100.0, n=0, reported=True, delta=delta,
                comparable=not overall.partial, source=row.source,
                note=f"computed here from this row's reported values (not printed in the "
                     f"paper): {overall.note()}")


def reported_key(system: str, size: str) -> str:
    """A reported row's key in the table (`leaderboard.checkpoints` names rows by it)."""
    return f"reported:{system} {size}"


def _key(row: BaselineRow) -> str:
    return reported_key(row.system, row.size)


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
        if OVERALL_KEY not in cells:
            computed = _computed_overall(row, ref)
            if computed is not None:
                cells[OVERALL_KEY] = computed
        out.append(RowInfo(key=_key(row), label=f"{row.system} {row.size} (reported)",
                           kind="reported", method=row.method, size=row.size,
                           base_model=row.base_model, source=row.source,
                           base_row=_key(ref) if ref is not None else None, cells=cells))
    return out
