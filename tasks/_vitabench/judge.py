"""VitaBench's default `trajectory` evaluation: the sliding-window rubric judge (upstream
96f3b85 `evaluator.py` + `evaluator_traj.py`), on the harness's canonical messages.

One implementation for both entry points (the Inspect scorer and `envfactory vitabench
grade`). What upstream does, and this reproduces:

- A run that ended prematurely (upstream: TOO_MANY_ERRORS, MAX_STEPS,
  INVALID_AGENT_MESSAGE; here also the harness's error and limit endings) scores 0 and
  the judge is not called.
- Rubrics: every expected state's `state_rubrics`, then `overall_rubrics`, de-duplicated
  by exact string, keyed `rubric_0..n`; each starts unmet, "Not evaluated yet".
- The conversation is cut into windows of 10 messages overlapping by 2 (one window when it
  has at most 10); one judge call per window, in order, each seeing the current states.
- Window text: `[i] role: content` with 1-based global indices; an assistant's tool calls
  are appended as `name(k=repr(v), ...)` (several joined with "."); a message whose text is
  empty is left out but keeps its index and window slot.
- The reply is repaired with `json_repair` and decoded; each entry naming a known
  `rubric_idx` overwrites that rubric's justification and, when present, its
  `meetExpectation` — copied verbatim, as upstream, so a judge's `"true"` is shown back as
  a string and counts as met only through pydantic's bool coercion at the end.
- Reward 1 iff every rubric is met (and there is at least one); the met fraction is
  upstream's `reward_breakdown[NL_ASSERTION]`, kept as a diagnostic.

Where upstream raises (its run then fails), this keeps going: a reply that `json_repair`
turns into prose (`""`, json_repair >= 0.47), an object instead of a list, entries that are
not objects or whose `rubric_idx` is a list or object leave the states unchanged; a final
`meetExpectation` that pydantic cannot read as a bool (null, "maybe", a truncated "tr")
is unmet and a non-string justification is kept as given. Tasks with expected states but
no rubric at all (none in the 2025 data) would divide by zero upstream; here they score 0.
`tests/data/vitabench/official/judge_replies.json` records upstream on each such reply.

The prompt templates are the release's (`prompts/sliding_window_eval_template.yaml`).
"""

from __future__ import annotations

import importlib.metadata
import json
from typing import Any

from inspect_ai.model import Model
from json_repair import repair_json
from pydantic import BaseModel, TypeAdapter, ValidationError

from envs.vitabench.release import DEFAULT_REVISION, Language, release
from harness.generation_config import role_config
from harness.judge import judge_model, judge_reply
from harness.trajectory import Message
from tasks._vitabench.prompts import template, weekday

__all__ = ["JUDGE_TEMPERATURE", "JSON_REPAIR_VERSION", "OVERLAP", "PREMATURE", "WINDOW_SIZE",
           "JudgeResult", "RubricResult", "WindowResult", "judge_conversation", "rubrics",
           "window_user_prompt", "windows"]

WINDOW_SIZE = 10
OVERLAP = 2
#: `models.yaml`'s `default.temperature`, which every judge entry inherits (a temperature
#: set on the judge model or on the command line wins: `harness.generation_config.role_config`)
JUDGE_TEMPERATURE = 0.0
#: the parser decides what an odd reply means; upstream pins none, we pin this one
JSON_REPAIR_VERSION = importlib.metadata.version("json_repair")

#: endings that score 0 unjudged: upstream's three, and the harness's error/limit endings
#: (`harness.episode.Termination` values), which upstream has no counterpart for
PREMATURE = frozenset({"too_many_errors", "max_steps", "invalid_agent_message",
                       "agent_error", "user_error", "error", "limit", "turn_step_limit"})
#: endings that are judged (a scripted user running out of turns ends a conversation too)
JUDGED = frozenset({"user_stop", "agent_stop", "turns_done"})

_NOT_EVALUATED = "Not evaluated yet"
_NO_JUSTIFICATION = "No justification provided"
_BOOL = TypeAdapter(bool)


class RubricResult(BaseModel):
    """One rubric's final state."""

    #: position in the de-duplicated list (upstream's key is `rubric_<index>`)
    index: int
    rubric: str
    #: `meet_expectation` read as upstream's `NLRubricCheck.met` reads it
    met: bool
    #: the judge's last `meetExpectation`, verbatim (False until it gave one)
    meet_expectation: Any = False
    #: the judge's last justification, verbatim
    justification: Any = _NOT_EVALUATED


class WindowResult(BaseModel):
    """One judge call."""

    #: 1-based, as the prompt's "window i of n"
    index: int
    #: 1-based global indices of the window's first and last message (inclusive)
    start: int
    end: int
    #: the reply decoded to a non-empty list (else the states were kept)
    reply_parsed: bool
    #: entries of the reply that named a rubric and updated it
    applied: int
    reply: str


class JudgeResult(BaseModel):
    reward: float
    #: fraction of rubrics met (None when the judge did not run)
    met_fraction: float | None
    rubrics: list[RubricResult]
    windows: list[WindowResult]
    termination: str
    #: why the judge did not run, when it did not
    note: str | None = None
    json_repair: str = JSON_REPAIR_VERSION


def rubrics(task: dict[str, Any]) -> list[str]:
    """The task's rubrics as upstream's `_initialize_rubric_states` lists them."""
    criteria = task.get("evaluation_criteria") or {}
    listed = [r for state in criteria.get("expected_states") or []
              for r in state.get("state_rubrics") or []]
    listed += criteria.get("overall_rubrics") or []
    return list(dict.fromkeys(listed))


