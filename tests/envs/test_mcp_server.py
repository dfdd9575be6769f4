"""Environments served over MCP (stdio and streamable HTTP) with the official SDK client."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

ENVFACTORY = str(Path(sys.executable).parent / "envfactory")
LEDGER = "tests.envs.ledger:Ledger"
ROOT = Path(__file__).resolve().parents[2]


def text(result: Any) -> str:
    return result.content[0].text


@asynccontextmanager
async def stdio_session(*args: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=ENVFACTORY, args=["env", "serve", *args],
                                   cwd=str(ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def test_stdio_tools_calls_errors_and_scenarios(tmp_path: Path) -> None:
    async with stdio_session(LEDGER) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert {"transfer", "load_scenario", "save_scenario"} <= set(tools)
        assert tools["get_balance"].annotations.readOnlyHint is True
        assert tools["transfer"].inputSchema["required"] == ["source", "target", "amount"]
        assert text(await s.call_tool("open_account", {"owner": "ada", "deposit": 5})) == "A1"
        bad = await s.call_tool("transfer", {"source": "A1", "target": "A1", "amount": 9})
        assert bad.isError and text(bad) == "insufficient funds in A1"
        missing = await s.call_tool("transfer", {"source": "A1"})
        assert missing.isError and "missing required argument 'target'" in text(missing)
        saved = json.loads(text(await s.call_tool("save_scenario", {})))
        assert saved["accounts"]["A1"]["balance"] == 5
        saved["accounts"]["A1"]["balance"] = 77
        assert not (await s.call_tool("load_scenario", {"scenario": saved})).isError
        assert text(await s.call_tool("get_balance", {"account_id": "A1"})) == "77"
        rejected = await s.call_tool("load_scenario", {"scenario": {"accounts": 3}})
        assert rejected.isError and "rejected" in text(rejected)
    # --state: every session starts from the given file
    state = tmp_path / "state.json"
    state.write_text(json.dumps(saved))
    async with stdio_session(LEDGER, "--state", str(state)) as s:
        assert text(await s.call_tool("get_balance", {"account_id": "A1"})) == "77"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_http_sessions_are_isolated() -> None:
    port = free_port()
    proc = subprocess.Popen([ENVFACTORY, "env", "serve", LEDGER, "--transport", "http",
                             "--port", str(port)], cwd=ROOT)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.1)
        async with streamable_http_client(url) as (r1, w1, _), ClientSession(r1, w1) as a:
            await a.initialize()
            async with streamable_http_client(url) as (r2, w2, _), ClientSession(r2, w2) as b:
                await b.initialize()
                await a.call_tool("open_account", {"owner": "ada", "deposit": 10})
                snap_b = json.loads(text(await b.call_tool("save_scenario", {})))
                assert snap_b["accounts"] == {}  # b does not see a's write
                assert text(await b.call_tool("open_account", {"owner": "bob"})) == "A1"
                snap_a = json.loads(text(await a.call_tool("save_scenario", {})))
                assert snap_a["accounts"]["A1"]["owner"] == "ada"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
