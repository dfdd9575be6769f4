"""What the Hub pushes are made of: Trajectory files read into splits and parquet rows, and
Inspect logs read into a small index (one entry per log).

A dataset row keeps the canonical record whole (`trajectory`, its JSON), so
`Trajectory.model_validate_json(row["trajectory"])` gives back exactly what was pushed, and
adds a few flat columns (environments, user turns, counts, provenance) that the Hub's
viewer and `datasets` filters can use without parsing JSON. The column types are fixed by
`DATASET_FEATURES`, never inferred from the first rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from datasets import Features, List, Value
from pydantic import BaseModel, Field

from harness import logs as harness_logs
from harness.trajectory import Trajectory, read_jsonl

__all__ = ["DATASET_FEATURES", "SPLITS", "LogEntry", "TrajectorySplits", "dataset_row",
           "find_logs", "log_entry", "read_splits"]

#: the Hub's split names, in the order cards list them
SPLITS = ("train", "validation", "test")

#: file stems and `provenance.split` values -> Hub split (held-out tasks are the test split)
_SPLIT_ALIASES = {
    "train": "train", "training": "train",
    "validation": "validation", "val": "validation", "valid": "validation", "dev": "validation",
    "test": "test", "heldout": "test", "held_out": "test", "held-out": "test",
}

#: QueryGen's output files that are not trajectories
_NOT_TRAJECTORIES = {"rejections.jsonl"}

DATASET_FEATURES = Features({
    "id": Value("string"),
    "environments": List(Value("string")),
    "user_turns": List(Value("string")),
    "num_turns": Value("int64"),
    "num_gold_calls": Value("int64"),
    "source": Value("string"),
    "domain": Value("string"),
    "patterns": List(Value("string")),
    "model": Value("string"),
    "termination": Value("string"),
    "trajectory": Value("string"),
})


class TrajectorySplits(BaseModel):
    """Trajectories by Hub split, with the files they came from."""

    splits: dict[str, list[Trajectory]]
    files: list[Path]

    def environments(self) -> dict[str, int]:
        """Environment -> number of trajectories using it, most used first."""
        counts: dict[str, int] = {}
        for trajectories in self.splits.values():
            for t in trajectories:
                for env in t.environments:
                    counts[env] = counts.get(env, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _jsonl_files(sources: Sequence[Path]) -> list[Path]:
    files: list[Path] = []
    for source in sources:
        if source.is_dir():
            found = sorted(p for p in source.glob("*.jsonl") if p.name not in _NOT_TRAJECTORIES)
            if not found:
                raise ValueError(f"{source}: no trajectory JSONL files (*.jsonl) in it")
            files += found
        elif source.is_file():
            files.append(source)
        else:
            raise ValueError(f"{source}: no such file or directory")
    return files


def _split_of(path: Path, trajectory: Trajectory) -> str:
    """The file's name when it names a split (`heldout.jsonl`), else the record's own
    `provenance.split` (QueryGen's `trajectories.jsonl`), else train."""
    by_name = _SPLIT_ALIASES.get(path.stem.lower())
    if by_name is not None:
        return by_name
    recorded = trajectory.provenance.split
    if recorded is None:
        return "train"
    split = _SPLIT_ALIASES.get(recorded.lower())
    if split is None:
        raise ValueError(f"{path}: trajectory {trajectory.id} has provenance.split "
                         f"{recorded!r}, which is none of {sorted(_SPLIT_ALIASES)}")
    return split


def read_splits(sources: Sequence[Path]) -> TrajectorySplits:
    """Trajectories of `sources` (directories of `*.jsonl`, or files) by split. An id seen
    twice is an error naming both files: a dataset row must be one episode."""
    files = _jsonl_files(sources)
    splits: dict[str, list[Trajectory]] = {}
    seen: dict[str, Path] = {}
    for path in files:
        for trajectory in read_jsonl(path):
            if trajectory.id in seen:
                raise ValueError(f"{path}: trajectory id {trajectory.id} already read from "
                                 f"{seen[trajectory.id]}")
            seen[trajectory.id] = path
            splits.setdefault(_split_of(path, trajectory), []).append(trajectory)
    if not seen:
        raise ValueError(f"{', '.join(map(str, files))}: no trajectories")
    ordered = {s: splits[s] for s in SPLITS if s in splits}
    return TrajectorySplits(splits=ordered, files=files)


def dataset_row(trajectory: Trajectory) -> dict[str, Any]:
    """One dataset row (`DATASET_FEATURES`) of a trajectory."""
    prov = trajectory.provenance
    return {
        "id": trajectory.id,
        "environments": list(trajectory.environments),
        "user_turns": [turn.user for turn in trajectory.turns],
        "num_turns": len(trajectory.turns),
        "num_gold_calls": len(trajectory.gold_calls()),
        "source": prov.source,
        "domain": prov.domain,
        "patterns": list(prov.patterns),
        "model": prov.model,
        "termination": trajectory.termination,
        "trajectory": trajectory.model_dump_json(exclude_none=True),
    }


# --- Inspect logs ---------------------------------------------------------------------

_LOG_SUFFIXES = (".eval", ".json")


class LogEntry(BaseModel):
    """One Inspect log as the results index lists it."""

    path: str
    """Where the log lies in the results repo (`logs/<file name>`)."""
    task: str
    task_id: str
    model: str
    status: str
    created: str
    samples: int = 0
    metrics: dict[str, float] = Field(default_factory=dict)
    """Every metric as `<score>/<metric>`."""
    envfactory: dict[str, Any] = Field(default_factory=dict)
    """The checkpoint provenance auto-scoring wrote into the eval metadata
    (`envfactory_*` keys, without the prefix)."""


def find_logs(sources: Iterable[Path]) -> list[Path]:
    """Inspect log files: each file as given (it must be named `.eval` / `.json`), each
    directory searched recursively (`harness.logs.find_logs`)."""
    paths = list(sources)
    for source in paths:
        if source.is_file() and source.suffix not in _LOG_SUFFIXES:
            raise ValueError(f"{source}: not an Inspect log (.eval or .json)")
    return harness_logs.find_logs(paths)


def log_entry(path: Path, path_in_repo: str) -> LogEntry:
    """The index entry of one log (its header only: samples are not read)."""
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(str(path), header_only=True)
    except Exception as e:  # noqa: BLE001 (inspect raises many kinds; name the file)
        raise ValueError(f"{path}: not a readable Inspect log: {type(e).__name__}: {e}") from e
    metrics: dict[str, float] = {}
    for score in log.results.scores if log.results is not None else []:
        for name, metric in score.metrics.items():
            metrics[f"{score.name}/{name}"] = float(metric.value)
    metadata = log.eval.metadata or {}
    envfactory = {key.removeprefix("envfactory_"): _plain(value)
                  for key, value in metadata.items() if key.startswith("envfactory_")}
    return LogEntry(path=path_in_repo, task=log.eval.task, task_id=log.eval.task_id,
                    model=log.eval.model, status=log.status, created=log.eval.created,
                    samples=log.results.completed_samples if log.results else 0,
                    metrics=metrics, envfactory=envfactory)


def _plain(value: Any) -> Any:
    """A metadata value as JSON can hold it."""
    return json.loads(json.dumps(value, default=str))
