"""`envfactory envgen ...`: `build` and `verify` here, `search` in `envgen_search.py`.

Models are Inspect models per EnvGen role (`coder`, `tester`): `--model` is the default of
both, `--model-role ROLE=MODEL` overrides one, `-M key=value` passes model arguments to
`--model`, `--max-tokens` caps every reply (the shared synthesis options). `verify` needs
no model; with `--model`/`--model-role tester=...` the tester's tests run beside the
built-in checks.
"""

from __future__ import annotations

import asyncio
import json
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


@envgen_app.command("verify")
def verify_cmd(
    targets: Annotated[list[str], typer.Argument(
        help="Release-format server files (ROOT/envs/tools/NAME.py, metadata beside them), "
             "environment names (release/Airline, generated/x, a pool one) or `release` "
             "(every release server).", metavar="SERVER.py|ENV_NAME...|release")],
    out_dir: Annotated[Path, out_dir_option("Report folder (finished reports are kept).")],
    model: Annotated[str | None, typer.Option(
        help="Model of the tester role (Inspect name); without one, the built-in checks "
             "only.")] = None,
    model_role: Annotated[list[str] | None, typer.Option(
        "--model-role", help="tester=MODEL: the tester's tests run too.")] = None,
    model_args: ModelArgsOpt = None,
    max_tokens: MaxTokensOpt = None,
    max_concurrency: Annotated[int, max_concurrency_option("Environments verified")] = 2,
    call_seconds: Annotated[float, typer.Option(
        help="Seconds one tool call may run (a hanging tool fails executability).",
        min=0.1)] = 5.0,
    record: Annotated[bool, typer.Option(
        help="Record release environments' verdicts where `release_set()` reads them "
             "(ENVFACTORY_RELEASE_VERIFY_DIR).")] = True,
) -> None:
    """EnvGen's validation stage on environments it did not write: interface,
    executability, behaviour and state, in the sandbox, on every starting state."""
    import time

    from synthesis.envgen.verify import (
        SUMMARY,
        VerifyInputError,
        record_release,
        resolve_targets,
        summary,
        verify,
    )

    try:
        resolved, skipped = resolve_targets(targets)
    except VerifyInputError as e:
        raise typer.BadParameter(str(e), param_hint="SERVER.py|ENV_NAME...|release") from None
    for line in skipped:
        console.print(f"skipped: {line}", soft_wrap=True)
    tester = None
    if model is not None or model_role:
        tester = role_models(("tester",), model, model_args or [], model_role or [],
                             max_tokens)["tester"]
    started = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console) as bar:
        overall = bar.add_task("environments", total=len(resolved))

        def seen(env: str, text: str) -> None:
            if text.startswith("done"):
                bar.update(overall, advance=1, description=f"{env}: {text}")

        reports = asyncio.run(verify(resolved, out_dir, concurrency=max_concurrency,
                                     tester=tester, call_seconds=call_seconds, on_event=seen))
    doc = summary(reports, out_dir, wall_s=time.perf_counter() - started, skipped=skipped)
    from envs.jsonl import write_atomic

    write_atomic(out_dir / SUMMARY, json.dumps(doc, indent=2, default=str))
    table = Table(title=f"envgen verify -> {out_dir}", caption="criteria: interface, "
                  "executability, behaviour, state; LLM: the release's last LLM verdict")
    table.add_column("environment", no_wrap=True)
    for col in ("verdict", "intf", "exec", "behav", "state", "tests", "LLM"):
        table.add_column(col)
    mark = {True: "ok", False: "FAIL"}
    for r in reports:
        llm = "-" if r.release_llm_verdict is None else mark[r.release_llm_verdict]
        table.add_row(r.name, r.verdict, *(mark[r.criteria[c]] for c in
                                           ("interface", "executability", "behaviour",
                                            "state")),
                      f"{r.tests_passed}/{r.tests_passed + r.tests_failed}", llm)
    console.print(table)
    per = doc["passed_per_criterion"]
    console.print(f"{doc['passed']}/{len(reports)} passed; per criterion: "
                  + ", ".join(f"{c} {n}" for c, n in per.items()), soft_wrap=True)
    grid = doc["agreement_with_release_llm_verdict"]
    if any(sum(row.values()) for row in grid.values()):
        console.print("release LLM verdict (rows) vs ours (passed/failed): " + "; ".join(
            f"{row} {v['passed']}/{v['failed']}" for row, v in grid.items()), soft_wrap=True)
    if record:
        where = record_release(reports, out_dir)
        if where is not None:
            console.print(f"recorded release verdicts in {where}", soft_wrap=True)
    console.print(f"reports in {out_dir}/<Name>/report.json, summary in {out_dir / SUMMARY}",
                  soft_wrap=True)
