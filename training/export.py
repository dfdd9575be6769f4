"""`envfactory train export`: trajectory files -> LlamaFactory SFT data and verl RL parquet.

Output directory:

    sft/<name>.jsonl + sft/dataset_info.json   (LlamaFactory: dataset_dir=sft, dataset=<name>)
    rl/train.parquet, rl/val.parquet           (verl: data.train_files / data.val_files)
    rl/tools.yaml                              (verl: multi_turn.tool_config_path)
    manifest.json                              (inputs and their hashes, counts, options)

All or nothing: the files are built in a temporary folder beside the output and renamed
into place at the end, manifest included, so a failure leaves no half-written export and
an older one as it was. An existing folder with files in it is replaced only when the
caller says so (`overwrite`), and only after the new export is complete. Two exports to
one folder at once would silently leave the last writer's files: each holds an exclusive
lock on `.<folder>.lock` beside the folder (`fcntl.flock`, released when the process
ends however it ends), so the second fails at once, naming the first one's pid.

Each file is written through a `datasets.Dataset` with explicit `Features`, so the column
types are fixed (not inferred from the first rows) and the same objects can be pushed to
the Hub. The validation split is drawn by conversation with a seeded shuffle (the release:
ratio 0.95 train, seed 42), so all rows of one trajectory land on one side. Held-out
trajectories are refused: training on them would contaminate the held-out suite; so are a
benchmark's own trajectories (BFCL, τ², VitaBench, MCP-Atlas, `benchmark_data`), unless the
caller allows them explicitly, which the manifest then records.

The release's own Hub datasets export the same way (`export_hub`, `envfactory train export
--hub ID@REV`): an SFT set gives `sft/` alone (the release's alpaca rows), the RL set
`rl/` alone (our verl rows on release environments, see `training.release_datasets`), and
the manifest records the dataset, the commit read, every row left out with its reason,
and the reward settings the rows are scored with.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import datasets
import yaml
from datasets import Dataset, Features, List, Value
from pydantic import BaseModel

from envs.hashing import file_sha256
from envs.jsonl import write_atomic
from envs.locks import ExclusiveLock
from envs.registry import BENCHMARK_PREFIXES, benchmark_of
from harness.rewards import RewardSettings
from harness.trajectory import Trajectory, read_jsonl
from training.release_datasets import (
    HubSource,
    ReleaseRlRow,
    RowReport,
    ThinkMode,
    parse_hub_ref,
    release_rl_rows,
    release_sft_samples,
    snapshot,
)
from training.rl_export import RL_REWARD, release_rl_row, rl_rows, tools_config
from training.sft_export import (
    HISTORY_CLOSING,
    SftFormat,
    ToolsShown,
    dataset_info_entry,
    sft_samples,
)

__all__ = ["RL_FEATURES", "SFT_FEATURES", "ExportLocked", "ExportSummary", "OutputInUse",
           "benchmark_data", "export", "export_hub", "output_lock", "rl_dataset", "sft_dataset",
           "val_ids"]

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
        "tool_selection": List(Value("string")), "reward_settings": Value("string")},
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
    #: whether benchmark trajectories were allowed in (`--allow-benchmark-data`)
    allow_benchmark_data: bool = False
    #: benchmark -> trajectories of it in this export (empty unless allowed)
    benchmark_trajectories: dict[str, int] = {}
    #: the reward the RL rows are scored with
    reward: RewardSettings = RL_REWARD
    #: a release Hub dataset's export: what was read, at which commit, what was left out
    hub: HubSource | None = None
    #: a release SFT export: `<think>` prefixes kept or stripped
    think: ThinkMode | None = None


class OutputInUse(ValueError):
    """The output path cannot be used as asked: a file, or a folder that already holds
    files when replacing it was not asked for."""


class ExportLocked(RuntimeError):
    """Another export is writing the same output folder right now."""


def _dataset(rows: list[dict[str, Any]], features: Features) -> Dataset:
    # `from_list([])` infers no columns and fails against the features; empty columns keep
    # the schema, so an empty split is still a readable file of the right types
    if not rows:
        return Dataset.from_dict({name: [] for name in features}, features=features)
    return Dataset.from_list(rows, features=features)


def sft_dataset(samples: list[dict[str, Any]], fmt: SftFormat) -> Dataset:
    return _dataset(samples, SFT_FEATURES[fmt])


def rl_dataset(rows: list[dict[str, Any]]) -> Dataset:
    return _dataset(rows, RL_FEATURES)


def val_ids(ids: Sequence[str], val_ratio: float, seed: int) -> set[str]:
    """The conversations held out for validation: a seeded shuffle of the sorted ids, the
    first round(n * ratio) of them (at least one when the ratio is positive and n > 1)."""
    order = sorted(ids)
    random.Random(seed).shuffle(order)
    k = round(len(order) * val_ratio)
    if val_ratio > 0 and len(order) > 1:
        k = max(k, 1)
    return set(order[:k])


def _task_benchmark(task: str) -> str | None:
    """The benchmark of an Inspect task name (`bfcl_singleturn`, `tau2_airline`,
    `mcp_atlas`, a `file.py@name` or `package/name` spelling too), by the same prefixes
    as the environments: `bfcl/` names the `bfcl` and `bfcl_*` tasks. The task name is
    needed where a benchmark's samples name no environment (BFCL single-turn executes
    nothing; MCP-Atlas runs MCP servers, not registered environments)."""
    name = task.rpartition("@")[2].rpartition("/")[2]
    return next((bench for prefix, bench in BENCHMARK_PREFIXES.items()
                 if name == prefix.rstrip("/") or name.startswith(prefix.rstrip("/") + "_")),
                None)


def benchmark_data(trajectory: Trajectory) -> tuple[str, str] | None:
    """(benchmark, why) when `trajectory` is a benchmark's own data — one of its
    environments is (`envs.registry.benchmark_of`), or it was converted from a log of a
    benchmark's task (`metadata["task"]`, `harness.logs`) — else None."""
    for env in trajectory.environments:
        bench = benchmark_of(env)
        if bench is not None:
            return bench, f"environment {env}"
    task = trajectory.metadata.get("task")
    bench = _task_benchmark(task) if isinstance(task, str) else None
    return (bench, f"task {task}") if bench is not None else None


