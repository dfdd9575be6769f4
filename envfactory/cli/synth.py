"""`envfactory synth ...`: the synthesis commands (wired into envfactory/cli.py as `synth`).

Models are Inspect models, one per QueryGen role: `--model` is the default of every role
(and the solver's), `--model-role ROLE=MODEL` overrides one role, `-M key=value` passes
model arguments to `--model`; any provider Inspect knows works.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from synthesis import contamination_cli, graph_cli
from synthesis.model_options import role_models

__all__ = ["synth_app"]

synth_app = typer.Typer(help="Training-data synthesis: tool graph, chains, queries.",
                        no_args_is_help=True)
synth_app.command("graph")(graph_cli.graph)
synth_app.command("graph-view")(graph_cli.graph_view)
synth_app.command("graph-refine")(graph_cli.graph_refine)
synth_app.command("contamination")(contamination_cli.contamination)
console = Console()

#: tasks/envfactory/splits.json of this checkout (the held-out environments)
DEFAULT_SPLITS = Path(__file__).resolve().parents[1] / "tasks" / "envfactory" / "splits.json"


def _tokens() -> int:
    from inspect_ai.model._model import model_usage

    return sum(u.total_tokens for u in model_usage().values())


@synth_app.command("queries")
def queries(
    graph: Annotated[Path, typer.Option(help="Tool graph JSON (envfactory synth graph).",
                                        exists=True, dir_okay=False)],
    out: Annotated[Path, typer.Option(help="Output directory (resumed if it exists).")],
    n: Annotated[int, typer.Option(help="Number of chains.", min=1)] = 100,
    envs: Annotated[str | None, typer.Option(
        help="Comma-separated environments to sample from (default: all of the split's "
             "in the graph).")] = None,
    preset: Annotated[str, typer.Option(help="sft_conv | sft_nonconv | rl_nonconv.")
                      ] = "sft_nonconv",
    seed: Annotated[int, typer.Option(help="Base seed; chain seeds derive from it.")] = 0,
    split: Annotated[str, typer.Option(
        help="Split whose environments may be used (heldout only when asked).")] = "train",
    splits: Annotated[Path, typer.Option(help="splits.json naming each split's "
                                              "environments.")] = DEFAULT_SPLITS,
    sampler: Annotated[str, typer.Option(help="topology | random_walk.")] = "topology",
    max_nodes: Annotated[int, typer.Option(help="Most tools per chain.", min=1)] = 10,
    max_concurrency: Annotated[int, typer.Option(help="Chains synthesized at once.", min=1)
                               ] = 4,
    pass_k: Annotated[int | None, typer.Option(help="Candidates per turn (preset's if unset).",
                                               min=1)] = None,
    model: Annotated[str | None, typer.Option(
        help="Default model of every role (Inspect name, e.g. openai/gpt-4o).")] = None,
    model_role: Annotated[list[str] | None, typer.Option(
        "--model-role", help="ROLE=MODEL for synth, solver, user or judge (repeatable).")
    ] = None,
    model_args: Annotated[list[str] | None, typer.Option(
        "-M", help="KEY=VALUE model argument for --model (repeatable).")] = None,
    max_tokens: Annotated[int | None, typer.Option(
        help="Most tokens per reply, for every role (set it for local hf/ models).", min=1)
    ] = None,
) -> None:
    """Synthesize verified multi-turn trajectories from sampled tool chains."""
    from inspect_ai.model._model import init_model_usage

    from synthesis.querygen import ROLES, synthesize
    from synthesis.querygen import preset as get_preset
    from synthesis.querygen.run import RunArgs, run_queries

    try:
        models = role_models(ROLES, model, model_args or [], model_role or [], max_tokens)
        config = get_preset(preset, **({"pass_k": pass_k} if pass_k else {}))
        args = RunArgs(graph=graph, out=out, n=n, seed=seed, preset=preset, split=split,
                       envs=[e.strip() for e in envs.split(",") if e.strip()] if envs else None,
                       sampler=sampler, max_nodes=max_nodes,  # type: ignore[arg-type]
                       max_concurrency=max_concurrency)
        split_map = json.loads(splits.read_text(encoding="utf-8"))
    except ValueError as e:
        console.print(f"[red]{e}[/red]")
        raise typer.Exit(1) from None

    init_model_usage()
    counts: Counter[str] = Counter()
    with Progress(TextColumn("chains"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}"), console=console) as bar:
        task = bar.add_task("", total=n)

        def seen(record: dict[str, Any]) -> None:
            counts["kept" if record["kind"] == "kept" else record["reason"]] += 1
            rejected = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k != "kept")
            bar.update(task, advance=1, description=(
                f"kept {counts['kept']} | rejected {sum(counts.values()) - counts['kept']}"
                f"{' (' + rejected + ')' if rejected else ''} | tokens {_tokens():,}"))

        try:
            summary = asyncio.run(run_queries(args, config, split_map, synthesize, models,
                                              on_outcome=seen, on_resume=lambda k: bar.update(
                                                  task, advance=k)))
        except ValueError as e:
            console.print(f"[red]{e}[/red]")
            raise typer.Exit(1) from None
    console.print(f"{out}: {summary.kept} kept, rejected {summary.rejected or 'none'} "
                  f"({summary.skipped} already there, {summary.written} new)")
