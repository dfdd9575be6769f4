"""How far a running `inspect eval-set` task has got: samples done out of samples in all,
read from the log eval-set is writing, so `score run` shows a bar per task instead of
nothing for minutes (one BFCL multi-turn sample of SmolLM2 on a CPU takes minutes).

Inspect writes finished samples into the `.eval` log as it goes (one at a time for runs
of up to 5 samples, up to 10 at a time for larger ones, and any left waiting after a
while), and its public `inspect_ai.log` API reads a log that is still being written: the
header names the task id, the limit and the dataset's size, the sample summaries are the
samples done. Which log is the task's: the newest one with a task id that eval-set's
`eval-set.json` gives the task's name (the file is rewritten by each eval-set run).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from training.reporting import OnProgress

__all__ = ["OnProgress", "following", "task_progress"]


def _task_ids(out_dir: Path, task_name: str) -> set[str]:
    try:
        info = json.loads((out_dir / "eval-set.json").read_text(encoding="utf-8"))
        return {t["task_id"] for t in info["tasks"] if t.get("name") == task_name}
    except (OSError, ValueError, KeyError, TypeError):
        return set()


def task_progress(out_dir: Path, task_name: str) -> tuple[int, int | None] | None:
    """(samples done, samples in all or None) of `task_name`'s log in `out_dir`; None while
    there is none yet."""
    from inspect_ai.log import list_eval_logs, read_eval_log, read_eval_log_sample_summaries

    ids = _task_ids(out_dir, task_name)
    if not ids:
        return None
    logs = [info for info in list_eval_logs(str(out_dir), recursive=False)
            if info.task_id in ids]
    if not logs:
        return None
    newest = max(logs, key=lambda info: info.mtime or 0.0)
    header = read_eval_log(newest, header_only=True)
    if header.results is not None:  # finished: its own count
        return header.results.completed_samples, header.results.total_samples
    done = len(read_eval_log_sample_summaries(newest))
    config, samples = header.eval.config, header.eval.dataset.samples
    limit = config.limit
    if isinstance(limit, tuple):  # (start, end)
        limit = limit[1] - limit[0]
    total = samples if limit is None else limit if samples is None else min(limit, samples)
    epochs = config.epochs or 1
    return done, None if total is None else total * epochs


@contextmanager
def following(out_dir: Path, task_name: str, stage: str, on_progress: OnProgress,
              total: int | None, interval: float = 2.0) -> Iterator[None]:
    """Report `task_name`'s progress as `on_progress(stage, done, total)` every `interval`
    seconds while the block runs (`total`: the expected count until the log says), and once
    more at its end."""
    stop = threading.Event()
    last: list[tuple[int, int | None]] = [(0, total)]
    on_progress(stage, 0, total)

    def look() -> None:
        try:
            now = task_progress(out_dir, task_name)
        # a log in the middle of a write (a zip without its directory yet, a half-written
        # member): the next look reads it whole
        except Exception:  # noqa: BLE001 - progress is a display, never a failure
            return
        if now is not None and now != last[-1]:
            last.append(now)
            on_progress(stage, *now)

    def poll() -> None:
        while not stop.wait(interval):
            look()

    poller = threading.Thread(target=poll, name=f"progress {task_name}", daemon=True)
    poller.start()
    try:
        yield
    finally:
        stop.set()
        poller.join()
        look()
