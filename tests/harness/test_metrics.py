"""Shared metrics: hand-computed pass^k, pass@k, grouped means and standard errors, as pure
functions and inside a real Inspect eval (epochs reducer and metrics wired as a task would)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from inspect_ai import Epochs, Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from inspect_ai.scorer import Metric, Score, Scorer, Target, mean, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from harness.metrics import (
    average_at,
    grouped_mean,
    grouped_mean_values,
    mean_stderr,
    pass_at,
    pass_hat,
    pass_hat_k,
    pass_hat_k_values,
    pass_k_metrics,
    pass_k_metrics_values,
)


def test_pass_hat_and_pass_at_three_of_four() -> None:
    assert [pass_hat(3, 4, k) for k in (1, 2, 3, 4)] == [0.75, 0.5, 0.25, 0.0]
    # 1 success in 4: 1 - C(3, k)/C(4, k) = 1 - 3/4, 1 - 3/6, 1 - 1/4, 1 - 0
    assert [pass_at(1, 4, k) for k in (1, 2, 3, 4)] == [0.25, 0.5, 0.75, 1.0]
    with pytest.raises(ValueError):
        pass_hat(5, 4, 1)
    with pytest.raises(ValueError):
        pass_at(1, 4, 5)


def test_pass_hat_k_values_threshold_and_tolerance() -> None:
    assert pass_hat_k_values([1.0, 0.9999995, 0.99999, 1.0]) == {
        "pass^1": 0.75, "pass^2": 0.5, "pass^3": 0.25, "pass^4": 0.0,
        "avg_reward": pytest.approx((3.9999995 + 0.99999 - 1.0) / 4)}
    # MCP-Atlas style: a pass is >= 0.75; 2 of 4 succeed
    got = pass_hat_k_values([0.8, 0.74, 0.75, 0.2], threshold=0.75, include_pass_at=True)
    assert got == pytest.approx({
        "pass^1": 0.5, "pass^2": 1 / 6, "pass^3": 0.0, "pass^4": 0.0,
        "pass@1": 0.5, "pass@2": 5 / 6, "pass@3": 1.0, "pass@4": 1.0,
        "avg_reward": 2.49 / 4})
    with pytest.raises(ValueError):
        pass_hat_k_values([])


def test_vitabench_metrics_avg_pass_at_and_pass_hat() -> None:
    """VitaBench's agent_metrics.py: average@k is the mean of all n trials for every k
    (k ignored), pass@k and pass^k the binomial estimators; 3 successes in 4 trials."""
    got = pass_hat_k_values([1.0, 0.0, 1.0, 1.0], include_pass_at=True, include_avg_at=True)
    assert got == {"pass^1": 0.75, "pass^2": 0.5, "pass^3": 0.25, "pass^4": 0.0,
                   "pass@1": 0.75, "pass@2": 1.0, "pass@3": 1.0, "pass@4": 1.0,
                   "avg@1": 0.75, "avg@2": 0.75, "avg@3": 0.75, "avg@4": 0.75,
                   "avg_reward": 0.75}
    assert average_at([0.0, 1.0], 2) == 0.5
    with pytest.raises(ValueError):
        average_at([1.0], 2)


def test_pass_k_metrics_tolerates_samples_with_fewer_trials() -> None:
    values = [{"pass^1": 1.0, "pass^2": 1.0, "avg_reward": 1.0},
              {"pass^1": 0.5, "avg_reward": 0.5}]
    assert pass_k_metrics_values(values) == {"pass^1": 0.75, "pass^2": 1.0, "avg_reward": 0.75}
    assert pass_k_metrics_values([1.0, 0.0, 0.5]) == {"avg_reward": 0.5}
    assert pass_k_metrics_values([]) == {"avg_reward": 0.0}


def test_mean_stderr() -> None:
    mean_, se = mean_stderr([1.0, 0.0, 1.0, 0.0])
    # sample variance (4 * 0.25) / 3 = 1/3; stderr sqrt(1/3) / sqrt(4)
    assert mean_ == 0.5 and se == pytest.approx(math.sqrt(1 / 3) / 2)
    assert mean_stderr([2.0]) == (2.0, 0.0)


def test_grouped_mean_values_lists_duplicates_and_missing() -> None:
    members = [(["a", "b"], 1.0), ("a", 0.0), (None, 5.0), (["b", "b"], 0.0), ([], 7.0)]
    # a: [1, 0]; b: [1, 0] (a duplicate name counts once); stdev([1, 0]) / sqrt(2) = 0.5
    assert grouped_mean_values(members) == pytest.approx(
        {"a": 0.5, "a_stderr": 0.5, "b": 0.5, "b_stderr": 0.5})


# --- inside Inspect -------------------------------------------------------------------

#: reward per epoch (1-based) for each sample
REWARDS = {"three_of_four": [1.0, 1.0, 1.0, 0.0], "one_of_four": [1.0, 0.0, 0.0, 0.0]}


@solver
def nothing() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return state

    return solve


@scorer(metrics=[pass_k_metrics()])
def scripted_rewards() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=REWARDS[str(state.sample_id)][state.epoch - 1])

    return score


@metric
def by_env() -> Metric:
    return grouped_mean("envs")


@metric
def by_split() -> Metric:
    return grouped_mean("split")


@scorer(metrics={"reward": [mean(), by_env(), by_split()]})
def grouped_rewards() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        value, envs = state.metadata["reward"], state.metadata.get("score_envs")
        return Score(value={"reward": value}, metadata={"envs": envs} if envs else None)

    return score


def metrics_of(log: EvalLog) -> dict[str, float]:
    """Every metric of the log by its logged key (`<metric>_<key>` for dict-valued ones)."""
    assert log.status == "success", log.error
    assert log.results is not None
    return {key: m.value for s in log.results.scores for key, m in s.metrics.items()}


def test_pass_hat_k_reducer_and_metric_in_an_eval(tmp_path: Path) -> None:
    task = Task(dataset=[Sample(id=i, input="x") for i in REWARDS], solver=nothing(),
                scorer=scripted_rewards(), epochs=Epochs(4, pass_hat_k()))
    [log] = eval(task, model="mockllm/model", log_dir=str(tmp_path), display="none")
    # per sample pass^k: (0.75, 0.5, 0.25, 0) and (0.25, 0, 0, 0); averaged over samples
    # (a metric in a plain list logs its keys as they are)
    assert metrics_of(log) == pytest.approx(
        {"pass^1": 0.5, "pass^2": 0.25, "pass^3": 0.125, "pass^4": 0.0, "avg_reward": 0.5})
    [reductions] = log.reductions or []
    assert reductions.reducer == "pass_hat_k"
    reduced = {s.sample_id: s for s in reductions.samples}
    assert reduced["three_of_four"].metadata == {"trials": 4, "successes": 3}
    assert reduced["one_of_four"].explanation == "1 of 4 trials succeeded"


def test_grouped_mean_in_an_eval(tmp_path: Path) -> None:
    samples = [
        Sample(id="ab", input="x",
               metadata={"reward": 1.0, "score_envs": ["a", "b"], "split": "test"}),
        Sample(id="a", input="x", metadata={"reward": 0.0, "score_envs": "a", "split": "test"}),
        # no score metadata: the sample's own `envs` groups it
        Sample(id="b", input="x", metadata={"reward": 1.0, "envs": "b"}),
    ]
    task = Task(dataset=samples, solver=nothing(), scorer=grouped_rewards())
    [log] = eval(task, model="mockllm/model", log_dir=str(tmp_path), display="none")
    # a: [1, 0] -> 0.5 ± 0.5; b: [1, 1] -> 1 ± 0; split test: [1, 0] -> 0.5 ± 0.5
    # (metrics under a score key log their keys as `<metric>_<key>`)
    assert metrics_of(log) == pytest.approx(
        {"mean": 2 / 3, "by_env_a": 0.5, "by_env_a_stderr": 0.5, "by_env_b": 1.0,
         "by_env_b_stderr": 0.0, "by_split_test": 0.5, "by_split_test_stderr": 0.5})
