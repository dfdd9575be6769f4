"""The table as Markdown, CSV (one line per cell) and JSON (the whole `Leaderboard`).

Percentages everywhere a person reads them; fractions in CSV/JSON, as the logs hold them.
A cell not comparable with its column carries a `†` and a numbered note saying which
settings differ; reported (published) numbers are marked `(rep.)` and never get an
interval they do not have. The Markdown's reproduction-gap table (`leaderboard.gap`) gives
percentage points, measured − reported, with the measured interval moved by the reported
value; the JSON holds the same rows (`Leaderboard.gaps`).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from envs.jsonl import write_atomic
from leaderboard.records import Cell, ColumnInfo, GapCell, Leaderboard

__all__ = ["ablations_markdown", "cell_text", "column_title", "gap_columns", "gap_markdown",
           "gap_marks", "gap_text", "other_runs_text", "to_csv", "to_json", "to_markdown",
           "write_outputs"]


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def cell_text(cell: Cell) -> str:
    """`48.5 [40.1, 56.9] n=200` (measured) or `49.0 (rep.)`, with the delta against the
    base row where there is one."""
    if cell.reported:
        text = f"{100 * cell.value:.2f} (rep.)"
    else:
        text = _pct(cell.value)
        if cell.ci_low is not None and cell.ci_high is not None:
            text += f" [{_pct(cell.ci_low)}, {_pct(cell.ci_high)}]"
        text += f" n={cell.n}"
        if cell.epochs > 1:
            text += f"×{cell.epochs}"
        if len(cell.pass_hat) > 1:
            text += " " + " ".join(f"{k}={_pct(v)}" for k, v in cell.pass_hat.items())
    if cell.delta is not None:
        text += f" ({'+' if cell.delta >= 0 else ''}{100 * cell.delta:.2f})"
    return text


def _points(value: float) -> str:
    return f"{100 * value:+.2f}".replace("-", "−")


def gap_text(cell: GapCell) -> str:
    """`+1.25 [−3.10, +5.60] (49.75 n=8 vs 48.50 rep.)`: percentage points, the interval
    from the measured cell's, then the two values compared."""
    text = _points(cell.gap)
    if cell.gap_low is not None and cell.gap_high is not None:
        text += f" [{_points(cell.gap_low)}, {_points(cell.gap_high)}]"
    runs = f"n={cell.n}" + (f"×{cell.epochs}" if cell.epochs > 1 else "")
    return text + f" ({100 * cell.measured:.2f} {runs} vs {100 * cell.reported:.2f} rep.)"


def gap_marks(cell: GapCell, notes: list[str]) -> tuple[str, list[int]]:
    """The cell's mark (`†`: settings known to differ from the paper's; `?`: settings the
    paper does not state) and the numbers of the notes behind it, in order; a note not yet
    in the table's `notes` is appended to it (one numbering for Markdown and the page)."""
    differs = [*cell.differs, *([cell.note] if cell.note else [])]
    mark = "†" if differs else ("?" if cell.unconfirmed else "")
    numbers = []
    for note in differs + [f"unconfirmed: {u}" for u in cell.unconfirmed]:
        if note not in notes:
            notes.append(note)
        numbers.append(notes.index(note) + 1)
    return mark, sorted(numbers)


def gap_columns(board: Leaderboard) -> list[ColumnInfo]:
    """The columns any gap row has, in the table's order."""
    keys = {k for g in board.gaps for k in g.cells}
    return [c for c in board.columns if c.key in keys]


def gap_markdown(board: Leaderboard) -> list[str]:
    """The reproduction-gap table: one line per released checkpoint scored here."""
    columns = gap_columns(board)
    lines = ["Percentage points, measured − reported [the measured 95% interval minus the "
             "reported value] (measured n=samples vs reported). † = settings known to differ "
             "from the paper's; ? = settings the paper does not state (see notes).", "",
             "| checkpoint (measured − reported) | Hub id @ revision scored | "
             + " | ".join(c.title for c in columns) + " |",
             "|---|---|" + "---|" * len(columns)]
    notes: list[str] = []
    for gap in board.gaps:
        cells = []
        for c in columns:
            cell = gap.cells.get(c.key)
            if cell is None:
                cells.append("")
                continue
            mark, numbers = gap_marks(cell, notes)
            cells.append(gap_text(cell) + (f" {mark}" if mark else "")
                         + (f" [{','.join(map(str, numbers))}]" if numbers else ""))
        where = (f"{gap.hub_id} @ {', '.join(r[:12] for r in gap.revisions) or 'unrecorded'}"
                 f" (`score reproduce {gap.checkpoint_row}`)")
        lines.append(f"| {gap.label} | {where} | " + " | ".join(cells) + " |")
    if notes:
        lines += ["", "Gap notes:", ""] + [f"{i}. {n}" for i, n in enumerate(notes, 1)]
    if board.protocol_note:
        lines += ["", board.protocol_note]
    return lines


def other_runs_text(cell: Cell) -> str:
    """The note of a cell whose row ran its task more than once: which log it uses and
    the others, each with its date, samples and how its settings differ ("" if none).
    The same for every column of one log, so the notes list has it once."""
    if not cell.others or not cell.logs:
        return ""
    others = "; ".join(f"{Path(o.path).name} ({o.created[:16]}, n={o.n}"
                       + (f"; {o.settings}" if o.settings else "") + ")" for o in cell.others)
    return f"uses {Path(cell.logs[0]).name}; other runs of this task, not used: {others}"


