"""`envfactory synth graph`, `graph-view` and `graph-refine`: build, summarise, draw and
refine the tool graph from the command line (registered on `synth_app` by `synth.py`)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
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

from envfactory.cli.options import (
    MaxTokensOpt,
    ModelArgsOpt,
    max_concurrency_option,
    out_dir_option,
    out_file_option,
    role_models,
)
from envs.base import ToolSpec
from envs.jsonl import write_atomic
from envs.names import RELEASE_PREFIX
from synthesis import graph as tg
from synthesis import graph_llm
from synthesis.embedders import Embedder, get_embedder
from synthesis.graph_view import write_view
from synthesis.roles import gold_player_problem

__all__ = ["graph", "graph_refine", "graph_view"]


def _registry_sources(names: list[str], console: Console) -> dict[str, list[ToolSpec]]:
    """Named environments; with "all", every registered one whose schemas load here (of
    the release's, the `release` set: those `envgen verify` passed, when recorded). A
    benchmark's own environments (`registry.benchmark_of`) are never sources: chains are
    sampled from this graph, and training data on them would void their scores."""
    from envs import registry

    entries = registry.all_entries()
    if names == ["all"]:
        skipped = [e.name for e in entries if registry.benchmark_of(e.name)]
        if skipped:
            console.print(f"left out {len(skipped)} benchmark environments (never training "
                          f"data): {escape(', '.join(skipped))}")
        release = [e.name for e in entries if e.name.startswith(RELEASE_PREFIX)]
        chosen = set(_expand_release(["release"], console)) if release else set()
        if len(chosen) < len(release):
            console.print(f"left out {len(release) - len(chosen)} release environments "
                          "outside the release set (broken, or not passed by `envgen "
                          "verify`; name them to include them)")
        sources = {}
        for entry in entries:
            if registry.benchmark_of(entry.name) or (
                    entry.name.startswith(RELEASE_PREFIX) and entry.name not in chosen):
                continue
            try:
                specs = entry.specs()
                sources[entry.name] = (tg.with_declared_outputs(specs)
                                       if entry.name.startswith(RELEASE_PREFIX) else specs)
            except Exception as e:  # noqa: BLE001 (a missing download must not stop the rest)
                console.print(f"[yellow]skipping {escape(entry.name)}: {escape(str(e)[:120])}")
        return sources
    benchmark = [n for n in names if registry.benchmark_of(n)]
    if benchmark:
        raise typer.BadParameter(
            f"{', '.join(benchmark)}: a benchmark's environments "
            f"({', '.join(sorted({str(registry.benchmark_of(n)) for n in benchmark}))}), never "
            "training data; name others", param_hint="--envs")
    try:
        return tg.specs_from_registry(names)
    except KeyError as err:  # unknown, a `module:Class` that does not import, a broken file
        known = {e.name for e in entries}
        unknown = [n for n in names if n not in known and ":" not in n]
        if not unknown:
            raise typer.BadParameter(str(err.args[0]), param_hint="--envs") from None
    usable = sorted(n for n in known if not registry.benchmark_of(n))
    raise typer.BadParameter(
        f"unknown environment{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
        f"known: {', '.join(usable)}, or 'all', or package.module:Class "
        "(`envfactory env list` describes them)", param_hint="--envs")


def _expand_release(names: list[str], console: Console) -> list[str]:
    """`release` -> `envs.release_envs.release_set()`: the release servers `envgen verify`
    passed, or every listable one when nothing is recorded (said on the console)."""
    if "release" not in names:
        return names
    from envs import release_envs

    try:
        chosen = release_envs.release_set()
        recorded = release_envs.verified_names()
    except release_envs.ReleaseEnvError as e:
        raise typer.BadParameter(str(e), param_hint="--envs") from None
    if not chosen and release_envs.release_root() is None:
        from envs.release_registry import ENVFACTORY

        raise typer.BadParameter(f"'release': no EnvFactory release here; set "
                                 f"{ENVFACTORY.override} to {ENVFACTORY.override_hint}",
                                 param_hint="--envs")
    which = ("no `envgen verify` record, so every listable one"
             if recorded is None else "those `envgen verify` passed")
    console.print(f"release: {len(chosen)} environments ({which})")
    expanded = [n for n in names if n != "release"]
    return expanded + [n for n in chosen if n not in expanded]


def _in_config_order(specs: dict[str, list[ToolSpec]],
                     config: Path | None) -> dict[str, list[ToolSpec]]:
    """`specs` restricted to and ordered as the `mcpServers` of an mcp_server.json."""
    if config is None:
        return specs
    try:
        servers = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]
        names = [str(n) for n in servers]
    except (json.JSONDecodeError, KeyError, TypeError, UnicodeDecodeError) as e:
        raise typer.BadParameter(f"{config}: not an mcp_server.json with an mcpServers "
                                 f"object ({e})", param_hint="--mcp-config") from None
    missing = [n for n in names if n not in specs]
    if missing:
        raise typer.BadParameter(f"{config}: no metadata for {', '.join(missing)}",
                                 param_hint="--mcp-config")
    return {n: specs[n] for n in names}


def _embedder(spec: str, threshold: float | None) -> Embedder:
    """The `--embedder` (nothing loads until the first text is embedded)."""
    try:
        return get_embedder(spec, threshold=threshold)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--embedder") from None


def _load(graph_file: Path) -> tg.ToolGraph:
    """The GRAPH_FILE argument; one that is not a tool graph is a usage error."""
    try:
        return tg.ToolGraph.load(graph_file)
    except tg.NotAGraph as e:
        raise typer.BadParameter(str(e), param_hint="GRAPH_FILE") from None


def _print_stats(stats: tg.GraphStats, threshold: float, embedder: str,
                 console: Console) -> None:
    table = Table(title=f"Tool graph ({escape(embedder)}, threshold {threshold:g})")
    table.add_column("figure")
    table.add_column("count", justify="right")
    rows = [("environments", stats.environments), ("nodes", stats.tools + stats.params),
            ("tools", stats.tools),
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
                       "one whose schemas load; 'release' = the EnvFactory release's servers "
                       "`envgen verify` passed (all of them when nothing is recorded).")
    ] = None,
    metadata: Annotated[Path | None, typer.Option(
        help="Directory of EnvFactory *_metadata.json files.")] = None,
    mcp_config: Annotated[Path | None, typer.Option(
        help="An EnvFactory mcp_server.json: of --metadata, only its servers, in its order "
             "(the release builds its graph from configs/mcp_server.json so; the order is "
             "that of the LLM passes' requests).", exists=True, dir_okay=False)] = None,
    servers: Annotated[Path | None, typer.Option(
        help="Directory of EnvFactory-format server *.py files.")] = None,
    embedder: Annotated[str, typer.Option(
        help="minilm | bge-m3[:PATH] | openai:<base_url>#<model>")] = "minilm",
    threshold: Annotated[float | None, typer.Option(
        help="Parameter_Relate cosine threshold (default: the embedder's).")] = None,
    out_dir: Annotated[Path, out_dir_option("Output folder.")] = Path("graph"),
    overwrite: Annotated[bool, typer.Option(
        help="Replace OUT_DIR/graph.json if it is there (graph-refine's work in it is "
             "lost).")] = False,
) -> None:
    """Build the tool graph and write OUT_DIR/graph.json (+ embeddings, stats.json).

    The LLM passes (workflow edges, user-provided labels, orphan patch) run on the saved
    graph with `envfactory synth graph-refine OUT_DIR/graph.json`.
    """
    console = Console()
    if (out_dir / "graph.json").exists() and not overwrite:
        raise typer.BadParameter(f"{out_dir / 'graph.json'} exists (with any graph-refine "
                                 "passes); pass --overwrite to replace it, or another "
                                 "--out-dir", param_hint="--out-dir")
    emb = _embedder(embedder, threshold)
    names = _expand_release(
        [n.strip() for item in envs or [] for n in item.split(",") if n.strip()], console)
    started = time.perf_counter()
    sources: dict[str, list[ToolSpec]] = {}
    if names:
        sources.update(_registry_sources(names, console))
    if metadata is not None:
        sources.update(_in_config_order(tg.specs_from_metadata_dir(metadata), mcp_config))
    elif mcp_config is not None:
        raise typer.BadParameter("it selects servers of --metadata; give --metadata too",
                                 param_hint="--mcp-config")
    if servers is not None:
        sources.update(tg.specs_from_envfactory_dir(servers))
    if not sources:
        raise typer.BadParameter("give at least one source: --envs, --metadata or --servers")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console) as bar:
        tasks: dict[str, TaskID] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                label = "embedding distinct texts" if stage == "embed" else "matching outputs"
                tasks[stage] = bar.add_task(label, total=total)
            bar.update(tasks[stage], completed=done)

        loaded_s = time.perf_counter() - started
        built, timing = tg.timed_build(sources, emb, progress=progress)
    path = built.save(out_dir / "graph.json")
    stats = built.stats()
    write_atomic(out_dir / "stats.json", json.dumps(
        {**stats.model_dump(), "timing": {"sources_s": round(loaded_s, 3),
                                          **timing.model_dump()}}, indent=1) + "\n")
    _print_stats(stats, float(built.g.graph["threshold"]), emb.name, console)
    console.print(f"build time: {loaded_s + timing.total_s:.2f} s (sources {loaded_s:.2f} s, "
                  f"nodes {timing.nodes_s:.2f} s, embedding {timing.embed_s:.2f} s, "
                  f"matching {timing.match_s:.2f} s)")
    console.print(f"wrote {escape(str(path))}")


def graph_view(
    graph_file: Annotated[Path, typer.Argument(help="graph.json from `synth graph`.",
                                               exists=True, dir_okay=False)],
    env: Annotated[str | None, typer.Option(help="Draw this environment's tools.")] = None,
    tool: Annotated[str | None, typer.Option(
        help="Draw the neighbourhood of this tool id ('{env}-{tool}').")] = None,
    radius: Annotated[int, typer.Option(help="Tool_Depend hops around --tool.")] = 1,
    out: Annotated[Path, out_file_option("HTML file to write (replaced).")]
    = Path("graph.html"),
) -> None:
    """Write a self-contained HTML picture of the graph, an environment or a neighbourhood."""
    loaded = _load(graph_file)
    try:
        path = write_view(loaded, out, env=env, tool=tool, radius=radius)
    except KeyError as e:
        raise typer.BadParameter(str(e.args[0])) from e
    Console().print(f"wrote {escape(str(path))}")


def graph_refine(
    graph_file: Annotated[Path, typer.Argument(help="graph.json from `synth graph`; updated "
                                                    "in place.", exists=True, dir_okay=False)],
    edges: Annotated[bool, typer.Option(
        "--edges/--no-edges", help="Add intra-environment workflow edges (Tool_Depend).")
    ] = True,
    labels: Annotated[bool, typer.Option(
        "--labels/--no-labels", help="Label every parameter user-provided or not.")] = True,
    patch_orphans: Annotated[bool, typer.Option(
        help="Then mark required inputs nothing produces as user-provided (the release's "
             "auto-patch), so their tools can be sampled.")] = False,
    envs: Annotated[str | None, typer.Option(
        help="Comma-separated environments for the edge pass (default: all).")] = None,
    redo: Annotated[bool, typer.Option(
        help="Ask again about environments and parameters already done.")] = False,
    model: Annotated[str | None, typer.Option(
        help="Model of the synth role (Inspect name), unless --model-role binds it.")] = None,
    model_role: Annotated[list[str] | None, typer.Option(
        "--model-role", help="synth=MODEL.")] = None,
    model_args: ModelArgsOpt = None,
    max_tokens: MaxTokensOpt = None,
    batch_size: Annotated[int, typer.Option(help="Parameters per label request.", min=1)
                          ] = graph_llm.BATCH_SIZE,
    max_concurrency: Annotated[int, max_concurrency_option("Model calls")] = 8,
    prompts: Annotated[str, typer.Option(
        help="release: the EnvFactory release's requests and reply reading (its "
             "src/graph prompts and code, read from the pinned release); ours: this "
             "project's prompts (tagged JSON, re-asked in the conversation). Recorded "
             "in graph.json and stats.json.")] = "release",
) -> None:
    """Run the LLM passes over a saved tool graph (role `synth`), saving after every reply.

    Killed and rerun, it continues: refined environments are recorded in the graph and
    labelled parameters are skipped (with the same --prompts; --redo to switch).
    """
    import asyncio

    from synthesis import graph_llm_release

    console = Console()
    if prompts not in graph_llm.PROMPTS:
        raise typer.BadParameter(f"{prompts!r}: use {' or '.join(graph_llm.PROMPTS)}",
                                 param_hint="--prompts")
    loaded = _load(graph_file)
    for step in [s for s, wanted in (("edges", edges), ("labels", labels)) if wanted]:
        conflict = graph_llm.prompts_conflict(loaded, step, prompts, redo=redo)
        if conflict:
            raise typer.BadParameter(f"{graph_file}: {conflict}", param_hint="--prompts")
    mode: graph_llm.Prompts = "release" if prompts == "release" else "ours"
    if mode == "release" and (edges or labels):
        problem = graph_llm_release.source_problem()
        if problem is None:
            try:
                graph_llm_release.release_tools(loaded.g)
            except ValueError as e:
                problem = str(e)
        if problem:
            raise typer.BadParameter(problem, param_hint="--prompts")
    console.print(f"prompts: {mode}")
    synth = role_models([graph_llm.ROLE], model, model_args or [], model_role or [],
                        max_tokens)[graph_llm.ROLE]
    problem = gold_player_problem({graph_llm.ROLE: synth}, "graph-refine")
    if problem:
        raise typer.BadParameter(problem, param_hint="--model/--model-role")
    orphans_before = loaded.stats().orphan_required_inputs

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console) as bar:

        def saver(task: TaskID) -> Callable[[object], None]:
            """Save the graph after each reply (the resume point) and advance `task`."""
            def save(_: object) -> None:
                loaded.save(graph_file)
                bar.advance(task)
            return save

        if edges:
            names = [e.strip() for e in envs.split(",") if e.strip()] if envs else None
            task = bar.add_task("workflow edges (environments)", total=None)
            refined = asyncio.run(graph_llm.refine_edges(
                loaded, model=synth, envs=names, redo=redo, max_concurrency=max_concurrency,
                on_result=saver(task), prompts=mode))
            bar.update(task, total=len(refined), completed=len(refined))
            failed = [r.env for r in refined if r.error]
            console.print(f"edge pass: {len(refined)} environments asked, "
                          f"{sum(len(r.added) for r in refined)} edges added"
                          + (f"; no usable reply for {escape(', '.join(failed))}"
                             if failed else ""))
        if labels:
            task = bar.add_task("user-provided labels (batches)", total=None)
            batches = asyncio.run(graph_llm.classify_user_provided(
                loaded, model=synth, only_unknown=not redo, batch_size=batch_size,
                max_concurrency=max_concurrency,
                on_result=saver(task), prompts=mode))
            bar.update(task, total=len(batches), completed=len(batches))
            values = [d.get("user_provided") for _, d in loaded.g.nodes(data=True)
                      if d.get("kind") == "param"]
            console.print(f"label pass: {len(batches)} batches asked "
                          f"({sum(1 for b in batches if b.error)} failed); parameters "
                          f"user-provided {values.count(True)}, not {values.count(False)}, "
                          f"unlabelled {values.count(None)}")
    if patch_orphans:
        patched = graph_llm.audit_orphans(loaded, auto_patch=True)
        console.print(f"orphan patch: {len(patched)} required inputs marked user-provided")
    loaded.save(graph_file)
    stats = loaded.stats()
    stats_file = graph_file.with_name("stats.json")
    write_atomic(stats_file, json.dumps(
        {**stats.model_dump(),
         graph_llm.PROMPTS_KEY: loaded.g.graph.get(graph_llm.PROMPTS_KEY, {})}, indent=1) + "\n")
    console.print(f"orphan required inputs: {orphans_before} -> {stats.orphan_required_inputs}")
    _print_stats(stats, float(loaded.g.graph.get("threshold", float("nan"))),
                 str(loaded.g.graph.get("embedder", "unknown embedder")), console)
