"""The one shape of a re-grading command: `tau2 grade`, `vitabench grade`, `mcp-atlas grade`.

Each takes `FILE` (JSONL records: canonical `Trajectory` lines from `envfactory
trajectories LOG`, or the benchmark's plain records), `--results FILE` (appended as records
finish, resumed on a rerun; without it result lines go to stdout), `--max-concurrency N`,
`--limit N` and, where the benchmark needs a judge, the judge options of `options.py`. Each
shows the same progress bar on stderr and ends with the same summary line on stderr: how
many records the results hold, how many passed and the mean score.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

from envs.jsonl import read_objects

__all__ = ["run_grade", "summary"]

#: what a benchmark's grader is run with: the progress callback `on_result(done, total)`
Grader = Callable[[Callable[[int, int], None]],
                  Coroutine[Any, Any, Sequence[dict[str, Any]]]]


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
    progress = Progress("[progress.description]{task.description}", BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(), console=err,
                        transient=results is None)
    bar = progress.add_task("grading", total=None)
    with progress:
        graded = asyncio.run(grader(lambda done, total: progress.update(
            bar, completed=done, total=total)))
    every = list(graded)
    if results is not None:
        every = read_objects(results, "result line")
    err.print(summary(every, score, passed, len(graded))
              + (f" -> {results}" if results is not None else ""), highlight=False)
