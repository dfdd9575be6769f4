"""Failed samples' bodies, read fast: the JSON of each sample, without its events.

A sample's events (the transcript) are most of its bytes — 640 KB of an 870 KB held-out
EnvFactory sample — and validating them into Inspect's event models costs most of
`read_eval_log_samples_by_id`'s time. The taxonomy needs messages, store, metadata,
scores, error and limit, so `.eval` members are parsed with `json.loads` and validated
without `events` and `attachments` (about 2.5× faster on real logs), through
`harness.inspect_compat.read_eval_samples`: Inspect's zip reader is an internal API.
"""

from __future__ import annotations

from collections.abc import Sequence

from inspect_ai.log import EvalSample

from harness import inspect_compat

__all__ = ["read_samples"]

_SKIP = {"events", "attachments", "events_data"}


async def read_samples(path: str, wanted: Sequence[tuple[str | int, int]]
                       ) -> list[EvalSample]:
    """The samples `(id, epoch)` of the log at `path`, in order (events left out)."""
    if not wanted:
        return []
    return await inspect_compat.read_eval_samples(path, wanted, sorted(_SKIP))
