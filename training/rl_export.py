"""Trajectories -> verl RL rows: one row per user turn that has gold calls.

A row is what verl's `RLHFDataset` reads (notes/training.md §2.7) plus what our rollout
and reward need to rebuild the world and score the turn (notes/envfactory.md §10):

- `prompt`: the system prompt, the earlier turns as the model would have seen them
  (assistant steps as `<tool_call>` blocks, tool results as `<tool_response>` blocks in a
  user message, consecutive user-side messages merged), then this turn's user message;
- `reward_model.ground_truth`: JSON list of the turn's gold calls
  `{name: "env-tool", arguments, masked_arguments}`, what `composite_reward`'s R_traj reads;
- `extra_info`: the environments, the turn's gold final state and its start state (JSON
  strings, since every environment's state has its own shape and Arrow needs one schema;
  the start state sits in `tools_kwargs["envfactory"]`, where verl hands it to the tools
  that rebuild the world, see `training/verl/session.py`), the tools the row offers
  (`tool_selection`), the state paths R_state ignores, the reward the rows are meant to be
  scored with (`reward_settings`, `harness.rewards.RewardSettings` as JSON: the verl reward's
  `release` variant, α 0.5, γ 0.05) and where the row came from.

Train/validation is split by conversation (all turns of one trajectory on one side).

The release's own RL rows (`LARK-Lab/EnvFactory-RL`, read by `training.release_datasets`)
become rows of the same shape (`release_rl_row`): their history and query as the release
wrote them after our system prompt, their gold calls, and a world of release environments
started from the row's own scenarios.
"""

from __future__ import annotations

import json
from typing import Any

from envs.world import World
from harness.prompts import AGENT_SYSTEM_PROMPT
from harness.rewards import RewardSettings
from harness.trajectory import Trajectory
from training.conversation import TurnExchange, exchange
from training.release_datasets import ReleaseRlRow
from training.verl.session import row_tools_kwargs

__all__ = ["AGENT_NAME", "DATA_SOURCE", "RL_REWARD", "TOOL_CLASS", "gold_states",
           "release_rl_row", "rl_rows", "tools_config"]

DATA_SOURCE = "envfactory"
#: the verl agent loop the rows ask for (verl's multi-turn tool loop)
AGENT_NAME = "tool_agent"
#: the verl tool class serving every environment tool (training/verl/tools.py)
TOOL_CLASS = "training.verl.tools.EnvTool"
#: the reward the rows are scored with (`training/verl/reward.py`'s, the release's)
RL_REWARD = RewardSettings(variant="release", alpha=0.5, gamma=0.05)


def tools_config(environments: list[str]) -> dict[str, Any]:
    """The verl tools YAML (`multi_turn.tool_config_path`, as a dict): every tool of
    `environments` with the schema the evaluation shows (qualified name, description,
    parameters) in its `config` (see `training/verl/tools.py` for why not in verl's
    `tool_schema`); each row offers only its own environments' (`tool_selection`)."""
    return {"tools": [
        {"class_name": TOOL_CLASS, "config": {"type": "native", "function": {
            "name": name, "description": spec.description, "parameters": spec.parameters}}}
        for name, spec in World(environments).tools()]}


def gold_states(trajectory: Trajectory, replayed: list[TurnExchange]
                ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(state before, gold state after) per turn: recorded where the task has them,
    otherwise the states of its replayed exchange (`exchange(..., replay=True)`)."""
    recorded = [t.gold_state_after for t in trajectory.turns]
    afters = recorded if all(s is not None for s in recorded) else [
        t.state_after for t in replayed]
    befores = [trajectory.initial_state, *afters][:len(afters)]  # none for no turns
    return [(b, a) for b, a in zip(befores, afters, strict=True)]  # type: ignore[misc]


def _push(messages: list[dict[str, str]], role: str, content: str) -> None:
    if messages and messages[-1]["role"] == role == "user":
        messages[-1]["content"] += "\n" + content
    else:
        messages.append({"role": role, "content": content})


def rl_rows(trajectory: Trajectory, split: str) -> list[dict[str, Any]]:
    """The RL rows of one trajectory (turns without gold calls give none)."""
    turns = exchange(trajectory, replay=True)  # the gold history, one entry per turn
    states = gold_states(trajectory, turns)
    history: list[dict[str, str]] = [{"role": "system", "content": AGENT_SYSTEM_PROMPT}]
    tools = [name for name, _ in World(trajectory.environments).tools()]
    rows = []
    for t, (turn, seen) in enumerate(zip(trajectory.turns, turns, strict=True)):
        prompt = [dict(m) for m in history]
        _push(prompt, "user", turn.user)
        if turn.gold_calls:
            truth = [{"name": c.qualified_name, "arguments": c.arguments,
                      "masked_arguments": c.masked_arguments} for c in turn.gold_calls]
            before, after = states[t]
            rows.append(_row(prompt, truth, split=split, trajectory_id=trajectory.id, turn=t,
                             environments=list(trajectory.environments), start=before,
                             gold_final=after, ignore=trajectory.ignore_state_paths,
                             tools=tools))
        _push(history, "user", seen.user)
        for step in seen.steps:
            if step.calls:
                _push(history, "assistant", step.call_xml().rstrip("\n"))
                _push(history, "user", step.response_xml().rstrip("\n"))
            else:
                _push(history, "assistant", step.text or "")
    return rows


def _row(prompt: list[dict[str, str]], truth: list[dict[str, Any]], *, split: str,
         trajectory_id: str, turn: int, environments: list[str], start: dict[str, Any],
         gold_final: dict[str, Any], ignore: dict[str, list[str]], tools: list[str]
         ) -> dict[str, Any]:
    return {
        "data_source": DATA_SOURCE, "agent_name": AGENT_NAME, "ability": "tool_use",
        "prompt": prompt,
        "reward_model": {"style": "rule",
                         "ground_truth": json.dumps(truth, ensure_ascii=False)},
        "extra_info": {
            "split": split, "index": 0, "trajectory_id": trajectory_id, "turn": turn,
            "environments": environments,
            "gold_final_state": json.dumps(gold_final, ensure_ascii=False),
            "ignore_state_paths": json.dumps(ignore),
            "need_tools_kwargs": True,
            "tools_kwargs": row_tools_kwargs(environments, start),
            "tool_selection": tools,
            "reward_settings": RL_REWARD.model_dump_json(),
        }}


def release_rl_row(row: ReleaseRlRow, split: str, trajectory_id: str, turn: int
                   ) -> dict[str, Any]:
    """One row of the release's RL set as our verl row: our system prompt, then the
    release's messages as it wrote them (history steps as `<tool_call>`/`<tool_response>`
    text, the turn's query last); gold calls unchanged (their "Server-tool" names are the
    release environments' model-facing names); the world of `row.environments` from the
    row's own starting scenarios, its gold final state the row's `final_config`."""
    prompt = [{"role": "system", "content": AGENT_SYSTEM_PROMPT}, *row.prompt]
    return _row(prompt, row.gold, split=split, trajectory_id=trajectory_id, turn=turn,
                environments=row.environments, start=row.start_state,
                gold_final=row.gold_final_state, ignore={}, tools=row.tool_selection)
