"""`LogRecord`s (+ baselines) → the `Leaderboard`: cells, comparability, averages, deltas
and checkpoint curves.

Rules that keep the numbers honest:

* A column's reference settings are the task's as shipped: those of the runs with no
  `-T` option, `--limit` or `--sample-id` (the most rows' among them, if they differ),
  or, when no run used them, the settings most rows share. A cell with other settings
  (data version, release, task options, epochs, limit, user/judge model) is marked not
  comparable, with the differing settings named; which run happens to be read first
  never decides it.
* One log per row and task: the one with the column's settings, then the most samples,
  then the newest. The others are listed with the cell (and as superseded), never
  merged into it: a later one-sample `--sample-id` check does not replace a full run.
* An average over a benchmark's parts (τ² domains, VitaBench task sets) is taken within a
  row only; a row that lacks a part or has a part not comparable with its column gets a
  marked cell that says so.
* Deltas are taken only between cells of identical settings.
* The Overall column is the paper's (`leaderboard.overall`), from the row's own cells;
  a row lacking a part, or with a part not comparable, gets a marked cell.
* A measured row scored from a released checkpoint is paired with the reported row it
  produced (`leaderboard.gap`); the gap is taken per column, never across rows' settings
  unmarked.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Literal

from leaderboard import columns as cols
from leaderboard.baselines import BaselineFile, reported_rows
from leaderboard.checkpoints import CheckpointFile
from leaderboard.gap import reproduction_gaps
from leaderboard.overall import OVERALL_KEY, OVERALL_PARTS, paper_overall
from leaderboard.read import model_name
from leaderboard.records import (
    Cell,
    ColumnInfo,
    CurvePoint,
    Leaderboard,
    LogRecord,
    OtherRun,
    RowInfo,
)
from leaderboard.stats import Estimate, estimate, pass_hat_curve

__all__ = ["Picked", "build_table", "pick_logs", "trial_values"]

TOL = 1e-6


def _columns(rec: LogRecord) -> list[cols.Column]:
    return cols.columns_for(rec.benchmark, rec.task, {
        "domain": rec.comparability.get("domain"),
        "task_set": rec.comparability.get("task_set")})


def _samples(rec: LogRecord) -> int:
    return len({s.id for s in rec.samples})


def _settings_key(settings: dict[str, str]) -> str:
    return json.dumps(settings, sort_keys=True)


def _most_rows(pool: list[LogRecord]) -> dict[str, str]:
    """The settings the most rows ran (a row that ran them three times counts once;
    ties: more samples in one run, then the lexically first)."""
    rows: dict[str, set[str]] = defaultdict(set)
    samples: dict[str, int] = defaultdict(int)
    for rec in pool:
        key = _settings_key(rec.comparability)
        rows[key].add(rec.row)
        samples[key] = max(samples[key], _samples(rec))
    best = min(rows, key=lambda k: (-len(rows[k]), -samples[k], k))
    return dict(json.loads(best))


Source = Literal["defaults", "majority"]


def _references(records: list[LogRecord]) -> dict[str, tuple[dict[str, str], Source]]:
    """Column key -> its reference settings and where they came from: the runs of the
    task as shipped (`LogRecord.default_settings`), else all runs."""
    pools: dict[str, list[LogRecord]] = defaultdict(list)
    for rec in records:
        for column in _columns(rec):
            pools[column.key].append(rec)
    out: dict[str, tuple[dict[str, str], Source]] = {}
    for key, pool in pools.items():
        shipped = [r for r in pool if r.default_settings]
        out[key] = (_most_rows(shipped), "defaults") if shipped else (_most_rows(pool),
                                                                        "majority")
    return out


@dataclass
class Picked:
    """The log used per (row, task), the others beside each, and the columns' references."""

    kept: list[LogRecord]
    others: dict[str, list[OtherRun]]
    """Path of a kept log -> the row's other logs of its task, best first."""
    superseded: list[str]
    references: dict[str, tuple[dict[str, str], Source]]


