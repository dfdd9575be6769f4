"""Scoring one checkpoint: its suite's tasks run one `inspect eval-set` subprocess each into
`<log-dir>/<run_id>/<checkpoint>/<limit-N | all>/`, and each task's outcome read back from
the logs eval-set used (a rerun resumes and skips finished work).

`score_model` takes what a user names: a model directory, a Hub model id (`OWNER/NAME[@REV]`,
downloaded at a resolved commit: `hub_models`) or, with `serve="inspect"`, an Inspect model
name (`envfactory/oracle`, `openai/gpt-4.1`) run as Inspect runs it. A suite's required roles
(`SUITE_ROLES`: the paper suite's `user` and `judge`) are refused when missing and recorded in
every log; a `preflight` callback says, before anything runs, which tasks cannot run here
(missing data, no MCP server reachable): those are listed as skipped with the reason (and in
`.envfactory_skipped.json` in the results folder), never run into an error or scored 0.

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
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from envs.jsonl import write_atomic
from training.autoscore.checkpoints import (
    NotAModelDir,
    checkpoint_label,
    hub_provenance,
    inspect_checkpoint,
    leaf_name,
    provenance_metadata,
    resolve_provenance,
    results_dir,
)
from training.autoscore.hub_models import HubCheckpoint, download_checkpoint, parse_hub_spec
from training.autoscore.inspect_argv import ModelTarget, eval_set_argv
from training.autoscore.log_progress import OnProgress, following
from training.autoscore.processes import FolderLock, spawn
from training.autoscore.serving import model_target, needs_merge
from training.autoscore.suites import (
    DEFAULT_LIMITS,
    REPO_ROOT,
    SUITE_ROLES,
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
    """The log's status (success, error, cancelled, started), "not run", or "skipped" (the
    preflight found it cannot run here: `reason`)."""
    reason: str = ""
    """Why a skipped task was not run."""
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
    epochs: int | None = None
    roles: dict[str, str] = Field(default_factory=dict)
    """The models bound to the tasks' roles (`user`, `judge`)."""
    log_dir: str | None = None
    tasks: list[TaskScore] = Field(default_factory=list)
    """Every task of the suite in order, the skipped ones included (status "skipped")."""
    seconds: float = 0.0


class TaskCheck(BaseModel):
    """What a preflight found out about one task of the suite, before anything ran."""

    reason: str | None = None
    """Why the task cannot run here (it is skipped); None: it can."""
    strata: dict[str, list[str]] = Field(default_factory=dict)
    """A `stratify` task's sample ids by stratum, in dataset order."""

    def sample_ids(self, limit: int | None) -> list[str] | None:
        """The first `limit` ids of each stratum (None: no limit or no strata known)."""
        if limit is None or not self.strata:
            return None
        return [i for ids in self.strata.values() for i in ids[:limit]]


Preflight = Callable[[SuiteTask, Mapping[str, str]], TaskCheck]
"""Whether a suite task can run here, given the roles (and a `stratify` task's ids); asked
for every task before anything runs. The caller supplies it (training does not import
`tasks/`; the CLI builds each task: `envfactory/cli/score_preflight.py`)."""

SKIPPED_FILE = ".envfactory_skipped.json"
"""In a results folder: the tasks the last scoring skipped and why (absent when none;
hidden, so log readers pass it by, as `score watch`'s `.envfactory_scored.json`)."""



class _Scoring(BaseModel):
    """What every scoring is asked, whatever names its model (`score_model`'s options)."""

    suite: Suite = "quick"
    serve: str = "hf"
    limit: int | None = None
    log_root: Path = Path("scores")
    max_tokens: int | None = None
    model_name: str | None = None
    device: str = "cpu"
    extra_args: Sequence[str] = ()
    vllm_cmd: Sequence[str] | None = None
    vllm_args: Sequence[str] = ()
    wait: bool = False
    roles: dict[str, str] = Field(default_factory=dict)
    epochs: int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


