"""Progress callbacks rendered with rich: the library reports `(stage, done, total)`, the
command shows one bar per stage. So the library folders never import rich for a command."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

__all__ = ["OnProgress", "stage_bars"]

#: the callback a library function takes: `on_progress(stage, done, total)`
OnProgress = Callable[[str, int, int | None], None]


@contextmanager
def stage_bars(console: Console | None = None, *, transient: bool = True,
               most: int | None = None) -> Iterator[OnProgress]:
    """A callback drawing one bar per stage (on stderr unless `console` says otherwise),
    for as long as the `with` block runs; with `most`, only the newest `most` stages keep
    a bar (a command that runs for days, like `score watch`, adds stages without end).
    Nothing is drawn until the first stage reports (a command that fails first prints its
    one error line alone). The callback may be called from any thread."""
    # the stage's name as plain text: it is data (`[1/2]` in it is no markup), and a
    # `console.print(..., markup=False)` while the bars are up re-renders them with markup
    # off, which used to print the style tag itself ("[progress.description]...")
    progress = Progress(TextColumn("{task.description}", style="progress.description",
                                   markup=False), BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console or Console(stderr=True), transient=transient)
    bars: dict[str, TaskID] = {}
    lock = threading.Lock()

    def update(stage: str, done: int, total: int | None) -> None:
        with lock:
            if not bars:
                progress.start()
            if stage not in bars:
                bars[stage] = progress.add_task(stage, total=total)
                if most is not None and len(bars) > most:
                    progress.remove_task(bars.pop(next(iter(bars))))
            progress.update(bars[stage], completed=done, total=total)

    try:
        yield update
    finally:
        with lock:
            if bars:
                progress.stop()
