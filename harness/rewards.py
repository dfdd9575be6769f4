"""EnvFactory's composite reward, as released with the paper, with a sound state check.

    R = max(0, α·R_traj + (1 − α)·R_state − P_length − P_format)

* R_traj ∈ {0, 1}: every gold call is matched to a *distinct* solution call, in any
  order — same tool, every non-masked gold argument present and equal (numbers with
  relative tolerance 1e-6). Extra arguments and extra calls are allowed. The matching is
  a maximum bipartite matching, so a greedy choice can never hide a valid assignment.
* R_state ∈ [0, 1]: the fraction of environments whose final state equals the gold one.
  The official code counts every environment named in the gold calls, so an agent that
  does nothing still earns state credit for environments the gold only reads (AWM's
  false positive). Here only environments the gold *changes* count; fields the task
  declares irrelevant are ignored; and when the gold changes nothing at all, R_state is
  R_traj if the agent also changed nothing, else 0 — it never passes silently.
* P_length = min(0.05 · extra calls, 0.5), only when both call lists are non-empty.
* P_format = min(0.05 · unparseable calls, 0.5).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from harness.trajectory import Call

__all__ = [
    "RewardBreakdown",
    "RewardConfig",
    "calls_match",
    "composite_reward",
    "r_state",
    "r_traj",
    "strip_paths",
]

State = Mapping[str, Any]


class RewardConfig(BaseModel):
    alpha: float = Field(0.5, ge=0, le=1, description="weight of R_traj (paper's α / code's τ)")
    length_penalty_per_call: float = 0.05
    length_penalty_cap: float = 0.5
    format_penalty_per_call: float = 0.05
    format_penalty_cap: float = 0.5
    rel_tol: float = 1e-6


class RewardBreakdown(BaseModel):
    reward: float
    r_traj: float
    r_state: float
    p_length: float
    p_format: float
    alpha: float
    #: environments that entered R_state, with whether each matched
    state_matches: dict[str, bool] = Field(default_factory=dict)


def values_equal(gold: Any, got: Any, rel_tol: float = 1e-6) -> bool:
    """Numbers within `rel_tol` (bools are not numbers); containers element-wise."""
    if isinstance(gold, bool) or isinstance(got, bool):
        return type(gold) is type(got) and gold == got
    if isinstance(gold, (int, float)) and isinstance(got, (int, float)):
        return math.isclose(gold, got, rel_tol=rel_tol)
    if isinstance(gold, Mapping) and isinstance(got, Mapping):
        return gold.keys() == got.keys() and all(
            values_equal(gold[k], got[k], rel_tol) for k in gold)
    if isinstance(gold, list) and isinstance(got, list):
        return len(gold) == len(got) and all(
            values_equal(a, b, rel_tol) for a, b in zip(gold, got, strict=True))
    return bool(gold == got)


def calls_match(gold: Call, got: Call, rel_tol: float = 1e-6) -> bool:
    """Same tool on the same environment, every non-masked gold argument equal."""
    if (gold.env, gold.name) != (got.env, got.name):
        return False
    masked = set(gold.masked_arguments)
    return all(
        k in got.arguments and values_equal(v, got.arguments[k], rel_tol)
        for k, v in gold.arguments.items() if k not in masked
    )


def r_traj(gold: Sequence[Call], solution: Sequence[Call], rel_tol: float = 1e-6) -> float:
    """1.0 iff the gold calls can be matched one-to-one to solution calls."""
    if not gold:
        return 1.0
    if not solution:
        return 0.0
    candidates = [[j for j, s in enumerate(solution) if calls_match(g, s, rel_tol)]
                  for g in gold]
    owner: dict[int, int] = {}  # solution index -> gold index

    def augment(i: int, seen: set[int]) -> bool:
        for j in candidates[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return 1.0 if all(augment(i, set()) for i in range(len(gold))) else 0.0


def strip_paths(state: Any, paths: Sequence[str]) -> Any:
    """A copy of `state` without the dotted `paths` (`*` matches any key or index)."""
    state = copy.deepcopy(state)
    for path in paths:
        _strip(state, path.split("."))
    return state


def _strip(node: Any, parts: list[str]) -> None:
    head, rest = parts[0], parts[1:]
    if isinstance(node, dict):
        keys = list(node) if head == "*" else [head] if head in node else []
        for k in keys:
            if rest:
                _strip(node[k], rest)
            else:
                del node[k]
    elif isinstance(node, list):
        indices = range(len(node)) if head == "*" else [int(head)] if head.isdigit() else []
        for i in reversed(list(indices)):
            if i >= len(node):
                continue
            if rest:
                _strip(node[i], rest)
            else:
                del node[i]


def r_state(
    envs: Sequence[str],
    initial: Mapping[str, State],
    gold_final: Mapping[str, State],
    agent_final: Mapping[str, State],
    ignore_paths: Mapping[str, Sequence[str]] | None = None,
    traj_score: float = 0.0,
) -> tuple[float, dict[str, bool]]:
    """Fraction of gold-changed environments whose final state equals the gold one."""
    ignore_paths = ignore_paths or {}

    def view(states: Mapping[str, State], env: str) -> Any:
        return strip_paths(states[env], ignore_paths.get(env, []))

    changed = [e for e in envs if view(gold_final, e) != view(initial, e)]
    if not changed:
        untouched = all(view(agent_final, e) == view(initial, e) for e in envs)
        return (traj_score if untouched else 0.0), {e: untouched for e in envs}
    matches = {e: view(agent_final, e) == view(gold_final, e) for e in changed}
    return sum(matches.values()) / len(changed), matches


def composite_reward(
    gold: Sequence[Call],
    solution: Sequence[Call],
    initial: Mapping[str, State],
    gold_final: Mapping[str, State],
    agent_final: Mapping[str, State],
    *,
    unparseable_calls: int = 0,
    ignore_paths: Mapping[str, Sequence[str]] | None = None,
    config: RewardConfig | None = None,
) -> RewardBreakdown:
    """The composite reward and its parts for one episode."""
    cfg = config or RewardConfig()
    traj = r_traj(gold, solution, cfg.rel_tol)
    envs = list(dict.fromkeys(c.env for c in gold))
    state, matches = r_state(envs, initial, gold_final, agent_final, ignore_paths, traj)
    extra = max(0, len(solution) - len(gold)) if gold and solution else 0
    p_length = min(cfg.length_penalty_per_call * extra, cfg.length_penalty_cap)
    p_format = min(cfg.format_penalty_per_call * unparseable_calls, cfg.format_penalty_cap)
    reward = max(0.0, cfg.alpha * traj + (1 - cfg.alpha) * state - p_length - p_format)
    return RewardBreakdown(
        reward=reward, r_traj=traj, r_state=state, p_length=p_length, p_format=p_format,
        alpha=cfg.alpha, state_matches=matches,
    )
