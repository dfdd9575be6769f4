"""One chain -> one trajectory (or a rejection with a stable reason): QueryGen's per-chain loop.

Our pipeline (`pipeline="ours"`; the release's is `release_pipeline`). For each turn of
the chain: the query generator writes what the user says (optionally refined), k solver
rollouts run from the turn's start state, the candidates that pass and agree on the final
state are the accepted ones, the selector picks one of them, and its calls become the
turn's gold calls. The finished trajectory must pass `synthesis.task_specs.check`, the
same validator as the hand-written tasks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    Model,
    get_model,
)
from inspect_ai.tool import ToolCall

import synthesis.querygen.agents as agents
from envs import registry
from envs.world import World
from harness.trajectory import Call, Message, Provenance, Trajectory, Turn
from synthesis.chain import ToolChain
from synthesis.querygen.agents import AgentError
from synthesis.querygen.config import QueryGenConfig
from synthesis.querygen.outcome import Kept, Outcome, Rejected
from synthesis.querygen.prompts import USER_SIMULATOR, USER_STOP
from synthesis.querygen.release_pipeline import release_synthesize
from synthesis.querygen.rollout import Candidate, UserPlay, rollout, run_isolated
from synthesis.querygen.select import agreeing, passes
from synthesis.task_specs import check

__all__ = ["ROLES", "Kept", "Outcome", "Rejected", "resolve_models", "synthesize"]

#: the model roles QueryGen uses (contract 5)
ROLES = ("synth", "solver", "user", "judge")




class _Reject(Exception):
    def __init__(self, reason: str, detail: str, turn: int | None = None) -> None:
        super().__init__(detail)
        self.outcome = Rejected(reason=reason, detail=detail, turn=turn)


def resolve_models(config: QueryGenConfig, models: Mapping[str, Model] | None = None
                   ) -> dict[str, Model]:
    """The model of each role the config needs: a given one, else Inspect's model for the
    role (the eval's `model_roles`), else the active model."""
    given = dict(models or {})
    roles = ROLES if config.user_interaction else ("synth", "solver")
    return {role: given.get(role) or get_model(role=role) for role in roles}


async def synthesize(chain: ToolChain, config: QueryGenConfig, *, traj_id: str,
                     models: Mapping[str, Model] | None = None) -> Outcome:
    """Turn `chain` into a checked trajectory, or say why not (never raises for a bad
    model reply or a failed turn)."""
    try:
        resolved = resolve_models(config, models)
        if config.pipeline == "release":
            return await release_synthesize(chain, config, traj_id=traj_id, models=resolved)
        return await _synthesize(chain, config, traj_id, resolved)
    except _Reject as r:
        return r.outcome
    except AgentError as e:
        reason = ("initial_state_invalid" if e.agent.startswith("state writer")
                  else "malformed_reply")
        return Rejected(reason=reason, detail=str(e))
    except Exception as e:  # noqa: BLE001 - a provider error rejects this chain only
        return Rejected(reason="model_error", detail=repr(e))


def _spec(env: str, tool: str) -> Any:
    return next(s for s in registry.get(env).specs() if s.name == tool)


@dataclass
class _Story:
    """What the synthesis agent planned for the whole chain: who the user is, their
    situation, and the world the first turn starts from."""

    persona: str
    scenario: str
    initial: dict[str, dict[str, Any]]


@dataclass
class _Progress:
    """What the accepted turns so far leave for the next turn and for the trajectory."""

    state: dict[str, dict[str, Any]]
    transcript: str = ""
    history: list[ChatMessage] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    recorded: list[Message] = field(default_factory=list)
    rates: list[float] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)


