"""Bounded concurrency, one way: at most `limit` of many awaitables run at once.

Re-grading judges records concurrently, QueryGen synthesizes chains, EnvGen builds
environments, the graph's LLM passes send batches and the leaderboard reads logs, each
with a `--max-concurrency` (or a fixed cap) that bounds the model calls or open files in
flight. This is the one gate they share. It lives in `envs/` (plain asyncio, no Inspect)
so every folder may use it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import TypeVar

T = TypeVar("T")

__all__ = ["bounded", "bounded_gather"]


def bounded(aws: Iterable[Awaitable[T]], limit: int) -> list[asyncio.Future[T]]:
    """Schedule every awaitable now, at most `limit` (at least 1) running at once; the
    futures in input order, for a caller that consumes results as they come (in order:
    `harness.results_file.write_in_order`). Must be called inside a running loop; the
    caller cancels what it no longer awaits."""
    gate = asyncio.Semaphore(max(1, limit))

    async def gated(aw: Awaitable[T]) -> T:
        async with gate:
            return await aw

    return [asyncio.ensure_future(gated(aw)) for aw in aws]


async def bounded_gather(aws: Iterable[Awaitable[T]], limit: int) -> list[T]:
    """The results of every awaitable, in input order, at most `limit` running at once.
    The first failure is raised and the awaitables not yet finished are cancelled."""
    pending = bounded(aws, limit)
    try:
        return list(await asyncio.gather(*pending))
    finally:
        for future in pending:
            future.cancel()
