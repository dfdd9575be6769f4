"""The held-out EnvFactory samples: one per canonical `Trajectory` in
`tasks/envfactory/data/<split>.jsonl`, the whole trajectory in its metadata (the solver
feeds its user turns, the scorer reads its gold calls and final state).
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai.dataset import MemoryDataset, Sample

from harness.trajectory import read_jsonl

DATA_DIR = Path(__file__).resolve().parents[1] / "envfactory" / "data"
"""The shipped task files (`envfactory tasks build` writes them)."""
SPLITS = ("heldout", "train")


def load_dataset(split: str, data_dir: Path = DATA_DIR) -> MemoryDataset:
    """Samples from `<data_dir>/<split>.jsonl` (`split="all"` for both)."""
    splits = SPLITS if split == "all" else (split,)
    samples = []
    for name in splits:
        if name not in SPLITS:
            raise ValueError(f"unknown split {name!r}; use heldout, train or all")
        path = data_dir / f"{name}.jsonl"
        if not path.exists():
            raise FileNotFoundError(f"{path} not found; build it with `envfactory tasks build`")
        for task in read_jsonl(path):
            samples.append(Sample(
                id=task.id, input=task.turns[0].user,
                metadata={"trajectory": task.model_dump(mode="json"),
                          "environments": task.environments,
                          "domain": task.provenance.domain, "split": name}))
    return MemoryDataset(samples, name=f"envfactory_{split}")
