"""The processes of `score run` / `score watch`, with real processes: the eval-set child dies
with its parent (`kill -9` too), one scoring per results folder (a second fails at once
naming the holder's pid, or waits), and the samples of a running task counted from its log.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import psutil
import pytest
from rich.console import Console
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.cli.progress import stage_bars
from testkit.recording_server import Api, RecordingServer, Reply
from testkit.waiting import wait_until
from training import autoscore
from training.autoscore import (
    LOCK_FILE,
    SUITES,
    FolderBusy,
    FolderLock,
    ScoredState,
    score_checkpoint,
    spawn,
)
from training.autoscore.suites import REPO_ROOT

ENVFACTORY = str(Path(sys.executable).parent / "envfactory")


def model_dir(path: Path) -> Path:
    """A directory that looks like a saved model (its weights are empty)."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text('{"model_type": "llama"}')
    (path / "model.safetensors").write_bytes(b"")
    return path


def gone(pid: int) -> bool:
    """Exited (a zombie counts: nothing runs, its parent just has not reaped it yet)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def free(folder: Path) -> bool:
    try:
        with FolderLock(folder):
            return True
    except FolderBusy:
        return False


def first_user_message(body: Mapping[str, Any]) -> str:
    return next((str(m.get("content")) for m in body.get("messages", [])
                 if m.get("role") == "user"), "")


class HeldServer:
    """A scripted model that answers the first sample it sees, and holds every request of
    any other sample until `release()` (so a run stays inside its second sample)."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.first: str | None = None
        self.held = threading.Event()
        self.server = RecordingServer(self.answer)

    def answer(self, api: Api, body: Mapping[str, Any]) -> Reply:
        sample = first_user_message(body)
        if self.first is None:
            self.first = sample
        if sample != self.first:
            self.held.set()
            self.released.wait(timeout=600)
        return Reply(content="I cannot help.")

    def release(self) -> None:
        self.released.set()


@pytest.fixture
def held() -> Iterator[HeldServer]:
    server = HeldServer()
    with server.server:
        yield server
        server.release()


@pytest.fixture
def envfactory_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The quick suite cut to its first task: these tests are about processes, not tasks."""
    monkeypatch.setitem(SUITES, "quick", SUITES["quick"][:1])


# --- children die with their parent ---------------------------------------------------

PARENT = """\
import sys, time
from training.autoscore.processes import spawn
proc = spawn([sys.executable, "-c", "import os, time; print(os.getpid(), flush=True); "
              "time.sleep(600)"], lifeline={lifeline})
