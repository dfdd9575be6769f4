"""EnvFactory's composite reward in two variants, chosen by `RewardSettings.variant`.

    R = max(0, α·R_traj + (1 − α)·R_state − P_length − P_format)

`composite_reward` is the one entry point; the variant that ran, with its α and γ, is in
its `RewardBreakdown`, and every log, export manifest and card that holds a reward
records `RewardSettings`.

`release` (the default of `RewardSettings`) is the reward the paper trained with, as its
RL fork computes it (RolandXMR/verl@8068d50c `EnvFactory/reward/tool_reward_fcn.py`;
notes/envfactory.md §11, §16), rule for rule:

* values match when `==` holds (so `True` matches `1` and `1` matches `1.0`; containers
  compare with Python's `==`), else when both are numbers (bools included) within
  `math.isclose(rel_tol=1e-6)`;
* R_traj ∈ {0, 1}: for each gold call in gold order, the first solution call not yet
  used with the same name whose arguments hold every non-masked gold argument with a
  matching value is used (greedy: a loose gold call can take the only call a later one
  needed); 1 if every gold call found one. No solution call at all: 0 (even on an empty
  gold); an empty gold and a non-empty solution: 1. Whether the environment accepted a
  call is not looked at;
* R_state: the fraction of the servers named by the gold calls (the release takes the
  prefix of each gold call's name before "-": the call's environment) that have a gold
  final state, whose solution final state equals it (`==`, no ignored fields; a solution
  state given as a JSON string is parsed first, as the release does); 0 when there is no
  such server. The agent's states are used as given; a rollout holding a snapshot of
  every environment passes `opened_states(...)`, what the release's rollout saves (the
  servers the agent called: one it never called has no state, so it mismatches);
* P_length = min(γ · (|solution| − |gold|)⁺, 0.5), only when both lists are non-empty;
* P_format = min(0.05 · unparseable calls, 0.5).

The release's scorer also catches every exception and then scores 0; a solution call
whose `arguments` is not an object can raise there. `Call` holds arguments as an object,
so its callers decide what such a call is (training.verl.reward: no arguments).

`strict`: EnvFactory's composite reward, as released with the paper, made sound for every task.

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
* P_length = min(γ · extra calls, 0.5) (γ = 0.05 as released), extra calls being the
  solution calls beyond the gold's number, rejected ones included (they are still
  calls). The official code charges it only when both lists are non-empty, which made
  any number of calls free on an empty gold; here it always applies.
* P_format = min(0.05 · unparseable calls, 0.5).

So on an empty gold an agent that does nothing scores 1, one that only reads loses γ
a call, and one that changes anything scores at most α − P_length (0.45 by default).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from envs.names import SEPARATOR, split_name
from harness.trajectory import Call

__all__ = [
    "VARIANTS",
    "RecordedEpisode",
    "RewardBreakdown",
    "RewardSettings",
    "RewardVariant",
    "calls_match",
    "composite_reward",
    "opened_states",
    "r_state",
    "r_traj",
    "release_calls_match",
    "release_r_state",
    "release_r_traj",
    "release_values_match",
    "score_recorded",
    "strip_paths",
]

State = Mapping[str, Any]
RewardVariant = Literal["release", "strict"]
VARIANTS: tuple[RewardVariant, ...] = ("release", "strict")

#: both variants, as released: each penalty is capped, a bad call costs 0.05
PENALTY_CAP = 0.5
FORMAT_PENALTY_PER_CALL = 0.05
REL_TOL = 1e-6


class RewardSettings(BaseModel):
    """Which reward ran: what every log, export manifest, card and leaderboard column
    setting that holds a reward records."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    variant: RewardVariant = "release"
    alpha: float = Field(default=0.5, ge=0, le=1,
                         description="weight of R_traj (the paper's α, the code's τ)")
    gamma: float = Field(default=0.05, ge=0,
                         description="P_length per extra call (the release's 0.05)")

    def label(self) -> str:
        """One line for logs and column settings: `release α=0.5 γ=0.05`."""
        return f"{self.variant} α={self.alpha:g} γ={self.gamma:g}"


class RewardBreakdown(BaseModel):
    reward: float
    r_traj: float
    r_state: float
    p_length: float
    p_format: float
    variant: RewardVariant
    alpha: float
    gamma: float
    #: environments that entered R_state, with whether each matched
    state_matches: dict[str, bool] = Field(default_factory=dict)


