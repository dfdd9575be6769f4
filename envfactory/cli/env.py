"""`envfactory env ...`: list, show and serve the registered environments."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from envfactory.cli.errors import CommandError

if TYPE_CHECKING:
    from envs.registry import EnvEntry

__all__ = ["env_app"]

env_app = typer.Typer(help="Environments: list, inspect, serve over MCP.", no_args_is_help=True)
console = Console()


@env_app.command("list")
def env_list() -> None:
    """List every registered environment with its tool count. One whose data cannot be
    read here (τ² offline, with no local copy) is listed with the reason, not fatal."""
    from envs import registry
    from envs.generated import GeneratedEnvError

    table = Table(title="environments")
    for col in ("name", "tools", "write tools", "source"):
        table.add_column(col)
    for entry in registry.all_entries():
        try:
            specs = entry.specs()
        # FileNotFoundError: release files neither local nor fetchable; a generated file
        # that no longer loads
        except (OSError, GeneratedEnvError) as e:
            table.add_row(entry.name, "-", "-",
                          f"{entry.source} [red](unavailable: {escape(str(e))})[/red]")
            continue
        table.add_row(entry.name, str(len(specs)), str(sum(s.write for s in specs)), entry.source)
    console.print(table)


def _entry(name: str) -> EnvEntry:
    """The registered environment `name`; an unknown name fails in one line that says how
    to list the known ones (and names the closest, for a typo)."""
    from envs import registry

    try:
        return registry.get(name)
    except KeyError as e:
        known = [entry.name for entry in registry.all_entries()]
        if ":" in name or name in known:  # an import that failed, a broken generated file
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
    console.print("\n[bold]control tools[/bold]: added by `envfactory env serve` beside "
                  "the environment's own (EnvFactory-format clients set and read the state "
                  "with them)")
    for control in SCENARIO_TOOLS:
        console.print(f"\n[bold magenta]{control.name}[/bold magenta] ([magenta]control"
                      f"[/magenta])\n{control.description}")
        console.print_json(json.dumps(control.inputSchema))


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
    try:
        server = mcp_server.build_server(entry.name, entry.factory, start)
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
