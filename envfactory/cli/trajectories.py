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
    logs: Annotated[list[Path], typer.Argument(help="Inspect log files (.eval / .json), or "
                                                    "folders of them (read recursively).")],
    out: Annotated[Path, out_file_option("JSONL file of canonical Trajectory records "
                                         "(replaced only when every log converts).")],
) -> None:
    """Convert Inspect logs of any benchmark into canonical `Trajectory` records (what
    training exports, `tau2 grade` and `envfactory/replay -M path=` read).

    All or nothing: a log that cannot be read, or logs without a single sample, fail the
    command (exit 1) and leave `--out` as it was."""
    from harness.logs import find_logs
    from harness.logs import trajectories as read_trajectories
    from harness.trajectory import Trajectory, write_jsonl

    if out.is_dir():
        raise typer.BadParameter(f"--out {out}: is a folder; name the JSONL file to write")
    files = find_logs(logs)
    count = 0

    def converted() -> Iterator[Trajectory]:
        nonlocal count
        for log in files:
            try:
                for trajectory in read_trajectories(log):
                    yield trajectory
                    count += 1
            except (OSError, ValueError) as e:
                raise CommandError(f"{log}: not a readable Inspect log ({e})") from None
        if count == 0:  # raised inside the write, so --out is left as it was
            raise CommandError(f"no samples in {', '.join(map(str, files))}: nothing to "
                               f"convert, {out} left as it was")

    write_jsonl(out, converted())
    Console().print(f"{count} trajectories from {len(files)} logs -> {out}")