def pick_logs(records: list[LogRecord]) -> Picked:
    """One log per (row, task): the one with its column's reference settings, then the
    most samples, then the newest (then the last path); the others are kept beside it."""
    references = _references(records)
    groups: dict[tuple[str, str], list[LogRecord]] = defaultdict(list)
    for rec in records:
        groups[(rec.row, rec.task)].append(rec)
    kept, others, superseded = [], {}, []
    for recs in groups.values():
        columns = _columns(recs[0])
        reference = references[columns[0].key][0] if columns else {}
        ranked = sorted(recs, key=lambda r: (r.comparability == reference, _samples(r),
                                             r.created, r.path), reverse=True)
        kept.append(ranked[0])
        others[ranked[0].path] = [
            OtherRun(path=r.path, created=r.created, n=_samples(r),
                     settings=_differences(r.comparability, reference)) for r in ranked[1:]]
        superseded += [r.path for r in ranked[1:]]
    kept.sort(key=lambda r: (r.created, r.path))
    return Picked(kept=kept, others=others, superseded=sorted(superseded),
                  references=references)


def trial_values(rec: LogRecord, column: cols.Column,
                 stratum_as: str | None = None) -> list[tuple[str, str | None, float]]:
    """(sample id, stratum, value) per scored trial of `rec` for `column` (successes as
    0/1 where the column has a threshold)."""
    out = []
    for s in rec.samples:
        value = s.values.get(column.component)
        if value is None or (column.stratum is not None and s.stratum != column.stratum):
            continue
        if column.threshold is not None:
            value = float(value >= column.threshold - TOL)
        out.append((s.id, stratum_as if stratum_as is not None else s.stratum, value))
    return out


def _measured_cell(rec: LogRecord, column: cols.Column) -> Cell | None:
    if column.component == "value":  # a task this leaderboard does not know
        headline = rec.metrics.get("headline")
        if headline is None:
            return None
        stderr = rec.metrics.get("headline_stderr")
        n = len({s.id for s in rec.samples})
        return Cell(value=headline, n=n, epochs=rec.epochs, logs=[rec.path],
                    log_value=headline,
                    ci_low=None if stderr is None else headline - 1.96 * stderr,
                    ci_high=None if stderr is None else headline + 1.96 * stderr,
                    ci_method="none" if stderr is None else "stderr")
    if column.groups:
        est = _grouped(rec, column)
    else:
        est = estimate(trial_values(rec, column), stratified=column.stratified)
    if est is None:
        return None
    passes: dict[str, float] = {}
    if column.threshold is not None and rec.epochs > 1:
        passes = pass_hat_curve([(s.id, s.values[column.component]) for s in rec.samples
                                 if column.component in s.values], column.threshold)
    return Cell(value=est.value, n=est.n, ci_low=est.low, ci_high=est.high,
                ci_method="bootstrap", epochs=rec.epochs, pass_hat=passes, logs=[rec.path],
                log_value=rec.metrics.get(column.log_metric or ""))


def _grouped(rec: LogRecord, column: cols.Column) -> Estimate | None:
    """A weighted mean over groups of strata (`Column.groups`); None unless every group
    has samples (as the log's own aggregate, computed only when all its parts ran)."""
    group_of = {stratum: name for name, strata, _ in column.groups for stratum in strata}
    values = [(sid, group_of[s], v) for sid, s, v in trial_values(rec, column)
              if s in group_of]
    weights = {name: weight for name, _, weight in column.groups}
    if {g for _, g, _ in values} != set(weights):
        return None
    return estimate(values, weights=weights)


def _overall(row_cells: dict[str, Cell]) -> Cell | None:
    """The paper's Overall of a measured row, from its own cells (no interval: its parts
    are different samples); marked where a part is missing or not comparable."""
    overall = paper_overall({k: row_cells[k].value for k in OVERALL_PARTS if k in row_cells})
    if overall is None:
        return None
    present = [k for k in OVERALL_PARTS if k in row_cells]
    odd = [k for k in present if not row_cells[k].comparable]
    notes = [overall.note()] + ([f"part(s) not comparable with their column: "
                                 f"{', '.join(odd)}"] if odd else [])
    return Cell(value=overall.value, n=sum(row_cells[k].n for k in present),
                comparable=not (overall.partial or odd), note="; ".join(notes),
                epochs=min(row_cells[k].epochs for k in present),
                logs=[path for k in present for path in row_cells[k].logs])


