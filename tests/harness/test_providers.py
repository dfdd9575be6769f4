"""Offline providers: call parsing, replay-file validation, playback rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.tool import ToolInfo, ToolParams
from inspect_ai.util import JSONSchema

from harness.gold import CallParseError, GoldCall, GoldMessage, Position, Script, parse_call
from harness.providers.gold_players import (
    GoldPlayerAPI,
    load_replay_file,
    replay_message,
)
from harness.trajectory import Message, MessageCall, Provenance, Trajectory


def test_parse_call_keywords_literals_and_positional_binding() -> None:
    assert parse_call("cd(folder='documents')") == GoldCall(
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
    step = [GoldCall(function="ls")]
    script = Script.of_calls([[step, step], []])
    at = lambda turn, step: script.at(Position(role="assistant", turn=turn, step=step))  # noqa: E731
    assert at(0, 0).calls == step and at(0, 1).calls == step
    assert at(0, 2) == GoldMessage(text="Done.") and at(1, 0).text == "Done."
    assert at(5, 0).text == "Done." and at(-1, 0).text == "Done."


def test_call_string_records_bind_positional_arguments_by_the_offered_schema() -> None:
    sort = ToolInfo(name="sort", description="", parameters=ToolParams(
        properties={"file_name": JSONSchema(type="string")}))
    record = {"id": "x", "turns": [[["sort('a.pdf')"]], [["mv('a', 'b')"]]]}
    assert replay_message(record, Position(role="assistant", turn=0, step=0), [sort]).calls == [
        GoldCall(function="sort", arguments={"file_name": "a.pdf"})]
    # a later step calling a tool not offered yet is parsed only when it is played
    assert replay_message(record, Position(role="assistant", turn=0, step=1), [sort]).text
    with pytest.raises(CallParseError, match="no parameter order is known for 'mv'"):
        replay_message(record, Position(role="assistant", turn=1, step=0), [sort])


def test_a_recorded_trajectory_replays_per_role_turn_and_step() -> None:
    """Positions are the loop's: the greeting (turn None) was never generated."""
    call = MessageCall(id="1", name="find", arguments={"q": "x"})
    trajectory = Trajectory(
        id="t", environments=["e"], initial_state={}, turns=[],
        provenance=Provenance(source="test"), messages=[
            Message(role="assistant", content="Hi!"),
            Message(role="user", content="help", turn=0),
            Message(role="assistant", tool_calls=[call], turn=0),
            Message(role="tool", content="ok", tool_call_id="1", turn=0),
            Message(role="assistant", content="found it", turn=0),
            Message(role="user", content="###STOP###", turn=1)])
    record = trajectory.model_dump(mode="json")
    assert replay_message(record, Position(role="assistant", turn=0, step=0)).calls == [
        GoldCall(function="find", arguments={"q": "x"})]
    assert replay_message(record, Position(role="assistant", turn=0, step=1)).text == "found it"
    assert replay_message(record, Position(role="user", turn=1, step=0)).text == "###STOP###"


def test_replay_file_validation(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text('{"id": "a", "turns": [[["ls()"]], []], "extra": 1}\n\n')
    assert load_replay_file(good)["a"]["turns"] == [[["ls()"]], []]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "turns": []}\n{not json\n')
    with pytest.raises(ValueError, match="bad.jsonl:2: invalid replay record: not valid JSON"):
        load_replay_file(bad)
    shape = tmp_path / "shape.jsonl"
    shape.write_text('{"id": "a", "turns": ["ls()"]}\n')
    with pytest.raises(ValueError, match="shape.jsonl:1: invalid replay record: .turns. must be"):
        load_replay_file(shape)
    with pytest.raises(FileNotFoundError, match="file not found"):
        load_replay_file(tmp_path / "missing.jsonl")


def test_unknown_model_and_missing_path_are_clear() -> None:
    with pytest.raises(ValueError, match="unknown envfactory model 'gpt'"):
        GoldPlayerAPI("gpt")
    with pytest.raises(ValueError, match="-M path=FILE"):
        GoldPlayerAPI("replay")
