"""verl's custom reward: `compute_score` is `harness.rewards.composite_reward`.

One implementation scores evaluation (tasks/envfactory) and training. verl calls
`compute_score(data_source, solution_str, ground_truth, extra_info)` once per rollout
(`reward.custom_reward_function.path/name`); `extra_info` is the row's plus the
trajectory's `extra_fields`, where `training.verl.session` recorded the calls the
environment ran and its final state.

- gold: the row's `ground_truth` (gold calls with masked arguments, qualified names);
- solution: the calls the environment ran (accepted or not), plus one rejected call for
  every well-formed `<tool_call>` block that never reached an environment (an unknown
  tool, or one cut by `max_parallel_calls`), so P_length counts every call the model made;
- P_format: `<tool_call>` blocks whose JSON does not parse;
- R_state: the recorded final state against the row's gold final state (the start state
  when the model called nothing), ignoring the row's ignored paths.

Returns a dict: `score` plus the reward's parts (verl logs every key).
"""

from __future__ import annotations

import json
import re
from typing import Any

from envs.names import split_name
from harness.rewards import RewardConfig, composite_reward
from harness.trajectory import Call
from training.verl.session import CALLS_KEY, ROW_KEY, STATE_KEY

__all__ = ["compute_score", "parse_tool_calls"]

_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)


def parse_tool_calls(text: str) -> tuple[list[dict[str, Any]], int]:
    """(well-formed calls `{name, arguments}`, number of malformed blocks) in `text`."""
    calls, bad = [], 0
    for body in _BLOCK.findall(text):
        try:
            call = json.loads(body.strip())
        except json.JSONDecodeError:
            bad += 1
            continue
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            bad += 1
            continue
        calls.append(call)
    return calls, bad


def _call(name: str, arguments: Any, envs: list[str], ok: bool | None,
          masked: list[str] | None = None) -> Call:
    parts = split_name(name, dict.fromkeys(envs)) or ("", name)
    return Call(env=parts[0], name=parts[1],
                arguments=arguments if isinstance(arguments, dict) else {},
                masked_arguments=masked or [], ok=ok)


def compute_score(data_source: str, solution_str: str, ground_truth: str,
                  extra_info: dict[str, Any] | None = None, alpha: float = 0.5,
                  **kwargs: Any) -> dict[str, Any]:
    """The composite reward of one rollout (see the module docstring)."""
    info = extra_info or {}
    row = (info.get("tools_kwargs") or {}).get(ROW_KEY) or {}
    envs = list(info.get("environments") or row.get("environments") or [])
    start = json.loads(row["start_state"])
    gold_final = json.loads(info["gold_final_state"])
    final = info.get(STATE_KEY) or start
    gold = [_call(g["name"], g.get("arguments"), envs, None, g.get("masked_arguments"))
            for g in json.loads(ground_truth)]
    ran = [_call(c["name"], c.get("arguments"), envs, bool(c.get("ok")))
           for c in info.get(CALLS_KEY) or []]
    written, malformed = parse_tool_calls(solution_str)
    never_ran = [_call(c["name"], c.get("arguments"), envs, False)
                 for c in written[len(ran):]]
    ignore = json.loads(info.get("ignore_state_paths") or "{}")
    parts = composite_reward(gold, ran + never_ran, start, gold_final, final,
                             unparseable_calls=malformed, ignore_paths=ignore,
                             config=RewardConfig(alpha=alpha))
    return {"score": parts.reward, "r_traj": parts.r_traj, "r_state": parts.r_state,
            "p_length": parts.p_length, "p_format": parts.p_format}
