"""The single-turn score: the official verdict of the recorded model result, accuracy, and
the leaderboard's aggregates (`eval_runner_helper.generate_leaderboard_csv`).
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    accuracy,
    metric,
    scorer,
    stderr,
    value_to_float,
)
from inspect_ai.solver import TaskState

from envs.bfcl.categories import LIVE_CATEGORIES, NON_LIVE_CATEGORIES
from harness.episode import message_record
from tasks._bfcl.common import model_result
from tasks._bfcl.singleturn.checking import check
from tasks._bfcl.singleturn.dataset import CATEGORIES
from tasks._bfcl.singleturn.solver import MODEL_RESULT_KEY


def _explanation(verdict: dict[str, Any]) -> str:
    errors = verdict.get("error") or []
    parts = [e if isinstance(e, str) else json.dumps(e, default=str) for e in errors]
    return f"{verdict['error_type']}: " + " ".join(parts)


@metric
def bfcl_leaderboard() -> Metric:
    """Per-category accuracy plus the official v3 aggregates (when all their parts ran).

    `non_live_simple_ast` = mean(simple, java, javascript); `non_live` = unweighted mean
    of [simple_ast, multiple, parallel, parallel_multiple, irrelevance]; `live` =
    sample-weighted accuracy over the six live categories.
    """
    to_float = value_to_float()

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        per_cat: dict[str, list[float]] = {}
        for s in scores:
            category = (s.score.metadata or {}).get("category") or (
                s.sample_metadata or {}).get("category")
            if category is None:
                raise ValueError(f"sample {s.sample_id}: score has no 'category' metadata")
            per_cat.setdefault(category, []).append(to_float(s.score.value))
        counts = {c: (sum(v), len(v)) for c, v in per_cat.items()}
        return leaderboard_summary(counts)

    return compute


def leaderboard_summary(counts: dict[str, tuple[float, int]]) -> dict[str, float]:
    """{category: (correct, total)} → per-category accuracy + official aggregates."""
    acc = {c: (k / n if n else 0.0) for c, (k, n) in counts.items()}
    out = {c: acc[c] for c in CATEGORIES if c in acc}
    out.update({c: v for c, v in acc.items() if c not in out})
    if all(c in acc for c in ("simple", "java", "javascript")):
        out["non_live_simple_ast"] = (acc["simple"] + acc["java"] + acc["javascript"]) / 3
        if all(c in acc for c in NON_LIVE_CATEGORIES):
            parts = [out["non_live_simple_ast"]] + [
                acc[c] for c in ("multiple", "parallel", "parallel_multiple", "irrelevance")
            ]
            out["non_live"] = sum(parts) / len(parts)
    if all(c in acc for c in LIVE_CATEGORIES):
        correct = sum(counts[c][0] for c in LIVE_CATEGORIES)
        total = sum(counts[c][1] for c in LIVE_CATEGORIES)
        out["live"] = correct / total if total else 0.0
    return out


@scorer(metrics=[accuracy(), stderr(), bfcl_leaderboard()])
def bfcl_singleturn_scorer() -> Scorer:
    """The official AST / relevance verdict for the recorded model result."""

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        result = state.store.get(MODEL_RESULT_KEY)
        if result is None:  # another solver ran: derive it from the last output
            result = (model_result(message_record(state.output.message, "assistant", {}))
                      if state.output.choices else "")
        verdict = check(meta["category"], meta["functions"], meta["ground_truth"], result,
                        meta.get("test_category"))
        return Score(
            value=CORRECT if verdict["valid"] else INCORRECT,
            answer=json.dumps(verdict["decoded"], default=str)
            if verdict["decoded"] is not None else (result if isinstance(result, str) else
                                                    json.dumps(result)),
            explanation=None if verdict["valid"] else _explanation(verdict),
            metadata={"category": meta["category"], "error_type": verdict["error_type"]},
        )

    return score
