"""`envfactory score run` / `score watch`: the commands over `training.autoscore` (a
`ScoreError` is printed in one line by the package's handler, `errors.py`), with a bar per
task that counts its samples as they finish (`progress.stage_bars`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, cast

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from envfactory.cli.progress import stage_bars
from training.autoscore.scoring import ScoreResult, score_checkpoint
from training.autoscore.suites import SUITES, Suite
from training.autoscore.watching import watch
from training.reporting import say_on

__all__ = ["check_suite", "print_score", "score_app"]

score_app = typer.Typer(help="Score checkpoints on the benchmark suites (inspect eval-set).",
                        no_args_is_help=True)

_SuiteOpt = Annotated[str, typer.Option(help="quick (envfactory held-out + BFCL multi-turn, "
                                             "5 samples each), full, or demo (one held-out "
                                             "task, 3 steps a turn + BFCL single-turn "
                                             "simple: minutes on a CPU).")]
_ServeOpt = Annotated[str, typer.Option(help="hf (in-process, default), vllm (start `vllm "
                                             "serve`), or the base URL of a running "
                                             "OpenAI-compatible server.")]
_LimitOpt = Annotated[int | None, typer.Option(min=1, help="Samples per task (default: 5 "
                                                           "for quick, all for full).")]
_LogDirOpt = Annotated[Path, typer.Option(help="Results root: "
                                               "<log-dir>/<run_id>/<checkpoint>/.")]
_MaxTokensOpt = Annotated[int | None, typer.Option(min=1, help="Tokens per generation (hf "
                                                               "without it: up to 2048).")]
_ModelNameOpt = Annotated[str | None, typer.Option(
    help="The served model's name (URL: default the server's one model; vllm: "
         "<run_id>/<checkpoint>).")]
_DeviceOpt = Annotated[str, typer.Option(help="--serve hf: torch device.")]
_InspectArgOpt = Annotated[list[str] | None, typer.Option(
    "--inspect-arg", help="Passed on to inspect eval-set as is; repeatable "
                          "(e.g. --inspect-arg=--max-samples --inspect-arg=2).")]
_VllmArgOpt = Annotated[list[str] | None, typer.Option(
    "--vllm-arg", help="Passed on to `vllm serve`; repeatable.")]
_WaitOpt = Annotated[bool, typer.Option(
    "--wait", help="When another scoring holds a checkpoint's results folder, wait for it "
                   "(default: fail at once, naming its pid).")]


def check_suite(suite: str, option: str = "--suite") -> Suite:
    """A suite name from the command line (`option` names the flag in the error)."""
    if suite not in SUITES:
        raise typer.BadParameter(f"{suite!r}: use one of {', '.join(SUITES)}",
                                 param_hint=option)
    return cast(Suite, suite)


def print_score(result: ScoreResult, console: Console) -> None:
    """A scoring's table: a row per task with its status, samples and headline metrics."""
    table = Table(title=f"{escape(result.checkpoint)}: {result.status} "
                        f"({result.seconds:.0f} s)")
    for column in ("task", "status", "samples", "metrics", "seconds"):
        table.add_column(column)
    for task in result.tasks:
        metrics = ", ".join(f"{k} {v:.3f}" for k, v in task.headline.items())
        table.add_row(escape(task.task.rsplit("@", 1)[-1]), task.status, str(task.samples),
                      metrics, f"{task.seconds:.0f}")
    console.print(table)
    if result.log_dir:
        console.print(f"logs: {escape(result.log_dir)}")
    if result.message:
        console.print(f"[yellow]{escape(result.message)}[/yellow]")


@score_app.command("run")
def score_run(
    checkpoint: Annotated[Path, typer.Argument(help="A model directory (config.json) or "
                                                    "LoRA adapter directory.")],
    suite: _SuiteOpt = "quick", serve: _ServeOpt = "hf", limit: _LimitOpt = None,
    log_dir: _LogDirOpt = Path("scores"), max_tokens: _MaxTokensOpt = None,
    model_name: _ModelNameOpt = None, device: _DeviceOpt = "cpu",
    inspect_arg: _InspectArgOpt = None, vllm_arg: _VllmArgOpt = None, wait: _WaitOpt = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON on "
                                                         "stdout.")] = False,
) -> None:
    """Score one checkpoint directory on a suite.

    A rerun resumes and skips finished tasks. Exits 1 unless every task finished, and at
    once if another scoring holds the results folder (unless --wait).
    """
    console = Console(stderr=True)
    with stage_bars(console) as on_progress:
        result = score_checkpoint(checkpoint, suite=check_suite(suite), serve=serve,
                                  limit=limit, log_root=log_dir, max_tokens=max_tokens,
                                  model_name=model_name, device=device,
                                  extra_args=inspect_arg or (), vllm_args=vllm_arg or (),
                                  wait=wait, say=say_on(console), on_progress=on_progress,
                                  on_result=lambda r: print_score(r, console))
    if as_json:
        print(result.model_dump_json(indent=2))
    if result.status != "scored":
        raise typer.Exit(1)


@score_app.command("watch")
def score_watch(
    run_dir: Annotated[Path, typer.Argument(help="A training output directory "
                                                 "(checkpoint-N subdirectories).")],
    interval: Annotated[float, typer.Option(min=1.0, help="Seconds between looks.")] = 60.0,
    once: Annotated[bool, typer.Option("--once", help="Score what is there, then exit.")]
    = False,
    suite: _SuiteOpt = "quick", serve: _ServeOpt = "hf", limit: _LimitOpt = None,
    log_dir: _LogDirOpt = Path("scores"), max_tokens: _MaxTokensOpt = None,
    model_name: _ModelNameOpt = None, device: _DeviceOpt = "cpu",
    inspect_arg: _InspectArgOpt = None, vllm_arg: _VllmArgOpt = None, wait: _WaitOpt = False,
) -> None:
    """Score each new complete checkpoint-* of a training run once.

    What was scored is kept in RUN_DIR/.envfactory_scored.json. Runs beside training until
    Ctrl-C, or one pass with --once (exit 1 if a checkpoint failed in that pass, or was
    being scored by another process).
    """
    console = Console(stderr=True)
    try:
        with stage_bars(console, most=2 * max(len(tasks) for tasks in SUITES.values())
                        ) as on_progress:
            results = watch(run_dir, interval=interval, once=once, suite=check_suite(suite),
                            limit=limit, serve=serve, log_root=log_dir,
                            max_tokens=max_tokens, model_name=model_name, device=device,
                            extra_args=inspect_arg or (), vllm_args=vllm_arg or (),
                            wait=wait, say=say_on(console), on_progress=on_progress,
                            on_result=lambda r: print_score(r, console))
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    console.print(f"{len(results)} checkpoint(s) handled: "
                  + (", ".join(f"{Path(r.checkpoint).name} {r.status}" for r in results)
                     or "nothing new"))
    if any(r.status == "failed" for r in results):
        raise typer.Exit(1)
