"""Held-out EnvFactory tasks on Inspect: dataset, multi-turn solver, composite-reward scorer.

Each sample is a canonical `Trajectory` from `tasks/envfactory/data/`. The user's turns
are fed one at a time; within a turn the model calls tools (qualified `env-tool`
names) until it answers in text or hits the step limit. Calls run in-process on the
sample's own `World`, or through per-sample MCP servers (`transport="mcp"`). The
score is the paper's composite reward with R_traj, R_state and the penalties reported
as separate metrics, overall and per environment and domain.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    get_model,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, mean, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from envs.world import split_name
from harness.providers.script import SCRIPT_KEY, TURN_KEY, Script, ScriptedCall
from harness.rewards import RewardConfig, composite_reward
from harness.tool_backends import InProcessBackend, McpBackend, ToolBackend
from harness.trajectory import Call, Trajectory, read_jsonl

__all__ = ["DATA_DIR", "envfactory_scorer", "envfactory_solver", "load_dataset"]

DATA_DIR = Path(__file__).parent / "data"
SPLITS = ("heldout", "train")
SYSTEM_PROMPT = (
    "You are a helpful assistant that completes the user's requests by calling the "
    "available tools. Tool names are '<service>-<tool>'. Look things up instead of "
    "guessing identifiers, do what the user asks in each message, and reply briefly "
    "when the request is done."
)
OBSERVED_KEY = "envfactory:observed_calls"
FINAL_KEY = "envfactory:final_state"
UNPARSEABLE_KEY = "envfactory:unparseable_calls"
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
    return Script(turns=[[[ScriptedCall(function=c.qualified_name, arguments=c.arguments)
                           for c in turn.gold_calls]] for turn in task.turns])


def _backend(transport: str, task: Trajectory) -> ToolBackend:
    if transport == "inprocess":
        return InProcessBackend(task.environments, task.initial_state)
    if transport == "mcp":
        return McpBackend(task.environments, task.initial_state)
    raise ValueError(f"unknown transport {transport!r}; use inprocess or mcp")


@solver
def envfactory_solver(transport: str = "inprocess", max_steps: int = 10) -> Solver:
    """Feed each user turn; let the model act until it answers (at most `max_steps`
    tool-calling messages per turn, EnvFactory's max_assistant_turns)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = Trajectory.model_validate(state.metadata["trajectory"])
        state.store.set(SCRIPT_KEY, gold_script(task).model_dump())
        model = get_model()
        observed: list[dict[str, Any]] = []
        unparseable = 0
        envs = dict.fromkeys(task.environments)
        async with _backend(transport, task) as backend:
            tools = backend.tools()
            state.messages = [ChatMessageSystem(content=SYSTEM_PROMPT)]
            for t, turn in enumerate(task.turns):
                state.store.set(TURN_KEY, t)
                state.messages.append(ChatMessageUser(content=turn.user))
                for _ in range(max_steps):
                    output = await model.generate(state.messages, tools=tools)
                    state.output = output
                    state.messages.append(output.message)
                    if not output.message.tool_calls:
                        break
                    for tc in output.message.tool_calls:
                        if tc.parse_error:
                            unparseable += 1
                            content, error = f"Error: {tc.parse_error}", True
                        else:
                            result = await backend.call(tc.function, tc.arguments)
                            env, name = split_name(tc.function, envs) or ("", tc.function)
                            observed.append(Call(env=env, name=name, arguments=tc.arguments,
                                                 ok=result.ok).model_dump(mode="json"))
                            content, error = result.text(), not result.ok
                        state.messages.append(ChatMessageTool(
                            content=content, tool_call_id=tc.id, function=tc.function,
                            error={"type": "unknown", "message": content} if error else None))
            state.store.set(FINAL_KEY, await backend.snapshot())
        state.store.set(OBSERVED_KEY, observed)
        state.store.set(UNPARSEABLE_KEY, unparseable)
        return state

    return solve


def _mean_by(field: str) -> Metric:
    """Mean per group of samples; list-valued metadata counts a sample in each group.

    Used under a score component key, so each score's value is that component.
    """

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        groups: dict[str, list[float]] = defaultdict(list)
        for s in scores:
            keys = (s.score.metadata or {}).get(field) or []
            value = s.score.as_float()
            for key in keys if isinstance(keys, list) else [keys]:
                groups[str(key)].append(float(value))
        return {f"{k}": sum(v) / len(v) for k, v in sorted(groups.items())}

    return compute


@metric
def by_env() -> Metric:
    """Mean reward per environment (a two-environment task counts for both)."""
    return _mean_by("environments")


@metric
def by_domain() -> Metric:
    """Mean reward per domain."""
    return _mean_by("domains")


@scorer(metrics={"reward": [mean(), by_env(), by_domain()],
                 "r_traj": [mean()], "r_state": [mean()], "p_length": [mean()],
                 "p_format": [mean()]})
def envfactory_scorer(alpha: float = 0.5) -> Scorer:
    """Composite reward R = max(0, α·R_traj + (1−α)·R_state − P_length − P_format)."""
    config = RewardConfig(alpha=alpha)

    async def score(state: TaskState, target: Target) -> Score:
        task = Trajectory.model_validate(state.metadata["trajectory"])
        observed = [Call.model_validate(c) for c in state.store.get(OBSERVED_KEY, [])]
        final = state.store.get(FINAL_KEY) or task.initial_state
        breakdown = composite_reward(
            task.gold_calls(), observed, task.initial_state, task.final_state or {}, final,
            unparseable_calls=state.store.get(UNPARSEABLE_KEY, 0),
            ignore_paths=task.ignore_state_paths, config=config)
        return Score(
            value={k: getattr(breakdown, k) for k in COMPONENTS},
            answer=json.dumps([c.qualified_name for c in observed]),
            explanation=f"R={breakdown.reward:.3f} (R_traj={breakdown.r_traj:.0f}, "
            f"R_state={breakdown.r_state:.3f}, P_length={breakdown.p_length:.2f}, "
            f"P_format={breakdown.p_format:.2f}); state matches {breakdown.state_matches}",
            metadata={"environments": task.environments,
                      "domains": (task.provenance.domain or "").split("+"),
                      "final_state": final},
        )

    return score
