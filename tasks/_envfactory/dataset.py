"""The held-out EnvFactory samples: one per canonical `Trajectory` in
`tasks/envfactory/data/<split>.jsonl`, the whole trajectory in its metadata (the solver
feeds its user turns, the scorer reads its gold calls and final state).

A task's environments are any registry names, the release's `release/<Name>@<scenario>`
included. A task naming one that cannot be made (unknown, a broken release server, a
scenario that is not a starting state) is skipped with one warning naming the file, the
line and the reason, and counted in the dataset's name; the rest run.

`turns="first"` makes each sample the task's first user turn alone (gold: that turn's
calls and its `gold_state_after`), ordered round-robin over the tasks' first
environments, single-environment tasks first: the shipped files list tasks environment by
environment, so without it a `--limit` prefix would be one environment's tasks only. The
demo scores many first turns this way in the time a few whole tasks take.
"""

from __future__ import annotations

import logging
from itertools import chain, zip_longest
from pathlib import Path

from inspect_ai.dataset import MemoryDataset, Sample

from envs import registry
from envs.jsonl import numbered_records
from harness.trajectory import Trajectory

logger = logging.getLogger(__name__)

DATA_DIR = Path(__file__).resolve().parents[1] / "envfactory" / "data"
"""The shipped task files (`envfactory tasks build` writes them)."""
SPLITS = ("heldout", "train")
TURNS = ("all", "first")


def _unusable(names: list[str], known: set[str]) -> str | None:
    """Why one of these environments cannot be made, or None. Names the listing has are
    fine; any other (a `@scenario`, `module:Class`) is resolved, which checks it."""
    for name in names:
        if name in known:
            continue
        try:
            registry.get(name)
        except KeyError as e:
            return str(e.args[0])
    return None


def _first_turn(task: Trajectory) -> Trajectory | None:
    """The task cut to its first user turn, or None when that turn has no gold state."""
    first = task.turns[0]
    if first.gold_state_after is None:
        return None
    return task.model_copy(update={"turns": [first], "final_state": first.gold_state_after,
                                   "messages": []})


def _round_robin(samples: list[Sample]) -> list[Sample]:
    """One sample of each first environment in turn (in order of first appearance), a
    group's single-environment tasks before its cross-environment ones (their prompts
    carry one environment's tools, not two: half the tokens to read on a CPU)."""
    groups: dict[str, list[Sample]] = {}
    for sample in samples:
        groups.setdefault((sample.metadata or {})["environments"][0], []).append(sample)
    ordered = [sorted(g, key=lambda s: len((s.metadata or {})["environments"]))
               for g in groups.values()]
    return [s for s in chain.from_iterable(zip_longest(*ordered)) if s is not None]


def load_dataset(split: str, data_dir: Path = DATA_DIR, turns: str = "all") -> MemoryDataset:
    """Samples from `<data_dir>/<split>.jsonl` (`split="all"` for both); `turns="first"`:
    first user turns only, interleaved by first environment (see above)."""
    if turns not in TURNS:
        raise ValueError(f"unknown turns {turns!r}; use all or first")
    splits = SPLITS if split == "all" else (split,)
    known = {e.name for e in registry.all_entries()}
    samples, skipped = [], 0
    for name in splits:
        if name not in SPLITS:
            raise ValueError(f"unknown split {name!r}; use heldout, train or all")
        path = data_dir / f"{name}.jsonl"
        if not path.exists():
            raise FileNotFoundError(f"{path} not found; build it with `envfactory tasks build`")
        for line, task in numbered_records(path, Trajectory.model_validate_json, "trajectory"):
            problem = _unusable(task.environments, known)
            if problem is None and turns == "first":
                cut = _first_turn(task)
                if cut is None:
                    problem = "its first turn has no gold_state_after"
                else:
                    task = cut
            if problem is not None:
                logger.warning("%s:%d: task %s skipped: %s", path, line, task.id, problem)
                skipped += 1
                continue
            samples.append(Sample(
                id=task.id, input=task.turns[0].user,
                metadata={"trajectory": task.model_dump(mode="json"),
                          "environments": task.environments,
                          "domain": task.provenance.domain, "split": name}))
    if not samples:
        raise ValueError(f"{data_dir}: no usable task in split {split!r} "
                         f"({skipped} skipped, see the warnings)")
    if turns == "first":
        samples = _round_robin(samples)
    label = (f"envfactory_{split}" + ("_first_turns" if turns == "first" else "")
             + (f" ({skipped} tasks skipped)" if skipped else ""))
    return MemoryDataset(samples, name=label)
