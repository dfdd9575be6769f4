"""`envfactory models ...`: the packaged local models for offline runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from envfactory.cli.errors import CommandError
from envfactory.cli.options import out_dir_option

__all__ = ["models_app"]

models_app = typer.Typer(help="Local models for offline runs.", no_args_is_help=True)


@models_app.command("prepare")
def models_prepare(
    name: Annotated[str, typer.Argument(help="Local model to prepare (smollm2, tiny-qwen3).")],
    out_dir: Annotated[Path | None, out_dir_option(
        "Target folder (default: $ENVFACTORY_MODELS_DIR, else $ENVFACTORY_CACHE/models, "
        "plus the model's name).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Rebuild even if up to date.")] = False,
) -> None:
    """Convert a packaged local model for `--model hf/local -M model_path=DIR`; print DIR."""
    from rich.console import Console

    from training import local_models
    from training.reporting import say_on

    try:  # the steps on stderr: stdout is the directory alone
        path = local_models.prepare(name, out_dir, force=force,
                                    say=say_on(Console(stderr=True)))
    except KeyError as e:
        raise CommandError(e.args[0]) from None
    print(path)