def _check(request: _Scoring) -> None:
    """The options every scoring refuses before it touches anything."""
    if request.suite not in SUITES:
        raise ScoreError(f"--suite {request.suite!r}: use one of {', '.join(SUITES)}")
    if (request.serve not in ("hf", "vllm", "inspect")
            and not request.serve.startswith(("http://", "https://"))):
        raise ScoreError(f"--serve {request.serve!r}: use hf, vllm, inspect or an http(s):// "
                         "base URL")
    require_roles(request.suite, request.roles)
    if request.epochs is not None and request.epochs < 1:
        raise ScoreError(f"--epochs {request.epochs}: must be at least 1")


def require_roles(suite: str, roles: Mapping[str, str]) -> None:
    """Refuse a suite run without the roles it pins (`SUITE_ROLES`), naming the options."""
    missing = [role for role in SUITE_ROLES.get(suite, ()) if not roles.get(role)]
    if missing:
        raise ScoreError(
            f"--suite {suite} pins the models of the {' and '.join(missing)} "
            f"role{'s' if len(missing) > 1 else ''}: give "
            f"{' '.join(f'--{role} MODEL' for role in missing)} (the same for every "
            "checkpoint compared, so that all are simulated and judged alike)")


def _suite_metadata(request: _Scoring) -> dict[str, Any]:
    """The suite and its pinned roles, in every log of a scoring that binds roles."""
    if not request.roles:
        return {}
    return {"envfactory_suite": request.suite,
            **{f"envfactory_{role}_model": model for role, model in request.roles.items()}}


def score_model(model: str, *, serve: str = "hf", say: Say = to_stderr,
                **options: Any) -> ScoreResult:
    """Score what `model` names: a model directory (`score_checkpoint`), a Hub model id
    `OWNER/NAME[@REV]` (downloaded at the commit `REV` names, default `main`, and scored as
    its snapshot folder), or with `serve="inspect"` an Inspect model name. `options` are
    `score_checkpoint`'s."""
    if serve == "inspect":
        return _score_inspect_model(model, say=say, **options)
    path = Path(model).expanduser()
    if path.exists():
        return score_checkpoint(path, serve=serve, say=say, **options)
    parsed = parse_hub_spec(model)
    if parsed is None:
        raise NotAModelDir(f"{model}: no such directory, and not a Hub model id "
                           "(OWNER/NAME[@REVISION]); an Inspect model name (provider/model) "
                           "runs with --serve inspect")
    say(f"downloading {parsed[0]}@{parsed[1]} from the Hub")
    hub = download_checkpoint(*parsed)
    say(f"{hub.hub_id}@{hub.requested} is commit {hub.commit}: {hub.folder}")
    return score_checkpoint(hub.folder, serve=serve, say=say, hub=hub, **options)


