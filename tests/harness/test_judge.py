"""The judge helper: no silent fallback to the model under test, JSON answers parsed
leniently, and calls made inside real Inspect evals (mockllm, offline)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, GenerateConfig, Model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from harness.judge import JudgeNotSetError, judge_json, judge_model, parse_json_answer
from testkit.scripted import answers


@pytest.mark.parametrize("text, expected", [
    ('{"met": true}', {"met": True}),
    ('```json\n{"results": [1, 2]}\n```', {"results": [1, 2]}),
    ("```\n[1, 2]\n```", [1, 2]),
    ('```JSON {"a": 1}```', {"a": 1}),
    ('Here is my verdict:\n{"score": 0.5}\nThanks.', {"score": 0.5}),
    ('[note] the answer: {"score": 1}', {"score": 1}),
    ('{"score": ', None),
    ("I cannot grade this.", None),
    ("true", None),
    ("", None),
])
def test_parse_json_answer(text: str, expected: Any) -> None:
    assert parse_json_answer(text) == expected


def scripted(*replies: str) -> Model:
    """A model that answers `replies` in turn."""
    return answers(*replies).model


def test_explicit_model_needs_no_role() -> None:
    judge = scripted('```json\n{"met": true}\n```', "no idea")
    assert judge_model(judge) is judge
    assert asyncio.run(judge_json(judge, "sys", "prompt")) == {"met": True}
    assert asyncio.run(judge_json(judge, "sys", "prompt", GenerateConfig(temperature=0))) is None


# --- inside Inspect -------------------------------------------------------------------

@scorer(metrics=[mean()])
def judged() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        verdict = await judge_json(None, "You grade.", f"Grade: {state.input_text}")
        return Score(value=float(verdict["met"]) if isinstance(verdict, dict) else 0.0)

    return score


def run(tmp_path: Path, roles: dict[str, Model] | None) -> EvalLog:
    # the model under test answers valid verdict JSON, so a fallback to it would pass
    agent = scripted('{"met": true}', '{"met": true}')
    task = Task(dataset=[Sample(input="the answer")], scorer=judged())
    [log] = eval(task, model=agent, model_roles=roles, log_dir=str(tmp_path), display="none")
    return log


def test_missing_judge_role_is_an_error_not_the_model_under_test(tmp_path: Path) -> None:
    log = run(tmp_path, roles=None)
    assert log.status == "error"
    assert log.error is not None
    assert "JudgeNotSetError" in log.error.traceback
    assert "--model-role judge=" in log.error.message


def test_judge_role_grades_in_an_eval(tmp_path: Path) -> None:
    log = run(tmp_path, roles={"judge": scripted('```json\n{"met": false}\n```')})
    assert log.status == "success", log.error
    [sample] = log.samples or []
    assert sample.scores is not None and sample.scores["judged"].value == 0.0  # the judge's
    judge_calls = [e for e in sample.events if e.event == "model" and e.role == "judge"]
    [call] = judge_calls
    sent: list[ChatMessage] = call.input
    assert [(m.role, m.text) for m in sent] == [
        ("system", "You grade."), ("user", "Grade: the answer")]


def test_judge_model_outside_an_eval_has_no_role() -> None:
    with pytest.raises(JudgeNotSetError, match="--model-role judge="):
        judge_model()
