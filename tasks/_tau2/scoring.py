"""τ² scoring on Inspect: the shared evaluator as a scorer and the NL-assertion judge
(model role `judge`); pass^k across epochs is `harness.metrics`."""

from __future__ import annotations

from typing import Any

from inspect_ai.model import GenerateConfig, Model
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import store_as

from envs.tau2.tasks import Task
from harness.episode import EpisodeProgress, Termination
from harness.judge import judge_json, judge_model
from harness.metrics import pass_k_metrics
from harness.trajectory import Message
from tasks._tau2.evaluator import Judge, evaluate
from tasks._tau2.nl_assertions import nl_assertion_prompt

__all__ = ["SIMULATION_FAILED", "model_judge", "tau2_scorer"]

#: how a live episode ends where upstream v0.2.0's simulation raises instead
SIMULATION_FAILED = {Termination.AGENT_ERROR, Termination.USER_ERROR}


def model_judge(model: Model | str | None = None) -> Judge:
    """NL assertions judged by `model` (default: the `judge` model role, which must be
    set: a missing judge is an error, never the model under test), sent upstream's
    request (`tasks._tau2.nl_assertions`: its system prompt, every message as `role:
    content`, the assertion list, its temperature)."""

    async def judge(messages: list[Message], assertions: list[str]) -> list[dict[str, Any]]:
        prompt = nl_assertion_prompt()
        answer = await judge_json(judge_model(model), prompt.system,
                                  prompt.render(messages, assertions),
                                  GenerateConfig(temperature=prompt.temperature))
        results = answer.get("results") if isinstance(answer, dict) else None
        return list(results) if isinstance(results, list) else []

    return judge


@scorer(metrics=[pass_k_metrics()])
def tau2_scorer(domain: str) -> Scorer:
    """The τ² reward (v0.2), with each component in the score metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        task = Task.model_validate(state.metadata["task"])
        progress = store_as(EpisodeProgress)
        # an episode that never saved a reason was cut before its first step
        reason = progress.termination or Termination.LIMIT
        info = await evaluate(task, domain, progress.messages, reason, judge=model_judge())
        metadata = {**info.model_dump(mode="json"), "steps": progress.steps,
                    "tool_errors": progress.tool_errors, "detail": progress.detail}
        if reason in SIMULATION_FAILED:
            # v0.2.0 raises here (message validation; solo: a turn without a tool call):
            # the simulation aborts and records no reward. Scored as a failure.
            metadata["simulation_failed"] = (
                f"{reason.value}: {progress.detail or 'invalid message'}; the official "
                "v0.2.0 run aborts this simulation and records no reward; scored 0 (the "
                "components above are diagnostic)")
            return Score(value=0.0, explanation=metadata["simulation_failed"],
                         metadata=metadata)
        return Score(
            value=info.reward,
            explanation=f"reward {info.reward} ({info.termination_reason}); "
            f"breakdown {info.reward_breakdown}",
            metadata=metadata,
        )

    return score
