"""verbatim(): Inspect's real `openai/` provider sends the official tool object unchanged
(key order, `$defs`/`$ref`, extra keys) on Chat Completions, and the official Responses
form (no `strict`) on the Responses API; tools without it are sent as before."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model
from inspect_ai.tool import ToolInfo, ToolParam, ToolParams

from harness.verbatim_tools import install, verbatim
from testkit.recording_server import Api, RecordingServer, Reply

#: hand-written: keys in a non-alphabetical, non-Inspect order, a `$defs`/`$ref`
#: schema and a key (`response`) that Inspect's ToolInfo does not model
OFFICIAL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "book",
        "description": "Book a thing.",
        "parameters": {
            "type": "object",
            "properties": {
                "names": {"type": "array", "items": {"type": "string"},
                          "description": "Who."},
                "payment": {"$ref": "#/$defs/Payment"},
            },
            "required": ["names"],
            "$defs": {"Payment": {"type": "object", "properties": {
                "amount": {"type": "number", "format": "float"}}}},
        },
        "response": {"type": "dict", "properties": {"id": {"type": "string"}}},
    },
}

INFO = ToolInfo(name="book", description="Book a thing.",
                parameters=ToolParams(properties={
                    "names": ToolParam(type="array", items=ToolParam(type="string"),
                                       description="Who."),
                    "payment": ToolParam(type="object")}, required=["names"]))
PLAIN = ToolInfo(name="lookup", description="Look a thing up.",
                 parameters=ToolParams(properties={"key": ToolParam(type="string")},
                                       required=["key"]))


def responder(api: Api, body: Mapping[str, Any]) -> Reply:
    return Reply(content="ok")


async def _sent_tools(monkeypatch: pytest.MonkeyPatch, responses_api: bool,
                      tools: list[ToolInfo]) -> list[dict[str, Any]]:
    with RecordingServer(responder) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        model = get_model("openai/scripted", base_url=server.url, responses_api=responses_api,
                          config=GenerateConfig(max_retries=1))
        await model.generate([ChatMessageUser(content="hi")], tools=tools)
    with_tools = [r for r in server.requests if "tools" in r.body]
    assert len(with_tools) == 1
    return list(with_tools[0].body["tools"])


@pytest.mark.parametrize("responses_api", [False, True])
async def test_official_object_goes_out_unchanged(monkeypatch: pytest.MonkeyPatch,
                                                  responses_api: bool) -> None:
    sent = await _sent_tools(monkeypatch, responses_api, [verbatim(INFO, OFFICIAL), PLAIN])
    if responses_api:
        fn = OFFICIAL["function"]
        expected = {"type": "function", "name": "book", "description": fn["description"],
                    "parameters": fn["parameters"]}
    else:
        expected = OFFICIAL
    # json text comparison: key order counts
    assert json.dumps(sent[0]) == json.dumps(expected)
    assert "strict" not in sent[0]
    # a tool without an official object is built by Inspect as before
    plain = sent[1] if responses_api else sent[1]["function"]
    assert plain["name"] == "lookup"
    assert plain["parameters"]["properties"] == {"key": {"type": "string"}}
    if responses_api:
        assert plain["strict"] is False


def test_hook_is_idempotent_and_keeps_info() -> None:
    from inspect_ai.model import _openai

    install()
    hook = _openai.openai_chat_tool_param
    tool = verbatim(INFO, OFFICIAL)
    install()
    assert _openai.openai_chat_tool_param is hook
    assert tool.name == INFO.name and tool.parameters == INFO.parameters
    assert INFO.options is None  # the original is not modified
    # mutating the caller's object later does not change what is sent
    official = json.loads(json.dumps(OFFICIAL))
    tool = verbatim(INFO, official)
    official["function"]["description"] = "changed"
    assert json.dumps(_openai.openai_chat_tools([tool])[0]) == json.dumps(OFFICIAL)


def test_rejects_a_mismatched_object() -> None:
    with pytest.raises(ValueError, match="is not 'book'"):
        verbatim(INFO, {"type": "function", "function": {"name": "other"}})
    with pytest.raises(ValueError, match="must be"):
        verbatim(INFO, OFFICIAL["function"])
