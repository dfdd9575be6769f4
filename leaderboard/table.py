"""`LogRecord`s (+ baselines) → the `Leaderboard`: cells, comparability, averages, deltas
and checkpoint curves.

Rules that keep the numbers honest:

* One log per row and task: the newest finished one; older ones are listed as
  superseded, never merged into it.
* A column's reference settings are those most of its measured cells share; a cell with
  other settings (data version, release, task options, epochs, limit, user/judge model)
  is marked not comparable, with the differing settings named.
* An average over a benchmark's parts (τ² domains, VitaBench task sets) is taken within a
  row only; a row that lacks a part or has a part not comparable with its column gets a
  marked cell that says so.
* Deltas are taken only between cells of identical settings.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any

from leaderboard import columns as cols
from leaderboard.baselines import BaselineFile, reported_rows
from leaderboard.records import (
    Cell,
    ColumnInfo,
    CurvePoint,
    Leaderboard,
    LogRecord,
    RowInfo,
)
from leaderboard.stats import estimate, pass_hat_curve

__all__ = ["build_table", "latest_logs", "trial_values"]

TOL = 1e-6


def latest_logs(records: list[LogRecord]) -> tuple[list[LogRecord], list[str]]:
    """The newest log per (row, task), and the paths of the others (superseded)."""
    best: dict[tuple[str, str], LogRecord] = {}
    superseded = []
    for rec in sorted(records, key=lambda r: (r.created, r.path)):
        key = (rec.row, rec.task)
        if key in best:
            superseded.append(best[key].path)
        best[key] = rec
    return list(best.values()), superseded


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


def _describe(settings: dict[str, str], reference: dict[str, str]) -> str:
    keys = sorted(set(settings) | set(reference))
    parts = [f"{k} {settings.get(k, '-')} (column: {reference.get(k, '-')})"
             for k in keys if settings.get(k) != reference.get(k)]
    return "not comparable: " + "; ".join(parts)


def _reference(entries: list[tuple[dict[str, str], int]]) -> dict[str, str]:
    """The settings most cells share (ties: more samples, then the lexically first)."""
    counts: Counter[str] = Counter()
    samples: Counter[str] = Counter()
    for settings, n in entries:
        key = json.dumps(settings, sort_keys=True)
        counts[key] += 1
        samples[key] += n
    best = min(counts, key=lambda k: (-counts[k], -samples[k], k))
    return dict(json.loads(best))


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
                   base_model=prov.get("base_model"))


def _base_row(row: RowInfo, rows: dict[str, RowInfo]) -> str | None:
    """A checkpoint's base: the measured row of its base model (scored by `envfactory
    score` as method "base", preferably in the same run, or run under its model name)."""
    if row.base_model is None or row.method == "base":
        return None
    candidates = [r for r in rows.values() if r.key != row.key and (
        (r.method == "base" and r.base_model == row.base_model) or r.key == row.base_model)]
    candidates.sort(key=lambda r: (r.run_id != row.run_id, r.key))
    return candidates[0].key if candidates else None


def build_table(records: list[LogRecord], baselines: BaselineFile | None = None
                ) -> Leaderboard:
    """The leaderboard of `records` (and the reported baselines, when given)."""
    kept, superseded = latest_logs(records)
    rows: dict[str, RowInfo] = {}
    settings: dict[tuple[str, str], dict[str, str]] = {}
    sources: dict[str, dict[str, LogRecord]] = defaultdict(dict)
    known: dict[str, cols.Column] = {}
    for rec in kept:
        row = rows.setdefault(rec.row, _row_info(rec))
        for column in cols.columns_for(rec.benchmark, rec.task, {
                "domain": rec.comparability.get("domain"),
                "task_set": rec.comparability.get("task_set")}):
            cell = _measured_cell(rec, column)
            if cell is None:
                continue
            known[column.key] = column
            row.cells[column.key] = cell
            settings[(rec.row, column.key)] = rec.comparability
            sources[rec.row][column.key] = rec
    # comparability within each column
    references: dict[str, dict[str, str]] = {}
    for key in known:
        entries = [(settings[(r.key, key)], r.cells[key].n) for r in rows.values()
                   if key in r.cells]
        references[key] = ref = _reference(entries)
        for r in rows.values():
            if key in r.cells and settings[(r.key, key)] != ref:
                r.cells[key].comparable = False
                r.cells[key].note = _describe(settings[(r.key, key)], ref)
    # averages over a benchmark's parts, within a row
    for avg_key, parts in cols.AVERAGES.items():
        for r in rows.values():
            cell = _average(r.cells, parts, sources[r.key], cols.column(avg_key).benchmark)
            if cell is not None:
                r.cells[avg_key] = cell
                known[avg_key] = cols.column(avg_key)
    # deltas against the base row, between cells of identical settings
    for r in rows.values():
        r.base_row = _base_row(r, rows)
        if r.base_row is None:
            continue
        base = rows[r.base_row]
        for key, cell in r.cells.items():
            other = base.cells.get(key)
            if other is None or key in cols.AVERAGES:
                continue
            if settings.get((r.key, key)) == settings.get((base.key, key)):
                cell.delta = cell.value - other.value
    reported = reported_rows(baselines) if baselines is not None else []
    for rep in reported:
        for key in rep.cells:
            known.setdefault(key, cols.column(key))
    columns = [ColumnInfo(key=c.key, title=c.title, benchmark=c.benchmark, metric=c.metric,
                          headline=c.headline, reference=references.get(c.key, {}))
               for c in sorted(known.values(), key=lambda c: cols.order_key(c.key))]
    measured = sorted(rows.values(), key=lambda r: (r.run_id or "", r.step or -1, r.key))
    return Leaderboard(columns=columns, rows=measured + reported,
                       curves=_curves(measured), superseded=superseded,
                       baselines_source=baselines.paper if baselines else None)


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
