"""The one shape of a re-grading command: `tau2 grade`, `vitabench grade`, `mcp-atlas grade`.

Each takes `FILE` (JSONL records: canonical `Trajectory` lines from `envfactory
trajectories LOG`, or the benchmark's plain records), `--results FILE` (appended as records
finish, resumed on a rerun; without it result lines go to stdout), `--max-concurrency N`,
`--limit N` and, where the benchmark needs a judge, the judge options of `options.py`. Each
shows the same progress bar on stderr and ends with the same summary line on stderr: how
many records the results hold, how many passed and the mean score.

A `--judge` that names no Inspect provider, or a model that cannot judge
(`envfactory/oracle`), is a usage error naming the option (exit 2, `judge_option`); a
judge whose provider cannot start here (no API key) a failure (exit 1); both one line.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

import typer
from inspect_ai.model import Model
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

from envfactory.cli.options import judge_model
from envs.jsonl import read_objects
from harness.judge import JUDGE_ROLE, UnknownModelError, model_errors, unfit_judge

__all__ = ["judge_option", "run_grade", "summary"]

#: what a benchmark's grader is run with: the progress callback `on_result(done, total)`
Grader = Callable[[Callable[[int, int], None]],
                  Coroutine[Any, Any, Sequence[dict[str, Any]]]]


def judge_option(judge: str, base_url: str | None, judge_args: Sequence[str],
                 temperature: float | None) -> Model:
    """The `--judge` model (`options.judge_model`), refused in one line when it cannot be
    made or cannot judge."""
    if (reason := unfit_judge(judge)) is not None:
        raise typer.BadParameter(reason, param_hint="'--judge'")
    try:
        with model_errors(JUDGE_ROLE, judge):
            return judge_model(judge, base_url, judge_args, temperature)
    except UnknownModelError as e:
        raise typer.BadParameter(str(e), param_hint="'--judge'") from None


def summary(results: Sequence[dict[str, Any]], score: str,
            passed: Callable[[dict[str, Any]], bool], new: int) -> str:
    """`N graded (K new): P passed, mean SCORE x` over every result of the run."""
    if not results:
        return "0 graded"
    mean = sum(float(r[score]) for r in results) / len(results)
    return (f"{len(results)} graded ({new} new): {sum(passed(r) for r in results)} passed, "
            f"mean {score} {mean:.3f}")


def run_grade(grader: Grader, results: Path | None, score: str,
              passed: Callable[[dict[str, Any]], bool]) -> None:
    """Run `grader` under a progress bar, then print the summary (of the whole results file
    when there is one, so a resumed run reports every record, not only the new ones)."""
    import asyncio

    err = Console(stderr=True)
    # no bar where stderr is not a terminal: there it would only leave blank lines
    # around the summary or the one error line
    progress = Progress("[progress.description]{task.description}", BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(), console=err,
                        transient=results is None, disable=not err.is_terminal)
    bar = progress.add_task("grading", total=None)
    with progress:
        graded = asyncio.run(grader(lambda done, total: progress.update(
            bar, completed=done, total=total)))
    every = list(graded)
    if results is not None:
        every = read_objects(results, "result line")
    err.print(summary(every, score, passed, len(graded))
              + (f" -> {results}" if results is not None else ""), highlight=False)