def _read(inputs: Sequence[Path], allow_benchmark_data: bool
          ) -> tuple[list[Trajectory], dict[str, int]]:
    """The trajectories of `inputs`, and how many of each benchmark (allowed ones only)."""
    trajectories: list[Trajectory] = []
    benchmarks: dict[str, int] = {}
    seen: dict[str, Path] = {}
    for path in inputs:
        for traj in read_jsonl(path):
            if traj.provenance.split == "heldout":
                raise ValueError(f"{path}: trajectory {traj.id} is from the held-out split; "
                                 "training on it would contaminate the held-out suite")
            found = benchmark_data(traj)
            if found is not None and not allow_benchmark_data:
                bench, why = found
                raise ValueError(f"{path}: trajectory {traj.id} is {bench} benchmark data "
                                 f"({why}); training on a benchmark's own conversations "
                                 "makes its scores meaningless (--allow-benchmark-data "
                                 "exports it anyway and says so in manifest.json)")
            if found is not None:
                benchmarks[found[0]] = benchmarks.get(found[0], 0) + 1
            if traj.id in seen:
                raise ValueError(f"{path}: trajectory id {traj.id} already read from "
                                 f"{seen[traj.id]}")
            seen[traj.id] = path
            trajectories.append(traj)
    if not trajectories:
        raise ValueError(f"no trajectories in {', '.join(map(str, inputs))}: nothing to "
                         "export")
    return trajectories, benchmarks


@contextmanager
def output_lock(out: Path) -> Iterator[Path]:
    """Hold the exclusive lock of output folder `out` for the block: `.<name>.lock` beside
    it (the folder itself is renamed into place, so the lock cannot live inside it),
    through `envs.locks.ExclusiveLock`; raise `ExportLocked` at once, naming the holder's
    pid, when another process holds it."""
    target = out.resolve()
    lock = target.parent / f".{target.name}.lock"

    def busy(record: dict[str, Any] | None) -> ExportLocked:
        holder = (record or {}).get("pid", "unknown")
        return ExportLocked(f"{out}: another export is writing it (pid {holder}, lock "
                            f"{lock}); wait for it to finish or choose another --out-dir")

    with ExclusiveLock(lock, busy=busy):
        yield lock


def _check_output(out: Path, overwrite: bool) -> None:
    if out.exists() and not out.is_dir():
        raise OutputInUse(f"{out}: is a file, not a folder; name a folder for the export")
    if out.is_dir() and not overwrite and any(out.iterdir()):
        raise OutputInUse(f"{out}: already holds files; choose another folder, or pass "
                          "--overwrite to replace it once the new export is complete")


