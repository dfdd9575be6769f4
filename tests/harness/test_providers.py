"""Offline providers: call parsing, replay-file validation, playback rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.providers.script import (
    CallParseError,
    Script,
    ScriptedCall,
    next_step,
    parse_call,
)
from harness.providers.scripted import ScriptedModelAPI, load_replay_file


def test_parse_call_keywords_literals_and_positional_binding() -> None:
    assert parse_call("cd(folder='documents')") == ScriptedCall(
        function="cd", arguments={"folder": "documents"})
    assert parse_call("f(a=[1, 2.5], b={'k': None}, c=True, d=-3)").arguments == {
        "a": [1, 2.5], "b": {"k": None}, "c": True, "d": -3}
    assert parse_call("math.sqrt(x=4)").function == "math.sqrt"
    assert parse_call("sort('a.pdf')", {"sort": ["file_name"]}).arguments == {
        "file_name": "a.pdf"}


@pytest.mark.parametrize("text, message", [
    ("cd(", "cannot parse"),
    ("cd", "not a function call"),
    ("sort('a.pdf')", "no parameter order is known"),
    ("f(x=open('y'))", "not a Python literal"),
    ("f(**kw)", "**kwargs"),
])
def test_parse_call_errors_are_clear(text: str, message: str) -> None:
    with pytest.raises(CallParseError, match=message.replace("*", r"\*")):
        parse_call(text)


def test_playback_plays_steps_then_ends_the_turn() -> None:
    step = [ScriptedCall(function="ls")]
    script = Script(turns=[[step, step], []])
    assert next_step(script, 0, 0) == step and next_step(script, 0, 1) == step
    assert next_step(script, 0, 2) is None and next_step(script, 1, 0) is None
    assert next_step(script, 5, 0) is None


def test_replay_file_validation(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text('{"id": "a", "turns": [[["ls()"]], []], "extra": 1}\n\n')
    assert load_replay_file(good)["a"]["turns"] == [[["ls()"]], []]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "turns": []}\n{not json\n')
    with pytest.raises(ValueError, match="bad.jsonl:2: not valid JSON"):
        load_replay_file(bad)
    shape = tmp_path / "shape.jsonl"
    shape.write_text('{"id": "a", "turns": ["ls()"]}\n')
    with pytest.raises(ValueError, match="shape.jsonl:1: 'turns' must be"):
        load_replay_file(shape)
    with pytest.raises(FileNotFoundError, match="file not found"):
        load_replay_file(tmp_path / "missing.jsonl")


def test_unknown_model_and_missing_path_are_clear() -> None:
    with pytest.raises(ValueError, match="unknown envfactory model 'gpt'"):
        ScriptedModelAPI("gpt")
    with pytest.raises(ValueError, match="-M path=FILE"):
        ScriptedModelAPI("replay")
