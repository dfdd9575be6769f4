"""Failed samples' bodies, read fast: the JSON of each `.eval` member, without its events.

A sample's events (the transcript) are most of its bytes — 640 KB of an 870 KB held-out
EnvFactory sample — and validating them into Inspect's event models costs most of
`read_eval_log_samples_by_id`'s time; its `exclude_fields` path instead streams the JSON
through ijson, which is no faster. The taxonomy needs messages, store, metadata, scores,
error and limit, so this reader parses the member with `json.loads`, drops `events`
and `attachments`, and validates the rest as an `EvalSample`: about 2.5× faster on real
logs. It reads through Inspect's own zip reader (which handles its compression), an
internal API: where that is missing (another Inspect version) or the log is a `.json`
file, it falls back to the public reader.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from inspect_ai.log import EvalSample, read_eval_log_samples_by_id_async

__all__ = ["read_samples"]

_SKIP = {"events", "attachments", "events_data"}


async def read_samples(path: str, wanted: Sequence[tuple[str | int, int]]
                       ) -> list[EvalSample]:
    """The samples `(id, epoch)` of the log at `path`, in order (events left out)."""
    if not wanted:
        return []
    try:
        from inspect_ai._util.async_zip import AsyncZipReader
        from inspect_ai._util.asyncfiles import get_async_filesystem
        from inspect_ai._util.constants import get_deserializing_context
    except ImportError:
        fast = False
    else:
        fast = path.endswith(".eval")
    if not fast:
        return await read_eval_log_samples_by_id_async(path, wanted,
                                                       exclude_fields=_SKIP)
    reader = AsyncZipReader(get_async_filesystem(), path)
    out = []
    for sample_id, epoch in wanted:
        data = json.loads(await reader.read_member_fully(
            f"samples/{sample_id}_epoch_{epoch}.json"))
        for key in _SKIP:
            data.pop(key, None)
        out.append(EvalSample.model_validate(data, context=get_deserializing_context()))
    return out
