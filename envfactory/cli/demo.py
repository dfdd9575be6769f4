"""`envfactory demo`: the whole loop in miniature on a CPU (train, then score)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from envfactory.cli.errors import CommandError
from envfactory.cli.progress import stage_bars

__all__ = ["demo"]


def demo(
    limit: Annotated[int, typer.Option(help="BFCL single-turn entries scored (the held-out "
                                            "suite: its first task).", min=1)] = 5,
    max_tokens: Annotated[int, typer.Option(help="Most tokens per reply when scoring.",
                                            min=1)] = 64,
    cache: Annotated[Path | None, typer.Option(
        help="Where the tuned model and the logs go (default $ENVFACTORY_CACHE/demo).")
    ] = None,
) -> None:
    """The loop in miniature: LoRA SFT of SmolLM2, then base and tuned auto-scored."""
    from training.demo import run_demo

    console = Console()
    try:
        with stage_bars(console) as on_progress:
            run_demo(cache, limit=limit, max_tokens=max_tokens, console=console,
                     on_progress=on_progress)
    except RuntimeError as e:  # a step of the demo failed (training, scoring)
        raise CommandError(str(e)) from None
