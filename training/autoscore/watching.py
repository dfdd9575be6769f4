"""Watching a training run: each complete checkpoint scored once per (suite, limit), what
was scored kept in `<RUN_DIR>/.envfactory_scored.json` (a failure retried up to
`MAX_ATTEMPTS` times), and `scoring_beside` running `score watch` in its own process while
the trainer runs.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from envs.jsonl import write_atomic
from training.autoscore.checkpoints import checkpoint_label, find_checkpoints
from training.autoscore.processes import FolderBusy, spawn, stop_process_group
from training.autoscore.scoring import ScoreResult, score_checkpoint
from training.autoscore.suites import DEFAULT_LIMITS, REPO_ROOT, ScoreError, Suite
from training.reporting import Say, to_stderr

SCORED_FILE = ".envfactory_scored.json"
"""What `score watch` has scored, in the watched run directory."""


class ScoredEntry(BaseModel):
    """One checkpoint's scoring under one (suite, limit), as `score watch` recorded it."""

    status: Literal["scored", "failed", "needs_merged_model"]
    message: str = ""
    log_dir: str | None = None
    attempts: int = 1
    at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))


class ScoredState(BaseModel):
    """`<RUN_DIR>/.envfactory_scored.json`: checkpoint name -> scoring key -> entry."""

    checkpoints: dict[str, dict[str, ScoredEntry]] = Field(default_factory=dict)

    @classmethod
    def load(cls, run_dir: Path) -> ScoredState:
        path = run_dir / SCORED_FILE
        try:
            return cls.model_validate_json(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls()
        except ValueError as e:  # pydantic's ValidationError is one
            raise ScoreError(f"{path}: not a scoring record ({e}); delete it to rescore"
                             ) from None

    def save(self, run_dir: Path) -> None:
        write_atomic(run_dir / SCORED_FILE, self.model_dump_json(indent=2) + "\n")


MAX_ATTEMPTS = 3
"""A checkpoint whose scoring failed is tried again on later passes, this many times in all."""



def watch(run_dir: Path, *, interval: float = 60.0, once: bool = False,
          suite: Suite = "quick", limit: int | None = None,
          say: Say = to_stderr,
          sleep: Callable[[float], None] = time.sleep, **options: Any) -> list[ScoreResult]:
    """Score each complete checkpoint of `run_dir` (`find_checkpoints`) once, recording what
    was scored in `<run_dir>/.envfactory_scored.json`; with `once`, one pass, else forever
    (Ctrl-C). `say` and `options` (`on_result`, `on_progress`, ...) go to each
    `score_checkpoint`."""
    if not run_dir.is_dir():
        raise ScoreError(f"{run_dir}: no such run directory")
    run_dir = run_dir.resolve()
    limit = DEFAULT_LIMITS[suite] if limit is None else limit
    key = f"{suite}/{'all' if limit is None else f'limit-{limit}'}"
    results: list[ScoreResult] = []
    while True:
        state = ScoredState.load(run_dir)
        for checkpoint in find_checkpoints(run_dir):
            name = checkpoint_label(checkpoint)
            previous = state.checkpoints.get(name, {}).get(key)
            if previous is not None and (previous.status != "failed"
                                         or previous.attempts >= MAX_ATTEMPTS):
                continue
            try:
                result = score_checkpoint(checkpoint, suite=suite, limit=limit,
                                          run_dir=run_dir, say=say, **options)
            except ScoreError as e:
                result = ScoreResult(checkpoint=str(checkpoint), status="failed",
                                     message=str(e), suite=suite,
                                     serve=str(options.get("serve", "hf")), limit=limit)
                say(str(e))
                if isinstance(e, FolderBusy):  # someone else is scoring it: no attempt
                    results.append(result)
                    continue
            attempts = (previous.attempts + 1) if previous is not None else 1
            # read again before writing: another watcher may have recorded meanwhile
            state = ScoredState.load(run_dir)
            state.checkpoints.setdefault(name, {})[key] = ScoredEntry(
                status=result.status, message=result.message, log_dir=result.log_dir,
                attempts=attempts)
            state.save(run_dir)
            results.append(result)
        if once:
            return results
        say(f"watching {run_dir}: next look in {interval:.0f} s")
        sleep(interval)


def watch_command(run_dir: Path, *, suite: Suite, limit: int | None, log_root: Path,
                  once: bool = False, interval: float = 60.0,
                  options: Sequence[str] = ()) -> list[str]:
    """`envfactory score watch RUN_DIR ...` with this interpreter (`options`: more of its
    flags, e.g. `--serve URL`)."""
    argv = [sys.executable, "-m", "envfactory", "score", "watch", str(run_dir),
            "--suite", suite, "--log-dir", str(log_root), "--interval", str(interval)]
    if limit is not None:
        argv += ["--limit", str(limit)]
    return argv + (["--once"] if once else []) + list(options)


@contextmanager
def scoring_beside(run_dir: Path, *, suite: Suite, limit: int | None, log_root: Path,
                   say: Say = to_stderr, interval: float = 60.0, options: Sequence[str] = ()
                   ) -> Iterator[subprocess.Popen[str]]:
    """Score a training run's checkpoints as they are saved, without blocking it.

    While the block runs (the trainer), `score watch` runs in its own process group, its
    output in `RUN_DIR/score-watch.log`, and it dies with this process
    (`processes.spawn`). Afterwards it is stopped and one last `--once` pass scores what
    the trainer saved last (and resumes a scoring the stop cut short: eval-set skips
    finished work), in the foreground so its table is shown. A block that raises
    (training failed) stops the watcher and skips the last pass.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    log_root = log_root.expanduser().resolve()
    argv = watch_command(run_dir, suite=suite, limit=limit, log_root=log_root,
                         interval=interval, options=options)
    with (run_dir / "score-watch.log").open("ab") as log:
        # gone with the trainer's process even when that is killed (it would watch forever)
        proc = spawn(argv, cwd=REPO_ROOT, output=log, new_session=True)
    say(f"scoring checkpoints on `{suite}` as they are saved (pid {proc.pid}, "
        f"log {run_dir / 'score-watch.log'}) into {log_root}")
    try:
        yield proc
    finally:
        stop_process_group(proc)
    say("scoring the checkpoints not scored during training")
    # --wait: an eval-set of the stopped watcher may take a moment to exit (and free its
    # results folder)
    last = watch_command(run_dir, suite=suite, limit=limit, log_root=log_root, once=True,
                         options=[*options, "--wait"])
    code = subprocess.call(last, cwd=REPO_ROOT)
    if code != 0:
        again = " ".join(["envfactory", *last[3:]])
        say(f"scoring finished with exit status {code}; `{again}` resumes it")

