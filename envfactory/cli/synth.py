"""`envfactory synth ...`: the synthesis commands (`graph*` in `synth_graph.py`,
`contamination` in `synth_contamination.py`, `queries` here).

Models are Inspect models, one per QueryGen role: `--model` is the default of every role
(and the solver's), `--model-role ROLE=MODEL` overrides one role, `-M key=value` passes
model arguments to `--model` (the shared options of `options.py`); any provider Inspect
knows works.
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

import envfactory.cli.synth_contamination as synth_contamination
import envfactory.cli.synth_graph as synth_graph
from envfactory.cli.errors import CommandError
from envfactory.cli.options import (
    MaxTokensOpt,
    ModelArgsOpt,
    ModelOpt,
    ModelRoleOpt,
    max_concurrency_option,
    out_dir_option,
    role_models,
)

__all__ = ["synth_app"]

synth_app = typer.Typer(help="Training-data synthesis: tool graph, chains, queries.",
                        no_args_is_help=True)
synth_app.command("graph")(synth_graph.graph)
synth_app.command("graph-view")(synth_graph.graph_view)
synth_app.command("graph-refine")(synth_graph.graph_refine)
synth_app.command("contamination")(synth_contamination.contamination)
console = Console()

#: tasks/envfactory/splits.json of this checkout (the held-out environments)
DEFAULT_SPLITS = Path(__file__).resolve().parents[2] / "tasks" / "envfactory" / "splits.json"


@synth_app.command("queries")
def queries(
    graph: Annotated[Path, typer.Option(help="Tool graph JSON (envfactory synth graph).",
                                        exists=True, dir_okay=False)],
    out_dir: Annotated[Path, out_dir_option("Output folder (resumed if it exists).")],
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
    max_concurrency: Annotated[int, max_concurrency_option("Chains synthesized")] = 4,
    pass_k: Annotated[int | None, typer.Option(help="Candidates per turn (preset's if unset).",
                                               min=1)] = None,
    pipeline: Annotated[str, typer.Option(
        help="release: the EnvFactory release's prompts and pipeline (read from the pinned "
             "release); ours: our rewritten prompts, seeded start states, state agreement."
    )] = "release",
    select: Annotated[str, typer.Option(
        help="release pipeline: llm (the release's SolutionSelector) | state (our agreement "
             "of >= 2 final states) | both (the selector among the agreeing).")] = "llm",
    refine: Annotated[bool | None, typer.Option(
        "--refine/--no-refine",
        help="Rewrite each query with the refiner (default: the preset's; sft_conv refines, "
             "as the release's enable_query_refinement). The refinement ablation's switch."
    )] = None,
    model: ModelOpt = None,
    model_role: ModelRoleOpt = None,
    model_args: ModelArgsOpt = None,
    max_tokens: MaxTokensOpt = None,
) -> None:
    """Synthesize verified multi-turn trajectories from sampled tool chains (roles synth,
    solver, user, judge). A benchmark's environments (bfcl/*, tau2/*, ...) are never
    sampled. Exits 1 when no chain gave a trajectory."""
    from harness.usage import counting_tokens
    from synthesis.graph import NotAGraph
    from synthesis.querygen import ROLES, synthesize
    from synthesis.querygen import preset as get_preset
    from synthesis.querygen.run import REJECTIONS, BadRunArgs, RunArgs, run_queries
    from synthesis.roles import gold_player_problem

    models = role_models(ROLES, model, model_args or [], model_role or [], max_tokens)
    problem = gold_player_problem(models, "QueryGen")
    if problem:
        raise typer.BadParameter(problem, param_hint="--model/--model-role")
    if pipeline not in ("release", "ours"):
        raise typer.BadParameter("use release or ours", param_hint="--pipeline")
    if select not in ("llm", "state", "both"):
        raise typer.BadParameter("use llm, state or both", param_hint="--select")
    if pipeline == "release":
        from synthesis.querygen.release_prompts import source_problem

        missing = source_problem()
        if missing:
            raise CommandError(missing)
    config = get_preset(preset, pipeline=pipeline, select=select,
                        **({"pass_k": pass_k} if pass_k else {}),
                        **({"refine": refine} if refine is not None else {}))
    args = RunArgs(graph=graph, out=out_dir, n=n, seed=seed, preset=preset, split=split,
                   envs=[e.strip() for e in envs.split(",") if e.strip()] if envs else None,
                   sampler=sampler, max_nodes=max_nodes,  # type: ignore[arg-type]
                   max_concurrency=max_concurrency)
    split_map = json.loads(splits.read_text(encoding="utf-8"))

    counts: Counter[str] = Counter()
    # started once the run's arguments are checked, so a refused run prints only its error
    bar = Progress(TextColumn("chains"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TextColumn("{task.description}"), console=console)
    task = bar.add_task("", total=n)

    def resumed(done: int) -> None:
        bar.start()
        bar.update(task, advance=done)

    with counting_tokens() as tokens:

        def seen(record: dict[str, Any]) -> None:
            counts["kept" if record["kind"] == "kept" else record["reason"]] += 1
            rejected = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k != "kept")
            bar.update(task, advance=1, description=(
                f"kept {counts['kept']} | rejected {sum(counts.values()) - counts['kept']}"
                f"{' (' + rejected + ')' if rejected else ''} | tokens {tokens.total:,}"))

        try:
            summary = asyncio.run(run_queries(args, config, split_map, synthesize, models,
                                              on_outcome=seen, on_resume=resumed))
        except BadRunArgs as e:
            raise typer.BadParameter(str(e), param_hint=e.option) from None
        except NotAGraph as e:
            raise typer.BadParameter(str(e), param_hint="--graph") from None
        finally:
            bar.stop()
    if summary.excluded:
        console.print(f"left out {len(summary.excluded)} benchmark environments of the graph "
                      f"(never training data): {', '.join(summary.excluded)}", soft_wrap=True)
    reasons = ", ".join(f"{k} {v}" for k, v in summary.rejected.items())
    console.print(f"{out_dir}: {summary.kept} kept, {summary.failed} failed"
                  f"{' (' + reasons + ')' if reasons else ''} ({summary.skipped} already "
                  f"there, {summary.written} new)", soft_wrap=True)
    if summary.failed and not summary.kept:
        raise CommandError(f"all {summary.failed} chains failed ({reasons}); the reasons "
                           f"are in {out_dir / REJECTIONS} (a rerun resumes and skips them; "
                           "remove that file to try them again)")
    if summary.failed:
        console.print(f"{summary.failed} of {summary.kept + summary.failed} chains failed; "
                      f"reasons in {out_dir / REJECTIONS}", soft_wrap=True)  # paths whole