def score_checkpoint(
    checkpoint: Path, *, suite: Suite = "quick", serve: str = "hf", limit: int | None = None,
    log_root: Path = Path("scores"), max_tokens: int | None = None,
    model_name: str | None = None, device: str = "cpu", run_dir: Path | None = None,
    extra_args: Sequence[str] = (), say: Say = to_stderr,
    vllm_cmd: Sequence[str] | None = None, vllm_args: Sequence[str] = (),
    wait: bool = False, on_progress: OnProgress | None = None,
    on_result: Callable[[ScoreResult], None] | None = None,
    roles: Mapping[str, str] | None = None, epochs: int | None = None,
    preflight: Preflight | None = None, metadata: Mapping[str, Any] | None = None,
    hub: HubCheckpoint | None = None,
) -> ScoreResult:
    """Score one checkpoint directory on a suite; see the module docstring.

    Raises `NotAModelDir` / `ScoreError` for what cannot start (not a model directory, a bad
    `--serve`, a required role missing, a server that does not answer, `FolderBusy`:
    another scoring holds the results folder, unless `wait`); a task that fails inside
    inspect is reported in the result (status "failed"), and a rerun resumes it.
    `on_progress(stage, done, total)` follows each task's samples (stage: `<checkpoint>
    [i/n] <task>`); `say` gets what is being run and the tasks' own output, line by line;
    `on_result` the result of a scoring that ran (a command shows its table,
    `envfactory/cli/score.py`). `roles` bind models to the tasks' roles, `epochs` runs each
    sample that many times, `metadata` adds eval metadata to every log, `hub` says the
    directory is that Hub checkpoint's download (`score_model`).
    """
    request = _Scoring(suite=suite, serve=serve, limit=limit, log_root=log_root,
                       max_tokens=max_tokens, model_name=model_name, device=device,
                       extra_args=extra_args, vllm_cmd=vllm_cmd, vllm_args=vllm_args,
                       wait=wait, roles=dict(roles or {}), epochs=epochs,
                       metadata=dict(metadata or {}))
    _check(request)
    if serve == "inspect":
        raise ScoreError(f"--serve inspect runs an Inspect model name, not a directory "
                         f"({checkpoint}); use hf, vllm or a URL")
    started = time.monotonic()
    checkpoint = checkpoint.expanduser().resolve()
    info = inspect_checkpoint(checkpoint)
    try:
        prov = (hub_provenance(hub.hub_id, hub.commit, hub.requested, checkpoint)
                if hub is not None else
                resolve_provenance(info, run_dir.resolve() if run_dir is not None else None))
    except ValueError as e:  # a provenance file that is not a valid record
        raise ScoreError(str(e)) from None
    limit = DEFAULT_LIMITS[suite] if limit is None else limit
    request.limit = limit
    result = ScoreResult(checkpoint=hub.hub_id if hub is not None else str(checkpoint),
                         status="failed", provenance=prov, suite=suite, serve=serve,
                         limit=limit, epochs=epochs, roles=request.roles)
    reason = needs_merge(info, serve)
    if reason is not None:
        say(f"skipped {reason}")
        return result.model_copy(update={"status": "needs_merged_model", "message": reason})
    label = checkpoint_label(checkpoint) if hub is None else hub.hub_id
    default_name = (hub.hub_id if hub is not None else
                    label if prov.run_id == label else f"{prov.run_id}/{label}")
    target = model_target(info, serve, model_name or default_name, device, say, vllm_cmd,
                          vllm_args, explicit_name=model_name is not None)
    return _run_suite(
        request, result, target,
        out_dir=results_dir(log_root.expanduser(), prov, checkpoint, limit, suite),
        metadata=provenance_metadata(prov, checkpoint), label=label,
        about=f"{checkpoint} ({prov.method}, run {prov.run_id}, step {prov.step})"
              + (f" = {hub.hub_id}@{hub.commit}" if hub is not None else ""),
        say=say, preflight=preflight, on_progress=on_progress, on_result=on_result,
        started=started)


def _score_inspect_model(
    model: str, *, suite: Suite = "quick", limit: int | None = None,
    log_root: Path = Path("scores"), say: Say = to_stderr,
    on_progress: OnProgress | None = None,
    on_result: Callable[[ScoreResult], None] | None = None,
    preflight: Preflight | None = None, roles: Mapping[str, str] | None = None,
    **options: Any) -> ScoreResult:
    """An Inspect model name run as Inspect runs it (`--model NAME`): no checkpoint, no
    provenance; its results folder is `<log_root>/inspect/<provider>--<name>/<leaf>`."""
    ignored = sorted(k for k in ("model_name", "vllm_args", "run_dir", "hub")
                     if options.get(k))
    if ignored:
        raise ScoreError(f"--serve inspect: {', '.join(ignored)} do not apply to an "
                         "Inspect model name")
    unknown = set(options) - set(_Scoring.model_fields) - {"run_dir", "hub"}
    if unknown:
        raise TypeError(f"score_model: unknown option(s) {', '.join(sorted(unknown))}")
    request = _Scoring.model_validate({
        **{k: v for k, v in options.items() if k in _Scoring.model_fields},
        "suite": suite, "serve": "inspect", "limit": limit, "log_root": log_root,
        "roles": dict(roles or {})})
    _check(request)
    if "/" not in model or model.startswith("/") or model.endswith("/"):
        raise ScoreError(f"--serve inspect: {model!r} is not an Inspect model name "
                         "(provider/model, e.g. envfactory/oracle)")
    limit = DEFAULT_LIMITS[suite] if limit is None else limit
    request.limit = limit
    folder = model.replace("/", "--")
    if folder in (".", "..") or os.sep in folder:
        raise ScoreError(f"--serve inspect: {model!r} cannot name a folder")
    out_dir = (log_root.expanduser() / "inspect" / folder / leaf_name(limit, suite)).resolve()
    result = ScoreResult(checkpoint=model, status="failed", suite=suite, serve="inspect",
                         limit=limit, epochs=request.epochs, roles=request.roles)
    return _run_suite(request, result, nullcontext(ModelTarget(model=model)),
                      out_dir=out_dir, metadata={}, label=model, about=model, say=say,
                      preflight=preflight, on_progress=on_progress, on_result=on_result,
                      started=time.monotonic())


