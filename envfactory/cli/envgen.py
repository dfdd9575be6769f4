"""`envfactory envgen ...`: `build` here, `search` in `envgen_search.py`.

Models are Inspect models per EnvGen role (`coder`, `tester`): `--model` is the default of
both, `--model-role ROLE=MODEL` overrides one, `-M key=value` passes model arguments to
`--model`, `--max-tokens` caps every reply (the shared synthesis options).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from envfactory.cli.envgen_search import search_cmd
from envfactory.cli.errors import CommandError
from envfactory.cli.options import (
    MaxTokensOpt,
    ModelArgsOpt,
    max_concurrency_option,
    out_dir_option,
    role_models,
)

__all__ = ["envgen_app"]

envgen_app = typer.Typer(help="EnvGen: environments written and verified by agents.",
                         no_args_is_help=True)
envgen_app.command("search")(search_cmd)
console = Console()


@envgen_app.command("build")
def build_cmd(
    descriptions: Annotated[list[Path], typer.Argument(
        help="API descriptions: EnvFactory metadata JSON, OpenAPI (JSON/YAML) or sketch .py.",
        exists=True, dir_okay=False)],
    out_dir: Annotated[Path, out_dir_option("Output folder (resumed if it exists).")],
    model: Annotated[str | None, typer.Option(
        help="Default model of the coder and tester roles (Inspect name).")] = None,
    model_role: Annotated[list[str] | None, typer.Option(
        "--model-role", help="ROLE=MODEL for coder or tester (repeatable).")] = None,
    model_args: ModelArgsOpt = None,
    max_tokens: MaxTokensOpt = None,
    max_revisions: Annotated[int, typer.Option(
        help="Most revisions per environment while a test fails.", min=0)] = 3,
    max_concurrency: Annotated[int, max_concurrency_option("Environments built")] = 2,
    register: Annotated[bool, typer.Option(
        help="Register environments whose tests all pass (envs/generated.py).")] = True,
) -> None:
    """Write, test, revise and register an environment for each API description."""
    from synthesis.envgen.pipeline import ROLES, BuildConfig, build, summary_rows
    from synthesis.roles import gold_player_problem

    models = role_models(ROLES, model, model_args or [], model_role or [], max_tokens)
    problem = gold_player_problem(models, "EnvGen")
    if problem:
        raise typer.BadParameter(problem, param_hint="--model/--model-role")
    config = BuildConfig(max_revisions=max_revisions, concurrency=max_concurrency,
                         register_passing=register)
    with Progress(TextColumn("{task.fields[env]}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("{task.description}"),
                  console=console) as bar:
        overall = bar.add_task("", total=len(descriptions), env="environments")
        tasks: dict[str, TaskID] = {}

        def seen(env: str, text: str) -> None:
            if env not in tasks:
                tasks[env] = bar.add_task(text, total=None, env=env)
            bar.update(tasks[env], description=text)
            if text.startswith("done"):
                bar.update(tasks[env], total=1, completed=1)
                bar.update(overall, advance=1)

        reports = asyncio.run(build(descriptions, out_dir, models, config, on_event=seen))
    table = Table(title=f"envgen build -> {out_dir}")
    rows = summary_rows(reports)
    for col in rows[0] if rows else ():
        table.add_column(col)
    for row in rows:
        table.add_row(*row.values())
    console.print(table)
    passed = sum(r.verdict == "passed" for r in reports)
    console.print(f"{passed}/{len(reports)} environments passed every test; reports in "
                  f"{out_dir}/<env>/report.json")
    if reports and not passed:
        raise CommandError(f"none of the {len(reports)} environments passed its tests; see "
                           f"{out_dir}/<env>/report.json (a rerun resumes)")
