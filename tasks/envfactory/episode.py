"""Held-out EnvFactory tasks on Inspect: dataset, multi-turn solver, composite-reward scorer.

Each sample is a canonical `Trajectory` from `tasks/envfactory/data/`. The user's turns
are fed one at a time by the harness episode loop; within a turn the model calls tools
(qualified `env-tool` names) until it answers in text or hits the step limit. Calls run
in-process on the sample's own `World`, or through per-sample MCP servers (`transport="mcp"`). The
score is the paper's composite reward with R_traj, R_state and the penalties reported
as separate metrics, overall and per environment and domain.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, get_model
from inspect_ai.scorer import Metric, Score, Scorer, Target, mean, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import store_as

from envs.world import World, split_name
from harness.episode import Episode, EpisodeProgress, Rules, ScriptedUser, Side, UserTurn
from harness.gold import GoldCall, Script, ScriptPolicy
from harness.metrics import grouped_mean
from harness.prompts import AGENT_SYSTEM_PROMPT
from harness.rewards import RewardConfig, composite_reward
from harness.tool_backends import InProcessBackend, McpBackend, ToolBackend
from harness.trajectory import Call, Trajectory, read_jsonl

__all__ = ["DATA_DIR", "envfactory_scorer", "envfactory_solver", "load_dataset"]

DATA_DIR = Path(__file__).parent / "data"
SPLITS = ("heldout", "train")
SYSTEM_PROMPT = AGENT_SYSTEM_PROMPT
COMPONENTS = ("reward", "r_traj", "r_state", "p_length", "p_format")


def load_dataset(split: str, data_dir: Path = DATA_DIR) -> MemoryDataset:
    """Samples from `<data_dir>/<split>.jsonl` (`split="all"` for both)."""
    splits = SPLITS if split == "all" else (split,)
    samples = []
    for name in splits:
        if name not in SPLITS:
            raise ValueError(f"unknown split {name!r}; use heldout, train or all")
        path = data_dir / f"{name}.jsonl"
        if not path.exists():
            raise FileNotFoundError(f"{path} not found; build it with `envfactory tasks build`")
        for task in read_jsonl(path):
            samples.append(Sample(
                id=task.id, input=task.turns[0].user,
                metadata={"trajectory": task.model_dump(mode="json"),
                          "environments": task.environments,
                          "domain": task.provenance.domain, "split": name}))
    return MemoryDataset(samples, name=f"envfactory_{split}")


def gold_script(task: Trajectory) -> Script:
    return Script.of_calls([[[GoldCall(function=c.qualified_name, arguments=c.arguments)
                              for c in turn.gold_calls]] for turn in task.turns])


def _backend(transport: str, task: Trajectory) -> ToolBackend:
    if transport == "inprocess":
        return InProcessBackend(task.environments, task.initial_state)
    if transport == "mcp":
        return McpBackend.for_environments(task.environments, task.initial_state)
    raise ValueError(f"unknown transport {transport!r}; use inprocess or mcp")


@solver
def envfactory_solver(transport: str = "inprocess", max_steps: int = 10) -> Solver:
    """Feed each user turn; let the model act until it answers (at most `max_steps`
    tool-calling messages per turn, EnvFactory's max_assistant_turns)."""
    rules = Rules(turn_step_limit=max_steps)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = Trajectory.model_validate(state.metadata["trajectory"])
        async with _backend(transport, task) as backend:
            state.messages = [ChatMessageSystem(content=SYSTEM_PROMPT)]
            agent = Side(role="assistant", model=get_model(), history=state.messages,
                         tools=backend.tools())
            user = ScriptedUser([UserTurn(messages=[ChatMessageUser(content=t.user)])
                                 for t in task.turns])
            await Episode(agent, backend, rules, user=user,
                          gold=ScriptPolicy(gold_script(task))).run()
        return state

    return solve


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
def envfactory_scorer(alpha: float = 0.5) -> Scorer:
    """Composite reward R = max(0, α·R_traj + (1−α)·R_state − P_length − P_format)."""
    config = RewardConfig(alpha=alpha)

    async def score(state: TaskState, target: Target) -> Score:
        task = Trajectory.model_validate(state.metadata["trajectory"])
        progress = store_as(EpisodeProgress)
        calls, unparseable = observed(task, progress)
        final = progress.final_state or replayed_state(task, calls)
        breakdown = composite_reward(
            task.gold_calls(), calls, task.initial_state, task.final_state or {}, final,
            unparseable_calls=unparseable, ignore_paths=task.ignore_state_paths,
            config=config)
        return Score(
            value={k: getattr(breakdown, k) for k in COMPONENTS},
            answer=json.dumps([c.qualified_name for c in calls]),
            explanation=f"R={breakdown.reward:.3f} (R_traj={breakdown.r_traj:.0f}, "
            f"R_state={breakdown.r_state:.3f}, P_length={breakdown.p_length:.2f}, "
            f"P_format={breakdown.p_format:.2f}); state matches {breakdown.state_matches}",
            metadata={"environments": task.environments,
                      "domains": (task.provenance.domain or "").split("+"),
                      "termination": progress.termination, "final_state": final},
        )

    return score
