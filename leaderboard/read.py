"""Inspect logs → `LogRecord`s, from headers and sample summaries only.

A header (`read_eval_log(header_only=True)`) says who ran what on which data under which
settings; the sample summaries (`read_eval_log_sample_summaries`, a small file inside an
`.eval` archive) give every sample's score without its messages. That is all the table
needs, so thousands of logs read in seconds; sample bodies are read later, and only for
failed samples, by the failure taxonomy.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import anyio
from inspect_ai.log import (
    EvalLog,
    EvalSampleSummary,
    read_eval_log_async,
    read_eval_log_sample_summaries_async,
)
from inspect_ai.scorer import value_to_float

from envs.concurrency import bounded_gather
from leaderboard.columns import benchmark_of, stratum_of
from leaderboard.records import LogRecord, SampleRecord, SkippedLog

__all__ = ["CONCURRENCY", "PROVENANCE_PREFIX", "find_logs", "read_log", "read_logs", "row_of"]

PROVENANCE_PREFIX = "envfactory_"
"""Eval metadata `training/autoscore/` writes for a checkpoint (run id, method, step...)."""

#: eval metadata that describes this machine or the selection's bookkeeping, not the
#: benchmark's data or settings (local paths, what was skipped and why)
_NOT_SETTINGS = ("benchmark", "tau2_data_dir", "vitabench_data", "vitabench_source",
                 "mcp_atlas_data", "mcp_atlas_source", "mcp_atlas_skipped",
                 "mcp_atlas_unavailable_servers", "mcp_atlas_servers")
_SCORE_META = ("error_type", "termination", "simulation_failed", "reason", "category")
_to_float = value_to_float()
CONCURRENCY = 32
"""Logs read at once (file reads overlap; parsing is on one core either way)."""


#: files Inspect writes beside logs that are not logs
_NOT_LOGS = {"logs.json", "eval-set.json", "listing.json"}


def find_logs(paths: Iterable[Path]) -> list[Path]:
    """Log files named, and every `.eval` / `.json` log under the folders named
    (recursively, hidden folders skipped), in order, without repeats. A path that does
    not exist raises `FileNotFoundError` naming it. (Inspect's `list_eval_logs` reads
    the header of every file whose name is not in its own naming scheme, which costs
    as much as reading the log.)"""
    found: dict[Path, None] = {}
    for path in paths:
        if path.is_dir():
            for file in sorted(path.rglob("*")):
                parts = file.relative_to(path).parts
                if (file.suffix in (".eval", ".json") and file.name not in _NOT_LOGS
                        and not any(p.startswith(".") for p in parts) and file.is_file()):
                    found[file] = None
        elif path.is_file():
            found[path] = None
        else:
            raise FileNotFoundError(f"{path}: no such log file or folder")
    return list(found)


def _setting(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def comparability(log: EvalLog) -> dict[str, str]:
    """The settings two logs of one benchmark must share for their numbers to be
    compared: data version and release (eval metadata), task options, task version,
    epochs, `--limit` / `--sample-id`, and the user-simulator and judge models."""
    spec = log.eval
    out: dict[str, str] = {}
    for key, value in sorted((spec.metadata or {}).items()):
        if key in _NOT_SETTINGS or key.startswith(PROVENANCE_PREFIX):
            continue
        out[key] = _setting(value)
    for key, value in sorted((spec.task_args or {}).items()):
        if key != "epochs":  # the run's epochs are recorded below
            out[f"task.{key}"] = _setting(value)
    out["task_version"] = _setting(spec.task_version)
    out["epochs"] = str(spec.config.epochs or 1)
    out["limit"] = _setting(spec.config.limit) if spec.config.limit is not None else "all"
    if spec.config.sample_id is not None:
        out["sample_id"] = _setting(spec.config.sample_id)
    for role, config in sorted((spec.model_roles or {}).items()):
        configs = config if isinstance(config, list) else [config]
        out[f"role.{role}"] = ",".join(c.model for c in configs)
    return out


def row_of(log: EvalLog) -> tuple[str, dict[str, Any]]:
    """The log's row and its training provenance: a checkpoint scored by `envfactory
    score` is `<run id>/<checkpoint folder>`; any other model is its model name, plus the
    file it was given (`-M model_path=` / `-M path=`), since `hf/local` or
    `envfactory/replay` alone name no particular model."""
    meta = log.eval.metadata or {}
    prov = {k.removeprefix(PROVENANCE_PREFIX): v for k, v in meta.items()
            if k.startswith(PROVENANCE_PREFIX)}
    if prov.get("run_id"):
        checkpoint = Path(str(prov.get("checkpoint") or "")).name or f"step-{prov.get('step')}"
        return f"{prov['run_id']}/{checkpoint}", prov
    model = log.eval.model
    args = log.eval.model_args or {}
    for key in ("model_path", "path"):
        if args.get(key):
            return f"{model} ({Path(str(args[key])).name})", prov
    return model, prov


def _values(benchmark: str, value: Any) -> dict[str, float]:
    if isinstance(value, dict):
        return {k: float(v) for k, v in value.items()
                if isinstance(v, int | float) and not isinstance(v, bool)}
    if isinstance(value, str):
        return {"correct": _to_float(value)}
    if isinstance(value, bool | int | float):
        number = float(value)
        if math.isnan(number):
            return {}  # unscored (MCP-Atlas's grader failures): left out, never a 0
        if benchmark == "mcp_atlas":
            return {"coverage": number, "pass": float(number >= 0.75)}
        return {"reward" if benchmark in ("tau2", "vitabench") else "value": number}
    return {}


def _sample(benchmark: str, summary: EvalSampleSummary) -> SampleRecord:
    score = next(iter((summary.scores or {}).values()), None)
    values = _values(benchmark, score.value) if score is not None else {}
    meta = dict(score.metadata or {}) if score is not None else {}
    if score is not None and score.explanation and "explanation" not in meta:
        meta["explanation"] = score.explanation[:300]
    return SampleRecord(
        id=str(summary.id), int_id=isinstance(summary.id, int), epoch=summary.epoch,
        values=values, stratum=stratum_of(benchmark, str(summary.id), summary.metadata),
        error=summary.error, limit=summary.limit,
        score_meta={k: meta[k] for k in (*_SCORE_META, "explanation") if k in meta})


def read_logs(paths: list[Path], on_done: Callable[[], None] | None = None
              ) -> list[LogRecord | SkippedLog]:
    """`read_log` of every path, in order, in one event loop (Inspect's synchronous
    readers start one per call, which costs more than reading a small log)."""

    async def one(path: Path) -> LogRecord | SkippedLog:
        result = await read_log(path)
        if on_done is not None:
            on_done()
        return result

    async def run() -> list[LogRecord | SkippedLog]:
        return await bounded_gather((one(p) for p in paths), CONCURRENCY)

    return anyio.run(run)


async def read_log(path: Path) -> LogRecord | SkippedLog:
    """One log as a record; a log that did not finish, or cannot be read, as a
    `SkippedLog` with the reason (never a zero in the table)."""
    try:
        log = await read_eval_log_async(str(path), header_only=True)
    except Exception as e:  # noqa: BLE001 - any unreadable file is reported, not fatal
        return SkippedLog(path=str(path), reason=f"not a readable Inspect log: {e}")
    if log.status != "success":
        detail = f": {log.error.message}" if log.error else ""
        return SkippedLog(path=str(path), reason=f"status {log.status}{detail}")
    spec = log.eval
    benchmark = benchmark_of(spec.task, spec.metadata)
    try:
        summaries = await read_eval_log_sample_summaries_async(str(path))
    except Exception as e:  # noqa: BLE001
        return SkippedLog(path=str(path), reason=f"sample summaries unreadable: {e}")
    metrics: dict[str, float] = {}
    for score in (log.results.scores if log.results else []):
        for key, metric in score.metrics.items():
            metrics[f"{score.name}/{key}"] = float(metric.value)
    headline = log.results.headline if log.results else None
    if headline is not None:
        value = metrics.get(f"{headline.score}/{headline.metric}")
        if value is not None:
            metrics["headline"] = value
            stderr = metrics.get(f"{headline.score}/stderr")
            if stderr is not None:
                metrics["headline_stderr"] = stderr
    row, prov = row_of(log)
    settings = comparability(log)
    return LogRecord(
        path=str(path), task=spec.task, benchmark=benchmark, model=spec.model, row=row,
        created=spec.created, status=log.status, epochs=spec.config.epochs or 1,
        limit=None if settings["limit"] == "all" else settings["limit"],
        comparability=settings, provenance=prov, metrics=metrics,
        samples=[_sample(benchmark, s) for s in summaries])
