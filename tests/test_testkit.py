"""The test kit itself: no product code imports it, scripted models answer as documented
(in turn, by conversation, fresh ids for repeated made-up calls, configs recorded), and
`wait_until` returns the condition's value or fails naming what it waited for."""

from __future__ import annotations

import ast
import asyncio
import time
from pathlib import Path

import pytest
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
)

from testkit.scripted import ScriptedModel, answers, by_own_turns, call, message
from testkit.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ["envs", "harness", "tasks", "synthesis", "training", "leaderboard", "envfactory"]


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_no_product_code_imports_the_kit() -> None:
    offenders = sorted(str(path.relative_to(ROOT)) for folder in PRODUCT
                       for path in (ROOT / folder).rglob("*.py")
                       if any(m == "testkit" or m.startswith("testkit.")
                              for m in imported_modules(path)))
    assert offenders == []


def ask(model: ScriptedModel, messages: list[ChatMessage],
        config: GenerateConfig | None = None) -> ModelOutput:
    return asyncio.run(model.model.generate(messages, config=config or GenerateConfig()))


def test_answers_come_in_turn_and_running_out_is_an_error() -> None:
    model = answers("one", "two")
    hello: list[ChatMessage] = [ChatMessageUser(content="hi")]
    assert [ask(model, hello).completion for _ in range(2)] == ["one", "two"]
    assert model.prompts == ["hi", "hi"]
    with pytest.raises(AssertionError, match="ran out of its 2 replies"):
        ask(model, hello)


def test_by_own_turns_follows_the_conversation_and_ids_stay_unique() -> None:
    model = by_own_turns(["first", [call("look")]])
    first: list[ChatMessage] = [ChatMessageUser(content="hi")]
    assert ask(model, first).completion == "first"
    looked = ask(model, [*first, ChatMessageAssistant(content="first")])
    (made,) = looked.message.tool_calls or []
    again = ask(model, [*first, ChatMessageAssistant(content="first"), looked.message])
    (repeated,) = again.message.tool_calls or []
    assert repeated.function == made.function == "look" and repeated.id != made.id
    assert again.choices[0].stop_reason == "tool_calls"


def test_a_tests_own_ids_are_kept_and_configs_recorded() -> None:
    model = by_own_turns([message("", [call("f", id="c0")])],
                         config=GenerateConfig(temperature=0.3))
    out = ask(model, [ChatMessageUser(content="hi")], GenerateConfig(seed=5))
    again = ask(model, [ChatMessageUser(content="hi"), out.message])
    assert [c.id for c in again.message.tool_calls or []] == ["c0"]
    assert [(c.temperature, c.seed) for c in model.configs] == [(0.3, 5), (0.3, None)]


def test_wait_until_returns_the_value_or_names_what_it_waited_for() -> None:
    start = time.monotonic()
    assert wait_until(lambda: time.monotonic() - start > 0.05 and "ready", timeout=5) == "ready"
    with pytest.raises(AssertionError, match="waited 0.05s for the flag"):
        wait_until(lambda: False, timeout=0.05, what="the flag")