async def _synthesize(chain: ToolChain, config: QueryGenConfig, traj_id: str,
                      models: dict[str, Model]) -> Kept:
    story = await _plan(chain, config, models["synth"])
    progress = _Progress(state=story.initial)
    for t in range(len(chain.turns)):
        await _turn(chain, config, models, story, progress, t)
    _renumber_call_ids(progress.recorded)
    trajectory = _trajectory(chain, config, models, story, progress, traj_id)
    problems = check(trajectory)
    if problems:
        raise _Reject("check_failed", "; ".join(problems))
    return Kept(trajectory=trajectory, accept_rate=sum(progress.rates) / len(progress.rates))


async def _plan(chain: ToolChain, config: QueryGenConfig, synth: Model) -> _Story:
    """Persona and scenario for the chain's tools, and the initial state (the
    environments' own, or written by the model for the scenario)."""
    envs, retries = chain.environments, config.retries
    persona, scenario = await agents.plan(
        synth, envs, [_spec(s.env, s.tool).description for s in chain.steps], retries)
    initial = World(envs).snapshot()
    if config.initial_state == "llm":
        initial = {e: await agents.write_state(synth, e, scenario, initial[e], retries)
                   for e in envs}
    return _Story(persona=persona, scenario=scenario, initial=initial)


async def _turn(chain: ToolChain, config: QueryGenConfig, models: dict[str, Model],
                story: _Story, progress: _Progress, t: int) -> None:
    """Turn `t`: the query (refined when asked), k rollouts from the turn's start state,
    one of the passing, agreeing candidates chosen (and judged, filtered) and recorded;
    `_Reject` when the turn cannot be accepted."""
    synth, retries = models["synth"], config.retries
    steps = chain.turn_steps(t)
    tools = "\n".join(f"- {s.qualified}: {_spec(s.env, s.tool).description} "
                      f"arguments {json.dumps(_spec(s.env, s.tool).parameters)}"
                      for s in steps)
    intent, query = await agents.write_query(
        synth, persona=story.persona, scenario=story.scenario, history=progress.transcript,
        state=progress.state, tools=tools, retries=retries)
    if config.refine:
        query, used = await agents.refine(synth, query, progress.transcript, retries)
        progress.patterns += [p for p in used if p not in progress.patterns]
    user = None
    if config.user_interaction:
        user = UserPlay(models["user"], USER_SIMULATOR.format(
            persona=story.persona, scenario=story.scenario, intent=intent, query=query,
            hidden=json.dumps(progress.state, ensure_ascii=False), stop=USER_STOP),
            config.max_user_messages)
    chosen, rate = await _choose(chain.environments, config, models, progress, query, user,
                                 [(s.env, s.tool) for s in steps], t)
    if config.user_interaction:
        ok, why = await agents.judge(models["judge"], intent, _conversation(chosen.messages),
                                     retries)
        if not ok:
            raise _Reject("judge_failed", why, t)
    masked: list[list[str]] = [[] for _ in chosen.calls]
    if config.filter_steps:
        keep, masked = await agents.filter_steps(synth, query, chosen.calls, retries)
        if not keep:
            raise _Reject("filtered", "the step filter dropped the turn", t)
    said = "\n".join(chosen.user_messages) if user is not None else query
    progress.turns.append(Turn(user=said, gold_calls=[
        Call(env=c.env, name=c.name, arguments=c.arguments, masked_arguments=m)
        for c, m in zip(chosen.calls, masked, strict=True)],
        gold_state_after=chosen.final_state))
    progress.rates.append(rate)
    assert chosen.final_state is not None  # passes() requires it
    progress.state = chosen.final_state
    progress.history = progress.history + _chat(chosen.messages)
    # the chosen candidate's exchange (what SFT exports train on); the simulated user's
    # stop message ends the turn and was never shown to the solver
    progress.recorded += [m.model_copy(update={"turn": t}, deep=True) for m in chosen.messages
                          if not (m.role == "user" and USER_STOP in (m.content or ""))]
    progress.transcript += _conversation(chosen.messages) + "\n"


