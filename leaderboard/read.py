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
from collections.abc import Callable
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
from envs.release_registry import registered_releases
from envs.releases import PinnedRelease
from harness.logs import find_logs
from leaderboard.columns import benchmark_of, stratum_of
from leaderboard.records import LogRecord, SampleRecord, SkippedLog

__all__ = ["CONCURRENCY", "PROVENANCE_PREFIX", "find_logs", "model_identity", "model_name",
           "read_log", "read_logs", "row_of", "uses_defaults"]

PROVENANCE_PREFIX = "envfactory_"
"""Eval metadata `training/autoscore/` writes for a checkpoint (run id, method, step...)."""

#: the provenance keys every pinned release writes for where its files are on this
#: machine (`envs/release_registry.py`: roles "data" and "source"); its label and commit
#: (roles "label", "ref") say which data was used, and stay settings
_LOCAL_PATHS = frozenset(key for release in registered_releases()
                         if isinstance(release, PinnedRelease)
                         for key, role in release.record if role in ("data", "source"))
#: eval metadata that describes this machine or the selection's bookkeeping, not the
#: benchmark's data or settings (local paths, what was skipped and why)
_NOT_SETTINGS = frozenset({"benchmark", "mcp_atlas_skipped", "mcp_atlas_unavailable_servers",
                           "mcp_atlas_servers", *_LOCAL_PATHS})
#: providers that load a model's weights by Hub id or local folder: `hf/<hub id>`,
#: `hf/local -M model_path=<folder>`, `vllm/...`
_WEIGHT_PROVIDERS = ("hf/", "vllm/")
_REASON_CHARS = 200
_SCORE_META = ("error_type", "termination", "simulation_failed", "reason", "category")
_to_float = value_to_float()
CONCURRENCY = 32
"""Logs read at once (file reads overlap; parsing is on one core either way)."""


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


def model_name(name: str) -> str:
    """A model named by a local folder (`/models/base`, `./base`, `~/base`: a LoRA
    adapter's `base_model_name_or_path` may be one) as the folder's name, as
    `training.provenance.base_model_id` names it; a Hub id as given."""
    return Path(name).name if name.startswith(("/", "./", "../", "~")) else name


def model_identity(model: str, model_args: dict[str, Any], prov: dict[str, Any]) -> str:
    """The one name a model gets however it was run (the leaderboard row):

    * a checkpoint of a training run (`envfactory score`, method sft/grpo):
      `<run id>/<checkpoint folder>`;
    * a model downloaded by its Hub id (`envfactory score run HUB_ID`, `hub_id`
      provenance): that id, wherever the snapshot was served from;
    * an untrained model scored by `envfactory score` (method "base"): its base model id
      (`model_name`: a Hub id as given, a local folder by its name);
    * weights loaded by `hf/` or `vllm/` (`inspect eval --model hf/local -M
      model_path=DIR`, `--model hf/Org/Name`): the same id, the folder's name or the Hub
      id without the provider, so `inspect eval` and `envfactory score` of one model share
      a row;
    * any other model given a file (`-M path=`, e.g. `envfactory/replay`): `<model>
      (<file name>)`, since the model name alone names no particular model;
    * anything else: the model name as Inspect records it.
    """
    if prov.get("run_id") and prov.get("method") != "base":
        checkpoint = Path(str(prov.get("checkpoint") or "")).name or f"step-{prov.get('step')}"
        return f"{prov['run_id']}/{checkpoint}"
    if prov.get("hub_id"):
        return str(prov["hub_id"])
    if prov.get("method") == "base" and prov.get("base_model"):
        return model_name(str(prov["base_model"]))
    path = next((str(model_args[k]) for k in ("model_path", "path") if model_args.get(k)),
                None)
    if model.startswith(_WEIGHT_PROVIDERS):
        if path is not None:
            return Path(path).name
        hub_id = model.split("/", 1)[1]
        if "/" in hub_id:
            return hub_id
    return f"{model} ({Path(path).name})" if path is not None else model


def row_of(log: EvalLog) -> tuple[str, dict[str, Any]]:
    """The log's row (`model_identity`) and its training provenance."""
    meta = log.eval.metadata or {}
    prov = {k.removeprefix(PROVENANCE_PREFIX): v for k, v in meta.items()
            if k.startswith(PROVENANCE_PREFIX)}
    return model_identity(log.eval.model, log.eval.model_args or {}, prov), prov


def uses_defaults(log: EvalLog) -> bool:
    """Whether the log ran its task as shipped: no task option passed (`-T`), no `--limit`
    and no `--sample-id` (epochs cannot tell: Inspect records them resolved either way).
    An option passed at its default value (`score`'s `-T split=heldout`) counts as passed,
    since a log does not record the default; such a run still matches the column when its
    settings equal a default run's."""
    spec = log.eval
    return (not spec.task_args_passed and spec.config.limit is None
            and spec.config.sample_id is None)


def _reason(text: str) -> str:
    """One line of at most `_REASON_CHARS` characters (an exception may span many)."""
    line = " ".join(text.split())
    return line if len(line) <= _REASON_CHARS else line[:_REASON_CHARS - 1] + "…"


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
        values=values,
        stratum=stratum_of(benchmark, str(summary.id), {**meta, **(summary.metadata or {})}),
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
        return SkippedLog(path=str(path), reason=_reason(f"not a readable Inspect log: {e}"))
    if log.status != "success":
        detail = f": {log.error.message}" if log.error else ""
        return SkippedLog(path=str(path), reason=_reason(f"status {log.status}{detail}"))
    spec = log.eval
    benchmark = benchmark_of(spec.task, spec.metadata)
    try:
        summaries = await read_eval_log_sample_summaries_async(str(path))
    except Exception as e:  # noqa: BLE001
        return SkippedLog(path=str(path), reason=_reason(f"sample summaries unreadable: {e}"))
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
        comparability=settings, default_settings=uses_defaults(log),
        options_passed={k: _setting(v) for k, v in sorted((spec.task_args_passed or {}).items())
                        if k != "epochs"},
        provenance=prov,
        metrics=metrics,
        samples=[_sample(benchmark, s) for s in summaries])
