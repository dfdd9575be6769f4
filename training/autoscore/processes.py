"""The processes of a scoring: children that never outlive it, and one scoring per results
folder at a time.

`kill -9` of `score run` used to leave its `inspect eval-set` running under PID 1, and a
rerun then started a second eval-set on the same task in the same folder while the orphan
ran (two logs for one task id, one of them left `started`). Both halves are closed here:

- `spawn` starts a child that dies with its parent. On Linux the child asks the kernel for
  SIGTERM when its parent dies (`prctl(PR_SET_PDEATHSIG)`): a few lines of Python
  (`_DIE_WITH_PARENT`) make the call and then `exec` the command, so the setting carries
  over to it. (A `preexec_fn` would run Python between fork and exec, which is not safe
  while other threads run - the progress bars' refresh, the log poller.) The kernel sends
  the signal when the *thread* that started the child ends; `score_checkpoint` waits for
  its children on that thread, so the thread outlives them. Elsewhere (macOS, the BSDs) the
  child runs under a lifeline (`training.autoscore.lifeline`) that holds the read end of a
  pipe whose write end only the parent has: however the parent dies, the pipe reads end of
  file and the lifeline stops the command's process group.
- `FolderLock` holds the one lock-file mechanism (`envs.locks.ExclusiveLock`) on
  `<results folder>/.envfactory-score.lock`, whose record names the holder's pid and its
  eval-set's. The children inherit the lock, so an eval-set that outlived its parent still
  holds it. A second scoring of the same folder fails at once naming the pid, or waits for
  it (`wait`).

POSIX only (`fcntl`), as the rest of the scoring is.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from envs.locks import ExclusiveLock, alive
from training.autoscore.suites import ScoreError

__all__ = ["LOCK_FILE", "FolderBusy", "FolderLock", "spawn", "stop_process_group"]

LOCK_FILE = ".envfactory-score.lock"
"""The lock file in each results folder (`<log-dir>/<run_id>/<checkpoint>/<limit-N|all>/`)."""

#: argv[1]: the parent's pid (a parent that died before the prctl is caught by the check);
#: argv[2:]: the command. PR_SET_PDEATHSIG is 1 (linux/prctl.h).
_DIE_WITH_PARENT = """\
import ctypes, os, signal, sys
if ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0) != 0:
    sys.exit(f"prctl(PR_SET_PDEATHSIG): {os.strerror(ctypes.get_errno())}")
if os.getppid() != int(sys.argv[1]):
    sys.exit("the scoring that started this process has exited")
os.execvp(sys.argv[2], sys.argv[2:])
"""


def spawn(argv: Sequence[str], *, cwd: Path | None = None,
          env: Mapping[str, str] | None = None, keep_fds: Sequence[int] = (),
          output: int | IO[Any] = subprocess.PIPE, new_session: bool = False,
          lifeline: bool | None = None) -> subprocess.Popen[str]:
    """`argv` started dying with this process (see the module docstring), its stdout and
    stderr together on `output` (a text pipe unless a file is given). `keep_fds` stay open
    in it (the folder lock); `new_session`: in a process group of its own, for
    `stop_process_group`. `lifeline` chooses the mechanism (default: the kernel's on
    Linux, the lifeline elsewhere); under the lifeline its stdin is the pipe, so the
    caller must leave `proc.stdin` open (no `communicate()`) until the child has exited."""
    if lifeline is None:
        lifeline = not sys.platform.startswith("linux")
    if lifeline:
        command = [sys.executable, "-m", "training.autoscore.lifeline", "--", *argv]
        stdin: int = subprocess.PIPE  # the lifeline's; this process never writes to it
    else:
        command = [sys.executable, "-c", _DIE_WITH_PARENT, str(os.getpid()), *argv]
        stdin = subprocess.DEVNULL
    return subprocess.Popen(command, cwd=cwd, env=None if env is None else dict(env),
                            stdin=stdin, stdout=output, stderr=subprocess.STDOUT, text=True,
                            errors="replace", pass_fds=tuple(keep_fds),
                            start_new_session=new_session)


def stop_process_group(proc: subprocess.Popen[Any], grace: float = 30.0) -> None:
    """Stop a process started with `start_new_session` and everything it started: SIGTERM
    to its group, then SIGKILL if it has not exited within `grace` seconds."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


class FolderBusy(ScoreError):
    """Another scoring holds the results folder's lock."""


def _holder(record: dict[str, Any] | None) -> str:
    """Who holds the lock, from the record the holder wrote into the lock file."""
    if record is None:  # being rewritten this instant, or foreign
        return "another process"
    pid, child = record.get("pid"), record.get("eval_set_pid")
    if alive(pid):
        return f"pid {pid}" + (f" (its inspect eval-set: pid {child})" if alive(child)
                               else "")
    if alive(child):
        return f"pid {child} (an inspect eval-set whose scoring, pid {pid}, has exited)"
    return f"another process (the last holder, pid {pid}, has exited)"


class FolderLock(ExclusiveLock):
    """An exclusive lock on one results folder for as long as the `with` block runs
    (`envs.locks.ExclusiveLock` on `<folder>/LOCK_FILE`; its record also names the
    eval-set, `note_child`)."""

    def __init__(self, folder: Path, *, wait: bool = False,
                 on_wait: Callable[[str], None] | None = None) -> None:
        self.folder = folder

        def busy(record: dict[str, Any] | None) -> FolderBusy:
            return FolderBusy(f"{folder}: already being scored by {_holder(record)}; wait "
                              "for it to finish (or stop it), or pass --wait to queue "
                              "behind it")

        def waiting(record: dict[str, Any] | None) -> None:
            if on_wait is not None:
                on_wait(f"waiting for {_holder(record)} to finish with {folder}")

        super().__init__(folder / LOCK_FILE, busy=busy, wait=wait, on_wait=waiting)

    def __enter__(self) -> FolderLock:
        super().__enter__()
        self.update(eval_set_pid=None)
        return self

    def note_child(self, pid: int) -> None:
        """Record the eval-set now running (named when someone else finds the folder
        locked)."""
        self.update(eval_set_pid=pid)
