"""Scoring helpers shared by every benchmark: pass^k across epochs, grouped means with
standard errors.

Each is a pure function (testable without an eval, reusable by the leaderboard when it
re-reads logs) plus the Inspect wrapper a task puts on its scorer:

* `pass_hat_k` (epochs reducer): per sample, over its n trials with c successes,
  pass^k = C(c, k) / C(n, k) for k = 1..n — the chance that k trials drawn without
  replacement all succeed, τ²'s leaderboard estimator — plus `avg_reward`, and
  optionally pass@k = 1 − C(n − c, k) / C(n, k) (at least one of k trials succeeds)
  and avg@k (VitaBench's average@k: the mean reward of the sample's trials, for every
  k ≤ n — upstream's `average_at_k` ignores k; the paper's Avg@4 is avg@4 of 4 trials).
  A trial succeeds when its reward is at least `threshold − tol`: with the defaults
  (1.0, 1e-6) and rewards in [0, 1] that is τ²'s |r − 1| ≤ 1e-6; MCP-Atlas passes at 0.75.
* `pass_k_metrics` (metric): the mean over samples of each key the reducer produced.
* `grouped_mean` (metric factory): mean and standard error per group of a metadata field.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    ScoreReducer,
    ValueToFloat,
    metric,
    score_reducer,
    value_to_float,
)

__all__ = [
    "average_at",
    "grouped_mean",
    "grouped_mean_values",
    "mean_stderr",
    "pass_at",
    "pass_hat",
    "pass_hat_k",
    "pass_hat_k_values",
    "pass_k_metrics",
    "pass_k_metrics_values",
]


def _check(successes: int, trials: int, k: int) -> None:
    if not 0 <= successes <= trials or not 1 <= k <= trials:
        raise ValueError(f"need 0 <= successes <= trials and 1 <= k <= trials, got "
                         f"successes={successes}, trials={trials}, k={k}")


def pass_hat(successes: int, trials: int, k: int) -> float:
    """pass^k: the chance that k of the `trials` drawn without replacement all succeed."""
    _check(successes, trials, k)
    return math.comb(successes, k) / math.comb(trials, k)


def pass_at(successes: int, trials: int, k: int) -> float:
    """pass@k: the chance that at least one of k trials drawn without replacement succeeds."""
    _check(successes, trials, k)
    return 1.0 - math.comb(trials - successes, k) / math.comb(trials, k)


def average_at(rewards: Sequence[float], k: int) -> float:
    """avg@k as VitaBench computes it: the mean of all n trial rewards (needs n ≥ k ≥ 1)."""
    _check(0, len(rewards), k)
    return sum(rewards) / len(rewards)


def _successes(rewards: Sequence[float], threshold: float, tol: float) -> int:
    return sum(r >= threshold - tol for r in rewards)


def pass_hat_k_values(
    rewards: Sequence[float],
    threshold: float = 1.0,
    tol: float = 1e-6,
    include_pass_at: bool = False,
    include_avg_at: bool = False,
) -> dict[str, float]:
    """`pass^1`..`pass^n`, `avg_reward` and (if asked) `pass@1`..`pass@n` and
    `avg@1`..`avg@n` of one sample's n trial rewards; a trial succeeds when its reward is
    at least `threshold − tol`."""
    n = len(rewards)
    if n == 0:
        raise ValueError("pass^k needs at least one trial")
    c = _successes(rewards, threshold, tol)
    out = {f"pass^{k}": pass_hat(c, n, k) for k in range(1, n + 1)}
    if include_pass_at:
        out.update({f"pass@{k}": pass_at(c, n, k) for k in range(1, n + 1)})
    if include_avg_at:
        out.update({f"avg@{k}": average_at(rewards, k) for k in range(1, n + 1)})
    out["avg_reward"] = sum(rewards) / n
    return out


@score_reducer(name="pass_hat_k")
def pass_hat_k(
    to_float: ValueToFloat | None = None,
    threshold: float = 1.0,
    tol: float = 1e-6,
    include_pass_at: bool = False,
    include_avg_at: bool = False,
) -> ScoreReducer:
    """Reduce a sample's epochs to `pass_hat_k_values` (metadata: `trials`, `successes`).

    `to_float` reads a trial's reward from its score value (default: Inspect's
    `value_to_float`; for dict-valued scores pass e.g. `lambda v: v["reward"]`).
    Average over samples with `pass_k_metrics`.
    """
    as_float = to_float or value_to_float()

    def reduce(scores: list[Score]) -> Score:
        rewards = [as_float(s.value) for s in scores]
        successes = _successes(rewards, threshold, tol)
        return Score(
            value=pass_hat_k_values(rewards, threshold, tol, include_pass_at,
                                    include_avg_at),
            explanation=f"{successes} of {len(rewards)} trials succeeded",
            metadata={"trials": len(rewards), "successes": successes},
        )

    return reduce


def pass_k_metrics_values(values: Sequence[Any]) -> dict[str, float]:
    """Mean over samples of each key of dict-valued (reduced) scores, each key over the
    samples that have it — while a run is in progress some samples have fewer trials, so
    fewer `pass^k` keys, than others. Plain float scores (no reducer) give `avg_reward`."""
    if values and all(isinstance(v, dict) for v in values):
        keys = dict.fromkeys(k for v in values for k in v)
        out = {}
        for key in keys:
            present = [float(v[key]) for v in values if key in v]
            out[key] = sum(present) / len(present)
        return out
    rewards = [float(v) for v in values]
    return {"avg_reward": sum(rewards) / len(rewards) if rewards else 0.0}


@metric
def pass_k_metrics() -> Metric:
    """`pass_k_metrics_values` of the sample scores: with `pass_hat_k` as the epochs
    reducer, pass^1..pass^n (and pass@k) and avg_reward averaged over samples."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        values = [s.score.value for s in scores]
        if values and all(isinstance(v, dict) for v in values):
            return pass_k_metrics_values(values)
        return pass_k_metrics_values([s.score.as_float() for s in scores])

    return compute


