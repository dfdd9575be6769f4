"""verl's custom reward: `compute_score` is `harness.rewards.composite_reward`.

One implementation scores evaluation (tasks/envfactory) and training. verl calls
`compute_score(data_source, solution_str, ground_truth, extra_info, **reward_kwargs)`
once per rollout (`reward.custom_reward_function.path/name/reward_kwargs`; `envfactory
train grpo` sets `variant`, `alpha` and `gamma` there from the config's `RewardSettings`);
`extra_info` is the row's plus the trajectory's `extra_fields`, where
`training.verl.session` recorded the calls the environment ran and its final state.

The gold is the row's `ground_truth` (gold calls with masked arguments, qualified names)
and the gold final state the row's `gold_final_state`, in both variants. Then:

`release` (the default, the paper's; what `tool_reward_fcn.py` does with the same text):
- solution: every `<tool_call>{...}</tool_call>` in the response that parses as JSON with
  a `name` and `arguments` (`release_tool_calls`: the release's pattern, so a block
  without braces is not a call at all, and an unclosed `{` runs on to the next block's
  `}`), whether or not it ran; arguments that are not an object count as none;
- P_format: the matched blocks that do not parse or lack `name` / `arguments`;
- R_state: the recorded final state of the environments the trajectory's calls reached
  (`harness.rewards.opened_states`; none when it called nothing), as the release's rollout
  saves the servers it opened.

`strict`:
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
from harness.rewards import RewardSettings, composite_reward, opened_states
from harness.trajectory import Call
from training.verl.session import CALLS_KEY, ROW_KEY, STATE_KEY

__all__ = ["compute_score", "parse_tool_calls", "release_tool_calls"]

_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
#: the release's pattern (`extract_tool_calls`): the shortest `{...}` between the tags
_RELEASE_BLOCK = re.compile(r"<tool_call>\s*({.*?})\s*</tool_call>", re.DOTALL)


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


def release_tool_calls(text: str) -> tuple[list[dict[str, Any]], int]:
    """(calls `{name, arguments}`, failed blocks) as the release extracts them."""
    calls, failed = [], 0
    for body in _RELEASE_BLOCK.findall(text):
        try:
            call = json.loads(body)
            calls.append({"name": call["name"], "arguments": call["arguments"]})
        except (ValueError, KeyError):
            failed += 1
    return calls, failed


def _call(name: Any, arguments: Any, envs: list[str], ok: bool | None,
          masked: list[str] | None = None) -> Call:
    name = name if isinstance(name, str) else ""  # never equal to a gold name
    parts = split_name(name, dict.fromkeys(envs)) or ("", name)
    return Call(env=parts[0], name=parts[1],
                arguments=arguments if isinstance(arguments, dict) else {},
                masked_arguments=masked or [], ok=ok)


def compute_score(data_source: str, solution_str: str, ground_truth: str,
                  extra_info: dict[str, Any] | None = None, variant: str = "release",
                  alpha: float = 0.5, gamma: float = 0.05,
                  **kwargs: Any) -> dict[str, Any]:
    """The composite reward of one rollout in `variant` (see the module docstring)."""
    settings = RewardSettings.model_validate({"variant": variant, "alpha": alpha,
                                              "gamma": gamma})
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
    if settings.variant == "release":
        written, failed = release_tool_calls(solution_str)
        solution = [_call(c["name"], c["arguments"], envs, None) for c in written]
        parts = composite_reward(gold, solution, start, gold_final,
                                 opened_states(final, ran), unparseable_calls=failed,
                                 settings=settings)
    else:
        written, malformed = parse_tool_calls(solution_str)
        never_ran = [_call(c["name"], c.get("arguments"), envs, False)
                     for c in written[len(ran):]]
        ignore = json.loads(info.get("ignore_state_paths") or "{}")
        parts = composite_reward(gold, ran + never_ran, start, gold_final, final,
                                 unparseable_calls=malformed, ignore_paths=ignore,
                                 settings=settings)
    return {"score": parts.reward, "r_traj": parts.r_traj, "r_state": parts.r_state,
            "p_length": parts.p_length, "p_format": parts.p_format}
