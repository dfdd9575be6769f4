"""`leaderboard build`: logs → table, taxonomy, Markdown/CSV/JSON, plots and the page."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel

from leaderboard.baselines import BASELINES_FILE, load_baselines
from leaderboard.checkpoints import CHECKPOINTS_FILE, load_checkpoints
from leaderboard.outputs import write_outputs
from leaderboard.plots import write_plots
from leaderboard.read import find_logs, read_logs
from leaderboard.records import Leaderboard, LogRecord, SkippedLog
from leaderboard.site import write_site
from leaderboard.table import build_table, pick_logs
from leaderboard.taxonomy import taxonomy

__all__ = ["BuildError", "BuildResult", "build", "hub_logs"]


class BuildError(RuntimeError):
    """No log could be used, so nothing was written (the message names every file)."""


class BuildResult(BaseModel):
    board: Leaderboard
    files: dict[str, Path]
    logs: int
    seconds: dict[str, float]
    """Wall time per phase (read, table, taxonomy, outputs)."""


def hub_logs(repo_id: str, revision: str | None = None) -> Path:
    """The local folder of Inspect logs `envfactory hub push-results` put in `repo_id`
    (downloaded by `leaderboard.hub.download_results`)."""
    from leaderboard.hub import download_results  # the Hub helper's module, loaded on use

    return download_results(repo_id, revision=revision)


class _Counter:
    """Counts one stage's finished items and passes the count to `on_progress`."""

    def __init__(self, stage: str, total: int,
                 on_progress: Callable[[str, int, int | None], None] | None) -> None:
        self.stage, self.total, self.done, self.on_progress = stage, total, 0, on_progress
        self.advance(0)

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.on_progress is not None:
            self.on_progress(self.stage, self.done, self.total)


def build(paths: Sequence[Path], out: Path, *, baselines: Path | None = BASELINES_FILE,
          checkpoints: Path | None = None, with_taxonomy: bool = True,
          max_failures_per_log: int | None = None, with_plots: bool = True,
          workers: int | None = None,
          on_progress: Callable[[str, int, int | None], None] | None = None) -> BuildResult:
    """Read every log under `paths`, build the leaderboard and write every output to
    `out`. `baselines=None` leaves the reported rows out; `checkpoints` maps them to
    their released checkpoints for the reproduction gap (default: the shipped
    `leaderboard/checkpoints.json` with the shipped baselines, none with others);
    `workers` processes classify failed samples (default: the CPUs, at most 4).
    `on_progress(stage, done, total)` is called as logs are read ("reading logs") and
    classified ("failure taxonomy"); the command line draws it. Raises `BuildError`,
    writing nothing, when none of the logs can be used (`harness.logs.find_logs` refuses
    a folder without logs); logs that cannot be used beside ones that can are left out
    and listed (`Leaderboard.skipped`)."""
    workers = workers or min(4, os.cpu_count() or 1)
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    files = find_logs(paths)
    records: list[LogRecord] = []
    skipped: list[SkippedLog] = []
    report = _Counter("reading logs", len(files), on_progress)
    for result in read_logs(files, on_done=report.advance):
        if isinstance(result, LogRecord):
            records.append(result)
        else:
            skipped.append(result)
    seconds["read"] = time.perf_counter() - start
    if not records:
        raise BuildError(f"none of the {len(files)} log file(s) could be used, nothing "
                         "written: " + "; ".join(f"{s.path} ({s.reason})" for s in skipped))
    t = time.perf_counter()
    if checkpoints is None and baselines == BASELINES_FILE:
        checkpoints = CHECKPOINTS_FILE
    board = build_table(records, load_baselines(baselines) if baselines else None,
                        load_checkpoints(checkpoints, baselines)
                        if baselines and checkpoints else None)
    board.skipped = skipped
    seconds["table"] = time.perf_counter() - t
    if with_taxonomy:
        t = time.perf_counter()
        kept = pick_logs(records).kept
        report = _Counter("failure taxonomy", len(kept), on_progress)
        board.taxonomy, board.failed_samples = taxonomy(
            kept, on_logs=report.advance, max_per_log=max_failures_per_log, workers=workers)
        seconds["taxonomy"] = time.perf_counter() - t
    t = time.perf_counter()
    written = write_outputs(board, out)
    plots = write_plots(board, out) if with_plots else []
    written["html"] = write_site(board, out, plots)
    seconds["outputs"] = time.perf_counter() - t
    seconds["total"] = time.perf_counter() - start
    return BuildResult(board=board, files=written, logs=len(files), seconds=seconds)