# --- release -------------------------------------------------------------------------


def release_values_match(gold: Any, got: Any) -> bool:
    """The release's value match: `==`, else two numbers (bools are ints) within 1e-6."""
    if got == gold:
        return True
    return (isinstance(got, (int, float)) and isinstance(gold, (int, float))
            and math.isclose(got, gold, rel_tol=REL_TOL))


def release_calls_match(gold: Call, got: Call) -> bool:
    """Same name (environment and tool); every non-masked gold argument present in
    `got` with a matching value."""
    if (gold.env, gold.name) != (got.env, got.name):
        return False
    masked = set(gold.masked_arguments)
    return all(k in got.arguments and release_values_match(v, got.arguments[k])
               for k, v in gold.arguments.items() if k not in masked)


def release_r_traj(gold: Sequence[Call], solution: Sequence[Call]) -> float:
    """1.0 iff each gold call, in order, finds a first unused matching solution call."""
    if not solution:
        return 0.0
    used: set[int] = set()
    for g in gold:
        j = next((j for j, s in enumerate(solution)
                  if j not in used and release_calls_match(g, s)), None)
        if j is None:
            return 0.0
        used.add(j)
    return 1.0


def _parsed(state: Any) -> Any:
    """A state the release received as a JSON string, parsed (unchanged if it is not)."""
    if isinstance(state, str):
        try:
            return json.loads(state)
        except ValueError:
            return state
    return state


def release_r_state(gold: Sequence[Call], gold_final: Mapping[str, State],
                    agent_final: Mapping[str, Any]) -> tuple[float, dict[str, bool]]:
    """Fraction of the gold's servers with a gold final state whose agent final state
    equals it (0 when none), with each server's match."""
    servers = {c.env for c in gold}
    matches = {env: _parsed(agent_final.get(env)) == state
               for env, state in gold_final.items() if env in servers}
    return (sum(matches.values()) / len(matches) if matches else 0.0), matches


def opened_states(final: Mapping[str, State], solution: Sequence[Call]) -> dict[str, State]:
    """The states a release rollout saves from a snapshot of every environment: those of
    the environments a solution call named (it opens a server on its first call and
    saves the servers it opened)."""
    called = {c.env for c in solution}
    return {env: state for env, state in final.items() if env in called}


def _release(gold: Sequence[Call], solution: Sequence[Call],
             gold_final: Mapping[str, State], agent_final: Mapping[str, Any],
             unparseable_calls: int, settings: RewardSettings) -> RewardBreakdown:
    traj = release_r_traj(gold, solution)
    state, matches = release_r_state(gold, gold_final, agent_final)
    p_length = (min(settings.gamma * max(len(solution) - len(gold), 0), PENALTY_CAP)
                if gold and solution else 0.0)
    return _breakdown(traj, state, p_length, unparseable_calls, matches, settings)


# --- strict --------------------------------------------------------------------------


def values_equal(gold: Any, got: Any, rel_tol: float = REL_TOL) -> bool:
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


def calls_match(gold: Call, got: Call, rel_tol: float = REL_TOL) -> bool:
    """Same tool on the same environment, every non-masked gold argument equal."""
    if (gold.env, gold.name) != (got.env, got.name):
        return False
    masked = set(gold.masked_arguments)
    return all(
        k in got.arguments and values_equal(v, got.arguments[k], rel_tol)
        for k, v in gold.arguments.items() if k not in masked
    )


def r_traj(gold: Sequence[Call], solution: Sequence[Call], rel_tol: float = REL_TOL) -> float:
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


def _strict(gold: Sequence[Call], solution: Sequence[Call], initial: Mapping[str, State],
            gold_final: Mapping[str, State], agent_final: Mapping[str, State],
            unparseable_calls: int, ignore_paths: Mapping[str, Sequence[str]] | None,
            settings: RewardSettings) -> RewardBreakdown:
    traj = r_traj(gold, solution)
    envs = list(dict.fromkeys([*initial, *(c.env for c in gold)]))
    state, matches = r_state(envs, initial, gold_final, agent_final, ignore_paths, traj)
    p_length = min(settings.gamma * max(0, len(solution) - len(gold)), PENALTY_CAP)
    return _breakdown(traj, state, p_length, unparseable_calls, matches, settings)