print(proc.stdout.readline().strip(), flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("lifeline", [False, True], ids=["prctl", "lifeline"])
def test_a_child_dies_with_its_parent_killed_by_sigkill(lifeline: bool) -> None:
    """Linux's PR_SET_PDEATHSIG, and the lifeline used where there is none."""
    parent = subprocess.Popen([sys.executable, "-c", PARENT.format(lifeline=lifeline)],
                              cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        command = int(parent.stdout.readline())
        assert not gone(command)
        parent.kill()  # SIGKILL: no handler, no cleanup
        parent.wait()
        wait_until(lambda: gone(command), timeout=15, what=f"pid {command} to exit")
    finally:
        parent.kill()
        parent.wait()


def test_the_lifeline_passes_the_exit_status_on(tmp_path: Path) -> None:
    proc = spawn([sys.executable, "-c", "print('out'); import sys; sys.exit(3)"],
                 cwd=REPO_ROOT, lifeline=True)
    assert proc.stdout is not None
    out = proc.stdout.read()  # not communicate(): closing its stdin is the parent's death
    assert (proc.wait(timeout=60), out) == (3, "out\n")


def test_score_run_killed_takes_its_eval_set_along_and_holds_the_folder_till_then(
        tmp_path: Path, held: HeldServer) -> None:
    """Was: the eval-set went on under PID 1 and a rerun started a second one beside it."""
    ckpt = model_dir(tmp_path / "checkpoint-1")
    command = [ENVFACTORY, "score", "run", str(ckpt), "--serve", held.server.url,
               "--limit", "2", "--log-dir", str(tmp_path / "scores"),
               "--inspect-arg=--max-samples", "--inspect-arg=1"]
    folder = tmp_path / "scores" / "checkpoint-1" / "checkpoint-1" / "limit-2"
    first = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_until(held.held.is_set, timeout=300, what="the eval-set to reach sample 2")
        record = json.loads((folder / LOCK_FILE).read_text())
        child = record["eval_set_pid"]
        assert record["pid"] == first.pid
        assert psutil.Process(child).ppid() == first.pid
        assert "eval-set" in psutil.Process(child).cmdline()

        second = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True,
                                timeout=120)
        assert second.returncode == 1
        assert second.stderr == (
            f"error: {folder}: already being scored by pid {first.pid} (its inspect "
            f"eval-set: pid {child}); wait for it to finish (or stop it), or pass --wait "
            "to queue behind it\n")

        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        wait_until(lambda: gone(child), timeout=15, what="the eval-set to exit")
        # free again, so a rerun may start (the leader thread shows as a zombie a moment
        # before the last of its threads lets go of the descriptors)
        wait_until(lambda: free(folder), timeout=15, what="the folder's lock to be free")
    finally:
        held.release()
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()


# --- one scoring per results folder -----------------------------------------------------


def test_a_second_scoring_of_a_held_folder_fails_at_once_naming_the_pid(
        tmp_path: Path) -> None:
    ckpt = model_dir(tmp_path / "checkpoint-7")
    folder = tmp_path / "scores" / "checkpoint-7" / "checkpoint-7" / "limit-1"
    with FolderLock(folder):
        # a server that is never asked: the lock is taken before the model is reached
        result = CliRunner().invoke(app, ["score", "run", str(ckpt), "--serve",
                                          "http://127.0.0.1:9/v1", "--limit", "1",
                                          "--log-dir", str(tmp_path / "scores")])
    assert result.exit_code == 1
    assert result.stderr == (f"error: {folder}: already being scored by pid {os.getpid()}; "
                             "wait for it to finish (or stop it), or pass --wait to queue "
                             "behind it\n")


def test_an_eval_set_that_outlives_its_scoring_still_holds_the_folder(
        tmp_path: Path) -> None:
    folder = tmp_path / "limit-1"
    with FolderLock(folder) as lock:
        orphan = spawn([sys.executable, "-c", "import time; time.sleep(600)"],
                       cwd=REPO_ROOT, keep_fds=(lock.fd,))
        lock.note_child(orphan.pid)
    try:  # the scoring has let go; its child has not
        held_by = re.escape(f"(its inspect eval-set: pid {orphan.pid})")
        with pytest.raises(FolderBusy, match=held_by):
            FolderLock(folder).__enter__()
    finally:
        orphan.kill()
        orphan.wait()
    with FolderLock(folder):
        pass


def test_wait_queues_behind_the_holder(tmp_path: Path) -> None:
    folder = tmp_path / "limit-1"
    waiting: list[str] = []
    asked = threading.Event()
    holder = FolderLock(folder).__enter__()

    def let_go() -> None:
        asked.wait(timeout=60)
        holder.__exit__(None, None, None)

    releaser = threading.Thread(target=let_go)
    releaser.start()

    def note(line: str) -> None:
        waiting.append(line)
        asked.set()

    with FolderLock(folder, wait=True, on_wait=note) as lock:
        assert json.loads((folder / LOCK_FILE).read_text())["pid"] == os.getpid()
        assert lock.fd >= 0
    releaser.join()
    assert waiting == [f"waiting for pid {os.getpid()} to finish with {folder}"]


def test_watch_does_not_count_a_busy_checkpoint_as_an_attempt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    model_dir(run / "checkpoint-1")

    def busy(checkpoint: Path, **kwargs: Any) -> Any:
        raise FolderBusy(f"{checkpoint}: already being scored by pid 1")

    monkeypatch.setattr(autoscore.watching, "score_checkpoint", busy)
    result = CliRunner().invoke(app, ["score", "watch", str(run), "--once"])
    assert result.exit_code == 1  # the pass scored nothing
    assert "checkpoint-1 failed" in result.stderr
    assert ScoredState.load(run).checkpoints == {}  # tried again on the next pass


# --- progress inside a task -------------------------------------------------------------


def test_progress_counts_the_samples_of_a_running_task(
        tmp_path: Path, held: HeldServer, envfactory_only: None) -> None:
    """Two samples one at a time; the second is held until the first shows as done."""
    calls: list[tuple[str, int, int | None]] = []

    def on_progress(stage: str, done: int, total: int | None) -> None:
        calls.append((stage, done, total))

    results: list[Any] = []
    scoring = threading.Thread(target=lambda: results.append(score_checkpoint(
        model_dir(tmp_path / "checkpoint-2"), serve=held.server.url, limit=2,
        log_root=tmp_path / "scores", extra_args=["--max-samples", "1"],
        say=lambda line: None, on_progress=on_progress)))
    scoring.start()
    try:
        wait_until(lambda: (1, 2) in [(d, t) for _, d, t in calls], timeout=300,
                   what="1 of 2 samples reported")
        # the count may be read before the second sample's first request arrives (a loaded
        # machine): wait for it to be held, then the second is still running
        wait_until(held.held.is_set, timeout=300, what="the second sample held")
        assert (2, 2) not in [(d, t) for _, d, t in calls] and not held.released.is_set()
    finally:
        held.release()
        scoring.join(timeout=300)
    [result] = results
    assert result.status == "scored", result.message
    assert {stage for stage, _, _ in calls} == {"checkpoint-2 [1/1] envfactory"}
    assert [(d, t) for _, d, t in calls] == [(0, 2), (1, 2), (2, 2)]


def test_bars_keep_their_look_while_plain_lines_print_above_them() -> None:
    """The score commands print inspect's lines (markup off) under the bars; the bars'
    style tag used to show as text ("[progress.description]checkpoint-1 ...")."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    with stage_bars(console, transient=False) as update:
        update("checkpoint-1 [1/2] envfactory", 0, 5)
        console.print("a line of inspect's [output]", markup=False)
        update("checkpoint-1 [1/2] envfactory", 2, 5)
    text = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", out.getvalue())
    assert "progress.description" not in text
    assert "a line of inspect's [output]" in text
    assert re.search(r"checkpoint-1 \[1/2\] envfactory .* 2/5", text)


def test_watch_keeps_only_the_newest_bars() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    with stage_bars(console, transient=False, most=2) as update:
        for n in range(1, 4):
            update(f"checkpoint-{n} [1/1] envfactory", 1, 1)
    last_frame = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", out.getvalue()).rsplit("\r", 1)[-1]
    assert "checkpoint-1" not in last_frame
    assert "checkpoint-2" in last_frame and "checkpoint-3" in last_frame
