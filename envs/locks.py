"""One writer of an output at a time: an exclusive `flock` on a lock file that names its
holder.

Two `train export`s into one folder, or two scorings of one results folder, each used to
finish "successfully" with the last writer's files. Whoever writes such an output holds
`ExclusiveLock` on its lock file for as long as it writes; a second process finds it held
and either fails at once with an error that names the holder (from the JSON record the
holder wrote into the file: its pid, when it started, and whatever it added) or waits.

The kernel drops an `flock` when the last descriptor of the file closes, however the
holder ends (`kill -9` included), and a child given the descriptor (`fd`) holds the lock
with it. The file stays when the lock is released: removing it could let a waiter and a
newcomer lock two different files. POSIX only (`fcntl`).
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["ExclusiveLock", "alive", "holder_record"]


def alive(pid: object) -> bool:
    """Whether `pid` (as read from a lock record) is a running process."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return True


def holder_record(path: Path) -> dict[str, Any] | None:
    """What the holder of `path` wrote about itself; None while it is being rewritten, or
    for a file this module did not write."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


class ExclusiveLock:
    """Hold the exclusive lock of `path` for the `with` block. Held by someone else: raise
    `busy(record)` (the holder's record, see `holder_record`), or with `wait`, call
    `on_wait(record)` and block until it is free."""

    def __init__(self, path: Path, *, busy: Callable[[dict[str, Any] | None], BaseException],
                 wait: bool = False,
                 on_wait: Callable[[dict[str, Any] | None], None] | None = None) -> None:
        self.path = path
        self._busy, self._wait, self._on_wait = busy, wait, on_wait
        self._fd: int | None = None
        self._record: dict[str, Any] = {}

    @property
    def fd(self) -> int:
        """The locked file's descriptor (a child given it holds the lock too)."""
        if self._fd is None:
            raise RuntimeError(f"the lock {self.path} is not held")
        return self._fd

    def __enter__(self) -> ExclusiveLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                record = holder_record(self.path)
                if not self._wait:
                    raise self._busy(record) from None
                if self._on_wait is not None:
                    self._on_wait(record)
                fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        self._record = {"pid": os.getpid(),
                        "since": datetime.now(UTC).isoformat(timespec="seconds")}
        self._write()
        return self

    def update(self, **fields: Any) -> None:
        """Add `fields` to the holder's record (what a waiting process is told)."""
        self._record.update(fields)
        self._write()

    def _write(self) -> None:
        data = (json.dumps(self._record) + "\n").encode()
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, data, 0)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._fd is not None:
            os.close(self._fd)  # the lock goes with the last descriptor of the file
            self._fd = None
