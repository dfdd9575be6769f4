"""VitaBench scoring on Inspect: the rubric judge (`tasks._vitabench.judge`, model role
`judge`) on the episode's record; avg@k, pass@k and pass^k across epochs are
`harness.metrics`."""

from __future__ import annotations

from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import store_as

from envs.vitabench.release import Language, release
from harness.episode import EpisodeProgress, Termination
from harness.judge import judge_model
from harness.metrics import pass_k_metrics
from tasks._vitabench.dataset import task_by_id
from tasks._vitabench.judge import PREMATURE, judge_conversation
from tasks._vitabench.orchestrator import upstream_termination

__all__ = ["vitabench_scorer"]


@scorer(metrics=[pass_k_metrics()])
def vitabench_scorer(task_set: str, language: Language, revision: str) -> Scorer:
    """Reward 1 iff the judge finds every rubric met; the per-rubric results, the judge
    windows, the judge model and json_repair's version are in the score metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        task = task_by_id(release(revision), task_set, language, str(state.sample_id))
        progress = store_as(EpisodeProgress)
        # an episode that never saved a reason was cut before its first step
        reason = progress.termination or Termination.LIMIT
        judge = None if reason.value in PREMATURE else judge_model()
        result = await judge_conversation(progress.messages, task, language, judge,
                                          reason.value, revision=revision)
        # the judge's replies are in the transcript's model events; not repeated here
        metadata = {**result.model_dump(mode="json", exclude={"windows": {"__all__": {"reply"}}}),
                    "judge_model": str(judge) if judge is not None else None,
                    "termination_reason": upstream_termination(reason),
                    "steps": progress.steps, "detail": progress.detail}
        met = (f"{sum(r.met for r in result.rubrics)}/{len(result.rubrics)} rubrics met"
               if result.met_fraction is not None else result.note)
        return Score(value=result.reward,
                     explanation=f"reward {result.reward} ({metadata['termination_reason']}); "
                                 f"{met}",
                     metadata=metadata)

    return score