def mean_stderr(values: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of the mean (sample standard deviation / √n, as Inspect's
    `stderr`; 0 for fewer than two values, where it is undefined)."""
    if not values:
        raise ValueError("mean of no values")
    n = len(values)
    mean = sum(values) / n
    return mean, (statistics.stdev(values) / math.sqrt(n) if n > 1 else 0.0)


def grouped_mean_values(members: Sequence[tuple[Any, float]]) -> dict[str, float]:
    """Mean and standard error per group of `(groups, value)` pairs.

    `groups` is one group name, a list of them (the value counts once in each distinct
    group: a two-environment task counts for both), or None (in no group). Keys, sorted
    by group: `<group>` holds the group's mean and `<group>_stderr` its standard error
    (see `mean_stderr`).
    """
    groups: dict[str, list[float]] = defaultdict(list)
    for names, value in members:
        if names is None:
            continue
        for name in dict.fromkeys(str(n) for n in (names if isinstance(names, list)
                                                   else [names])):
            groups[name].append(float(value))
    out = {}
    for name, values in sorted(groups.items()):
        out[name], out[f"{name}_stderr"] = mean_stderr(values)
    return out


def grouped_mean(field: str, to_float: ValueToFloat | None = None) -> Metric:
    """A metric computing `grouped_mean_values` of the scores grouped by metadata `field`.

    The field is read from the score's metadata, else the sample's, so a scorer can
    group by what it computed and a task by what its dataset says; a list value counts
    the sample in each group, a missing one in none. Under a score key (e.g.
    `{"reward": [mean(), by_env()]}`) it groups that component of dict-valued scores.

    It is not registered: wrap it in a named `@metric`, one per grouping, because Inspect
    keeps only one metric of each registered name under a score key::

        @metric
        def by_env() -> Metric:
            return grouped_mean("environments")

    Inspect 0.3.285 logs each returned key of a metric under a score key as
    `<metric name>_<key>` (`by_env_calendar`, `by_env_calendar_stderr`), and of a metric
    in a plain list as the key itself (made unique on a clash); either way the key is the
    logged metric's `name` and the metric's name its `group`.
    """
    as_float = to_float or value_to_float()

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        members = []
        for s in scores:
            score_meta, sample_meta = s.score.metadata or {}, s.sample_metadata or {}
            names = score_meta[field] if field in score_meta else sample_meta.get(field)
            members.append((names, as_float(s.score.value)))
        return grouped_mean_values(members)

    return compute
