"""The leaderboard's records: what one log contributes, and the table built from many.

Everything that crosses a boundary (the JSON output, the HTML page's data, the tests'
expectations) is one of these Pydantic models, so the three outputs cannot drift apart.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = ["AblationRow", "Cell", "ColumnInfo", "CurvePoint", "FailureExample", "GapCell",
           "GapRow", "Leaderboard", "LogRecord", "OtherRun", "RowInfo", "SampleRecord",
           "SkippedLog", "TaxonomyCount"]


class SampleRecord(BaseModel):
    """One sample of one epoch as its summary reports it (no sample body was read)."""

    id: str
    #: the log recorded the id as an integer (τ²); reading the sample back needs that type
    int_id: bool = False
    epoch: int = 1
    #: numeric score components (`correct` for C/I scores, a dict score's keys, `reward`
    #: for a float score); an unscored sample has none
    values: dict[str, float] = Field(default_factory=dict)
    #: the stratum an overall metric averages over (BFCL multi-turn's category)
    stratum: str | None = None
    error: str | None = None
    limit: str | None = None
    #: score metadata kept for the failure taxonomy (error type, termination, reason)
    score_meta: dict[str, Any] = Field(default_factory=dict)


class LogRecord(BaseModel):
    """One Inspect log: who ran what, on which data, under which settings, and its samples."""

    path: str
    task: str
    benchmark: str
    model: str
    row: str
    """The leaderboard row: a model, or a checkpoint of a training run."""
    created: str
    status: str
    epochs: int = 1
    limit: str | None = None
    """`--limit` (or the sample selection) as the log records it; None: every sample."""
    comparability: dict[str, str] = Field(default_factory=dict)
    """The settings a cell's comparability is judged on (data version, benchmark
    release, task options, user/judge models, epochs, limit/selection)."""
    default_settings: bool = False
    """The task ran as shipped: no `-T` option, `--limit` or `--sample-id`."""
    options_passed: dict[str, str] = Field(default_factory=dict)
    """The `-T` options given on the command line (`comparability` holds every task
    argument, defaults included, as Inspect records them)."""
    provenance: dict[str, Any] = Field(default_factory=dict)
    """`envfactory_*` eval metadata written by `envfactory score` (run, method, step...)."""
    metrics: dict[str, float] = Field(default_factory=dict)
    """The log's own metric values, keyed `<score>/<metric>` (for cross-checks)."""
    samples: list[SampleRecord] = Field(default_factory=list)


class ColumnInfo(BaseModel):
    """One column: a benchmark's headline metric or one of its parts."""

    key: str
    title: str
    benchmark: str
    metric: str
    headline: bool = False
    """The benchmark's headline (bold in the Markdown, plotted as bars)."""
    reference: dict[str, str] = Field(default_factory=dict)
    """The comparability settings the column's cells are judged against."""
    reference_from: Literal["defaults", "majority"] | None = None
    """Where `reference` came from: the runs of the task as shipped (no `-T`, `--limit`,
    `--sample-id`), or, when no run used those, the settings most rows share."""
    aggregate: str = ""
    """Which aggregate the column's value is (`leaderboard.columns.Column.aggregate`)."""


class OtherRun(BaseModel):
    """A log of the same row and task that the cell's log was preferred to."""

    path: str
    created: str
    n: int
    """Samples it scored."""
    settings: str = ""
    """How its settings differ from the column's ("" when they do not)."""


class Cell(BaseModel):
    """One row × column value: a mean with its sample count and 95% interval."""

    value: float
    n: int
    """Samples (tasks) behind the value; epochs are averaged within a sample."""
    ci_low: float | None = None
    ci_high: float | None = None
    ci_method: Literal["bootstrap", "stderr", "none"] = "none"
    epochs: int = 1
    pass_hat: dict[str, float] = Field(default_factory=dict)
    """pass^k for k = 1..epochs (where the benchmark succeeds or fails per trial)."""
    comparable: bool = True
    note: str | None = None
    """Why the cell is not comparable with its column, or how it was derived."""
    logs: list[str] = Field(default_factory=list)
    log_value: float | None = None
    """The value the log itself reports for this metric, where it reports one."""
    reported: bool = False
    """A published number (baselines), not a measurement."""
    delta: float | None = None
    """Against the matching base row (same base model / size), where there is one."""
    source: str | None = None
    others: list[OtherRun] = Field(default_factory=list)
    """The row's other logs of this task, not used (`table.pick_logs` says which wins)."""


