"""`envfactory demo`: the whole loop in miniature on a CPU (train, then score, then compare)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from envfactory.cli.errors import CommandError
from envfactory.cli.progress import stage_bars

__all__ = ["demo"]


def demo(
    limit: Annotated[int, typer.Option(help="Held-out first turns scored per model (at most "
                                            "40; fewer than 20 measure little).",
                                       min=1)] = 24,
    max_tokens: Annotated[int, typer.Option(help="Most tokens per reply when scoring.",
                                            min=1)] = 64,
    cache: Annotated[Path | None, typer.Option(
        help="Where the tuned model and the logs go (default $ENVFACTORY_CACHE/demo).")
    ] = None,
) -> None:
    """The loop in miniature: LoRA SFT of SmolLM2, then base and tuned auto-scored on the
    same held-out first turns and compared, with 95% intervals."""
    from envfactory.cli.score import print_score
    from training.demo import comparison_rows, run_demo, verdict
    from training.reporting import say_on

    console = Console()
    try:
        with stage_bars(console) as on_progress:
            before, after, comparisons = run_demo(
                cache, limit=limit, max_tokens=max_tokens, say=say_on(console),
                on_progress=on_progress, on_result=lambda r: print_score(r, console))
    except RuntimeError as e:  # a step of the demo failed (training, scoring)
        raise CommandError(str(e)) from None
    n = comparisons[0].n
    table = Table(title=f"SmolLM2-135M before and after SFT: {n} held-out first turns "
                        "(mean [95% interval])")
    for column in ("first turns that ...", "base", "tuned", "tuned − base",
                   "significant"):
        table.add_column(column)
    for row in comparison_rows(comparisons):
        table.add_row(*(escape(cell) for cell in row))
    console.print(table)
    console.print("Intervals: mean ± 1.96 standard errors; the difference is paired by "
                  "sample (the same first turns), significant when its interval excludes 0 "
                  "(a paired z-test at 5%). A point interval means no spread was observed.",
                  soft_wrap=True)
    for line in verdict(comparisons):
        console.print(escape(line), soft_wrap=True)
    console.print(f"logs: {escape(str(before.log_dir))} and {escape(str(after.log_dir))} "
                  "(`inspect view --log-dir ...`)", soft_wrap=True)
