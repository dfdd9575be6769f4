"""`envfactory vitabench ...`: re-grade recorded VitaBench conversations (the shape of
`grade.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from envfactory.cli.grade import judge_option, run_grade
from envfactory.cli.options import (
    JudgeArgsOpt,
    JudgeBaseUrlOpt,
    JudgeOpt,
    LimitOpt,
    ResultsOpt,
    max_concurrency_option,
)

__all__ = ["vitabench_app"]

vitabench_app = typer.Typer(help="VitaBench utilities.", no_args_is_help=True)


@vitabench_app.command("grade")
def vitabench_grade(
    file: Annotated[Path, typer.Argument(
        help="JSONL: canonical Trajectory records (envfactory trajectories LOG) or "
             "{task_id, set, language, termination_reason, messages} records.")],
    judge: JudgeOpt,
    results: ResultsOpt = None,
    max_concurrency: Annotated[int, max_concurrency_option("Conversations judged")] = 1,
    limit: LimitOpt = None,
    judge_base_url: JudgeBaseUrlOpt = None,
    judge_model_arg: JudgeArgsOpt = None,
    judge_temperature: Annotated[float | None, typer.Option(
        help="The judge's temperature (default: upstream's 0.0).")] = None,
    revision: Annotated[str, typer.Option(help="VitaBench release revision.")] = "2025-11",
) -> None:
    """Re-grade recorded VitaBench conversations with exactly the Inspect task's judge: one
    JSON line per input line, in order, with task_id, reward and the per-rubric verdicts."""
    from tasks._vitabench.grade import grade_file

    model = judge_option(judge, judge_base_url, judge_model_arg or [], judge_temperature)
    run_grade(lambda on_result: grade_file(file, model, results, revision=revision,
                                           max_concurrent=max_concurrency, limit=limit,
                                           on_result=on_result),
              results, "reward", lambda r: float(r["reward"]) == 1.0)
