"""A cell's value and 95% interval from its samples: a cluster bootstrap.

Epochs of one sample are not independent draws, so a sample (all its epochs) is the unit
that is resampled; a stratified statistic (BFCL multi-turn's overall = the unweighted mean
of its categories) resamples within each stratum. The resampling is seeded, so a
leaderboard rebuilt from the same logs prints the same intervals.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np

from harness.metrics import pass_hat

__all__ = ["BOOTSTRAP_RESAMPLES", "Estimate", "estimate", "pass_hat_curve"]

BOOTSTRAP_RESAMPLES = 1000
SEED = 20260517


class Estimate:
    """Mean, sample count and percentile interval of one statistic."""

    def __init__(self, value: float, n: int, low: float, high: float) -> None:
        self.value, self.n, self.low, self.high = value, n, low, high


def _per_sample(trials: dict[str, list[float]]) -> tuple[list[str], np.ndarray]:
    ids = sorted(trials)
    return ids, np.array([sum(trials[i]) / len(trials[i]) for i in ids], dtype=float)


def estimate(values: Sequence[tuple[str, str | None, float]],
             stratified: bool = False,
             weights: Mapping[str, float] | None = None) -> Estimate | None:
    """`values` are (sample id, stratum, per-trial value) triples, several per id when
    there are epochs. The statistic is the mean over samples of each sample's mean over
    its trials; `stratified`: the unweighted mean of that per stratum; `weights`
    (stratum -> weight, summing to 1): the weighted mean of that per stratum, each
    stratum resampled within itself (BFCL's official single-turn aggregate). None when
    there is no value."""
    groups: dict[str | None, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for sample_id, stratum, value in values:
        groups[stratum if stratified or weights else None][sample_id].append(value)
    if not groups:
        return None
    rng = np.random.default_rng(SEED)
    points, draws, shares, n = [], [], [], 0
    for stratum, trials in sorted(groups.items(), key=lambda kv: str(kv[0])):
        _, means = _per_sample(trials)
        n += len(means)
        points.append(means.mean())
        picks = rng.integers(0, len(means), size=(BOOTSTRAP_RESAMPLES, len(means)))
        draws.append(means[picks].mean(axis=1))
        if weights:
            shares.append(weights[str(stratum)])
    if weights:
        value, boot = float(np.dot(shares, points)), np.dot(shares, np.vstack(draws))
    else:
        value, boot = float(np.mean(points)), np.mean(np.vstack(draws), axis=0)
    low, high = np.percentile(boot, [2.5, 97.5])
    return Estimate(value, n, float(min(low, value)), float(max(high, value)))


def pass_hat_curve(values: Sequence[tuple[str, float]], threshold: float,
                   tol: float = 1e-6) -> dict[str, float]:
    """pass^k for k = 1..(fewest trials of any sample), averaged over samples: a trial
    succeeds at value >= threshold − tol (τ²'s estimator, `harness.metrics.pass_hat`)."""
    trials: dict[str, list[float]] = defaultdict(list)
    for sample_id, value in values:
        trials[sample_id].append(value)
    if not trials:
        return {}
    k_max = min(len(t) for t in trials.values())
    out = {}
    for k in range(1, k_max + 1):
        per = [pass_hat(sum(v >= threshold - tol for v in t), len(t), k)
               for t in trials.values()]
        out[f"pass^{k}"] = sum(per) / len(per)
    return out
