"""The page's plots, as SVG files (matplotlib, no display needed): per-benchmark bars with
95% intervals (reported baselines hatched, non-comparable cells faded), score-vs-step
curves per training run, and failure-taxonomy bars.

Each bar plot comes twice: with the reported rows and without them (`*.measured.svg`),
so the page can show a few measured rows without eleven published ones dwarfing them.
All bar plots of one variant have the same height and bar pitch (empty slots at the
bottom), so they line up in the page's grid.
"""

from __future__ import annotations

import io
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import matplotlib

matplotlib.use("Agg")
# text stays text in the SVG (no glyph outlines): several times faster and smaller files
matplotlib.rcParams["svg.fonttype"] = "none"
import matplotlib.pyplot as plt  # noqa: E402 - after choosing the headless backend

from envs.jsonl import write_atomic  # noqa: E402
from leaderboard.records import Cell, Leaderboard, RowInfo  # noqa: E402
from leaderboard.taxonomy import CATEGORIES  # noqa: E402

__all__ = ["MAX_BARS", "Plot", "write_plots"]

MAX_BARS = 30
"""Measured rows per bar plot (the best ones; the table has them all), and row ×
benchmark groups in the taxonomy plot (the most failures)."""


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")


@dataclass(frozen=True)
class Plot:
    """One plot file; a bar plot also names its variant without the reported rows."""

    kind: Literal["bars", "curve", "taxonomy"]
    path: Path
    measured_only: Path | None = None


def _save(fig: plt.Figure, path: Path) -> None:
    """The figure as SVG, replacing `path` whole (temporary file + rename)."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg")
    plt.close(fig)
    write_atomic(path, buffer.getvalue())


def _bar_rows(board: Leaderboard, key: str, with_reported: bool
              ) -> tuple[list[tuple[RowInfo, Cell]], int]:
    """The rows a bar plot of `key` shows (the best `MAX_BARS` measured ones, then the
    reported ones), and how many measured rows there are in all."""
    measured = [(r, r.cells[key]) for r in board.rows
                if key in r.cells and r.kind == "measured"]
    shown = sorted(measured, key=lambda rc: -rc[1].value)[:MAX_BARS]
    rows = [rc for rc in measured if rc in shown]
    if with_reported:
        rows += [(r, r.cells[key]) for r in board.rows if key in r.cells and r.kind == "reported"]
    return rows, len(measured)


def _bars(rows: list[tuple[RowInfo, Cell]], measured: int, title: str, slots: int,
          path: Path) -> None:
    shown = sum(r.kind == "measured" for r, _ in rows)
    if measured > shown:
        title += f" (best {shown} of {measured} measured)"
    fig, ax = plt.subplots(figsize=(7, 0.35 * slots + 1.2))
    labels = [r.label for r, _ in rows]
    values = [100 * c.value for _, c in rows]
    lows = [100 * (c.value - c.ci_low) if c.ci_low is not None else 0 for _, c in rows]
    highs = [100 * (c.ci_high - c.value) if c.ci_high is not None else 0 for _, c in rows]
    colors = ["#bbbbbb" if c.reported else "#4c72b0" if c.comparable else "#dd8452"
              for _, c in rows]
    bars = ax.barh(range(len(rows)), values, xerr=[lows, highs], color=colors,
                   capsize=3, edgecolor="#333333", linewidth=0.4)
    for bar, (_, c) in zip(bars, rows, strict=True):
        if c.reported:
            bar.set_hatch("//")
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.set_ylim(slots - 0.5, -0.5)  # top to bottom, the same pitch in every bar plot
    ax.set_xlim(0, 100)
    ax.set_xlabel("%  (blue: measured, orange: not comparable, grey: reported)")
    ax.set_title(title)
    fig.subplots_adjust(left=0.38, right=0.97, bottom=0.8 / fig.get_figheight(),
                        top=1 - 0.4 / fig.get_figheight())
    _save(fig, path)


def _curve(board: Leaderboard, run_id: str, path: Path) -> bool:
    per_col = board.curves.get(run_id, {})
    titles = {c.key: c.title for c in board.columns if c.headline}
    shown = {k: v for k, v in per_col.items() if k in titles}
    if not shown:
        return False
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for key, points in shown.items():
        steps = [p.step for p in points]
        values = [100 * p.value for p in points]
        line = ax.plot(steps, values, marker="o", label=titles[key])[0]
        lows = [100 * (p.ci_low if p.ci_low is not None else p.value) for p in points]
        highs = [100 * (p.ci_high if p.ci_high is not None else p.value) for p in points]
        ax.fill_between(steps, lows, highs, alpha=0.15, color=line.get_color())
    ax.set_xlabel("training step (0 = base model)")
    ax.set_ylabel("%")
    ax.set_ylim(0, 100)
    ax.set_title(f"run {run_id}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    _save(fig, path)
    return True


def _taxonomy(board: Leaderboard, path: Path) -> bool:
    if not board.taxonomy:
        return False
    groups: dict[str, dict[str, int]] = defaultdict(dict)
    for t in board.taxonomy:
        groups[f"{t.row} · {t.benchmark}"][t.category] = t.count
    labels = sorted(sorted(groups), key=lambda g: -sum(groups[g].values()))[:MAX_BARS]
    fig, ax = plt.subplots(figsize=(10, 0.4 * len(labels) + 1.6))
    left = [0] * len(labels)
    cmap = plt.get_cmap("tab20")
    for i, category in enumerate(CATEGORIES):
        counts = [groups[label].get(category, 0) for label in labels]
        if not any(counts):
            continue
        ax.barh(range(len(labels)), counts, left=left, label=category, color=cmap(i))
        left = [a + b for a, b in zip(left, counts, strict=True)]
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("failed trials")
    ax.set_title("Failure taxonomy" + (f" (the {len(labels)} of {len(groups)} model × "
                                        "benchmark pairs with most failures)"
                                        if len(groups) > len(labels) else ""))
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.subplots_adjust(left=0.42, right=0.72, bottom=0.8 / fig.get_figheight(),
                        top=1 - 0.4 / fig.get_figheight())
    _save(fig, path)
    return True


def write_plots(board: Leaderboard, out: Path) -> list[Plot]:
    """Every plot under `out/plots/`, each file replaced whole; returns what was written."""
    folder = out / "plots"
    written: list[Plot] = []
    headline = [c for c in board.columns if c.headline]
    both = {c.key: _bar_rows(board, c.key, True) for c in headline}
    alone = {c.key: _bar_rows(board, c.key, False) for c in headline}
    slots_both = max((len(rows) for rows, _ in both.values()), default=0)
    slots_alone = max((len(rows) for rows, _ in alone.values()), default=0)
    for c in headline:
        rows, measured = both[c.key]
        if not rows:
            continue
        path = folder / f"bars_{_slug(c.key)}.svg"
        _bars(rows, measured, c.title, slots_both, path)
        only: Path | None = None
        if alone[c.key][0]:
            only = folder / f"bars_{_slug(c.key)}.measured.svg"
            _bars(*alone[c.key], c.title, slots_alone, only)
        written.append(Plot("bars", path, only))
    for run_id in board.curves:
        path = folder / f"curve_{_slug(run_id)}.svg"
        if _curve(board, run_id, path):
            written.append(Plot("curve", path))
    path = folder / "taxonomy.svg"
    if _taxonomy(board, path):
        written.append(Plot("taxonomy", path))
    return written
