"""`envfactory synth graph` and `envfactory synth graph-view`: build, summarise and draw the
tool graph from the command line (registered on `synth_app` by `synthesis/cli.py`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from envs.base import ToolSpec
from synthesis import graph as tg
from synthesis.embedders import get_embedder
from synthesis.graph_view import write_view

__all__ = ["graph", "graph_view"]


def _registry_sources(names: list[str], console: Console) -> dict[str, list[ToolSpec]]:
    """Named environments; with "all", every registered one whose schemas load here."""
    from envs import registry

    if names != ["all"]:
        return tg.specs_from_registry(names)
    sources = {}
    for entry in registry.all_entries():
        try:
            sources[entry.name] = entry.specs()
        except Exception as e:  # noqa: BLE001 (a missing download must not stop the rest)
            console.print(f"[yellow]skipping {escape(entry.name)}: {escape(str(e)[:120])}")
    return sources


def _print_stats(stats: tg.GraphStats, threshold: float, embedder: str,
                 console: Console) -> None:
    table = Table(title=f"Tool graph ({escape(embedder)}, threshold {threshold:g})")
    table.add_column("figure")
    table.add_column("count", justify="right")
    rows = [("environments", stats.environments), ("tools", stats.tools),
            ("parameters (in / out)", f"{stats.params} ({stats.input_params} / "
                                      f"{stats.output_params})"),
            ("edges", stats.edges),
            *((f"  {k}", v) for k, v in stats.edges_by_kind.items()),
            ("cross-environment Tool_Depend", stats.cross_env_tool_depend),
            ("cross-environment Parameter_Relate", stats.cross_env_parameter_relate),
            ("orphan required inputs", stats.orphan_required_inputs)]
    for name, value in rows:
        table.add_row(name, str(value))
    console.print(table)


def graph(
    envs: Annotated[list[str] | None, typer.Option(
        "--envs", help="Registered environments (repeat or comma-separate); 'all' = every "
                       "one whose schemas load.")] = None,
    metadata: Annotated[Path | None, typer.Option(
        help="Directory of EnvFactory *_metadata.json files.")] = None,
    servers: Annotated[Path | None, typer.Option(
        help="Directory of EnvFactory-format server *.py files.")] = None,
    embedder: Annotated[str, typer.Option(
        help="minilm | bge-m3[:PATH] | openai:<base_url>#<model>")] = "minilm",
    threshold: Annotated[float | None, typer.Option(
        help="Parameter_Relate cosine threshold (default: the embedder's).")] = None,
    out: Annotated[Path, typer.Option(help="Output directory.")] = Path("graph"),
) -> None:
    """Build the tool graph and write OUT/graph.json (+ embeddings, stats.json)."""
    console = Console()
    names = [n for item in envs or [] for n in item.split(",") if n]
    sources: dict[str, list[ToolSpec]] = {}
    if names:
        sources.update(_registry_sources(names, console))
    if metadata is not None:
        sources.update(tg.specs_from_metadata_dir(metadata))
    if servers is not None:
        sources.update(tg.specs_from_envfactory_dir(servers))
    if not sources:
        raise typer.BadParameter("give at least one source: --envs, --metadata or --servers")
    emb = get_embedder(embedder, threshold=threshold)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console) as bar:
        tasks: dict[str, TaskID] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                label = "embedding parameters" if stage == "embed" else "matching outputs"
                tasks[stage] = bar.add_task(label, total=total)
            bar.update(tasks[stage], completed=done)

        built = tg.build_graph(sources, emb, progress=progress)
    path = built.save(out / "graph.json")
    stats = built.stats()
    (out / "stats.json").write_text(json.dumps(stats.model_dump(), indent=1) + "\n",
                                    encoding="utf-8")
    _print_stats(stats, float(built.g.graph["threshold"]), emb.name, console)
    console.print(f"wrote {escape(str(path))}")


def graph_view(
    graph_file: Annotated[Path, typer.Argument(help="graph.json from `synth graph`.")],
    env: Annotated[str | None, typer.Option(help="Draw this environment's tools.")] = None,
    tool: Annotated[str | None, typer.Option(
        help="Draw the neighbourhood of this tool id ('{env}-{tool}').")] = None,
    radius: Annotated[int, typer.Option(help="Tool_Depend hops around --tool.")] = 1,
    out: Annotated[Path, typer.Option(help="HTML file to write.")] = Path("graph.html"),
) -> None:
    """Write a self-contained HTML picture of the graph, an environment or a neighbourhood."""
    loaded = tg.ToolGraph.load(graph_file)
    try:
        path = write_view(loaded, out, env=env, tool=tool, radius=radius)
    except KeyError as e:
        raise typer.BadParameter(str(e.args[0])) from e
    Console().print(f"wrote {escape(str(path))}")
