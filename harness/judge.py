"""The one judge helper: every LLM-as-judge call (τ²'s NL assertions, VitaBench's rubrics,
MCP-Atlas's claim coverage) gets its model from `judge_model` and its answer from
`judge_json` (or, for a benchmark that parses answers its own way, the raw text from
`judge_reply`).

Why not `get_model(role="judge")`: in Inspect 0.3.285, when no model is bound to the role
it silently returns the model under test, so a run without `--model-role judge=...`
would have the agent grade itself and nothing in the log would say so. `judge_model`
reads the bound roles (`model_roles()`) and refuses instead.

A model that cannot judge is refused too: `envfactory/oracle` and `envfactory/replay`
answer only the calls of an episode, from what its loop published (gold or recorded
messages), and a judge call is not one of them (`unfit_judge`). Where our code turns a
model string into a model (`model_errors`), Inspect's errors — an unknown provider, a
missing API key, both shown by Inspect as a long traceback — become one line naming the
role and the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
    model_roles,
)

# not rendering: Inspect writes PrerequisiteError messages in rich markup, and rich's own
# parser is what reads them back as plain text (`_one_line`)
from rich.text import Text

from harness.inspect_compat import PrerequisiteError

__all__ = ["JUDGE_ROLE", "JudgeNotSetError", "ModelUnavailableError", "UnfitJudgeError",
           "UnknownModelError", "check_bound_judge", "judge_json", "judge_model",
           "judge_reply", "model_errors", "parse_json_answer", "unfit_judge"]

JUDGE_ROLE = "judge"
#: models that play an episode's published messages, so have nothing to answer a judge with
_EPISODE_PLAYERS = ("envfactory/oracle", "envfactory/replay")

_FENCED = re.compile(r"```[ \t]*(?:json)?[ \t]*\n?(.*?)```", re.DOTALL | re.IGNORECASE)


class JudgeNotSetError(RuntimeError):
    """No judge model was given and none is bound to the `judge` model role."""


class UnknownModelError(ValueError):
    """A model string Inspect has no provider for (one line: role, model, Inspect's why)."""


class ModelUnavailableError(ValueError):
    """A model whose provider cannot start here, e.g. without its API key (one line)."""


class UnfitJudgeError(PrerequisiteError, ValueError):
    """A judge that cannot judge (Inspect prints it alone when a task is built)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.args = (message,)


def unfit_judge(model: str | Model) -> str | None:
    """Why `model` cannot judge (None when it can): the episode players answer only the
    calls of an episode."""
    name = str(model)
    if name not in _EPISODE_PLAYERS:
        return None
    return (f"{name} cannot judge: it plays an episode's gold or recorded messages, and a "
            f"judge call is not part of the episode; judge with an LLM (any Inspect model, "
            f"e.g. openai/<name>, vllm/<name>, hf/<path>), or envfactory/script -M "
            f"path=FILE for an offline plumbing check")


def _one_line(message: object) -> str:
    """Inspect's message (rich markup, several lines) as plain text on one line."""
    text = Text.from_markup(message) if isinstance(message, str) else Text(str(message))
    return " ".join(text.plain.replace("ERROR:", "").split())


@contextmanager
def model_errors(role: str, model: str) -> Iterator[None]:
    """Inspect's errors while making the `role` model from the string `model`, as one
    line naming both: an unknown provider (`UnknownModelError`) or a provider that cannot
    start, e.g. without its API key (`ModelUnavailableError`)."""
    try:
        yield
    except (UnfitJudgeError, UnknownModelError, ModelUnavailableError):
        raise
    except PrerequisiteError as e:
        raise ModelUnavailableError(
            f"the {role} model {model} cannot start: {_one_line(e.message)}") from None
    except ValueError as e:
        raise UnknownModelError(f"the {role} model {model!r}: {_one_line(e)}") from None


def _fit(model: Model) -> Model:
    if (reason := unfit_judge(model)) is not None:
        raise UnfitJudgeError(reason)
    return model


def check_bound_judge() -> None:
    """For a task being built: refuse a `judge` role bound to a model that cannot judge
    (`UnfitJudgeError`, which Inspect prints as one line, exit 1, before any sample).
    `inspect eval` binds the roles before it builds its tasks; a task built in Python
    before `eval()` sees none bound, and `judge_model` checks the judge when first asked."""
    bound = model_roles().get(JUDGE_ROLE)
    if isinstance(bound, Model):
        _fit(bound)


def judge_model(model: str | Model | None = None) -> Model:
    """The judge: `model` when given, else the model bound to the `judge` role.

    Call it inside an eval (sample, solver or scorer), where the roles are bound; a
    task that must not run its agent without a judge can call it first thing.

    Raises:
        JudgeNotSetError: neither is set (never falls back to the model under test).
        UnfitJudgeError: the model cannot judge (`unfit_judge`).
        UnknownModelError, ModelUnavailableError: a model string Inspect cannot make.
    """
    if isinstance(model, str):
        if (reason := unfit_judge(model)) is not None:  # before its provider asks for args
            raise UnfitJudgeError(reason)
        with model_errors(JUDGE_ROLE, model):
            return get_model(model)
    if model is not None:
        return _fit(model)
    if not model_roles().get(JUDGE_ROLE):
        raise JudgeNotSetError(
            f"no judge model: this task is graded by the '{JUDGE_ROLE}' model role, which "
            f"is not set; pass it as `inspect eval ... --model-role {JUDGE_ROLE}=<model>` "
            f"(Python: `eval(..., model_roles={{'{JUDGE_ROLE}': <model>}})`)"
        )
    return _fit(get_model(role=JUDGE_ROLE, required=True))


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
