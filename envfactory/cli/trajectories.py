"""`envfactory trajectories LOG... --out FILE`: Inspect logs -> canonical `Trajectory` JSONL."""

from __future__ import annotations

import os
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

    count = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    with partial.open("w", encoding="utf-8") as f:
        for log in logs:
            try:
                for trajectory in read_trajectories(log):
                    f.write(trajectory.model_dump_json(exclude_none=True) + "\n")
                    count += 1
            except (OSError, ValueError) as e:
                f.close()
                partial.unlink()
                raise CommandError(f"{log}: {e}") from None
    os.replace(partial, out)
    Console().print(f"{count} trajectories -> {out}")