def _place(built: Path, out: Path) -> None:
    """Move the finished export `built` to `out`: a rename, after moving an older `out`
    aside (renamed back if the second rename fails), so `out` is whole at every moment
    but one rename apart."""
    if not out.exists() or not any(out.iterdir()):
        os.replace(built, out)  # replaces an empty folder too
        return
    old = out.with_name(f".{out.name}.{os.getpid()}.{secrets.token_hex(4)}.old")
    os.rename(out, old)
    try:
        os.rename(built, out)
    except BaseException:
        os.rename(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _write(out: Path, samples: list[dict[str, Any]] | None, fmt: SftFormat,
           rows: dict[str, list[dict[str, Any]]] | None, environments: list[str],
           summary: ExportSummary) -> None:
    """The export's files; `samples` / `rows` None leaves `sft/` / `rl/` out."""
    out.mkdir(parents=True)
    if samples is not None:
        (out / "sft").mkdir()
        sft_file = f"{SFT_NAME}.jsonl"
        sft_dataset(samples, fmt).to_json(out / "sft" / sft_file, lines=True,
                                          force_ascii=False)
        (out / "sft" / "dataset_info.json").write_text(json.dumps(
            {SFT_NAME: dataset_info_entry(sft_file, fmt)}, indent=2) + "\n", encoding="utf-8")
    if rows is not None:
        (out / "rl").mkdir()
        for split, split_rows in rows.items():
            rl_dataset(split_rows).to_parquet(out / "rl" / f"{split}.parquet")
        (out / "rl" / "tools.yaml").write_text(
            yaml.safe_dump(tools_config(environments), sort_keys=False, allow_unicode=True),
            encoding="utf-8")
    write_atomic(out / "manifest.json", summary.model_dump_json(indent=2) + "\n")


def _publish(out: Path, overwrite: bool, samples: list[dict[str, Any]] | None,
             fmt: SftFormat, rows: dict[str, list[dict[str, Any]]] | None,
             environments: list[str], summary: ExportSummary) -> None:
    """Build the export beside `out` under its lock, then rename it into place."""
    with output_lock(out):
        _check_output(out, overwrite)  # again under the lock: another export may have won
        target = out.resolve()
        built = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.partial")
        try:
            _write(built, samples, fmt, rows, environments, summary)
            _place(built, target)
        except BaseException:
            shutil.rmtree(built, ignore_errors=True)
            raise


def export(inputs: Sequence[Path], out: Path, *, fmt: SftFormat = "sharegpt",
           val_ratio: float = 0.05, seed: int = 42, tools: ToolsShown = "all",
           overwrite: bool = True, allow_benchmark_data: bool = False) -> ExportSummary:
    """Write the SFT and RL exports of `inputs` (Trajectory JSONL files) to folder `out`,
    all or nothing (see the module doc); `tools` chooses the SFT samples' tool list (see
    `sft_samples`), `allow_benchmark_data` lets benchmark trajectories in (recorded in the
    manifest). `overwrite` lets the finished export replace a folder that holds files: a
    program's own folder (an SFT run's `data/`, rebuilt each run) is replaced by default;
    `envfactory train export` refuses a user's folder unless `--overwrite` is given."""
    if not 0 <= val_ratio < 1:
        raise ValueError(f"val_ratio must be in [0, 1), got {val_ratio}")
    _check_output(out, overwrite)  # before any work: a wrong path fails in one line
    datasets.disable_progress_bars()  # callers show their own progress
    trajectories, benchmarks = _read(inputs, allow_benchmark_data)
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
    if not samples and not rows["train"] and not rows["val"]:
        raise ValueError(f"{len(trajectories)} trajectories give no SFT sample (no turn "
                         "with a tool call in a training conversation) and no RL row (no "
                         "turn with gold calls): nothing to export")
    for split_rows in rows.values():
        for i, row in enumerate(split_rows):
            row["extra_info"]["index"] = i
    environments = sorted({e for t in trajectories for e in t.environments})
    closings = sum(1 for s in samples for m in s.get("conversations", [])
                   if m["from"] == "gpt" and m["value"] == HISTORY_CLOSING)
    summary = ExportSummary(
        conversations=len(trajectories), train_conversations=len(trajectories) - len(held),
        val_conversations=len(held), sft_format=fmt, sft_tools=tools, sft_samples=len(samples),
        sft_history_closings=closings, rl_train_rows=len(rows["train"]),
        rl_val_rows=len(rows["val"]),
        environments=environments,
        inputs={str(p): file_sha256(p) for p in inputs},
        val_ratio=val_ratio, seed=seed, allow_benchmark_data=allow_benchmark_data,
        benchmark_trajectories=benchmarks)
    _publish(out, overwrite, samples, fmt, rows, environments, summary)
    return summary


def _release_rl_split(found: list[ReleaseRlRow], val_ratio: float, seed: int
                      ) -> dict[str, list[dict[str, Any]]]:
    """Our verl rows of the release's RL rows: the release's own split when its snapshot
    has a validation file, else a seeded draw by conversation (`val_ids`); each row's
    turn is its place among its conversation's rows, in file order."""
    has_val = any(r.split == "val" for r in found)
    held = set() if has_val else val_ids(list({r.conversation for r in found}), val_ratio,
                                         seed)
    rows: dict[str, list[dict[str, Any]]] = {"train": [], "val": []}
    turns: dict[str, int] = {}
    for r in found:
        split = r.split if has_val else ("val" if r.conversation in held else "train")
        turn = turns.get(r.conversation, 0)
        turns[r.conversation] = turn + 1
        rows[split].append(release_rl_row(r, split, r.conversation, turn))
    for split_rows in rows.values():
        for i, row in enumerate(split_rows):
            row["extra_info"]["index"] = i
    return rows


def export_hub(spec: str, out: Path, *, think: ThinkMode = "keep", val_ratio: float = 0.05,
               seed: int = 42, overwrite: bool = True, release_root: Path | None = None,
               report: RowReport | None = None) -> ExportSummary:
    """Export the release dataset `spec` (`LARK-Lab/EnvFactory-SFT-FILTERED@<commit>`, any
    of `training.release_datasets.RELEASE_DATASETS`) to folder `out`, all or nothing as
    `export`: an SFT set as `sft/` (`think` keeps or strips the targets' `<think>`
    prefixes), the RL set as `rl/` on the release environments of `release_root`
    (default: `envs.release_envs.release_root()`). Rows left out are in `report` (give
    one with `on_problem` to see them as they are found) and the manifest."""
    ref = parse_hub_ref(spec)  # a usage error before any download
    if not 0 <= val_ratio < 1:
        raise ValueError(f"val_ratio must be in [0, 1), got {val_ratio}")
    _check_output(out, overwrite)
    datasets.disable_progress_bars()
    folder, commit = snapshot(ref)
    report = report if report is not None else RowReport()
    samples: list[dict[str, Any]] | None = None
    rows: dict[str, list[dict[str, Any]]] | None = None
    environments: list[str] = []
    if ref.kind == "sft":
        samples = release_sft_samples(folder, think, report)
        kept = len(samples)
    else:
        found = release_rl_rows(folder, report, release_root)
        rows = _release_rl_split(found, val_ratio, seed)
        environments = sorted({e for r in found for e in r.environments})
        kept = len(found)
    if not kept:
        raise ValueError(f"{ref.dataset}@{commit}: none of its {report.read} rows could be "
                         f"exported ({_reasons(report)}); nothing to export")
    conversations = {r["extra_info"]["trajectory_id"]: split
                     for split, split_rows in (rows or {}).items() for r in split_rows}
    val = sum(1 for split in conversations.values() if split == "val")
    summary = ExportSummary(
        conversations=len(conversations), train_conversations=len(conversations) - val,
        val_conversations=val, sft_format="alpaca", sft_tools="release system prompt",
        sft_samples=len(samples or []), sft_history_closings=0,
        rl_train_rows=len((rows or {}).get("train", [])),
        rl_val_rows=len((rows or {}).get("val", [])), environments=environments,
        inputs={f"hf://datasets/{ref.dataset}@{commit}/{name}": file_sha256(folder / name)
                for name in report.files},
        val_ratio=val_ratio, seed=seed,
        hub=HubSource(dataset=ref.dataset, kind=ref.kind, revision=ref.revision,
                      commit=commit, files=report.files, rows_read=report.read,
                      rows_kept=kept, skipped=dict(report.skipped),
                      problems=report.problems),
        think=think if ref.kind == "sft" else None)
    _publish(out, overwrite, samples, "alpaca", rows, environments, summary)
    return summary


def _reasons(report: RowReport) -> str:
    return ", ".join(f"{n} {reason}" for reason, n in report.skipped.most_common()) or "none"