def _run_suite(request: _Scoring, result: ScoreResult,
               target_cm: AbstractContextManager[ModelTarget], *, out_dir: Path,
               metadata: dict[str, Any], label: str, about: str, say: Say,
               preflight: Preflight | None, on_progress: OnProgress | None,
               on_result: Callable[[ScoreResult], None] | None, started: float
               ) -> ScoreResult:
    """The suite's tasks against the target, in `out_dir`: the lock first (a busy folder
    must not start a vLLM server), then the preflight, then the model, then one eval-set
    per runnable task."""
    tasks = SUITES[request.suite]
    metadata = {**metadata, **_suite_metadata(request), **request.metadata}
    with FolderLock(out_dir, wait=request.wait, on_wait=say) as lock:
        checks = _preflight(tasks, request.roles, preflight, say)
        skipped = {task: check.reason for task, check in checks.items()
                   if check.reason is not None}
        _record_skipped(out_dir, request.suite, skipped)
        runnable = [task for task in tasks if task.task not in skipped]
        selections = [checks.get(task.task, TaskCheck()).sample_ids(request.limit)
                      if task.stratify else None for task in runnable]
        limits = [task.limit(request.limit) if ids is None else None
                  for task, ids in zip(runnable, selections, strict=True)]
        with target_cm as target:
            argvs = [(task, eval_set_argv(
                task, target, out_dir, limit=limit, sample_ids=ids,
                max_tokens=request.max_tokens, metadata=metadata,
                extra_args=request.extra_args, roles=request.roles, epochs=request.epochs))
                for task, limit, ids in zip(runnable, limits, selections, strict=True)]
            roles = ", ".join(f"{k} {v}" for k, v in request.roles.items())
            say(f"scoring {about} on {request.suite} as {target.model}"
                + (f" ({roles})" if roles else "") + f" -> {out_dir}")
            scores = _run_tasks(argvs, target, out_dir, say, lock, label,
                                [len(ids) if ids is not None else limit
                                 for limit, ids in zip(limits, selections, strict=True)],
                                on_progress)
    by_task = {score.task: score for score in scores}
    listed = [by_task.get(task.task) or TaskScore(task=task.task, returncode=0, seconds=0.0,
                                                  status="skipped", reason=skipped[task.task])
              for task in tasks]
    failed = [s.task for s in scores if not (s.returncode == 0 and s.status == "success")]
    notes = ([f"not finished: {', '.join(failed)} (rerun to resume)"] if failed else [])
    if skipped:
        notes.append(f"skipped (cannot run here: {SKIPPED_FILE} says why): "
                     + ", ".join(task.rsplit("@", 1)[-1] for task in skipped))
    result = result.model_copy(update={
        "status": "failed" if failed or not scores else "scored", "model": target.model,
        "log_dir": str(out_dir), "tasks": listed,
        "message": "; ".join(notes) if scores else "every task skipped: " + "; ".join(notes),
        "seconds": round(time.monotonic() - started, 1)})
    if on_result is not None:
        on_result(result)
    return result


def _preflight(tasks: Sequence[SuiteTask], roles: Mapping[str, str],
               preflight: Preflight | None, say: Say) -> dict[str, TaskCheck]:
    """Task -> what the preflight found (nothing without one)."""
    checks: dict[str, TaskCheck] = {}
    for task in tasks if preflight is not None else ():
        assert preflight is not None
        checks[task.task] = check = preflight(task, roles)
        if check.reason is not None:
            say(f"skipped {task.name}: {check.reason}")
    return checks


def _record_skipped(out_dir: Path, suite: str, skipped: Mapping[str, str]) -> None:
    path = out_dir / SKIPPED_FILE
    if skipped:
        write_atomic(path, json.dumps({"suite": suite, "skipped": dict(skipped)}, indent=2,
                                      ensure_ascii=False) + "\n")
    else:
        path.unlink(missing_ok=True)


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
