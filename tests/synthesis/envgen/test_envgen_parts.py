"""EnvGen's parts without a sandbox run: description loaders, reply parsing, JUnit reading,
criteria tags and the severity ranking (expected values written by hand)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from harness.providers.responder import reply, responder_model
from synthesis.envgen import agents
from synthesis.envgen.description import DescriptionError, load_description, snake_case
from synthesis.envgen.validate import (
    TestOutcome,
    ValidationResult,
    criterion_of,
    parse_junit,
    rank_failures,
)
from tests.shared_data import SHARED_DATA
from tests.synthesis.envgen import scripted

METADATA = SHARED_DATA / "envfactory_metadata" / "UUPaoTui_metadata.json"


def test_sketch_is_parsed_without_running_it(tmp_path: Path) -> None:
    d = load_description(scripted.tally_sketch(tmp_path, "Tally"))
    assert (d.name, d.env_name, d.source) == ("Tally", "tally", "sketch")
    assert d.description == "A tally of named items and their quantities."
    add = d.tool("add_item")
    assert add is not None and add.write and add.write_source == "declared"
    assert add.parameters == {"type": "object", "required": ["name", "quantity"], "properties": {
        "name": {"type": "string", "description": "The item's name."},
        "quantity": {"type": "integer", "description": "How many to add; at least 1."}}}
    assert add.returns == {"type": "object",
                           "description": "The item's name and its new total quantity."}
    assert [t.name for t in d.tools if not t.write] == ["get_item", "list_items"]


def test_sketch_types_defaults_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "s.py"
    path.write_text('from typing import Literal\nclass ShopSketch:\n    """Shop."""\n'
                    '    def find(self, kind: Literal["a", "b"], tags: list[str] | None = None,\n'
                    '             limit: int = 5) -> list[dict]:\n        """Find."""\n'
                    '        ...\n')
    tool = load_description(path).tools[0]
    assert tool.required() == ["kind"]
    assert tool.properties() == {
        "kind": {"enum": ["a", "b"], "type": "string"},
        "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                 "default": None},
        "limit": {"type": "integer", "default": 5}}
    assert tool.returns == {"type": "array", "items": {"type": "object"}}
    path.write_text("class Nothing:\n    pass\n")
    with pytest.raises(DescriptionError, match=r"s\.py: expected one class named <Name>Sketch"):
        load_description(path)
    path.write_text("class ASketch:\n    def f(self, x) -> int:\n        ...\n")
    with pytest.raises(DescriptionError, match="ASketch.f: parameter 'x' has no type hint"):
        load_description(path)


def test_openapi_document(tmp_path: Path) -> None:
    doc = {"openapi": "3.0.0", "info": {"title": "pet store", "description": "Pets."},
           "components": {"schemas": {"Pet": {"type": "object", "required": ["name"],
                                              "properties": {"name": {"type": "string"}}}}},
           "paths": {"/pets/{pet_id}": {
               "parameters": [{"name": "pet_id", "in": "path", "schema": {"type": "integer"}}],
               "get": {"operationId": "getPet", "summary": "One pet.",
                       "responses": {"200": {"content": {"application/json": {
                           "schema": {"$ref": "#/components/schemas/Pet"}}}}}},
               "put": {"operationId": "renamePet",
                       "parameters": [{"name": "dry_run", "in": "query",
                                       "schema": {"type": "boolean"}}],
                       "requestBody": {"content": {"application/json": {
                           "schema": {"$ref": "#/components/schemas/Pet"}}}}}}}}
    path = tmp_path / "pets.json"
    path.write_text(json.dumps(doc))
    d = load_description(path)
    assert (d.name, d.source, d.description) == ("PetStore", "openapi", "Pets.")
    get, put = d.tools
    assert (get.name, get.write, get.required()) == ("getPet", False, ["pet_id"])
    assert get.returns == doc["components"]["schemas"]["Pet"]  # type: ignore[index]
    assert (put.name, put.write) == ("renamePet", True)
    assert put.properties() == {"pet_id": {"type": "integer"}, "dry_run": {"type": "boolean"},
                                "name": {"type": "string"}}
    assert put.required() == ["pet_id", "name"]


@pytest.mark.skipif(not METADATA.is_file(), reason=f"no metadata at {METADATA}")
def test_metadata_file() -> None:
    d = load_description(METADATA)
    assert (d.name, d.env_name, d.source) == ("UUPaoTui", "uu_pao_tui", "metadata")
    assert [(t.name, t.write) for t in d.tools] == [
        ("estimate_price", True), ("create_order", True), ("list_orders", False),
        ("query_order", False), ("cancel_order", True)]
    assert all(t.write_source == "guessed" for t in d.tools)
    assert d.tools[0].properties()["sendType"]["enum"] == ["instant", "scheduled"]
    assert d.tools[2].parameters == {"type": "object", "properties": {}, "required": []}


def test_bad_description_files_are_named(tmp_path: Path) -> None:
    bad = tmp_path / "x_metadata.json"
    bad.write_text(json.dumps({"class_name": "X", "description": "d", "tools": []}))
    with pytest.raises(DescriptionError, match=r"x_metadata\.json: field 'tools'"):
        load_description(bad)
    other = tmp_path / "other.json"
    other.write_text("[1, 2]")
    with pytest.raises(DescriptionError, match="not an EnvFactory metadata file"):
        load_description(other)
    with pytest.raises(DescriptionError, match="no such file"):
        load_description(tmp_path / "missing.json")


def test_snake_case() -> None:
    assert [snake_case(n) for n in ("UUPaoTui", "GitHubServer", "HKBus", "Calendar")] == [
        "uu_pao_tui", "git_hub_server", "hk_bus", "calendar"]


def test_reply_parsing() -> None:
    assert agents.extract_python("x\n```python\nprint(1)\n```\ny") == "print(1)\n"
    with pytest.raises(ValueError, match="no fenced"):
        agents.extract_python("print(1)")
    # cut off by the token limit: the open block runs to the end
    assert agents.extract_python("```python\nx = 1\ndef f(") == "x = 1\ndef f(\n"
    with pytest.raises(ValueError, match="2 ```python blocks"):
        agents.extract_python("```python\na\n```\n```py\nb\n```")


def _outcome(name: str, outcome: str = "failed", message: str = "") -> TestOutcome:
    return TestOutcome(name=name, file="t.py", criterion=criterion_of(name),
                       outcome=outcome, message=message)  # type: ignore[arg-type]


def test_criteria_from_names() -> None:
    assert [criterion_of(n) for n in (
        "test_interface_x", "test_exec_tool_callable[a]", "test_behaviour_y",
        "test_behavior_z", "test_state_w", "test_other")] == [
        "interface", "executability", "behaviour", "behaviour", "state", "behaviour"]


def test_failures_ranked_by_severity_then_size() -> None:
    result = ValidationResult(sandbox_verdict="failed", tests=[
        _outcome("test_state_round_trip", message="AssertionError: differs"),
        _outcome("test_behaviour_add_item_new", message="AssertionError: 3 != 5"),
        _outcome("test_behaviour_get_item_unknown", message="AssertionError: ok"),
        _outcome("test_behaviour_add_item_twice", message="AssertionError: 3 != 5"),
        _outcome("test_interface_parameters[get_item]", message="AssertionError: params"),
        _outcome("test_exec_import", outcome="error", message="SyntaxError: bad"),
        _outcome("test_behaviour_q", outcome="error",
                 message="ModuleNotFoundError: No module named 'requests'"),
        _outcome("test_exec_tool_callable[get_item]", outcome="passed")])
    groups = rank_failures(result, ["add_item", "get_item"])
    assert [(g.severity, g.key, len(g.tests)) for g in groups] == [
        ("import", "import:-", 1), ("import", "import:-", 1),
        ("interface", "interface:get_item", 1),
        ("behaviour", "behaviour:add_item", 2), ("behaviour", "behaviour:get_item", 1),
        ("state", "state:-", 1)]
    assert groups[0].tests == ["test_behaviour_q"]  # same rank: sorted by key, then message
    assert result.criteria() == {"interface": {"passed": 0, "failed": 1},
                                 "executability": {"passed": 1, "failed": 1},
                                 "behaviour": {"passed": 0, "failed": 4},
                                 "state": {"passed": 0, "failed": 1}}
    assert result.failing_criteria() == ["interface", "executability", "behaviour", "state"]
    better = ValidationResult(sandbox_verdict="failed", tests=[
        _outcome("test_behaviour_a", outcome="passed"),
        _outcome("test_state_b", message="AssertionError")])
    worse = ValidationResult(sandbox_verdict="failed", tests=[
        _outcome("test_behaviour_a", outcome="passed"),
        _outcome("test_interface_b", message="AssertionError")])
    assert better.score() > worse.score()  # equal passes: the interface failure is worse


def test_junit_report_is_read() -> None:
    xml = """<?xml version="1.0"?><testsuites><testsuite name="pytest">
    <testcase classname="test_envgen_builtin" name="test_exec_import"
              file="test_envgen_builtin.py"/>
    <testcase classname="test_agent" name="test_behaviour_add[0]" file="test_agent.py">
      <failure message="AssertionError: assert 3 == 5">long traceback</failure></testcase>
    <testcase classname="test_agent" name="test_state_x" file="test_agent.py">
      <error message="fixture 'db' not found">E fixture</error></testcase>
    <testcase classname="test_agent" name="test_interface_y" file="test_agent.py">
      <skipped message="skip"/></testcase>
    </testsuite></testsuites>"""
    got = [(t.name, t.criterion, t.outcome, t.message, t.agent) for t in parse_junit(xml)]
    assert got == [
        ("test_exec_import", "executability", "passed", "", False),
        ("test_behaviour_add[0]", "behaviour", "failed", "AssertionError: assert 3 == 5", True),
        ("test_state_x", "state", "error", "fixture 'db' not found", True),
        ("test_interface_y", "interface", "skipped", "skip", True)]


def test_agents_retry_once_with_feedback_then_fail(tmp_path: Path) -> None:
    d = load_description(scripted.tally_sketch(tmp_path, "Tally"))
    prompts: list[list[str]] = []

    def respond(messages):  # type: ignore[no-untyped-def]
        prompts.append([m.text for m in messages])
        if len(messages) == 1:
            return reply(scripted.fenced("def helper():\n    pass\n"))
        return reply(scripted.fenced("def test_behaviour_x(env):\n    pass\n"))

    answer = asyncio.run(agents.write_tests(responder_model(respond), d, None, None))
    assert (answer.code, answer.attempts, answer.tokens) == (
        "def test_behaviour_x(env):\n    pass\n", 2, 4)
    assert "defines no test_* function" in prompts[1][-1]
    assert "class Tally" not in prompts[0][0]  # the tester never sees code
    assert "add_item [write (may change state)]" in prompts[0][0]

    mute = responder_model(lambda messages: reply("no code"))
    with pytest.raises(agents.AgentFailure, match="coder: the reply has no fenced") as e:
        asyncio.run(agents.write_code(mute, d))
    assert e.value.tokens == 4
