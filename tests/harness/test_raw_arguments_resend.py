"""raw_arguments.resend(): later history carries each tool call as the provider returned
it (malformed or compact JSON, `content: null`), on the wire of Inspect's real `openai/`
provider, both APIs; outside the block Inspect's own serialisation is unchanged."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from inspect_ai.model import ChatMessageTool, ChatMessageUser, GenerateConfig, get_model
from inspect_ai.tool import ToolInfo, ToolParam, ToolParams

from harness import raw_arguments
from testkit.recording_server import Api, RecordingServer, Reply, ReplyCall

TOOL = ToolInfo(name="cd", description="Change directory.",
                parameters=ToolParams(properties={"folder": ToolParam(type="string")},
                                      required=["folder"]))
MALFORMED = '{"folder": "document"}"'  # a stray quote: json.loads fails
COMPACT = '{"folder":"café"}'  # what json.dumps would respace and escape


def responder(api: Api, body: Mapping[str, Any]) -> Reply:
    return Reply(tool_calls=[ReplyCall(name="cd", arguments=MALFORMED),
                             ReplyCall(name="cd", arguments=COMPACT)])


def _history_calls(api: Api, body: Mapping[str, Any]) -> tuple[list[str], Any]:
    """(argument strings of the re-sent tool calls, the assistant message's content)."""
    if api == "chat":
        (assistant,) = [m for m in body["messages"] if m["role"] == "assistant"]
        return [c["function"]["arguments"] for c in assistant["tool_calls"]], assistant.get(
            "content", "<absent>")
    calls = [i for i in body["input"] if i.get("type") == "function_call"]
    return [c["arguments"] for c in calls], None


async def _second_request(monkeypatch: pytest.MonkeyPatch, responses_api: bool,
                          resend: bool) -> Mapping[str, Any]:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with RecordingServer(responder) as server:
        model = raw_arguments.install(get_model(
            "openai/gpt-4o-2024-11-20", base_url=server.url, responses_api=responses_api,
            config=GenerateConfig(max_retries=1)))

        async def converse() -> None:
            history: list[Any] = [ChatMessageUser(content="go")]
            output = await model.generate(history, tools=[TOOL])
            history.append(output.message)
            for call in output.message.tool_calls or []:
                history.append(ChatMessageTool(content="ok", tool_call_id=call.id,
                                               function=call.function))
            await model.generate(history, tools=[TOOL])

        if resend:
            with raw_arguments.resend():
                await converse()
        else:
            await converse()
    assert len(server.requests) == 2
    return server.requests[1].body


@pytest.mark.parametrize("responses_api", [False, True], ids=["chat", "responses"])
async def test_history_carries_the_provider_strings(monkeypatch: pytest.MonkeyPatch,
                                                    responses_api: bool) -> None:
    api: Api = "responses" if responses_api else "chat"
    arguments, content = _history_calls(api, await _second_request(
        monkeypatch, responses_api, resend=True))
    assert arguments == [MALFORMED, COMPACT]
    if api == "chat":
        assert content is None  # the server's message had content: null


async def test_outside_resend_inspect_serialises_as_before(
        monkeypatch: pytest.MonkeyPatch) -> None:
    arguments, content = _history_calls("chat", await _second_request(
        monkeypatch, responses_api=False, resend=False))
    # Chat Completions: Inspect's lenient parse of the stray-quote call, json.dumps of both
    assert arguments == ['{"folder": "document"}', '{"folder": "caf\\u00e9"}']
    assert content == ""
    # (the Responses API path replays the provider's own function_call items by itself)
    arguments, _ = _history_calls("responses", await _second_request(
        monkeypatch, responses_api=True, resend=False))
    assert arguments == [MALFORMED, COMPACT]


def test_a_reasoning_item_is_kept_as_the_server_set_it() -> None:
    """Inspect records the SDK's full dump (unset fields as null); what goes back is what
    the server sent, as the official handler's SDK sends it (`exclude_unset`)."""
    from harness.raw_arguments import parse_reasoning

    item = {"id": "rs_1", "type": "reasoning", "content": None, "status": None,
            "summary": [{"type": "summary_text", "text": "Look first."}],
            "encrypted_content": "blob"}
    assert parse_reasoning({"output": [item, {"type": "message", "id": "msg_2"}]}) == {
        "rs_1": {"id": "rs_1", "type": "reasoning", "encrypted_content": "blob",
                 "summary": [{"type": "summary_text", "text": "Look first."}]}}
