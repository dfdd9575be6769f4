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
from harness.trajectory import Trajectory, read_jsonl, write_jsonl
from synthesis import contamination as c

__all__ = ["contamination"]


def _cut(s: str, n: int = 70) -> str:
    s = " ".join(s.split())
    return escape(s if len(s) <= n else s[:n - 1] + "…")


def _print(report: c.ContaminationReport, console: Console) -> None:
    sources = Table(title="Benchmark sources")
    for col in ("source", "compared", "count", "reason"):
        sources.add_column(col)
    for s in report.sources:
        sources.add_row(escape(s.name), "yes" if s.compared else "no", str(s.count),
                        escape(s.reason or ""))
    console.print(sources)
    summary = Table(title=f"{report.trajectories} trajectories, {report.user_turns} user turns")
    for col in ("signal", "flagged turns", "flagged trajectories"):
        summary.add_column(col)
    for kind, pairs in (("ngram", report.ngram_flagged), ("embedding", report.embedding_flagged)):
        ids = {t for t, r in report.flagged.items() if kind in r}
        summary.add_row(f"{report.ngram}-gram" if kind == "ngram" else
                        f"embedding ({report.embedder or 'off'})", str(len(pairs)), str(len(ids)))
    summary.add_row("tools", "-", str(sum("tools" in r for r in report.flagged.values())))
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
    """Compare synthesized data with BFCL and τ²: 13-gram overlap and embedding nearest
    neighbours of user turns, tool-name/schema overlap of the environments used.
    τ² is read from `TAU2_DATA_DIR` (or the download cache); a benchmark whose files are
    absent is skipped and the report says why."""
    console = Console()
    trajectories: list[Trajectory] = [t for p in data for t in read_jsonl(p)]
    bfcl_prompts, bfcl_status = c.bfcl_prompts()
    tau2_prompts, tau2_status = c.tau2_prompts()
    bfcl_apis, bfcl_api_status = c.bfcl_apis()
    tau2_apis, tau2_api_status = c.tau2_apis()
    emb = None
    if embedder != "none":
        from synthesis.embedders import get_embedder

        emb = get_embedder(embedder)
    meta = [a for d in metadata or [] for a in c.metadata_apis(d)]
    report = c.check(trajectories, data=[str(p) for p in data],
                     prompts=bfcl_prompts + tau2_prompts, benchmark_apis=bfcl_apis + tau2_apis,
                     sources=[bfcl_status, tau2_status, bfcl_api_status, tau2_api_status],
                     embedder=emb, embedding_threshold=threshold, metadata=meta,
                     tool_share=tool_share, flag_tools=flag_tools)
    _print(report, console)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "contamination.json").write_text(report.model_dump_json(indent=2) + "\n",
                                                encoding="utf-8")
        (out_dir / "contamination.md").write_text(c.markdown(report), encoding="utf-8")
        console.print(f"report written to {escape(str(out_dir))}/contamination.{{json,md}}")
    if drop_flagged is not None:
        kept = c.without_flagged(trajectories, report)
        write_jsonl(drop_flagged, kept)
        console.print(f"{len(kept)} of {len(trajectories)} trajectories written to "
                      f"{escape(str(drop_flagged))}")