def _differences(settings: dict[str, str], reference: dict[str, str]) -> str:
    """`key value (column: value)` for every setting that differs, `; `-joined."""
    keys = sorted(set(settings) | set(reference))
    return "; ".join(f"{k} {settings.get(k, '-')} (column: {reference.get(k, '-')})"
                     for k in keys if settings.get(k) != reference.get(k))


def _average(row_cells: dict[str, Cell], parts: list[str], records: dict[str, LogRecord],
             key: str) -> Cell | None:
    present = [p for p in parts if p in row_cells]
    if not present:
        return None
    values = []
    for part in present:
        values += trial_values(records[part], cols.column(part), stratum_as=part)
    est = estimate(values, stratified=True)
    if est is None:
        return None
    missing = [p.split(".", 1)[1] for p in parts if p not in row_cells]
    odd = [p.split(".", 1)[1] for p in present if not row_cells[p].comparable]
    settings = {json.dumps({k: v for k, v in records[p].comparability.items()
                            if k in ("epochs", "limit") or k.startswith("role.")},
                           sort_keys=True) for p in present}
    notes = []
    if missing:
        notes.append(f"partial: mean of {', '.join(p.split('.', 1)[1] for p in present)} "
                     f"only ({', '.join(missing)} missing)")
    if odd:
        notes.append(f"part(s) not comparable with their column: {', '.join(odd)}")
    if len(settings) > 1:
        notes.append("parts run with different epochs, limits or user/judge models")
    return Cell(value=est.value, n=est.n, ci_low=est.low, ci_high=est.high,
                ci_method="bootstrap", epochs=min(row_cells[p].epochs for p in present),
                comparable=not notes, note="; ".join(notes) or f"mean of {len(present)} "
                f"{key} parts", logs=[path for p in present for path in row_cells[p].logs])


def _row_info(rec: LogRecord) -> RowInfo:
    prov: dict[str, Any] = rec.provenance
    step = prov.get("step")
    return RowInfo(key=rec.row, label=rec.row, kind="measured", model=rec.model,
                   run_id=prov.get("run_id"), method=prov.get("method"),
                   step=int(step) if isinstance(step, int | str) and str(step).isdigit()
                   else None,
                   base_model=model_name(str(prov["base_model"])) if prov.get("base_model")
                   else None,
                   hub_id=str(prov["hub_id"]) if prov.get("hub_id") else None)


def _base_row(row: RowInfo, rows: dict[str, RowInfo]) -> str | None:
    """A checkpoint's base: the measured row of its base model (scored by `envfactory
    score` as method "base", preferably in the same run, or run under its model name)."""
    if row.base_model is None or row.method == "base":
        return None
    candidates = [r for r in rows.values() if r.key != row.key and (
        (r.method == "base" and r.base_model == row.base_model) or r.key == row.base_model)]
    candidates.sort(key=lambda r: (r.run_id != row.run_id, r.key))
    return candidates[0].key if candidates else None


