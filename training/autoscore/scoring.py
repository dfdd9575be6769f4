"""Scoring one checkpoint: its suite's tasks run one `inspect eval-set` subprocess each into
`<log-dir>/<run_id>/<checkpoint>/<limit-N | all>/`, and each task's outcome read back from
the logs eval-set used (a rerun resumes and skips finished work).

One scoring per results folder at a time (`processes.FolderLock`: a second fails at once
naming the holder's pid, or waits), each eval-set dies with the scoring that started it
(`processes.spawn`), and the samples done in each task are reported as they finish
(`on_progress`, from the log eval-set writes: `log_progress`).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from training.autoscore.checkpoints import (
    checkpoint_label,
    inspect_checkpoint,
    provenance_metadata,
    resolve_provenance,
    results_dir,
)
from training.autoscore.inspect_argv import ModelTarget, eval_set_argv
from training.autoscore.log_progress import OnProgress, following
from training.autoscore.processes import FolderLock, spawn
from training.autoscore.serving import model_target, needs_merge
from training.autoscore.suites import (
    DEFAULT_LIMITS,
    REPO_ROOT,
    SUITES,
    ScoreError,
    Suite,
    SuiteTask,
)
from training.provenance import CheckpointProvenance
from training.reporting import Say, to_stderr


class TaskScore(BaseModel):
    """One task's outcome: inspect's exit status, its log(s) and headline metrics."""

    task: str
    returncode: int
    seconds: float
    status: str = "not run"
    """The log's status (success, error, cancelled, started) or "not run"."""
    log: str | None = None
    """The log file's name (in the result's log_dir)."""
    samples: int = 0
    metrics: dict[str, float] = Field(default_factory=dict)
    """Every metric, as `<score>/<metric>`."""
    headline: dict[str, float] = Field(default_factory=dict)
    """Per score its `overall` metric if it has one, else its first."""


class ScoreResult(BaseModel):
    """What `score run` did for one checkpoint (`--json` prints it)."""

    checkpoint: str
    status: Literal["scored", "failed", "needs_merged_model"]
    message: str = ""
    provenance: CheckpointProvenance | None = None
    suite: str
    serve: str
    model: str | None = None
    limit: int | None = None
    log_dir: str | None = None
    tasks: list[TaskScore] = Field(default_factory=list)
    seconds: float = 0.0



def score_checkpoint(
    checkpoint: Path, *, suite: Suite = "quick", serve: str = "hf", limit: int | None = None,
    log_root: Path = Path("scores"), max_tokens: int | None = None,
    model_name: str | None = None, device: str = "cpu", run_dir: Path | None = None,
    extra_args: Sequence[str] = (), say: Say = to_stderr,
    vllm_cmd: Sequence[str] | None = None, vllm_args: Sequence[str] = (),
    wait: bool = False, on_progress: OnProgress | None = None,
    on_result: Callable[[ScoreResult], None] | None = None,
) -> ScoreResult:
    """Score one checkpoint directory on a suite; see the module docstring.

    Raises `NotAModelDir` / `ScoreError` for what cannot start (not a model directory, a bad
    `--serve`, a server that does not answer, `FolderBusy`: another scoring holds the
    results folder, unless `wait`); a task that fails inside inspect is reported in the
    result (status "failed"), and a rerun resumes it. `on_progress(stage, done, total)`
    follows each task's samples (stage: `<checkpoint> [i/n] <task>`); `say` gets what is
    being run and the tasks' own output, line by line; `on_result` the result of a scoring
    that ran (a command shows its table, `envfactory/cli/score.py`).
    """
    if suite not in SUITES:
        raise ScoreError(f"--suite {suite!r}: use one of {', '.join(SUITES)}")
    if serve not in ("hf", "vllm") and not serve.startswith(("http://", "https://")):
        raise ScoreError(f"--serve {serve!r}: use hf, vllm or an http(s):// base URL")
    started = time.monotonic()
    checkpoint = checkpoint.expanduser().resolve()
    info = inspect_checkpoint(checkpoint)
    try:
        prov = resolve_provenance(info, run_dir.resolve() if run_dir is not None else None)
    except ValueError as e:  # a provenance file that is not a valid record
        raise ScoreError(str(e)) from None
    limit = DEFAULT_LIMITS[suite] if limit is None else limit
    result = ScoreResult(checkpoint=str(checkpoint), status="failed", provenance=prov,
                         suite=suite, serve=serve, limit=limit)
    reason = needs_merge(info, serve)
    if reason is not None:
        say(f"skipped {reason}")
        return result.model_copy(update={"status": "needs_merged_model", "message": reason})
    out_dir = results_dir(log_root.expanduser(), prov, checkpoint, limit)
    metadata = provenance_metadata(prov, checkpoint)
    label = checkpoint_label(checkpoint)
    default_name = label if prov.run_id == label else f"{prov.run_id}/{label}"
    # the lock before the model: a busy folder must not start a vLLM server first
    with (FolderLock(out_dir, wait=wait,
                     on_wait=say) as lock,
          model_target(info, serve, model_name or default_name, device, say, vllm_cmd,
                       vllm_args, explicit_name=model_name is not None) as target):
        argvs = [(task, eval_set_argv(task, target, out_dir, limit=task.limit(limit),
                                      max_tokens=max_tokens, metadata=metadata,
                                      extra_args=extra_args))
                 for task in SUITES[suite]]
        say(f"scoring {checkpoint} ({prov.method}, run {prov.run_id}, step {prov.step}) on "
            f"{suite} as {target.model} -> {out_dir}")
        scores = _run_tasks(argvs, target, out_dir, say, lock, label,
                            [task.limit(limit) for task in SUITES[suite]], on_progress)
    ok = all(s.returncode == 0 and s.status == "success" for s in scores)
    failed = [s.task for s in scores if not (s.returncode == 0 and s.status == "success")]
    result = result.model_copy(update={
        "status": "scored" if ok else "failed", "model": target.model,
        "log_dir": str(out_dir), "tasks": scores,
        "message": "" if ok else f"not finished: {', '.join(failed)} (rerun to resume)",
        "seconds": round(time.monotonic() - started, 1)})
    if on_result is not None:
        on_result(result)
    return result


