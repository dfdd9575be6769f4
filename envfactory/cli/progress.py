"""Progress callbacks rendered with rich: the library reports `(stage, done, total)`, the
command shows one bar per stage. So the library folders never import rich for a command."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TimeElapsedColumn

__all__ = ["OnProgress", "stage_bars"]

#: the callback a library function takes: `on_progress(stage, done, total)`
OnProgress = Callable[[str, int, int | None], None]


@contextmanager
def stage_bars(console: Console | None = None, *, transient: bool = True
               ) -> Iterator[OnProgress]:
    """A callback drawing one bar per stage (on stderr unless `console` says otherwise),
    for as long as the `with` block runs."""
    progress = Progress("[progress.description]{task.description}", BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console or Console(stderr=True), transient=transient)
    bars: dict[str, TaskID] = {}

    def update(stage: str, done: int, total: int | None) -> None:
        if stage not in bars:
            bars[stage] = progress.add_task(stage, total=total)
        progress.update(bars[stage], completed=done, total=total)

    with progress:
        yield update
