"""`envfactory synth contamination DATA`: the contamination check from the command line
(registered on `synth_app` by `synth.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from envfactory.cli.options import out_dir_option
from envfactory.cli.progress import stage_bars
from envs.jsonl import write_atomic
from harness.trajectory import Trajectory, read_jsonl, write_jsonl
from synthesis import contamination as c

__all__ = ["contamination"]


def _cut(s: str, n: int = 70) -> str:
    s = " ".join(s.split())
    return escape(s if len(s) <= n else s[:n - 1] + "…")


def _print_sources(sources: list[c.SourceStatus], console: Console) -> None:
    """One line per benchmark reference: loaded (how many items) or missing (why)."""
    for s in sources:
        if s.compared:
            console.print(f"loaded  {escape(s.name)}: {s.count}"
                          + (f" [dim]({escape(s.reason)})[/dim]" if s.reason else ""))
        else:
            console.print(f"[yellow]missing {escape(s.name)}: {escape(s.reason or '')}")


def _print(report: c.ContaminationReport, console: Console) -> None:
    if report.benchmark_envs:
        console.print(f"[red]benchmark environments in the data[/red] (every trajectory on "
                      f"one is flagged): {escape(', '.join(report.benchmark_envs))}")
    summary = Table(title=f"{report.trajectories} trajectories, {report.user_turns} user turns")
    for col in ("signal", "flagged turns", "flagged trajectories"):
        summary.add_column(col)
    for kind, pairs in (("ngram", report.ngram_flagged), ("embedding", report.embedding_flagged)):
        ids = {t for t, r in report.flagged.items() if kind in r}
        summary.add_row(f"{report.ngram}-gram" if kind == "ngram" else
                        f"embedding ({report.embedder or 'off'})", str(len(pairs)), str(len(ids)))
    summary.add_row("tools", "-", str(sum("tools" in r for r in report.flagged.values())))
    summary.add_row("benchmark environments", "-",
                    str(sum("benchmark_env" in r for r in report.flagged.values())))
    console.print(summary)
    if report.embedding_closest or report.ngram_flagged:
        closest = Table(title="Closest pairs")
        for col in ("signal", "score", "trajectory#turn", "user turn", "benchmark prompt"):
            closest.add_column(col)
        for p in report.ngram_flagged[:5]:
            closest.add_row("ngram", f"{int(p.score)}", f"{p.trajectory}#{p.turn}", _cut(p.user),
                          f"{p.prompt_id}: {_cut(p.prompt)}")
        for p in report.embedding_closest[:5]:
            closest.add_row("cosine", f"{p.score:.3f}", f"{p.trajectory}#{p.turn}", _cut(p.user),
                          f"{p.prompt_id}: {_cut(p.prompt)}")
        console.print(closest)
    if report.tool_overlaps:
        tools = Table(title="Tool-name overlap with benchmark APIs")
        for col in ("env", "benchmark env", "shared", "share", "param Jaccard"):
            tools.add_column(col)
        for o in report.tool_overlaps:
            tools.add_row(escape(o.env), escape(o.benchmark_env), str(len(o.matches)),
                          f"{o.share:.2f}", f"{o.mean_param_jaccard:.2f}")
        console.print(tools)
    if report.unresolved_envs:
        console.print(f"environments not resolved: {escape(', '.join(report.unresolved_envs))}")


def contamination(
    data: Annotated[list[Path], typer.Argument(help="Trajectory JSONL file(s).", exists=True,
                                                dir_okay=False)],
    out_dir: Annotated[Path | None, out_dir_option(
        "Folder for contamination.json and contamination.md.")] = None,
    drop_flagged: Annotated[Path | None, typer.Option(
        "--drop-flagged", help="Write the data minus flagged trajectories to this JSONL.")]
    = None,
    embedder: Annotated[str, typer.Option(
        help="Embedder spec (minilm, bge-m3[:PATH], openai:<base_url>#<model>) or 'none'.")]
    = "minilm",
    threshold: Annotated[float, typer.Option(
        help="Cosine at or above which a nearest neighbour is flagged.")] = 0.9,
    metadata: Annotated[list[Path] | None, typer.Option(
        help="EnvFactory metadata folder(s) naming environments the registry lacks.")]
    = None,
    tool_share: Annotated[float, typer.Option(
        help="Share of an env's tools named like a benchmark API's that counts as overlap.")]
    = 0.5,
    flag_tools: Annotated[bool, typer.Option(
        help="Also flag trajectories using environments above --tool-share.")] = False,
) -> None:
    """Compare synthesized data with the benchmarks we report (BFCL v3, τ²-bench, VitaBench,
    MCP-Atlas): 13-gram overlap and embedding nearest neighbours of user turns,
    tool-name/schema overlap of the environments used, and any benchmark environment the
    data uses. Each benchmark is read from the files on this machine (`TAU2_DATA_DIR`,
    `VITABENCH_DATA_DIR`, `MCP_ATLAS_TASKS`, the caches); nothing is downloaded, and one
    line per reference says whether it was loaded or why not."""
    console = Console()
    if drop_flagged is not None and any(drop_flagged.resolve() == p.resolve() for p in data):
        raise typer.BadParameter(f"{drop_flagged} is one of the input files; write the clean "
                                 "data elsewhere", param_hint="--drop-flagged")
    emb = None
    if embedder != "none":
        from synthesis.embedders import get_embedder

        try:
            emb = get_embedder(embedder)
        except ValueError as e:
            raise typer.BadParameter(str(e), param_hint="--embedder") from None
    trajectories: list[Trajectory] = [t for p in data for t in read_jsonl(p)]
    meta = [a for d in metadata or [] for a in c.metadata_apis(d)]
    with stage_bars() as on_progress:
        refs = c.load_references(on_progress)
        _print_sources(refs.sources, console)
        report = c.check(trajectories, data=[str(p) for p in data], prompts=refs.prompts,
                         benchmark_apis=refs.apis, sources=refs.sources, embedder=emb,
                         embedding_threshold=threshold, metadata=meta, tool_share=tool_share,
                         flag_tools=flag_tools, on_progress=on_progress)
    _print(report, console)
    if out_dir is not None:
        write_atomic(out_dir / "contamination.json", report.model_dump_json(indent=2) + "\n")
        write_atomic(out_dir / "contamination.md", c.markdown(report))
        console.print(f"report written to {escape(str(out_dir))}/contamination.{{json,md}}")
    if drop_flagged is not None:
        kept = c.without_flagged(trajectories, report)
        write_jsonl(drop_flagged, kept)
        console.print(f"{len(kept)} of {len(trajectories)} trajectories written to "
                      f"{escape(str(drop_flagged))}")
