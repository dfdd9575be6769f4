"""Hand-built Inspect logs for the leaderboard tests: real `EvalLog`s written with
`write_eval_log`, every score set by the test that uses them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalSample,
    EvalSampleLimit,
    EvalScore,
    EvalSpec,
    write_eval_log,
)
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser
from inspect_ai.scorer import Score


def write_log(path: Path, *, task: str, model: str, scores: list[tuple[str | int, int, Any]],
              metadata: dict[str, Any] | None = None, limit: int | None = None,
              epochs: int = 1, created: str = "2026-06-01T10:00:00+00:00",
              metrics: dict[str, float] | None = None, scorer: str = "s",
              model_args: dict[str, Any] | None = None,
              score_meta: dict[str | int, dict[str, Any]] | None = None,
              limits: dict[str | int, str] | None = None) -> Path:
    """A finished log of `task` by `model`: `scores` are (sample id, epoch, score value)."""
    samples = [EvalSample(id=sid, epoch=epoch, input="q", target="",
                          messages=[ChatMessageUser(content="q"),
                                    ChatMessageAssistant(content="a")],
                          scores={scorer: Score(value=value,
                                                metadata=(score_meta or {}).get(sid))},
                          limit=EvalSampleLimit(type=(limits or {})[sid], limit=10)
                          if sid in (limits or {}) else None)
               for sid, epoch, value in scores]
    log = EvalLog(
        status="success",
        eval=EvalSpec(created=created, task=task, model=model, model_args=model_args or {},
                      dataset=EvalDataset(name=task, samples=len(scores)),
                      config=EvalConfig(limit=limit, epochs=epochs), metadata=metadata),
        results=EvalResults(
            total_samples=len(scores), completed_samples=len(scores),
            scores=[EvalScore(name=scorer, scorer=scorer, metrics={
                k: EvalMetric(name=k, value=v) for k, v in (metrics or {}).items()})]),
        samples=samples)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(log, str(path))
    return path


BFCL_META = {"benchmark": "bfcl_multi_turn", "bfcl_eval_version": "2025.8.6.2",
             "bfcl_data_prefix": "BFCL_v3"}
