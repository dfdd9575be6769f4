"""Checks for `-T` task options, run when a task is built rather than per sample.

A bad option should stop `inspect eval` before any sample runs, with one line naming the
option and what it accepts. Inspect prints a `PrerequisiteError` raised while a task is
built as its message alone and exits 1; any other exception becomes a long traceback
with the message at its end, and an error raised inside a sample only fails that
sample (the run itself still exits 0). `TaskOptionError` is both that and a
`ValueError`, so Python callers can catch it as the latter.

Values arrive as Inspect parsed them from `-T name=value` (YAML: `-T max_steps=abc` is
the string "abc", `-T solo=yes` is True), so the checks test types as well as ranges.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from harness.inspect_compat import PrerequisiteError

__all__ = ["TaskOptionError", "boolean", "directory", "integer", "number", "one_of",
           "parsed"]

T = TypeVar("T")
R = TypeVar("R")


class TaskOptionError(PrerequisiteError, ValueError):
    """A task option Inspect reports in one line: `-T name=value: what is allowed`."""

    def __init__(self, name: str, value: object, allowed: str) -> None:
        message = f"-T {name}={value!r}: {allowed}"
        super().__init__(message)
        self.args = (message,)


def one_of(name: str, value: object, allowed: Iterable[str]) -> str:
    """`value` if it is one of `allowed` (listed in the error otherwise)."""
    options = list(allowed)
    if not isinstance(value, str) or value not in options:
        raise TaskOptionError(name, value, f"use one of {', '.join(options)}")
    return value


def integer(name: str, value: object, minimum: int | None = None) -> int:
    """`value` if it is an integer (not a bool) of at least `minimum`."""
    if isinstance(value, bool) or not isinstance(value, int) or (
            minimum is not None and value < minimum):
        bound = f" >= {minimum}" if minimum is not None else ""
        raise TaskOptionError(name, value, f"use an integer{bound}")
    return value


def number(name: str, value: object, minimum: float | None = None,
           maximum: float | None = None) -> float:
    """`value` as a float if it is a number within [`minimum`, `maximum`]."""
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            minimum is not None and value < minimum) or (
            maximum is not None and value > maximum):
        if minimum is not None and maximum is not None:
            bound = f" from {minimum} to {maximum}"
        elif minimum is not None:
            bound = f" >= {minimum}"
        else:
            bound = f" <= {maximum}" if maximum is not None else ""
        raise TaskOptionError(name, value, f"use a number{bound}")
    return float(value)


def boolean(name: str, value: object) -> bool:
    """`value` if it is true or false."""
    if not isinstance(value, bool):
        raise TaskOptionError(name, value, "use true or false")
    return value


def directory(name: str, value: object) -> Path:
    """`value` as a path to an existing directory."""
    if not isinstance(value, str | Path) or not Path(value).is_dir():
        raise TaskOptionError(name, value, "use an existing directory")
    return Path(value)


def parsed(name: str, value: T, parse: Callable[[T], R]) -> R:
    """`parse(value)`, its `ValueError` (which says what is allowed) reported as the
    option's: for options whose allowed values a benchmark module knows."""
    try:
        return parse(value)
    except ValueError as e:
        raise TaskOptionError(name, value, str(e)) from None
