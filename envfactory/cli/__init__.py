"""`envfactory` console script: the non-Inspect work, one module per command group.

Evaluation itself is plain `inspect eval tasks/<bench>`; this CLI prepares and inspects
what those runs need. Each group lives in its own module here (`env`, `models`, `tasks`,
`tau2`, `vitabench`, `mcp_atlas`, `synth`, `envgen`, `train`, `score`, `leaderboard`,
`hub`, `data`, and the single commands `demo`, `doctor`, `reward`, `trajectories`); the
shared option types are in `options.py`, the one error style and exit codes in
`errors.py`. The library folders hold no command code: a command calls a plain function
and renders its progress callbacks with rich.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

import envfactory
from envfactory.cli.data import data_app
from envfactory.cli.demo import demo
from envfactory.cli.doctor import doctor
from envfactory.cli.env import env_app
from envfactory.cli.envgen import envgen_app
from envfactory.cli.errors import CliGroup
from envfactory.cli.hub import hub_app
from envfactory.cli.leaderboard import leaderboard_app
from envfactory.cli.mcp_atlas import mcp_atlas_app
from envfactory.cli.models import models_app
from envfactory.cli.reward import reward
from envfactory.cli.score import score_app
from envfactory.cli.synth import synth_app
from envfactory.cli.tasks import tasks_app
from envfactory.cli.tau2 import tau2_app
from envfactory.cli.train import train_app
from envfactory.cli.trajectories import trajectories
from envfactory.cli.vitabench import vitabench_app

__all__ = ["app"]

app = typer.Typer(cls=CliGroup, no_args_is_help=True,
                  help="envfactory: tool-use agent environments, evaluation and training.")
for name, group in (("env", env_app), ("models", models_app), ("tasks", tasks_app),
                    ("tau2", tau2_app), ("vitabench", vitabench_app),
                    ("mcp-atlas", mcp_atlas_app), ("synth", synth_app),
                    ("envgen", envgen_app), ("train", train_app), ("score", score_app),
                    ("leaderboard", leaderboard_app), ("hub", hub_app), ("data", data_app)):
    app.add_typer(group, name=name)
app.command("demo")(demo)
app.command("doctor")(doctor)
app.command("reward")(reward)
app.command("trajectories")(trajectories)


def _version_callback(value: bool) -> None:
    if value:
        Console().print(f"envfactory {envfactory.__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version_callback, is_eager=True,
                           help="Print the version and exit.")
    ] = False,
) -> None:
    """envfactory command line."""