# --- both ----------------------------------------------------------------------------


def _breakdown(traj: float, state: float, p_length: float, unparseable_calls: int,
               matches: dict[str, bool], settings: RewardSettings) -> RewardBreakdown:
    p_format = min(FORMAT_PENALTY_PER_CALL * unparseable_calls, PENALTY_CAP)
    reward = max(0.0, settings.alpha * traj + (1 - settings.alpha) * state
                 - p_length - p_format)
    return RewardBreakdown(reward=reward, r_traj=traj, r_state=state, p_length=p_length,
                           p_format=p_format, variant=settings.variant,
                           alpha=settings.alpha, gamma=settings.gamma,
                           state_matches=matches)


def composite_reward(
    gold: Sequence[Call],
    solution: Sequence[Call],
    initial: Mapping[str, State],
    gold_final: Mapping[str, State],
    agent_final: Mapping[str, Any],
    *,
    settings: RewardSettings,
    unparseable_calls: int = 0,
    ignore_paths: Mapping[str, Sequence[str]] | None = None,
) -> RewardBreakdown:
    """The composite reward and its parts for one episode, in `settings.variant` (no
    default: a caller always says which reward it means).

    `release` reads neither `initial` nor `ignore_paths` (the release has neither);
    `strict` scores the environments of `initial` (plus any a gold call names, which must
    then have states too). See the module docstring for the rules.
    """
    if settings.variant == "release":
        return _release(gold, solution, gold_final, agent_final, unparseable_calls,
                        settings)
    return _strict(gold, solution, initial, gold_final, agent_final, unparseable_calls,
                   ignore_paths, settings)


# --- recorded episodes (`envfactory reward`) -----------------------------------------


class RecordedCall(BaseModel):
    """A call as a rollout recorded it: the qualified name (`env-tool`) and arguments;
    `ok` (whether the environment accepted it) is read by `strict` only."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    ok: bool | None = None


class RecordedGoldCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    masked_arguments: list[str] = Field(default_factory=list)


class RecordedEpisode(BaseModel):
    """One episode to re-score offline: one line of `envfactory reward`'s input."""

    model_config = ConfigDict(extra="forbid")

    calls: list[RecordedCall]
    gold_calls: list[RecordedGoldCall]
    final_states: dict[str, Any]
    gold_states: dict[str, Any]
    format_failures: int = Field(ge=0)
    #: replaces the settings' α for this episode
    alpha: float | None = Field(default=None, ge=0, le=1)
    #: `strict` needs them (the environments anyone changed); `release` reads none
    initial_states: dict[str, Any] | None = None


def _recorded_call(name: str, envs: Mapping[str, Any], variant: RewardVariant,
                   **fields: Any) -> Call:
    """A recorded name as (environment, tool): for `release` the prefix before the first
    "-" is the server, as the release splits; for `strict` the longest environment the
    states name, else that prefix."""
    env, _, tool = name.partition(SEPARATOR)
    if variant == "strict":
        env, tool = split_name(name, envs) or (env, tool)
    return Call(env=env, name=tool, **fields)


def score_recorded(episode: RecordedEpisode, settings: RewardSettings) -> RewardBreakdown:
    """`composite_reward` of a recorded episode (its `alpha`, when it has one, replaces
    the settings'). ValueError when `strict` lacks a state it needs."""
    if episode.alpha is not None:
        settings = settings.model_copy(update={"alpha": episode.alpha})
    if settings.variant == "strict" and episode.initial_states is None:
        raise ValueError("the strict reward needs initial_states")
    initial = episode.initial_states or {}
    envs = dict.fromkeys([*initial, *episode.gold_states, *episode.final_states])
    gold = [_recorded_call(g.name, envs, settings.variant, arguments=g.arguments,
                           masked_arguments=g.masked_arguments) for g in episode.gold_calls]
    solution = [_recorded_call(c.name, envs, settings.variant, arguments=c.arguments,
                               ok=c.ok) for c in episode.calls]
    return composite_reward(gold, solution, initial, episode.gold_states,
                            episode.final_states, unparseable_calls=episode.format_failures,
                            settings=settings)