async def _choose(envs: list[str], config: QueryGenConfig, models: dict[str, Model],
                  progress: _Progress, query: str, user: UserPlay | None,
                  targets: list[tuple[str, str]], t: int) -> tuple[Candidate, float]:
    """k isolated rollouts of the turn; the selector's pick among the passing candidates
    that agree on the final state, with the accepted share of k."""
    job = partial(rollout, envs, progress.state, progress.history, query, models["solver"],
                  config.max_solve, user)
    candidates: list[Candidate] = await run_isolated([job] * config.pass_k)
    passing = [c for c in candidates if passes(c, targets)]
    if not passing:
        raise _Reject("no_candidate_passed", "endings: " + ", ".join(
            str(c.termination) for c in candidates), t)
    group = [passing[i] for i in agreeing(passing)]
    if not group:
        raise _Reject("candidates_disagree",
                      f"{len(passing)} passing candidates, no two with the same final state", t)
    chosen = group[await agents.select(models["synth"], query, [_describe(c) for c in group],
                                       config.retries)]
    return chosen, len(group) / config.pass_k


def _trajectory(chain: ToolChain, config: QueryGenConfig, models: dict[str, Model],
                story: _Story, progress: _Progress, traj_id: str) -> Trajectory:
    envs = chain.environments
    return Trajectory(
        id=traj_id, environments=envs, initial_state=story.initial, turns=progress.turns,
        final_state=progress.state, messages=progress.recorded,
        provenance=Provenance.model_validate(dict(
            source="querygen", split=config.split, patterns=progress.patterns,
            domain="+".join(sorted({getattr(registry.get(e).factory, "domain", "") or ""
                                    for e in envs})),
            model=models["solver"].name, preset=config.preset, seed=chain.seed,
            chain=chain.model_dump(mode="json"),
            models={r: str(m) for r, m in models.items()},
            accept_rate=sum(progress.rates) / len(progress.rates),
            turn_accept_rates=progress.rates, persona=story.persona, scenario=story.scenario,
            config=config.model_dump(mode="json"))))


def _renumber_call_ids(messages: list[Message]) -> None:
    """Tool-call ids as `call_<n>` in order of appearance: providers make them up (often at
    random), and a trajectory must be a function of the run's inputs, so that a resumed
    run writes the same bytes as an uninterrupted one."""
    ids: dict[str, str] = {}
    for m in messages:
        for c in m.tool_calls or []:
            c.id = ids.setdefault(c.id, f"call_{len(ids)}")
        if m.tool_call_id is not None:
            m.tool_call_id = ids.get(m.tool_call_id, m.tool_call_id)


def _describe(c: Candidate) -> str:
    calls = "\n".join(f"  {call.qualified_name}({json.dumps(call.arguments, ensure_ascii=False)})"
                      for call in c.calls)
    return f"calls:\n{calls}\nfinal answer: {c.answer or '(none)'}"


def _conversation(messages: list[Message]) -> str:
    lines = []
    for m in messages:
        if m.role == "user" and m.content:
            lines.append(f"User: {m.content}")
        elif m.role == "assistant":
            for c in m.tool_calls or []:
                args = json.dumps(c.arguments, ensure_ascii=False)
                lines.append(f"Assistant calls {c.name}({args})")
            if m.content:
                lines.append(f"Assistant: {m.content}")
        elif m.role == "tool":
            lines.append(f"Result: {m.content}")
    return "\n".join(lines)


def _chat(messages: list[Message]) -> list[ChatMessage]:
    """A finished turn as the next turn's solver history."""
    out: list[ChatMessage] = []
    for m in messages:
        if m.role == "user" and m.content and USER_STOP not in m.content:
            out.append(ChatMessageUser(content=m.content))
        elif m.role == "assistant":
            out.append(ChatMessageAssistant(content=m.content or "", tool_calls=[
                ToolCall(id=c.id, function=c.name, arguments=c.arguments)
                for c in m.tool_calls or []] or None))
        elif m.role == "tool":
            out.append(ChatMessageTool(content=m.content or "", tool_call_id=m.tool_call_id))
    return out
