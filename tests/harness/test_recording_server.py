"""The recording server answers Inspect's real `openai/` provider on both APIs and records
exactly the body the provider sent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model
from inspect_ai.tool import ToolInfo, ToolParam, ToolParams

from testkit.recording_server import Api, RecordingServer, Reply, ReplyCall

TOOL = ToolInfo(name="lookup", description="Look a thing up.",
                parameters=ToolParams(properties={"key": ToolParam(type="string")},
                                      required=["key"]))


def responder(api: Api, body: Mapping[str, Any]) -> Reply:
    if body.get("tools"):
        return Reply(tool_calls=[ReplyCall(name="lookup", arguments='{"key": "a"}')])
    return Reply(content="plain")


@pytest.mark.parametrize("responses_api", [False, True])
async def test_inspect_openai_provider_round_trip(monkeypatch: pytest.MonkeyPatch,
                                                  responses_api: bool) -> None:
    with RecordingServer(responder) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        model = get_model("openai/scripted", base_url=server.url, responses_api=responses_api,
                          config=GenerateConfig(max_retries=1))
        output = await model.generate([ChatMessageUser(content="hi")], tools=[TOOL])
        plain = await model.generate([ChatMessageUser(content="hi")])
    assert output.message.tool_calls is not None
    assert output.message.tool_calls[0].function == "lookup"
    assert output.message.tool_calls[0].arguments == {"key": "a"}
    assert plain.message.text == "plain"
    # (for an unknown model name, Inspect's Responses path first probes with a plain request)
    with_tools = [r for r in server.requests if "tools" in r.body]
    assert len(with_tools) == 1
    first = with_tools[0]
    assert first.api == ("responses" if responses_api else "chat")
    assert first.body["model"] == "scripted"
    sent = first.body["tools"][0]
    name = sent["name"] if responses_api else sent["function"]["name"]
    assert name == "lookup"
