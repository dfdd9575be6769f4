"""τ² scoring on Inspect: the shared evaluator as a scorer, pass^k across epochs, and the
NL-assertion judge (model role `judge`)."""

from __future__ import annotations

import json
from math import comb
from typing import Any

from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
)
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    ValueToFloat,
    metric,
    score_reducer,
    scorer,
    value_to_float,
)
from inspect_ai.scorer._reducer.types import ScoreReducer
from inspect_ai.solver import TaskState
from inspect_ai.util import store_as

from envs.tau2.tasks import Task
from harness.episode import EpisodeProgress, Termination
from harness.trajectory import Message
from tasks._tau2.evaluator import Judge, evaluate

__all__ = ["model_judge", "pass_hat_k", "tau2_scorer"]

JUDGE_SYSTEM = (
    "You grade a customer-service conversation against expected outcomes. For each "
    "expected outcome decide from the transcript alone whether the conversation meets it. "
    'Answer with JSON only: {"results": [{"expectedOutcome": str, "reasoning": str, '
    '"metExpectation": bool}, ...]} with one entry per expected outcome, in order.'
)


def model_judge(model: Model | str | None = None) -> Judge:
    """NL assertions judged by `model` (default: the `judge` model role). The judge
    sees `role: content` lines, tool messages included, as upstream's does."""

    async def judge(messages: list[Message], assertions: list[str]) -> list[dict[str, Any]]:
        transcript = "\n".join(f"{m.role}: {m.content}" for m in messages if m.content)
        prompt = (f"Transcript:\n{transcript}\n\nExpected outcomes:\n"
                  + "\n".join(f"- {a}" for a in assertions))
        grader = get_model(model) if model is not None else get_model(role="judge")
        output = await grader.generate(
            [ChatMessageSystem(content=JUDGE_SYSTEM), ChatMessageUser(content=prompt)],
            config=GenerateConfig(temperature=0.0))
        text = output.completion.strip().removeprefix("```json").removesuffix("```")
        try:
            return list(json.loads(text)["results"])
        except (json.JSONDecodeError, KeyError, TypeError):
            return []

    return judge


@metric
def tau2_metrics() -> Metric:
    """Averages over tasks of what `pass_hat_k` reduced per task: pass^1..pass^n and
    avg_reward (or of the raw reward when scores were not reduced across epochs)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        values = [s.score.value for s in scores]
        if values and all(isinstance(v, dict) for v in values):
            # while a run is in progress some tasks may have fewer trials than others
            keys = dict.fromkeys(k for v in values for k in v)  # type: ignore[union-attr]
            out = {}
            for k in keys:
                present = [float(v[k]) for v in values if k in v]  # type: ignore[operator,index]
                out[k] = sum(present) / len(present)
            return out
        rewards = [s.score.as_float() for s in scores]
        return {"avg_reward": sum(rewards) / len(rewards) if rewards else 0.0}

    return compute


@scorer(metrics=[tau2_metrics()])
def tau2_scorer(domain: str) -> Scorer:
    """The τ² reward (v0.2), with each component in the score metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        task = Task.model_validate(state.metadata["task"])
        progress = store_as(EpisodeProgress)
        # an episode that never saved a reason was cut before its first step
        reason = progress.termination or Termination.LIMIT
        info = await evaluate(task, domain, progress.messages, reason, judge=model_judge())
        return Score(
            value=info.reward,
            explanation=f"reward {info.reward} ({info.termination_reason}); "
            f"breakdown {info.reward_breakdown}",
            metadata={**info.model_dump(mode="json"), "steps": progress.steps,
                      "tool_errors": progress.tool_errors, "detail": progress.detail},
        )

    return score


@score_reducer(name="pass_hat_k")
def pass_hat_k(to_float: ValueToFloat | None = None) -> ScoreReducer:
    """Per task, pass^k = C(c, k) / C(n, k) for k = 1..n (c successes in n epochs;
    success = reward within 1e-6 of 1), plus the mean reward; averaged over tasks by
    the `mean` metric this is upstream's leaderboard pass^k."""

    as_float = to_float or value_to_float()

    def reduce(scores: list[Score]) -> Score:
        rewards = [as_float(s.value) for s in scores]
        n = len(rewards)
        c = sum(abs(r - 1.0) <= 1e-6 for r in rewards)
        value: dict[str, float] = {f"pass^{k}": comb(c, k) / comb(n, k) for k in range(1, n + 1)}
        value["avg_reward"] = sum(rewards) / n
        return Score(value=value, metadata={"trials": n, "successes": c})

    return reduce