def to_markdown(board: Leaderboard) -> str:
    """A Markdown page: the table, its notes, the columns' reference settings, the
    checkpoint curves' points and the failure taxonomy."""
    lines = ["# Leaderboard", ""]
    lines.append("Values in %; measured cells: mean [95% bootstrap interval over samples] "
                 "n=samples(×epochs); (rep.) = reported in "
                 f"{board.baselines_source or 'the paper'}; (±x) = delta against the "
                 "matching base row; † = not comparable with the rest of its column "
                 "(see notes).")
    lines.append("")
    columns = board.columns
    lines.append("| model | " + " | ".join(
        f"**{c.title}**" if c.headline else c.title for c in columns) + " |")
    lines.append("|---|" + "---|" * len(columns))
    notes: list[str] = []
    for row in board.rows:
        cells = []
        for c in columns:
            cell = row.cells.get(c.key)
            if cell is None:
                cells.append("")
                continue
            text = cell_text(cell) + (" †" if not cell.comparable else "")
            marks = []
            for note in (cell.note if not cell.comparable or cell.reported else None,
                         other_runs_text(cell)):
                if note:
                    line = f"{row.label}: {note}"
                    if line not in notes:
                        notes.append(line)
                    marks.append(str(notes.index(line) + 1))
            cells.append(text + (f" [{','.join(marks)}]" if marks else ""))
        lines.append(f"| {row.label} | " + " | ".join(cells) + " |")
    if notes:
        lines += ["", "Notes:", ""] + [f"{i}. {n}" for i, n in enumerate(notes, 1)]
    if board.gaps:
        lines += ["", "## Reproduction gap (released checkpoints, measured − reported)", "",
                  *gap_markdown(board)]
    if board.ablations:
        lines += ["", "## Ablations (reported)", "", *ablations_markdown(board)]
    refs = [c for c in columns if (c.reference and c.headline) or c.aggregate]
    if refs:
        lines += ["", "## Column settings (what comparable cells share)", ""]
        for c in refs:
            aggregate = f"aggregate: {c.aggregate}" if c.aggregate else ""
            if not (c.reference and c.headline):
                lines.append(f"- {c.title}: {aggregate}")
                continue
            shown = ", ".join(f"{k}={v}" for k, v in c.reference.items() if len(v) < 80)
            whence = ("the task as shipped" if c.reference_from == "defaults"
                      else "most rows' (no run used the task's defaults)")
            lines.append(f"- {c.title} ({whence}): {shown}"
                         + (f"; {aggregate}" if aggregate else ""))
    if board.curves:
        lines += ["", "## Checkpoint curves", ""]
        for run_id, per_col in board.curves.items():
            for key, points in per_col.items():
                pts = ", ".join(f"step {p.step}: {_pct(p.value)}" for p in points)
                lines.append(f"- {run_id} · {key}: {pts}")
    if board.taxonomy:
        lines += ["", "## Failure taxonomy", "",
                  "| model | benchmark | failure | count | example (log, sample) |",
                  "|---|---|---|---|---|"]
        for t in board.taxonomy:
            ex = t.examples[0] if t.examples else None
            where = f"{Path(ex.log).name} `{ex.sample_id}`" if ex else ""
            lines.append(f"| {t.row} | {t.benchmark} | {t.category} | {t.count} | {where} |")
    if board.skipped:
        lines += ["", "## Logs left out", ""]
        lines += [f"- {s.path}: {s.reason}" for s in board.skipped]
    return "\n".join(lines) + "\n"


def column_title(board: Leaderboard, key: str) -> str:
    return next((c.title for c in board.columns if c.key == key), key)


def ablations_markdown(board: Leaderboard) -> list[str]:
    """The paper's ablations as a Markdown table (one number per line, with its source)."""
    lines = ["| ablation | setting | model | benchmark | value | source |",
             "|---|---|---|---|---|---|"]
    for a in board.ablations:
        value = f"{a.value:.2f}" + (f" ({a.note})" if a.note else "")
        lines.append(f"| {a.ablation} | {a.setting} | {a.size or 'not stated'} | "
                     f"{column_title(board, a.column)} | {value} | {a.source} |")
    if board.ablations_note:
        lines += ["", board.ablations_note]
    return lines


CSV_FIELDS = ("row", "kind", "column", "value", "ci_low", "ci_high", "ci_method", "n",
              "epochs", "pass_hat", "comparable", "delta", "note", "source", "logs")


def to_csv(board: Leaderboard) -> str:
    """One line per cell (long format), fractions as the logs hold them."""
    out = io.StringIO()
    writer = csv.DictWriter(out, CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in board.rows:
        for c in board.columns:
            cell = row.cells.get(c.key)
            if cell is None:
                continue
            writer.writerow({
                "row": row.label, "kind": row.kind, "column": c.key, "value": cell.value,
                "ci_low": cell.ci_low, "ci_high": cell.ci_high, "ci_method": cell.ci_method,
                "n": cell.n, "epochs": cell.epochs,
                "pass_hat": json.dumps(cell.pass_hat) if cell.pass_hat else "",
                "comparable": cell.comparable,
                "delta": cell.delta, "note": cell.note or "", "source": cell.source or "",
                "logs": " ".join(cell.logs)})
    return out.getvalue()


def to_json(board: Leaderboard) -> str:
    return board.model_dump_json(indent=1) + "\n"


def write_outputs(board: Leaderboard, out: Path) -> dict[str, Path]:
    """leaderboard.md, leaderboard.csv and leaderboard.json under `out`, each replaced
    whole (temporary file + rename: a reader never sees half a file)."""
    files = {"markdown": out / "leaderboard.md", "csv": out / "leaderboard.csv",
             "json": out / "leaderboard.json"}
    write_atomic(files["markdown"], to_markdown(board))
    write_atomic(files["csv"], to_csv(board))
    write_atomic(files["json"], to_json(board))
    return files
