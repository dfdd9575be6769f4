"""How training's long library calls (scoring, watching, vLLM, SFT, the demo, local
models) report to whoever runs them, without a rendering library: a line of plain text at
a time (`Say`), progress as numbers (`OnProgress`), results as the values they return. The
commands in `envfactory/cli/` render these (rich consoles, bars, tables); a library caller
gets the lines on stderr (`to_stderr`), so stdout stays the caller's."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["OnProgress", "Printer", "Say", "say_on", "to_stderr"]

Say = Callable[[str], None]
"""Called with one line of plain text (no markup: paths may hold brackets)."""

OnProgress = Callable[[str, int, "int | None"], None]
"""`on_progress(stage, done, total)` (`total` None until known), as
`envfactory.cli.progress.stage_bars` draws it: a bar per stage."""


def to_stderr(line: str) -> None:
    """The default `Say`: the line on stderr, flushed (a long call shows it at once)."""
    print(line, file=sys.stderr, flush=True)


class Printer(Protocol):
    """What a command renders with (rich's `Console`), named by what it does, so this
    module needs no rendering library."""

    def print(self, *objects: Any, **options: Any) -> None: ...


def say_on(console: Printer) -> Say:
    """The lines on `console` as they are: no markup or highlighting (paths and task
    output hold brackets), no wrapping."""
    return lambda line: console.print(line, markup=False, highlight=False, soft_wrap=True)
