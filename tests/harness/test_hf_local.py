"""`hf/local` is known to Inspect without a Hub lookup (harness/hf_local.py).

Before, Inspect's per-call model-info lookup built a second `hf` provider named `local`
and transformers asked the Hub for that repository: offline, ~50 s of retries for a
6 s sample unless `HF_HUB_OFFLINE=1` was set."""

from __future__ import annotations

import importlib.metadata

from inspect_ai.model import get_model_info

from harness import hf_local


def test_the_entry_point_registers_the_local_label() -> None:
    (entry,) = [e for e in importlib.metadata.entry_points(group="inspect_ai")
                if e.name == "envfactory"]
    entry.load()  # what Inspect does at start-up
    info = get_model_info(hf_local.LOCAL_LABEL)  # would build a provider if unknown
    assert info is not None and info.context_length is None