def build_table(records: list[LogRecord], baselines: BaselineFile | None = None,
                checkpoints: CheckpointFile | None = None) -> Leaderboard:
    """The leaderboard of `records` (and the reported baselines, when given; with the
    released checkpoints too, the reproduction gap of each one measured here)."""
    picked = pick_logs(records)
    rows: dict[str, RowInfo] = {}
    settings: dict[tuple[str, str], dict[str, str]] = {}
    sources: dict[str, dict[str, LogRecord]] = defaultdict(dict)
    known: dict[str, cols.Column] = {}
    for rec in picked.kept:
        row = rows.setdefault(rec.row, _row_info(rec))
        for column in _columns(rec):
            cell = _measured_cell(rec, column)
            if cell is None:
                continue
            known[column.key] = column
            cell.others = picked.others.get(rec.path, [])
            reference = picked.references[column.key][0]
            if rec.comparability != reference:
                cell.comparable = False
                cell.note = "not comparable: " + _differences(rec.comparability, reference)
            row.cells[column.key] = cell
            settings[(rec.row, column.key)] = rec.comparability
            sources[rec.row][column.key] = rec
    # averages over a benchmark's parts, within a row
    for avg_key, parts in cols.AVERAGES.items():
        for r in rows.values():
            cell = _average(r.cells, parts, sources[r.key], cols.column(avg_key).benchmark)
            if cell is not None:
                r.cells[avg_key] = cell
                known[avg_key] = cols.column(avg_key)
    for r in rows.values():
        cell = _overall(r.cells)
        if cell is not None:
            r.cells[OVERALL_KEY] = cell
            known[OVERALL_KEY] = cols.column(OVERALL_KEY)
    # deltas against the base row, between cells of identical settings
    for r in rows.values():
        r.base_row = _base_row(r, rows)
        if r.base_row is None:
            continue
        base = rows[r.base_row]
        for key, cell in r.cells.items():
            other = base.cells.get(key)
            if other is None or key in cols.AVERAGES or key == OVERALL_KEY:
                continue
            if settings.get((r.key, key)) == settings.get((base.key, key)):
                cell.delta = cell.value - other.value
    reported = reported_rows(baselines) if baselines is not None else []
    for rep in reported:
        for key in rep.cells:
            known.setdefault(key, cols.column(key))
    columns = []
    for c in sorted(known.values(), key=lambda c: cols.order_key(c.key)):
        reference, source = picked.references.get(c.key, ({}, None))
        columns.append(ColumnInfo(key=c.key, title=c.title, benchmark=c.benchmark,
                                  metric=c.metric, headline=c.headline, reference=reference,
                                  reference_from=source, aggregate=c.aggregate))
    measured = sorted(rows.values(), key=lambda r: (r.run_id or "", r.step or -1, r.key))
    gaps = (reproduction_gaps(measured + reported, picked.kept, checkpoints,
                              baselines.protocol)
            if baselines is not None and checkpoints is not None else [])
    return Leaderboard(columns=columns, rows=measured + reported,
                       curves=_curves(measured), superseded=picked.superseded,
                       baselines_source=baselines.paper if baselines else None,
                       ablations=baselines.ablations if baselines else [],
                       ablations_note=baselines.ablations_note if baselines else "",
                       gaps=gaps, protocol_note=baselines.protocol.note if gaps and baselines
                       else "")


def _curves(rows: list[RowInfo]) -> dict[str, dict[str, list[CurvePoint]]]:
    """Score vs step per run and column: the run's checkpoints, with the run's base row
    (method "base", same run id) as step 0 — else its checkpoints' base row (`_base_row`:
    the base model scored on its own, as `envfactory demo` does)."""
    out: dict[str, dict[str, list[CurvePoint]]] = {}
    runs: dict[str, list[RowInfo]] = defaultdict(list)
    by_key = {r.key: r for r in rows}
    for r in rows:
        if r.run_id and (r.step is not None or r.method == "base"):
            runs[r.run_id].append(r)
    for run_id, members in sorted(runs.items()):
        if not any(m.step is not None and m.method != "base" for m in members):
            continue
        if not any(m.method == "base" for m in members):
            bases = sorted({m.base_row for m in members if m.base_row in by_key})
            if bases:
                members = [*members, by_key[bases[0]]]
        per_col: dict[str, list[CurvePoint]] = defaultdict(list)
        for m in members:
            step = 0 if m.method == "base" else m.step
            assert step is not None
            for key, cell in m.cells.items():
                per_col[key].append(CurvePoint(step=step, row=m.key, value=cell.value,
                                               ci_low=cell.ci_low, ci_high=cell.ci_high,
                                               comparable=cell.comparable))
        out[run_id] = {k: sorted(v, key=lambda p: p.step) for k, v in per_col.items()}
    return out