class RowInfo(BaseModel):
    """One row: a measured model or checkpoint, or a published baseline."""

    key: str
    label: str
    kind: Literal["measured", "reported"]
    model: str | None = None
    run_id: str | None = None
    method: str | None = None
    step: int | None = None
    base_model: str | None = None
    size: str | None = None
    source: str | None = None
    base_row: str | None = None
    """The row deltas are taken against."""
    hub_id: str | None = None
    """The Hub model id the row's weights were downloaded by (`envfactory score run
    HUB_ID`), where its logs say."""
    cells: dict[str, Cell] = Field(default_factory=dict)


class CurvePoint(BaseModel):
    step: int
    row: str
    value: float
    ci_low: float | None = None
    ci_high: float | None = None
    comparable: bool = True


class FailureExample(BaseModel):
    log: str
    sample_id: str
    epoch: int = 1
    detail: str = ""


class TaxonomyCount(BaseModel):
    row: str
    benchmark: str
    category: str
    count: int
    examples: list[FailureExample] = Field(default_factory=list)


class AblationRow(BaseModel):
    """One published ablation number: which ablation, which setting of it, on which
    model and benchmark column, and where it is printed."""

    ablation: str
    setting: str
    size: str | None = None
    """The model size, where the paper says."""
    column: str
    """The benchmark column's key (`leaderboard.columns`)."""
    value: float
    """Percentage as printed."""
    source: str
    note: str = ""


class GapCell(BaseModel):
    """One column of a reproduction gap: measured − reported (fractions), the interval
    the measured cell's 95% interval gives it, and how the run's settings stand against
    the paper's."""

    measured: float
    reported: float
    gap: float
    gap_low: float | None = None
    gap_high: float | None = None
    """measured interval − reported; None where the measured cell has no interval."""
    n: int
    epochs: int = 1
    reported_in_interval: bool | None = None
    """The reported value lies in the measured 95% interval (None: no interval)."""
    differs: list[str] = Field(default_factory=list)
    """Settings known to differ from the paper's (a subset, a missing user/judge role)."""
    unconfirmed: list[str] = Field(default_factory=list)
    """Settings the paper does not state, so the run's cannot be checked against them."""
    note: str | None = None
    """The measured cell's own note (partial, not comparable with its column)."""
    logs: list[str] = Field(default_factory=list)


class GapRow(BaseModel):
    """A measured row scored from a released checkpoint, paired with the reported row
    that checkpoint produced (`leaderboard.checkpoints`)."""

    key: str
    label: str
    measured_row: str
    reported_row: str
    checkpoint_row: str
    """The row id `envfactory score reproduce` takes (`leaderboard/checkpoints.json`)."""
    hub_id: str
    revisions: list[str] = Field(default_factory=list)
    """The commits the measured cells' logs downloaded (more than one: cells differ)."""
    source: str | None = None
    """The page naming the checkpoint."""
    cells: dict[str, GapCell] = Field(default_factory=dict)


class SkippedLog(BaseModel):
    path: str
    reason: str


class Leaderboard(BaseModel):
    """The whole table plus curves, taxonomy and what was left out (the JSON output)."""

    columns: list[ColumnInfo]
    rows: list[RowInfo]
    curves: dict[str, dict[str, list[CurvePoint]]] = Field(default_factory=dict)
    """run id -> column key -> points in step order."""
    taxonomy: list[TaxonomyCount] = Field(default_factory=list)
    failed_samples: dict[str, dict[str, int]] = Field(default_factory=dict)
    """row -> benchmark -> failed samples classified (the taxonomy's denominators)."""
    skipped: list[SkippedLog] = Field(default_factory=list)
    superseded: list[str] = Field(default_factory=list)
    """Logs another log of the same row and task was preferred to (`table.pick_logs`)."""
    baselines_source: str | None = None
    ablations: list[AblationRow] = Field(default_factory=list)
    """The paper's ablations (from the baselines file), shown under the main table."""
    ablations_note: str = ""
    gaps: list[GapRow] = Field(default_factory=list)
    """Reproduction gaps: each released checkpoint scored here against its reported row."""
    protocol_note: str = ""
    """What the paper says of its evaluation settings (what a gap cell is checked against)."""