def _run_tasks(argvs: list[tuple[SuiteTask, list[str]]], target: ModelTarget, out_dir: Path,
               say: Say, lock: FolderLock, label: str, limits: list[int | None],
               on_progress: OnProgress | None) -> list[TaskScore]:
    env = {**os.environ, **target.env, "PYTHONUNBUFFERED": "1"}
    scores: list[TaskScore] = []
    for i, ((task, argv), limit) in enumerate(zip(argvs, limits, strict=True), 1):
        stage = f"{label} [{i}/{len(argvs)}] {task.name}"
        say(f"$ {' '.join(argv)}")
        began = time.monotonic()
        # the children hold the folder's lock too: one that outlived this process would
        # still keep a rerun out
        proc = spawn(argv, cwd=REPO_ROOT, env=env, keep_fds=(lock.fd,))
        lock.note_child(proc.pid)
        assert proc.stdout is not None
        follow = (following(out_dir, task.name, stage, on_progress, limit)
                  if on_progress is not None else nullcontext())
        try:
            with follow:
                for line in proc.stdout:
                    say(line.rstrip("\n"))
                returncode = proc.wait()
        except BaseException:
            _stop_child(proc)
            raise
        finally:
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    pipe.close()
        scores.append(_task_score(task, returncode, time.monotonic() - began, out_dir))
    return scores


def _stop_child(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _task_score(task: SuiteTask, returncode: int, seconds: float, out_dir: Path) -> TaskScore:
    """Find the log eval-set used for `task`: `eval-set.json` names its task id (that of a
    reused log too)."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    score = TaskScore(task=task.task, returncode=returncode, seconds=round(seconds, 1))
    try:
        info = json.loads((out_dir / "eval-set.json").read_text(encoding="utf-8"))
        task_ids = {t["task_id"] for t in info["tasks"] if t.get("name") == task.name}
    except (OSError, ValueError, KeyError, TypeError):
        return score
    for log_info in list_eval_logs(str(out_dir), recursive=False):
        if log_info.task_id not in task_ids:
            continue
        log = read_eval_log(log_info, header_only=True)
        metrics: dict[str, float] = {}
        headline: dict[str, float] = {}
        for result in log.results.scores if log.results is not None else []:
            for name, metric in result.metrics.items():
                metrics[f"{result.name}/{name}"] = metric.value
            key = "overall" if "overall" in result.metrics else next(iter(result.metrics), None)
            if key is not None:
                headline[key if key == "overall" else result.name] = result.metrics[key].value
        return score.model_copy(update={
            "status": log.status, "log": log_info.name.rsplit("/", 1)[-1],
            "metrics": metrics, "headline": headline,
            "samples": log.results.completed_samples if log.results else 0})
    return score
