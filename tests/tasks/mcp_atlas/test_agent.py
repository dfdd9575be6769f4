"""Upstream's harness rules for one call: decoding raw arguments and the tool message.

Expected texts are hand-checked against upstream's code (agent-eval.ts: `JSON.parse`
errors as `Error: <first line>`; sandbox-client.ts: empty results as `success`, timeouts
as `Tool call timed out after 60s`; agent_environment/main.py: failures as FastAPI's
`{"detail": "Failed to call tool '<name>': <error>"}`) and Node 20's `JSON.parse`
messages, run by hand.
"""

from __future__ import annotations

import shutil

import pytest

from harness.tool_backends import McpOutcome
from harness.trajectory import Message, MessageCall
from tasks._mcp_atlas.agent import atlas_decode, atlas_refuse, atlas_render


def _message(raw: str) -> Message:
    return Message(role="assistant", tool_calls=[MessageCall(
        id="c1", name="calculator_calculate", arguments={}, raw_arguments=raw)])


def test_results_as_upstream_shows_them() -> None:
    assert atlas_render("x_y", McpOutcome(kind="ok", texts=["a", "b"])).text == "a\nb"
    assert atlas_render("x_y", McpOutcome(kind="ok", texts=["  "])).text == "success"
    assert atlas_render("x_y", McpOutcome(kind="ok", texts=[])).text == "success"
    timeout = atlas_render("x_y", McpOutcome(kind="timeout", error="slow"))
    assert (timeout.text, timeout.ok) == ("Tool call timed out after 60s", False)
    failed = atlas_render("x_y", McpOutcome(kind="failed", error="boom “quoted”"))
    assert failed.text == '{"detail":"Failed to call tool \'x_y\': boom “quoted”"}'


def test_raw_arguments_decode_as_json_parse() -> None:
    (ok,) = atlas_decode(_message('{"expression": "1+1"}'))
    assert ok.arguments == {"expression": "1+1"} and ok.parse_error is None
    (null,) = atlas_decode(_message("null"))
    assert null.arguments == {} and null.parse_error is None
    for falsy in ("0", '""', "false"):
        (none,) = atlas_decode(_message(falsy))
        assert none.arguments == {} and none.parse_error is None
    (listed,) = atlas_decode(_message('["/data/x.csv"]'))
    assert atlas_refuse(listed) == (
        '{"detail":[{"type":"dict_type","loc":["body","tool_args"],'
        '"msg":"Input should be a valid dictionary","input":["/data/x.csv"]}]}')


def test_a_tool_no_server_has() -> None:
    unknown = atlas_render("no_such_tool", McpOutcome(kind="unknown_tool", error="ours"))
    assert unknown.text == ('{"detail":"Failed to call tool \'no_such_tool\': '
                            'Unknown tool: no_such_tool"}')


@pytest.mark.skipif(shutil.which("node") is None, reason="Node is not installed")
def test_undecodable_arguments_get_node_s_message() -> None:
    (bad,) = atlas_decode(_message('{"a": }'))
    assert atlas_refuse(bad) == "Error: Unexpected token '}', \"{\"a\": }\" is not valid JSON"
    (empty,) = atlas_decode(_message(""))
    assert atlas_refuse(empty) == "Error: Unexpected end of JSON input"
