"""envs.locks.ExclusiveLock: a second holder is refused naming the first (from its record),
waits when asked, and a child process given the descriptor keeps the lock."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from envs.locks import ExclusiveLock, alive, holder_record


class Busy(Exception):
    pass


def refuse(record: dict[str, Any] | None) -> Busy:
    return Busy(f"held by {(record or {}).get('pid')}")


def test_a_second_holder_is_refused_with_the_first_holders_record(tmp_path: Path) -> None:
    path = tmp_path / "out" / ".lock"
    with ExclusiveLock(path, busy=refuse) as lock:
        lock.update(step="writing")
        assert holder_record(path) == {"pid": os.getpid(), "since": holder_record(path)["since"],
                                       "step": "writing"}
        with pytest.raises(Busy, match=f"held by {os.getpid()}"), ExclusiveLock(path, busy=refuse):
            pass
    with ExclusiveLock(path, busy=refuse):  # released: free again, the file kept
        pass
    assert path.exists()


def test_wait_blocks_until_the_holder_lets_go(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    seen: list[Any] = []
    first = ExclusiveLock(path, busy=refuse).__enter__()
    release = threading.Timer(0.3, first.__exit__, (None, None, None))
    release.start()
    with ExclusiveLock(path, busy=refuse, wait=True, on_wait=seen.append):
        pass
    release.join()
    assert [r["pid"] for r in seen] == [os.getpid()]


def test_a_child_given_the_descriptor_holds_the_lock_after_the_parent_lets_go(
        tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    with ExclusiveLock(path, busy=refuse) as lock:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                                 pass_fds=(lock.fd,))
    try:
        with pytest.raises(Busy), ExclusiveLock(path, busy=refuse):
            pass
        assert alive(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not alive(child.pid)
    with ExclusiveLock(path, busy=refuse):
        pass
