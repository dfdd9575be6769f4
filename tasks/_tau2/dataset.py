"""τ² tasks as Inspect samples (ids are the official task ids)."""

from __future__ import annotations

from inspect_ai.dataset import MemoryDataset, Sample

from envs.tau2 import data
from envs.tau2.tasks import Task

__all__ = ["load_dataset"]


def load_dataset(domain: str, split: str = "base") -> MemoryDataset:
    tasks = [Task.model_validate(t) for t in data.load_tasks(domain)]
    splits = data.load_split(domain)
    if split not in splits:
        raise ValueError(f"τ² {domain}: unknown split {split!r}; known: {', '.join(splits)}")
    wanted = set(splits[split])
    samples = [
        Sample(id=t.id, input=t.user_scenario.render(),
               metadata={"task": t.model_dump(), "domain": domain,
                         "environments": [f"tau2/{domain}"]})
        for t in tasks if t.id in wanted
    ]
    if not samples:
        raise ValueError(f"τ² {domain}: split {split!r} selects no task of this release")
    return MemoryDataset(samples, name=f"tau2_{domain}_{split}")
