"""`envfactory trajectories LOG... --out FILE`: Inspect logs -> canonical `Trajectory` JSONL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from envfactory.cli.errors import CommandError
from envfactory.cli.options import out_file_option

__all__ = ["trajectories"]


def trajectories(
    logs: Annotated[list[Path], typer.Argument(help="Inspect log files (.eval / .json).")],
    out: Annotated[Path, out_file_option("JSONL file of canonical Trajectory records "
                                         "(replaced when the conversion succeeds).")],
) -> None:
    """Convert Inspect logs of any benchmark into canonical `Trajectory` records (what
    training exports, `tau2 grade` and `envfactory/replay -M path=` read)."""
    from harness.logs import trajectories as read_trajectories
    from harness.trajectory import Trajectory, write_jsonl

    count = 0

    def converted() -> Iterator[Trajectory]:
        nonlocal count
        for log in logs:
            try:
                for trajectory in read_trajectories(log):
                    yield trajectory
                    count += 1
            except (OSError, ValueError) as e:
                raise CommandError(f"{log}: {e}") from None

    write_jsonl(out, converted())
    Console().print(f"{count} trajectories -> {out}")
