"""`envfactory env ...`: list, show and serve the registered environments."""

from __future__ import annotations

import contextlib
import difflib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from envfactory.cli.errors import CommandError
from envs.names import RELEASE_PREFIX

if TYPE_CHECKING:
    from envs.registry import EnvEntry
    from envs.release_envs import ReleaseEnv

__all__ = ["env_app"]

env_app = typer.Typer(help="Environments: list, inspect, serve over MCP.", no_args_is_help=True)
console = Console()


@env_app.command("list")
def env_list() -> None:
    """List every registered environment with its tool count. One whose data cannot be
    read here (τ² offline, with no local copy) is listed with the reason, not fatal. The
    EnvFactory release's (`release/<Name>`) are listed without importing their servers,
    with their scenarios (starting states, and checks that must be refused) and, once
    `envgen verify` has recorded verdicts, whether each passed; a broken one is listed
    as broken and each problem is one line below the table."""
    from envs import registry
    from envs.generated import GeneratedEnvError
    from envs.release_envs import ReleaseEnvError, list_release, verify_record

    release = {e.qualified: e for e in list_release()}
    record_problem: str | None = None
    try:
        verdicts = verify_record()
    except ReleaseEnvError as e:
        verdicts, record_problem = None, str(e)
    problems: list[str] = []
    table = Table(title="environments")
    table.add_column("name", no_wrap=True)  # a name is what the user copies: never split
    for col in ("tools", "write tools", "source"):
        table.add_column(col)
    # the release's own columns, only when there is a release here
    scenario_col = ["-"] if release else []
    if release:
        table.add_column("scenarios")
    if verdicts is not None:
        table.add_column("verified")
    for entry in registry.all_entries():
        extra = scenario_col + ([] if verdicts is None else [verdicts.get(entry.name, "-")])
        if entry.name in release:
            row, lines = _release_row(release[entry.name], entry.source)
            problems += lines
            table.add_row(*row, *extra[1:])
            continue
        try:
            specs = entry.specs()
        # FileNotFoundError: release files neither local nor fetchable; a generated file
        # that no longer loads
        except (OSError, GeneratedEnvError) as e:
            table.add_row(entry.name, "-", "-",
                          f"{entry.source} [red](unavailable: {escape(str(e))})[/red]", *extra)
            continue
        table.add_row(entry.name, str(len(specs)), str(sum(s.write for s in specs)),
                      entry.source, *extra)
    console.print(table)
    if release:
        counted = [e for e in release.values() if e.problem is None]
        starts = checks = 0
        for env in counted:
            with contextlib.suppress(ReleaseEnvError):  # an unreadable one: a line below
                scenarios = env.scenarios()
                checks += sum(not s.startable for s in scenarios)
                starts += sum(s.startable for s in scenarios)
        console.print(f"{len(release)} release environments ({len(release) - len(counted)} "
                      f"broken): {sum(e.tool_count for e in counted)} tools, {starts} "
                      f"starting scenarios, {checks} validation checks (scenarios that "
                      "must be refused)")
    else:
        console.print("[dim]the EnvFactory release's environments (release/<Name>) are not "
                      "here: `envfactory data fetch envfactory-release`, or set "
                      "ENVFACTORY_RELEASE_DIR[/dim]")
    for line in ([record_problem] if record_problem else []) + problems:
        console.print(f"[red]problem:[/red] {escape(line)}", soft_wrap=True)


def _release_row(env: ReleaseEnv, source: str) -> tuple[list[str], list[str]]:
    """A release environment's row (read without importing it) and its problem lines."""
    from envs.release_envs import ReleaseEnvError

    if env.problem:
        return [env.qualified, "-", "-", f"{source} [red](broken)[/red]", "-"], [env.problem]
    try:
        scenarios = env.scenarios()
        lines = env.scenario_problems()
    except ReleaseEnvError as e:
        return [env.qualified, str(env.tool_count), str(env.write_count), source,
                "[red]unreadable[/red]"], [str(e)]
    checks = sum(not s.startable for s in scenarios)
    counts = f"{len(scenarios) - checks} start, {checks} check" if scenarios else "0"
    if lines:
        counts += f" [red]({len(lines)} malformed)[/red]"
    return [env.qualified, str(env.tool_count), str(env.write_count), source, counts], lines


def _entry(name: str) -> EnvEntry:
    """The registered environment `name`; an unknown name fails in one line that says how
    to list the known ones (and names the closest, for a typo)."""
    from envs import registry

    try:
        return registry.get(name)
    except KeyError as e:
        known = [entry.name for entry in registry.all_entries()]
        # an import that failed, a broken generated file, a release server or scenario
        # that exists but cannot start
        if ":" in name or name in known or name.split("@")[0] in known:
            raise CommandError(e.args[0]) from None
        close = difflib.get_close_matches(name, known, n=2, cutoff=0.75)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        raise CommandError(f"unknown environment '{name}'; {hint}`envfactory env list` names "
                           "them (or give module:Class)") from None


