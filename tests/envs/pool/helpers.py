"""Assertions every pool-environment test uses: a call succeeds, or fails cleanly."""

from __future__ import annotations

from typing import Any

from envs.base import Environment


def ok(env: Environment, tool: str, **args: Any) -> Any:
    """Call `tool`, assert it succeeded, return its content."""
    result = env.call(tool, args)
    assert result.ok, result.error
    return result.content


def fails(env: Environment, tool: str, expected: str, **args: Any) -> None:
    """The call fails with `expected` in its message and leaves the state untouched."""
    before = env.snapshot()
    result = env.call(tool, args)
    assert not result.ok
    assert expected in (result.error or ""), result.error
    assert env.snapshot() == before


def fails_exactly(env: Environment, tool: str, expected: str, **args: Any) -> None:
    """The call fails with exactly `expected` and leaves the state untouched."""
    before = env.snapshot()
    result = env.call(tool, args)
    assert not result.ok
    assert result.error == expected
    assert env.snapshot() == before
