"""`envfactory mcp-atlas ...`: install the pinned servers, say what can run, re-grade.

Heavy imports stay inside the commands, so `envfactory --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from envfactory.cli.errors import CommandError
from envfactory.cli.grade import judge_option, run_grade
from envfactory.cli.options import (
    JudgeArgsOpt,
    JudgeBaseUrlOpt,
    JudgeOpt,
    JudgeTemperatureOpt,
    LimitOpt,
    ResultsOpt,
    max_concurrency_option,
)

__all__ = ["mcp_atlas_app"]

mcp_atlas_app = typer.Typer(help="MCP-Atlas: servers, availability, re-grading.",
                            no_args_is_help=True)
console = Console()


@mcp_atlas_app.command("install")
def install(
    servers: Annotated[list[str] | None, typer.Argument(
        help="Servers to install (default: the keyless local ones).")] = None,
    repos: Annotated[bool, typer.Option(
        help="Also clone the pinned git repositories of data/repos (needs GitHub).")] = False,
) -> None:
    """Install servers at the template's pinned versions into the servers folder
    (`MCP_ATLAS_SERVERS_DIR`); runs then start them from there, without npx/uvx. Exit 1
    naming what failed; what succeeded stays installed, and a rerun skips it."""
    from tasks._mcp_atlas.servers import OFFLINE
    from tasks._mcp_atlas.servers import install as install_servers

    err = Console(stderr=True)
    try:
        with err.status("installing") as status:
            results = install_servers(servers or OFFLINE, repos=repos,
                                      on_step=lambda step: status.update(escape(step)))
    except (KeyError, ValueError, OSError) as e:
        raise CommandError(f"MCP-Atlas servers not installed: {e}") from None
    for r in results:  # one plain line per result, for CI logs
        state = (("already installed" if r.skipped else f"installed ({r.seconds:.0f} s)")
                 if r.ok else f"FAILED: {r.detail}")
        err.print(f"{r.server:<24} {r.requirement.replace(chr(10), ', ')}  {state}",
                  markup=False, highlight=False, soft_wrap=True)
    failed = [r.server for r in results if not r.ok]
    if failed:
        raise CommandError(f"not installed: {', '.join(failed)} ({len(results) - len(failed)} "
                           f"of {len(results)} in place; a rerun skips what is in place)")


@mcp_atlas_app.command("doctor")
def doctor(
    data_dir: Annotated[str | None, typer.Option(
        help="Tasks file or folder (default: MCP_ATLAS_TASKS, else the Hub dataset).")] = None,
    servers_only: Annotated[bool, typer.Option(
        "--servers-only", help="Every server on its own row, no task report (no dataset "
        "download).")] = False,
    judge: Annotated[str | None, typer.Option(
        help="Check that this judge model resolves (provider, package, key).")] = None,
) -> None:
    """What an MCP-Atlas run needs, one row per piece: the release files, the servers
    (installed at the pinned version, keys, network), the judge, the tasks and what each
    subset would run. Missing pieces say how to get them; exit 1 when a required one is
    missing, 0 when a run can start."""
    from tasks._mcp_atlas.doctor import check

    report = check(data_dir=data_dir, servers_only=servers_only, judge=judge)
    table = Table(title="MCP-Atlas doctor")
    for col in ("piece", "status", "how to get it"):
        table.add_column(col, overflow="fold")
    for c in report.checks:
        colour = "green" if c.ok else "red" if c.required else "yellow"
        table.add_row(escape(c.piece), f"[{colour}]{escape(c.status)}[/{colour}]",
                      escape(c.how if not c.ok else ""))
    console.print(table)
    if report.missing:
        raise CommandError("MCP-Atlas cannot run here: missing "
                           + ", ".join(c.piece for c in report.missing))


@mcp_atlas_app.command("grade")
def grade(
    file: Annotated[Path, typer.Argument(
        help='JSONL, one {"task_id": ..., "response": ...} per line.')],
    judge: JudgeOpt,
    results: ResultsOpt = None,
    max_concurrency: Annotated[int, max_concurrency_option("Responses judged")] = 4,
    limit: LimitOpt = None,
    judge_base_url: JudgeBaseUrlOpt = None,
    judge_model_arg: JudgeArgsOpt = None,
    judge_temperature: JudgeTemperatureOpt = None,
    data_dir: Annotated[str | None, typer.Option(
        help="Tasks file or folder holding the claims (default: MCP_ATLAS_TASKS, else the "
        "Hub dataset).")] = None,
) -> None:
    """Re-grade recorded responses with exactly the Inspect task's claims judge: one JSON
    line per input line, in order, with task_id, coverage, pass and per-claim verdicts."""
    from tasks._mcp_atlas.grade import grade_file

    model = judge_option(judge, judge_base_url, judge_model_arg or [], judge_temperature)
    run_grade(lambda on_result: grade_file(file, model, results, data_dir=data_dir,
                                           max_concurrent=max_concurrency, limit=limit,
                                           on_result=on_result),
              results, "coverage", lambda r: bool(r["pass"]))
