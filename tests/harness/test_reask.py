"""`harness.reask.ask_until_valid`: a refused reply is shown back with its reason."""

from __future__ import annotations

import asyncio

from inspect_ai.model import ChatMessageUser

from harness.reask import ask_until_valid
from testkit.scripted import answers


def _number(text: str) -> int:
    if not text.strip().isdigit():
        raise ValueError(f"{text!r} is not a number")
    return int(text)


def test_a_refused_reply_is_answered_with_its_reason_then_accepted() -> None:
    model = answers("seven", "7")
    asked = asyncio.run(ask_until_valid(
        model.model, [ChatMessageUser(content="A number?")], _number, attempts=3,
        again="No: {problem}. Again."))
    assert (asked.value, asked.attempts, asked.problem) == (7, 2, None)
    assert asked.tokens > 0
    second = model.requests[1].messages
    assert [m.role for m in second] == ["user", "assistant", "user"]
    assert second[1].text == "seven"
    assert second[2].text == "No: 'seven' is not a number. Again."


def test_every_attempt_refused_gives_no_value_and_the_last_reason() -> None:
    model = answers("x", "y")
    asked = asyncio.run(ask_until_valid(
        model.model, [ChatMessageUser(content="A number?")], _number, attempts=2,
        again="{problem}"))
    assert (asked.value, asked.attempts, asked.problem) == (None, 2, "'y' is not a number")
