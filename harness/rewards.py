"""EnvFactory's composite reward, as released with the paper, made sound for every task.

    R = max(0, α·R_traj + (1 − α)·R_state − P_length − P_format)

* R_traj ∈ {0, 1}: every gold call is matched to a *distinct* solution call, in any
  order — same tool, every non-masked gold argument present and equal (numbers with
  relative tolerance 1e-6). Extra arguments and extra calls are allowed. The matching is
  a maximum bipartite matching, so a greedy choice can never hide a valid assignment.
  Only calls the environment accepted can match: a rejected call (`Call.ok is False`:
  unknown tool, invalid arguments, a failed precondition) changed nothing, so it did not
  do what the gold call does; calls whose outcome was not recorded (`ok is None`) count.
  An empty gold has nothing to match: R_traj = 1.
* R_state ∈ [0, 1]: the environments that count are those of the whole episode (every
  environment in the initial state, not only those the gold names) that the gold *or*
  the agent changed; R_state is the fraction of them whose final state equals the gold
  one. Hence
  - an environment nobody changed earns nothing: the official code counts every
    environment named in the gold calls, so an agent that does nothing still earns state
    credit for environments the gold only reads (AWM's false positive);
  - an environment the gold leaves alone — one it only reads, or never names — that the
    agent changed counts, and fails: damage outside the gold's writes is never free;
  - when nobody changed anything (a read-only or empty gold and an agent that wrote
    nothing) R_state is R_traj, so such a task never passes on state alone.
  Fields the task declares irrelevant (`ignore_paths`) are removed before every
  comparison, so touching only them is no change. Every environment must have an
  initial, a gold final and an agent final state; a missing one is an error, not a match.
* P_length = min(0.05 · extra calls, 0.5), extra calls being the solution calls beyond
  the gold's number, rejected ones included (they are still calls). The official code
  charges it only when both lists are non-empty, which made any number of calls free
  on an empty gold; here it always applies.
* P_format = min(0.05 · unparseable calls, 0.5).

So on an empty gold an agent that does nothing scores 1, one that only reads loses 0.05
a call, and one that changes anything scores at most α − P_length (0.45 by default).
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
    alpha: float = Field(
        default=0.5, ge=0, le=1, description="weight of R_traj (paper's α / code's τ)")
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
    """1.0 iff the gold calls can be matched one-to-one to solution calls the
    environment did not reject."""
    solution = [s for s in solution if s.ok is not False]
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
    """Fraction of the environments in `envs` that the gold or the agent changed whose
    final state equals the gold one; `traj_score` when neither changed any.

    Returns it with the environments that counted and whether each matched (all of
    `envs`, each True, when none changed).
    """
    ignore_paths = ignore_paths or {}

    def view(states: Mapping[str, State], env: str, which: str) -> Any:
        if env not in states:
            raise ValueError(f"no {which} state for environment {env!r}")
        return strip_paths(states[env], ignore_paths.get(env, []))

    matches: dict[str, bool] = {}
    for env in envs:
        before = view(initial, env, "initial")
        gold, agent = view(gold_final, env, "gold final"), view(agent_final, env, "final")
        if gold != before or agent != before:
            matches[env] = agent == gold
    if not matches:
        return traj_score, dict.fromkeys(envs, True)
    return sum(matches.values()) / len(matches), matches


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
    """The composite reward and its parts for one episode.

    The episode's environments are those of `initial` (plus any a gold call names, which
    must then have states too); see the module docstring for the rules.
    """
    cfg = config or RewardConfig()
    traj = r_traj(gold, solution, cfg.rel_tol)
    envs = list(dict.fromkeys([*initial, *(c.env for c in gold)]))
    state, matches = r_state(envs, initial, gold_final, agent_final, ignore_paths, traj)
    extra = max(0, len(solution) - len(gold))
    p_length = min(cfg.length_penalty_per_call * extra, cfg.length_penalty_cap)
    p_format = min(cfg.format_penalty_per_call * unparseable_calls, cfg.format_penalty_cap)
    reward = max(0.0, cfg.alpha * traj + (1 - cfg.alpha) * state - p_length - p_format)
    return RewardBreakdown(
        reward=reward, r_traj=traj, r_state=state, p_length=p_length, p_format=p_format,
        alpha=cfg.alpha, state_matches=matches,
    )