@env_app.command("show")
def env_show(
    name: str,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the environment's own tool specs as JSON (without the "
                       "control tools `env serve` adds).")] = False,
) -> None:
    """Show an environment's tools with their JSON schemas, then the control tools that
    `env serve` adds beside them (load_scenario, save_scenario)."""
    from envs.mcp_server import SCENARIO_TOOLS

    entry = _entry(name)
    try:
        specs = entry.specs()
    except OSError as e:
        raise CommandError(f"{name}: {e}") from None
    if as_json:
        print(json.dumps([s.model_dump() for s in specs], indent=2))
        return
    console.print(f"[bold]{entry.name}[/bold] — {entry.description} ({entry.source})")
    for spec in specs:
        flag = "[yellow]write[/yellow]" if spec.write else "[green]read[/green]"
        console.print(f"\n[bold cyan]{spec.name}[/bold cyan] ({flag})\n{spec.description}")
        console.print_json(json.dumps(spec.parameters))
    if entry.name.startswith(RELEASE_PREFIX):
        _show_release(entry.name)
    console.print("\n[bold]control tools[/bold]: added by `envfactory env serve` beside "
                  "the environment's own (EnvFactory-format clients set and read the state "
                  "with them)")
    for control in SCENARIO_TOOLS:
        console.print(f"\n[bold magenta]{control.name}[/bold magenta] ([magenta]control"
                      f"[/magenta])\n{control.description}")
        console.print_json(json.dumps(control.inputSchema))


def _show_release(name: str) -> None:
    """A release environment's scenarios (with what each is expected to do), the
    release's own LLM verdict, and the verdict `envgen verify` recorded, if any."""
    from envs.release_envs import ReleaseEnvError, get_release, verify_record

    env = get_release(name)
    verdict = env.llm_verdict()
    llm = {True: "all scenarios passed", False: "not all scenarios passed",
           None: "none recorded"}[verdict]
    console.print(f"\n[bold]the release's LLM validation[/bold] (last round): {llm}")
    try:
        recorded = (verify_record() or {}).get(env.qualified)
    except ReleaseEnvError as e:
        recorded = f"unreadable ({e})"
    console.print(f"[bold]envgen verify[/bold]: {escape(recorded or 'not run')}")
    try:
        scenarios, problems = env.scenarios(), env.scenario_problems()
    except ReleaseEnvError as e:
        console.print(f"[red]scenarios unreadable:[/red] {escape(str(e))}", soft_wrap=True)
        return
    table = Table(title=f"scenarios ({env.checkpoint or 'no checkpoint'})")
    for col in ("start as", "complexity", "expected", "description"):
        table.add_column(col, overflow="fold")
    for s in scenarios:
        start = f"{env.qualified}@{s.scenario_id}" if s.startable else f"{s.scenario_id} (a check)"
        table.add_row(start, s.complexity_level or "-", s.expected_behavior, s.description)
    console.print(table)
    for line in problems:
        console.print(f"[red]problem:[/red] {escape(line)}", soft_wrap=True)


@env_app.command("serve")
def env_serve(
    name: Annotated[str, typer.Argument(help="Environment name, or module:Class.")],
    transport: Annotated[str, typer.Option(help="stdio or http (streamable HTTP at /mcp).")]
    = "stdio",
    state: Annotated[Path | None, typer.Option(
        help="JSON snapshot every new session starts from (default: the environment's "
             "default state).")] = None,
    host: Annotated[str, typer.Option(help="HTTP host.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port, 1-65535.")] = 8000,
    max_body_bytes: Annotated[int | None, typer.Option(
        help="HTTP: largest request body accepted, in bytes; larger ones get HTTP 413 "
             "(default 16 MiB).")] = None,
) -> None:
    """Serve an environment over MCP; each MCP session gets its own instance."""
    import anyio

    from envs import mcp_guard, mcp_server

    if transport not in ("stdio", "http"):
        raise typer.BadParameter(f"must be stdio or http, got {transport!r}",
                                 param_hint="--transport")
    if not 1 <= port <= 65535:
        raise typer.BadParameter(f"must be in 1-65535, got {port}", param_hint="--port")
    if max_body_bytes is not None and max_body_bytes < 1:
        raise typer.BadParameter(f"must be at least 1, got {max_body_bytes}",
                                 param_hint="--max-body-bytes")
    entry = _entry(name)
    start = None
    if state is not None:
        try:
            start = json.loads(state.read_text(encoding="utf-8"))
        except OSError as e:
            raise typer.BadParameter(f"{state}: cannot read it: {e.strerror or e}",
                                     param_hint="--state") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise typer.BadParameter(f"{state}: not JSON: {e}", param_hint="--state") from None
    from envs.release_envs import ReleaseEnvError

    try:
        server = mcp_server.build_server(entry.name, entry.factory, start)
    except ReleaseEnvError as e:  # a server that does not import, a scenario it refuses
        raise CommandError(str(e)) from None
    except ValueError as e:  # StateError, or an adapter's own refusal of the snapshot
        if state is None:
            raise
        raise typer.BadParameter(f"{state}: {' '.join(str(e).split())}",
                                 param_hint="--state") from None
    if transport == "stdio":
        anyio.run(mcp_server.serve_stdio, server)
    else:
        limit = mcp_guard.DEFAULT_MAX_BODY_BYTES if max_body_bytes is None else max_body_bytes
        mcp_server.serve_http(server, host=host, port=port, max_body_bytes=limit)
