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

app = typer.Typer(help="MCP-Atlas: servers, availability, re-grading.", no_args_is_help=True)
console = Console()


@app.command("install")
def install(
    servers: Annotated[list[str] | None, typer.Argument(
        help="Servers to install (default: the keyless local ones).")] = None,
    repos: Annotated[bool, typer.Option(
        help="Also clone the pinned git repositories of data/repos (needs GitHub).")] = False,
) -> None:
    """Install servers at the template's pinned versions into the servers folder
    (`MCP_ATLAS_SERVERS_DIR`); runs then start them from there, without npx/uvx."""
    from tasks._mcp_atlas.servers import OFFLINE, report
    from tasks._mcp_atlas.servers import install as install_servers

    try:
        results = install_servers(servers or OFFLINE, repos=repos)
    except (KeyError, ValueError, OSError) as e:
        typer.echo(f"error: MCP-Atlas servers not installed: {e}", err=True)
        raise typer.Exit(1) from None
    report(results, Console(stderr=True))


@app.command("doctor")
def doctor(
    data_dir: Annotated[str | None, typer.Option(
        help="Tasks file or folder (default: MCP_ATLAS_TASKS, else the Hub dataset).")] = None,
    servers_only: Annotated[bool, typer.Option(
        "--servers-only", help="Only the servers, no task report (no dataset download).")]
        = False,
) -> None:
    """Which servers can start here (installed at the pinned version, keys, network),
    and which tasks each subset would run or skip, with the reasons."""
    from tasks._mcp_atlas.servers import OFFLINE, availability, network_available, templates

    table = Table(title="MCP-Atlas servers")
    for col in ("server", "group", "package", "status"):
        table.add_column(col)
    for t in templates():
        group = ("local" if t.name in OFFLINE else "key" if t.key_vars else "network")
        status = availability(t.name)
        shown = "[green]ready[/green]" if status.ok else f"[red]{escape(status.reason)}[/red]"
        table.add_row(t.name, group, escape(t.requirement), shown)
    console.print(table)
    console.print(f"network: {'yes' if network_available() else 'no'}")
    if servers_only:
        return
    from tasks._mcp_atlas.dataset import load_tasks
    from tasks._mcp_atlas.selection import SUBSETS, select

    try:
        tasks, source = load_tasks(data_dir)
    except (FileNotFoundError, ValueError) as e:
        console.print(f"[red]tasks: {escape(str(e))}[/red]")
        raise typer.Exit(1) from None
    console.print(f"tasks: {len(tasks)} from {escape(source.origin)} ({source.revision})")
    for subset in SUBSETS:
        selection = select(tasks, subset)
        console.print(f"subset [bold]{subset}[/bold]: {len(selection.runnable)} of "
                      f"{selection.population} runnable")
        for task_id, reason in selection.skipped.items():
            console.print(f"  skipped {task_id}: {escape(reason)}")


@app.command("grade")
def grade(
    file: Annotated[Path, typer.Argument(
        help='JSONL, one {"task_id": ..., "response": ...} per line.')],
    judge: Annotated[str, typer.Option(
        help="Inspect model for the claims judge (e.g. openai/<name>, with --base-url).")],
    out: Annotated[Path | None, typer.Option(
        help="Append results here, resuming an interrupted run (default: stdout).")] = None,
    base_url: Annotated[str | None, typer.Option(help="The judge's API base URL.")] = None,
    data_dir: Annotated[str | None, typer.Option(
        help="Tasks file or folder holding the claims (default: MCP_ATLAS_TASKS, else the "
        "Hub dataset).")] = None,
    max_concurrent: Annotated[int, typer.Option(
        min=1, help="Responses judged at once.")] = 4,
) -> None:
    """Re-grade recorded responses with exactly the Inspect task's claims judge: one JSON
    line per input line, in order, with task_id, coverage, pass and per-claim verdicts."""
    import asyncio

    from inspect_ai.model import get_model
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from tasks._mcp_atlas.grade import grade_file

    progress = Progress("[progress.description]{task.description}", BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(),
                        console=Console(stderr=True), transient=out is None)
    bar = progress.add_task("grading", total=None)
    try:
        with progress:
            asyncio.run(grade_file(
                file, get_model(judge, base_url=base_url), out, data_dir=data_dir,
                max_concurrent=max_concurrent,
                on_result=lambda done, total: progress.update(bar, completed=done,
                                                              total=total)))
    except (OSError, ValueError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    if out is not None:
        console.print(f"results -> {out}")
