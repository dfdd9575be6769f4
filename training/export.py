"""`envfactory train export`: trajectory files -> LlamaFactory SFT data and verl RL parquet.

Output directory:

    sft/<name>.jsonl + sft/dataset_info.json   (LlamaFactory: dataset_dir=sft, dataset=<name>)
    rl/train.parquet, rl/val.parquet           (verl: data.train_files / data.val_files)
    rl/tools.yaml                              (verl: multi_turn.tool_config_path)
    manifest.json                              (inputs and their hashes, counts, options)

Each file is written through a `datasets.Dataset` with explicit `Features`, so the column
types are fixed (not inferred from the first rows) and the same objects can be pushed to
the Hub. The validation split is drawn by conversation with a seeded shuffle (the release:
ratio 0.95 train, seed 42), so all rows of one trajectory land on one side. Held-out
trajectories are refused: training on them would contaminate the held-out suite.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import datasets
import yaml
from datasets import Dataset, Features, List, Value
from pydantic import BaseModel

from envs.hashing import file_sha256
from harness.trajectory import Trajectory, read_jsonl
from training.rl_export import rl_rows, tools_config
from training.sft_export import (
    HISTORY_CLOSING,
    SftFormat,
    ToolsShown,
    dataset_info_entry,
    sft_samples,
)

__all__ = ["RL_FEATURES", "SFT_FEATURES", "ExportSummary", "export", "rl_dataset",
           "sft_dataset", "val_ids"]

SFT_NAME = "envfactory_sft"

SFT_FEATURES: dict[SftFormat, Features] = {
    "sharegpt": Features({
        "id": Value("string"),
        "conversations": List({"from": Value("string"), "value": Value("string")}),
        "system": Value("string"), "tools": Value("string")}),
    "alpaca": Features({
        "id": Value("string"), "instruction": Value("string"), "input": Value("string"),
        "output": Value("string"), "system": Value("string"), "tools": Value("string"),
        "history": List(List(Value("string")))}),
}

RL_FEATURES = Features({
    "data_source": Value("string"), "agent_name": Value("string"), "ability": Value("string"),
    "prompt": List({"role": Value("string"), "content": Value("string")}),
    "reward_model": {"style": Value("string"), "ground_truth": Value("string")},
    "extra_info": {
        "split": Value("string"), "index": Value("int64"), "trajectory_id": Value("string"),
        "turn": Value("int64"), "environments": List(Value("string")),
        "gold_final_state": Value("string"), "ignore_state_paths": Value("string"),
        "need_tools_kwargs": Value("bool"),
        "tools_kwargs": {"envfactory": {"environments": List(Value("string")),
                                        "start_state": Value("string")}},
        "tool_selection": List(Value("string"))},
})


class ExportSummary(BaseModel):
    conversations: int
    train_conversations: int
    val_conversations: int
    sft_format: str
    sft_tools: str
    sft_samples: int
    #: history-only closing replies inserted (sharegpt turns that end on a tool result)
    sft_history_closings: int
    rl_train_rows: int
    rl_val_rows: int
    environments: list[str]
    inputs: dict[str, str]  # path -> sha256
    val_ratio: float
    seed: int


def sft_dataset(samples: list[dict[str, Any]], fmt: SftFormat) -> Dataset:
    return Dataset.from_list(samples, features=SFT_FEATURES[fmt])


def rl_dataset(rows: list[dict[str, Any]]) -> Dataset:
    return Dataset.from_list(rows, features=RL_FEATURES)


def val_ids(ids: Sequence[str], val_ratio: float, seed: int) -> set[str]:
    """The conversations held out for validation: a seeded shuffle of the sorted ids, the
    first round(n * ratio) of them (at least one when the ratio is positive and n > 1)."""
    order = sorted(ids)
    random.Random(seed).shuffle(order)
    k = round(len(order) * val_ratio)
    if val_ratio > 0 and len(order) > 1:
        k = max(k, 1)
    return set(order[:k])


def _read(inputs: Sequence[Path]) -> list[Trajectory]:
    trajectories: list[Trajectory] = []
    seen: dict[str, Path] = {}
    for path in inputs:
        for traj in read_jsonl(path):
            if traj.provenance.split == "heldout":
                raise ValueError(f"{path}: trajectory {traj.id} is from the held-out split; "
                                 "training on it would contaminate the held-out suite")
            if traj.id in seen:
                raise ValueError(f"{path}: trajectory id {traj.id} already read from "
                                 f"{seen[traj.id]}")
            seen[traj.id] = path
            trajectories.append(traj)
    return trajectories


def export(inputs: Sequence[Path], out: Path, *, fmt: SftFormat = "sharegpt",
           val_ratio: float = 0.05, seed: int = 42, tools: ToolsShown = "all") -> ExportSummary:
    """Write the SFT and RL exports of `inputs` (Trajectory JSONL files) under `out`;
    `tools` chooses the SFT samples' tool list (see `sft_samples`)."""
    if not 0 <= val_ratio < 1:
        raise ValueError(f"val_ratio must be in [0, 1), got {val_ratio}")
    datasets.disable_progress_bars()  # callers show their own progress
    trajectories = _read(inputs)
    held = val_ids([t.id for t in trajectories], val_ratio, seed)
    samples: list[dict[str, Any]] = []
    rows: dict[str, list[dict[str, Any]]] = {"train": [], "val": []}
    for traj in trajectories:
        try:
            if traj.id not in held:  # validation conversations stay out of SFT as well
                samples += sft_samples(traj, fmt, tools)
            split = "val" if traj.id in held else "train"
            rows[split] += rl_rows(traj, split)
        except Exception as e:  # noqa: BLE001 (name the trajectory whatever went wrong)
            raise ValueError(f"trajectory {traj.id}: {type(e).__name__}: {e}") from e
    for split_rows in rows.values():
        for i, row in enumerate(split_rows):
            row["extra_info"]["index"] = i

    (out / "sft").mkdir(parents=True, exist_ok=True)
    (out / "rl").mkdir(parents=True, exist_ok=True)
    sft_file = f"{SFT_NAME}.jsonl"
    sft_dataset(samples, fmt).to_json(out / "sft" / sft_file, lines=True, force_ascii=False)
    (out / "sft" / "dataset_info.json").write_text(json.dumps(
        {SFT_NAME: dataset_info_entry(sft_file, fmt)}, indent=2) + "\n", encoding="utf-8")
    for split, split_rows in rows.items():
        rl_dataset(split_rows).to_parquet(out / "rl" / f"{split}.parquet")
    environments = sorted({e for t in trajectories for e in t.environments})
    (out / "rl" / "tools.yaml").write_text(
        yaml.safe_dump(tools_config(environments), sort_keys=False, allow_unicode=True),
        encoding="utf-8")
    closings = sum(1 for s in samples for m in s.get("conversations", [])
                   if m["from"] == "gpt" and m["value"] == HISTORY_CLOSING)
    summary = ExportSummary(
        conversations=len(trajectories), train_conversations=len(trajectories) - len(held),
        val_conversations=len(held), sft_format=fmt, sft_tools=tools, sft_samples=len(samples),
        sft_history_closings=closings, rl_train_rows=len(rows["train"]),
        rl_val_rows=len(rows["val"]),
        environments=environments,
        inputs={str(p): file_sha256(p) for p in inputs},
        val_ratio=val_ratio, seed=seed)
    (out / "manifest.json").write_text(summary.model_dump_json(indent=2) + "\n",
                                       encoding="utf-8")
    return summary
