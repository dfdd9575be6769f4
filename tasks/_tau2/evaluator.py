"""τ² reward, v0.2 semantics, reimplemented: one function for the Inspect scorer and for
`envfactory tau2 grade`.

* Termination by MAX_STEPS or TOO_MANY_ERRORS → 0 (v0.x zeroes only these), and by an
  Inspect limit (tokens, time, messages), which leaves the conversation unfinished.
* No evaluation criteria → 1.
* DB: replay *every* recorded tool call that ran (either side; a call whose arguments
  could not be parsed was refused live and is not replayed) on a fresh, initialised world →
  the predicted world; replay the gold actions on another fresh world (failures are
  swallowed, as upstream) → the gold world; match iff the agent DB hashes and the user
  DB hashes are equal. Env assertions run on the predicted world.
* ACTION: each gold action matched by some recorded tool call (either side).
* COMMUNICATE: each string appears (case-insensitive, commas dropped from the message)
  in some single assistant message.
* NL_ASSERTION: judged by a model (Inspect role `judge`) only when the basis asks.
* Reward = product of the components named in `reward_basis`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from envs.tau2.tasks import RewardType, Task
from envs.tau2.world import Tau2World
from harness.episode import Termination
from harness.trajectory import Message
from tasks._tau2.messages import ZEROING

__all__ = ["RewardInfo", "evaluate"]

Judge = Callable[[list[Message], list[str]], Awaitable[list[dict[str, Any]]]]


class Check(BaseModel):
    name: str
    met: bool
    detail: str = ""


class RewardInfo(BaseModel):
    reward: float
    termination_reason: str
    db_match: bool | None = None
    env_assertions: list[Check] = Field(default_factory=list)
    action_checks: list[Check] = Field(default_factory=list)
    communicate_checks: list[Check] = Field(default_factory=list)
    nl_assertions: list[Check] = Field(default_factory=list)
    reward_basis: list[str] = Field(default_factory=list)
    reward_breakdown: dict[str, float] = Field(default_factory=dict)
    info: dict[str, Any] = Field(default_factory=dict)


def _replay(world: Tau2World, messages: Sequence[Message]) -> list[str]:
    """Re-run every recorded tool call; returns outputs that differ from the record."""
    from envs.tau2.base import tau2_text

    recorded = {m.tool_call_id: m.content for m in messages if m.role == "tool"}
    mismatches = []
    for message in messages:
        for call in message.tool_calls or []:
            if call.parse_error is not None:  # never executed live: not replayed either
                continue
            text = tau2_text(world.execute(call.requestor, call.name, call.arguments))
            if call.id in recorded and not _same_output(recorded[call.id], text):
                mismatches.append(f"{call.name} ({call.id})")
    return mismatches


def _same_output(recorded: str | None, replayed: str) -> bool:
    if recorded == replayed:
        return True
    try:
        return bool(json.loads(recorded or "") == json.loads(replayed))
    except json.JSONDecodeError:
        return False


def _db_and_assertions(task: Task, domain: str,
                       messages: Sequence[Message]) -> tuple[bool, list[Check], dict[str, Any]]:
    criteria = task.evaluation_criteria
    assert criteria is not None
    info: dict[str, Any] = {}
    predicted = Tau2World(domain)
    predicted.initialize(task.initial_state)
    mismatches = _replay(predicted, messages)
    if mismatches:
        info["replay_output_mismatches"] = mismatches
    gold = Tau2World(domain)
    gold.initialize(task.initial_state)
    failed = []
    for action in criteria.actions or []:
        result = gold.execute(action.requestor, action.name, action.arguments)
        if not result.ok:
            failed.append(f"{action.action_id}: {result.error}")
    if failed:
        info["failed_gold_actions"] = failed
    db_match = predicted.db_hashes() == gold.db_hashes()
    checks = []
    for assertion in criteria.env_assertions or []:
        env = predicted.env(assertion.env_type)
        try:
            value = env.run_function(assertion.func_name, assertion.arguments) if env else None
            met = value == assertion.assert_value
        except Exception as e:  # noqa: BLE001 - an assertion that cannot run is not met
            met, value = False, f"{type(e).__name__}: {e}"
        checks.append(Check(name=assertion.func_name, met=met,
                            detail=assertion.message or f"returned {value!r}"))
    return db_match, checks, info


def _communicated(messages: Sequence[Message], info: list[str]) -> list[Check]:
    texts = [m.content for m in messages if m.role == "assistant" and m.content]
    return [Check(name=s, met=any(s.lower() in t.lower().replace(",", "") for t in texts))
            for s in info]


def _actions(task: Task, messages: Sequence[Message]) -> list[Check]:
    calls = [c for m in messages for c in m.tool_calls or []]
    criteria = task.evaluation_criteria
    assert criteria is not None
    return [Check(name=a.action_id, met=any(a.matches(c.name, c.arguments) for c in calls))
            for a in criteria.actions or []]


async def evaluate(task: Task, domain: str, messages: Sequence[Message],
                   termination_reason: Termination,
                   judge: Judge | None = None) -> RewardInfo:
    """The v0.2 reward of one conversation, with per-component results."""
    reason = Termination(termination_reason)
    if reason in ZEROING:
        return RewardInfo(reward=0.0, termination_reason=reason.value,
                          info={"note": f"terminated by {reason.value}: reward 0"})
    criteria = task.evaluation_criteria
    if criteria is None:
        return RewardInfo(reward=1.0, termination_reason=reason.value,
                          info={"note": "no evaluation criteria"})
    basis = [RewardType(b) for b in criteria.reward_basis]
    out = RewardInfo(reward=1.0, termination_reason=reason.value,
                     reward_basis=[b.value for b in basis])
    breakdown: dict[str, float] = {}
    if criteria.actions is None and criteria.env_assertions is None:
        out.db_match = True
        db_reward, env_reward = 1.0, 1.0
    else:
        out.db_match, out.env_assertions, out.info = _db_and_assertions(task, domain, messages)
        db_reward = float(out.db_match)
        env_reward = float(all(c.met for c in out.env_assertions))
    if RewardType.DB in basis:
        breakdown["DB"] = db_reward
    if RewardType.ENV_ASSERTION in basis:
        breakdown["ENV_ASSERTION"] = env_reward
    out.action_checks = _actions(task, messages)
    if RewardType.ACTION in basis:
        breakdown["ACTION"] = float(all(c.met for c in out.action_checks))
    out.communicate_checks = _communicated(messages, criteria.communicate_info or [])
    if RewardType.COMMUNICATE in basis:
        breakdown["COMMUNICATE"] = float(all(c.met for c in out.communicate_checks))
    if RewardType.NL_ASSERTION in basis:
        assertions = criteria.nl_assertions or []
        if assertions and judge is None:
            raise ValueError(f"task {task.id}: reward basis needs NL assertions but no judge "
                             "model is configured (set the `judge` model role)")
        results = await judge(list(messages), assertions) if assertions and judge else []
        out.nl_assertions = [Check(name=r.get("expectedOutcome", a),
                                   met=bool(r.get("metExpectation")),
                                   detail=str(r.get("reasoning", "")))
                             for a, r in zip(assertions, results, strict=False)]
        breakdown["NL_ASSERTION"] = float(
            len(out.nl_assertions) == len(assertions) and all(c.met for c in out.nl_assertions))
    out.reward_breakdown = breakdown
    reward = 1.0
    for value in breakdown.values():
        reward *= value
    out.reward = reward
    return out
