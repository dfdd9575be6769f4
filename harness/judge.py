"""The one judge helper: every LLM-as-judge call (τ²'s NL assertions, VitaBench's rubrics,
MCP-Atlas's claim coverage) gets its model from `judge_model` and its answer from
`judge_json` (or, for a benchmark that parses answers its own way, the raw text from
`judge_reply`).

Why not `get_model(role="judge")`: in Inspect 0.3.285, when no model is bound to the role
it silently returns the model under test, so a run without `--model-role judge=...`
would have the agent grade itself and nothing in the log would say so. `judge_model`
reads the bound roles (`model_roles()`) and refuses instead.
"""

from __future__ import annotations

import json
import re
from typing import Any

from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
    model_roles,
)

__all__ = ["JUDGE_ROLE", "JudgeNotSetError", "judge_json", "judge_model", "judge_reply",
           "parse_json_answer"]

JUDGE_ROLE = "judge"

_FENCED = re.compile(r"```[ \t]*(?:json)?[ \t]*\n?(.*?)```", re.DOTALL | re.IGNORECASE)


class JudgeNotSetError(RuntimeError):
    """No judge model was given and none is bound to the `judge` model role."""


def judge_model(model: str | Model | None = None) -> Model:
    """The judge: `model` when given, else the model bound to the `judge` role.

    Call it inside an eval (sample, solver or scorer), where the roles are bound; a
    task that must not run its agent without a judge can call it first thing.

    Raises:
        JudgeNotSetError: neither is set (never falls back to the model under test).
    """
    if model is not None:
        return get_model(model)
    if not model_roles().get(JUDGE_ROLE):
        raise JudgeNotSetError(
            f"no judge model: this task is graded by the '{JUDGE_ROLE}' model role, which "
            f"is not set; pass it as `inspect eval ... --model-role {JUDGE_ROLE}=<model>` "
            f"(Python: `eval(..., model_roles={{'{JUDGE_ROLE}': <model>}})`)"
        )
    return get_model(role=JUDGE_ROLE, required=True)


def parse_json_answer(text: str) -> dict[str, Any] | list[Any] | None:
    """The JSON object or array in a judge's answer, else None.

    Tried in order: the whole text, the first ``` / ```json fenced block, the first
    object or array embedded in prose. Scalars count as unparseable: every judge here
    answers with a structure.
    """
    candidates = [text.strip()]
    if fenced := _FENCED.search(text):
        candidates.append(fenced.group(1).strip())
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict | list):
            return value
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(text) if ch in "{["):
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict | list):
            return value
    return None


async def judge_reply(
    model: str | Model | None,
    system: str,
    prompt: str,
    config: GenerateConfig | None = None,
) -> str:
    """One judge call: `system` and `prompt` to `judge_model(model)`; the answer's text.

    `config` is the benchmark's judge sampling (e.g. temperature 0); None keeps the
    judge model's own.

    Raises:
        JudgeNotSetError: no `model` and no `judge` role.
    """
    output = await judge_model(model).generate(
        [ChatMessageSystem(content=system), ChatMessageUser(content=prompt)],
        config=config or GenerateConfig(),
    )
    return output.completion


async def judge_json(
    model: str | Model | None,
    system: str,
    prompt: str,
    config: GenerateConfig | None = None,
) -> dict[str, Any] | list[Any] | None:
    """`judge_reply`'s answer parsed by `parse_json_answer` (None when unparseable; the
    caller decides what that scores).

    Raises:
        JudgeNotSetError: no `model` and no `judge` role.
    """
    return parse_json_answer(await judge_reply(model, system, prompt, config))
