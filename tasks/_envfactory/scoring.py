"""The held-out EnvFactory score: the paper's composite reward, with R_traj, R_state and
the penalties reported as separate metrics, overall and per environment and domain.

The reward is `strict` unless the task is asked for `release` (`harness.rewards`); with
`release` the solution is every call the model wrote that parsed (accepted or not, as the
release scores the text) and the agent's states are those of the environments it called
(`opened_states`: what the release's rollout saves). Each score's metadata names the
variant, α and γ.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.scorer import Metric, Score, Scorer, Target, mean, metric, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import store_as

from envs.names import split_name
from envs.world import World
from harness.episode import EpisodeProgress
from harness.metrics import grouped_mean
from harness.rewards import RewardSettings, composite_reward, opened_states
from harness.trajectory import Call, Trajectory

COMPONENTS = ("reward", "r_traj", "r_state", "p_length", "p_format")


def observed(task: Trajectory, progress: EpisodeProgress) -> tuple[list[Call], int]:
    """The calls that ran (with whether the environment accepted them), and how many
    calls could not be parsed."""
    envs = dict.fromkeys(task.environments)
    ok = {m.tool_call_id: not m.error for m in progress.messages if m.role == "tool"}
    calls, unparseable = [], 0
    for message in progress.messages:
        if message.role != "assistant":
            continue
        for c in message.tool_calls or []:
            if c.parse_error is not None:
                unparseable += 1
                continue
            env, name = split_name(c.name, envs) or ("", c.name)
            calls.append(Call(env=env, name=name, arguments=c.arguments, ok=ok.get(c.id)))
    return calls, unparseable


def replayed_state(task: Trajectory, calls: list[Call]) -> dict[str, dict[str, Any]]:
    """Where the recorded calls leave the task's world (when no final snapshot was taken,
    e.g. a server died): the same calls, replayed in process."""
    world = World(task.environments, task.initial_state)
    for c in calls:
        world.call(c.env, c.name, c.arguments)
    return world.snapshot()


@metric
def by_env() -> Metric:
    """Mean reward per environment (a two-environment task counts for both)."""
    return grouped_mean("environments")


@metric
def by_domain() -> Metric:
    """Mean reward per domain."""
    return grouped_mean("domains")


@scorer(metrics={"reward": [mean(), by_env(), by_domain()],
                 "r_traj": [mean()], "r_state": [mean()], "p_length": [mean()],
                 "p_format": [mean()]})
def envfactory_scorer(reward: str = "strict", alpha: float = 0.5,
                      gamma: float = 0.05) -> Scorer:
    """Composite reward R = max(0, α·R_traj + (1−α)·R_state − P_length − P_format), in
    the variant `reward` (`strict` or `release`)."""
    settings = RewardSettings.model_validate({"variant": reward, "alpha": alpha,
                                              "gamma": gamma})

    async def score(state: TaskState, target: Target) -> Score:
        task = Trajectory.model_validate(state.metadata["trajectory"])
        progress = store_as(EpisodeProgress)
        calls, unparseable = observed(task, progress)
        final = progress.final_state or replayed_state(task, calls)
        agent_final = (opened_states(final, calls) if settings.variant == "release"
                       else final)
        breakdown = composite_reward(
            task.gold_calls(), calls, task.initial_state, task.final_state or {},
            agent_final, unparseable_calls=unparseable,
            ignore_paths=task.ignore_state_paths, settings=settings)
        return Score(
            value={k: getattr(breakdown, k) for k in COMPONENTS},
            answer=json.dumps([c.qualified_name for c in calls]),
            explanation=f"R={breakdown.reward:.3f} [{settings.label()}] "
            f"(R_traj={breakdown.r_traj:.0f}, R_state={breakdown.r_state:.3f}, "
            f"P_length={breakdown.p_length:.2f}, P_format={breakdown.p_format:.2f}); "
            f"state matches {breakdown.state_matches}",
            metadata={"environments": task.environments,
                      "domains": (task.provenance.domain or "").split("+"),
                      "termination": progress.termination, "final_state": final,
                      "reward_settings": settings.model_dump()},
        )

    return score
