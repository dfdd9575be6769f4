"""`envfactory tau2 ...`: re-grade recorded τ² conversations (the shape of `grade.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from envfactory.cli.grade import judge_option, run_grade
from envfactory.cli.options import (
    JudgeArgsOpt,
    JudgeBaseUrlOpt,
    JudgeTemperatureOpt,
    LimitOpt,
    ResultsOpt,
    max_concurrency_option,
)

__all__ = ["tau2_app"]

tau2_app = typer.Typer(help="τ²-bench utilities.", no_args_is_help=True)


@tau2_app.command("grade")
def tau2_grade(
    file: Annotated[Path, typer.Argument(
        help="JSONL: canonical Trajectory records (envfactory trajectories LOG) or "
             "{domain, task_id, termination_reason, messages} records.")],
    judge: Annotated[str | None, typer.Option(
        help="Inspect model for NL assertions, where a task's reward basis needs them.")]
    = None,
    results: ResultsOpt = None,
    max_concurrency: Annotated[int, max_concurrency_option("Conversations graded")] = 1,
    limit: LimitOpt = None,
    judge_base_url: JudgeBaseUrlOpt = None,
    judge_model_arg: JudgeArgsOpt = None,
    judge_temperature: JudgeTemperatureOpt = None,
) -> None:
    """Re-grade recorded τ² conversations with exactly the Inspect task's reward code: one
    JSON line per input line, in order, with task_id, domain, reward and its components."""
    from tasks._tau2.grade import grade_file
    from tasks._tau2.scoring import model_judge

    nl_judge = (model_judge(judge_option(judge, judge_base_url, judge_model_arg or [],
                                         judge_temperature)) if judge else None)
    run_grade(lambda on_result: grade_file(file, nl_judge, results,
                                           max_concurrent=max_concurrency, limit=limit,
                                           on_result=on_result),
              results, "reward", lambda r: float(r["reward"]) == 1.0)
