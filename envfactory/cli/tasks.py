"""`envfactory tasks ...`: build the held-out EnvFactory task files from specs, validate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from envfactory.cli.options import out_dir_option
from envfactory.cli.progress import stage_bars

__all__ = ["task_dir", "tasks_app"]

tasks_app = typer.Typer(help="EnvFactory task files: build from specs, validate.",
                        no_args_is_help=True)
console = Console()


def task_dir() -> Path:
    """The held-out task folder of this checkout (specs/, splits.json, data/)."""
    from tasks._envfactory.dataset import DATA_DIR

    return DATA_DIR.parent


@tasks_app.command("build")
def tasks_build(
    specs: Annotated[Path | None, typer.Option(help="Spec directory.")] = None,
    out_dir: Annotated[Path | None, out_dir_option(
        "Folder for the <split>.jsonl files (default: the task folder's data/).")] = None,
) -> None:
    """Replay task specs into canonical Trajectory files (<split>.jsonl)."""
    from synthesis.task_specs import build_all

    base = task_dir()
    with stage_bars(console) as on_progress:
        counts = build_all(specs or base / "specs", base / "splits.json",
                           out_dir or base / "data", on_progress=on_progress)
    for split, n in counts.items():
        console.print(f"{split}: {n} tasks")


@tasks_app.command("check")
def tasks_check(
    files: Annotated[list[Path] | None, typer.Argument(help="Trajectory JSONL files.")] = None,
) -> None:
    """Validate tasks: gold calls succeed, writes change state, arguments are grounded,
    recorded gold states match replay. Exits 1 if any task is rejected."""
    from harness.trajectory import read_jsonl
    from synthesis.task_specs import check

    paths = files or sorted((task_dir() / "data").glob("*.jsonl"))
    rejected = total = 0
    for path in paths:
        for task in read_jsonl(path):
            total += 1
            problems = check(task)
            if problems:
                rejected += 1
                console.print(f"[red]REJECT[/red] {path.name}:{task.id}")
                for p in problems:
                    console.print(f"  - {p}")
    console.print(f"{total - rejected}/{total} tasks valid")
    if rejected:
        raise typer.Exit(1)