def windows(count: int) -> list[tuple[int, int]]:
    """0-based `[start, end)` of each window over `count` messages."""
    if count <= WINDOW_SIZE:
        return [(0, count)]
    step = WINDOW_SIZE - OVERLAP
    out, start = [], 0
    while start < count:
        out.append((start, min(start + WINDOW_SIZE, count)))
        if start + WINDOW_SIZE >= count:
            break
        start += step
    return out


def env_info(task: dict[str, Any], language: Language) -> dict[str, Any]:
    """Upstream's `env_info`: the task time and its weekday; the database is never shown."""
    info: dict[str, Any] = {"system_time": "", "database": []}
    time = (task.get("environment") or {}).get("time", "")
    if time:
        info["system_time"] = f"{time} {weekday(time, language)}"
    return info


def _line(message: Message, index: int) -> str | None:
    text = message.content
    if message.role == "assistant" and message.tool_calls:
        calls = ".".join(
            f"{c.name}({', '.join(f'{k}={v!r}' for k, v in c.arguments.items())})"
            for c in message.tool_calls)
        text = f"{text} {calls}" if text else calls
    return f"[{index}] {message.role}: {text}" if text else None


def window_user_prompt(messages: list[Message], start: int,
                       states: list[dict[str, Any]]) -> str:
    """The user prompt of the window whose first message has 0-based index `start`."""
    lines = [line for i, m in enumerate(messages) if (line := _line(m, start + i + 1))]
    current = json.dumps(
        [{"rubric_idx": f"rubric_{i}", "rubric": s["rubric"],
          "justification": s["justification"], "meetExpectation": s["meetExpectation"]}
         for i, s in enumerate(states)], ensure_ascii=False, indent=2)
    return (f"\n# Input\n<window_content>\n{chr(10).join(lines)}\n</window_content>\n\n"
            f"<current_rubrics>\n{current}\n</current_rubrics>\n")


def _apply(reply: str, states: list[dict[str, Any]]) -> tuple[bool, int]:
    """Upstream's update of the states from one reply: whether it decoded to a non-empty
    list (else the states are kept), and how many of its entries updated a rubric."""
    try:
        data = json.loads(repair_json(reply))
    except (TypeError, ValueError):  # json.JSONDecodeError is a ValueError
        return False, 0
    if not data or not isinstance(data, list):
        return False, 0
    keys = {f"rubric_{i}": s for i, s in enumerate(states)}
    applied = 0
    for entry in data:
        if not isinstance(entry, dict):
            continue
        key = entry.get("rubric_idx")
        if isinstance(key, str) and key in keys:
            state = keys[key]
            state["justification"] = entry.get("justification", _NO_JUSTIFICATION)
            state["meetExpectation"] = entry.get("meetExpectation", state["meetExpectation"])
            applied += 1
    return True, applied


def _met(value: Any) -> bool:
    try:
        return _BOOL.validate_python(value)
    except ValidationError:
        return False


async def judge_conversation(messages: list[Message], task: dict[str, Any],
                             language: Language, model: str | Model | None,
                             termination: str, *,
                             revision: str = DEFAULT_REVISION) -> JudgeResult:
    """Grade one conversation as upstream's `evaluate_simulation(..., "trajectory")`.

    `messages` is the conversation from the agent's greeting on (system messages, which
    upstream's trajectory never holds, are left out); `task` is the release's task object;
    `model` the judge (None: the `judge` model role, which must be set); `termination`
    a `harness.episode.Termination` value or upstream's `TerminationReason` name.

    Raises:
        ValueError: an unknown termination.
        harness.judge.JudgeNotSetError: a judged run with no judge.
    """
    termination = str(termination)
    if termination in PREMATURE:
        return JudgeResult(reward=0.0, met_fraction=None, rubrics=[], windows=[],
                           termination=termination,
                           note=f"terminated prematurely ({termination}): reward 0")
    if termination not in JUDGED:
        raise ValueError(f"unknown termination {termination!r}; known: "
                         f"{', '.join(sorted(PREMATURE | JUDGED))}")
    criteria = task.get("evaluation_criteria")
    if not criteria or not (criteria.get("expected_states") or criteria.get("overall_rubrics")):
        return JudgeResult(reward=1.0, met_fraction=1.0, rubrics=[], windows=[],
                           termination=termination, note="no rubric to evaluate: reward 1")
    states: list[dict[str, Any]] = [
        {"rubric": r, "justification": _NOT_EVALUATED, "meetExpectation": False}
        for r in rubrics(task)]
    trajectory = [m for m in messages if m.role != "system"]
    window_template = template(release(revision), "sliding_window_eval_template", language)
    info, instruction = env_info(task, language), task["instructions"]
    spans = windows(len(trajectory))
    judge = judge_model(model)
    config = role_config(judge, JUDGE_TEMPERATURE)
    results = []
    for number, (start, end) in enumerate(spans, 1):
        system = window_template.format(env_info=info, user_instruction=instruction,
                                 window_idx=number, total_windows=len(spans))
        prompt = window_user_prompt(trajectory[start:end], start, states)
        reply = await judge_reply(judge, system, prompt, config)
        parsed, applied = _apply(reply, states)
        results.append(WindowResult(index=number, start=start + 1, end=end,
                                    reply_parsed=parsed, applied=applied, reply=reply))
    checks = [RubricResult(index=i, rubric=s["rubric"], met=_met(s["meetExpectation"]),
                           meet_expectation=s["meetExpectation"],
                           justification=s["justification"])
              for i, s in enumerate(states)]
    met = sum(c.met for c in checks)
    all_met = bool(checks) and met == len(checks)
    return JudgeResult(reward=1.0 if all_met else 0.0,
                       met_fraction=met / len(checks) if checks else 0.0,
                       rubrics=checks, windows=results, termination=termination)
