"""Waiting on a condition instead of sleeping.

A test that sleeps a fixed time and then asserts on a log line, a file or a state races
the code it watches: on a loaded machine the line comes later and the test fails, on an
idle one it waits for nothing. `wait_until` polls the condition until it holds or a
deadline passes, and then fails with what was being waited for.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["wait_until"]

T = TypeVar("T")


def wait_until(condition: Callable[[], T], timeout: float = 10.0, interval: float = 0.02,
               what: str = "the condition") -> T:
    """Poll `condition()` until it returns something truthy, and return that.

    Raises `AssertionError` naming `what` when `timeout` seconds pass first; the condition
    is checked once more at the deadline, so a slow last step still counts."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise AssertionError(f"waited {timeout:g}s for {what}")
        time.sleep(interval)
