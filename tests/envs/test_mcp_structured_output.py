"""Structured tool output over MCP: each typed tool publishes `outputSchema` and its
results carry `structuredContent`, while the text content stays what it was.

Runs over the SDK's in-memory transport with the SDK's own client, which itself checks
every structured result against the tool's published schema.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from envs.base import Environment
from envs.mcp_server import build_server
from envs.pool.bank_ledger import BankLedger
from tests.envs.ledger import Ledger


@asynccontextmanager
async def session(factory: Callable[[], Environment]) -> AsyncIterator[ClientSession]:
    server = build_server("test", factory)
    async with create_connected_server_and_client_session(server) as client:
        yield client


async def test_object_results_are_their_own_structured_content() -> None:
    async with session(BankLedger) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        spec = {t.name: t for t in BankLedger.tool_specs()}
        assert tools["get_account"].outputSchema == spec["get_account"].output_schema
        assert tools["get_account"].outputSchema["properties"]["balance"]["type"] == "number"
        result = await s.call_tool("get_account", {"account_id": "AC1001"})
        assert not result.isError
        assert result.content[0].text == BankLedger().call(
            "get_account", {"account_id": "AC1001"}).text()
        assert result.structuredContent == json.loads(result.content[0].text)
        assert result.structuredContent["id"] == "AC1001"


async def test_non_object_results_are_wrapped_as_result() -> None:
    async with session(BankLedger) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        listed = tools["list_accounts"].outputSchema
        assert listed["type"] == "object" and listed["required"] == ["result"]
        assert listed["properties"]["result"]["type"] == "array"
        assert "owner" in listed["properties"]["result"]["items"]["properties"]
        result = await s.call_tool("list_accounts", {"customer_id": "C1001"})
        rows = json.loads(result.content[0].text)
        assert result.structuredContent == {"result": rows}
        assert [r["id"] for r in rows][:1] == ["AC1001"]


async def test_scalar_results_keep_plain_text_and_errors_have_no_structure() -> None:
    async with session(Ledger) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert tools["open_account"].outputSchema == {
            "type": "object", "properties": {"result": {"type": "string"}},
            "required": ["result"]}
        assert tools["save_scenario"].outputSchema is None
        opened = await s.call_tool("open_account", {"owner": "ada", "deposit": 5})
        assert opened.content[0].text == "A1"
        assert opened.structuredContent == {"result": "A1"}
        bad = await s.call_tool("transfer", {"source": "A1", "target": "A1", "amount": 9})
        assert bad.isError and bad.structuredContent is None
        saved = await s.call_tool("save_scenario", {})
        assert saved.structuredContent is None
