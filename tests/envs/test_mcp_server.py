"""Environments served over MCP (stdio and streamable HTTP) with the official SDK client."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from testkit.waiting import wait_until

ENVFACTORY = str(Path(sys.executable).parent / "envfactory")
LEDGER = "tests.envs.ledger:Ledger"
ROOT = Path(__file__).resolve().parents[2]


def text(result: Any) -> str:
    return result.content[0].text


@asynccontextmanager
async def stdio_session(*args: str, environ: dict[str, str] | None = None
                        ) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=ENVFACTORY, args=["env", "serve", *args],
                                   cwd=str(ROOT), env={**os.environ, **environ}
                                   if environ else None)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def test_stdio_tools_calls_errors_and_scenarios(tmp_path: Path) -> None:
    async with stdio_session(LEDGER) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert {"transfer", "load_scenario", "save_scenario"} <= set(tools)
        annotations = tools["get_balance"].annotations
        assert annotations is not None and annotations.readOnlyHint is True
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
        for junk, named in [({"garbage": 1}, "unknown field 'garbage'"),
                            ({"next_id": "2"}, "field 'next_id'")]:
            rejected = await s.call_tool("load_scenario", {"scenario": junk})
            assert rejected.isError and named in text(rejected)
            # the world is as it was, not emptied
            assert text(await s.call_tool("get_balance", {"account_id": "A1"})) == "77"
    # --state: every session starts from the given file
    state = tmp_path / "state.json"
    state.write_text(json.dumps(saved))
    async with stdio_session(LEDGER, "--state", str(state)) as s:
        assert text(await s.call_tool("get_balance", {"account_id": "A1"})) == "77"


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    """`envfactory env serve ...` that is expected to exit at once (stdin closed)."""
    return subprocess.run([ENVFACTORY, "env", "serve", *args], cwd=ROOT, input="",
                          capture_output=True, text=True, timeout=60)


def test_state_file_errors_name_the_file_and_the_field(tmp_path: Path) -> None:
    junk, not_json, missing = tmp_path / "junk.json", tmp_path / "x.json", tmp_path / "no.json"
    junk.write_text(json.dumps({"accounts": {"A1": {"owner": "ada", "colour": "red"}}}))
    not_json.write_text("{")
    for path, named in [(junk, "unknown field 'accounts.A1.colour'"),
                        (not_json, "not JSON"), (missing, "cannot read it")]:
        done = serve(LEDGER, "--state", str(path))
        assert done.returncode == 2
        assert done.stderr.startswith(f"error: Invalid value for --state: {path}: ")
        assert named in done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize(("option", "value", "expected"), [
    ("--port", "99999", "--port: must be in 1-65535, got 99999"),
    ("--port", "0", "--port: must be in 1-65535, got 0"),
    ("--max-body-bytes", "0", "--max-body-bytes: must be at least 1, got 0"),
    ("--transport", "smoke", "--transport: must be stdio or http, got 'smoke'"),
])
def test_bad_serve_options_are_one_line_usage_errors(option: str, value: str,
                                                     expected: str) -> None:
    done = serve(LEDGER, "--transport", "http", option, value)
    assert (done.returncode, done.stderr) == (
        2, f"error: Invalid value for {expected} (see `envfactory env serve --help`)\n")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HttpServer:
    """A real `envfactory env serve --transport http` process; `log()` is its stderr."""

    def __init__(self, tmp_path: Path, *options: str, name: str = LEDGER,
                 environ: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.stderr = tmp_path / f"serve-{self.port}.log"
        with self.stderr.open("w") as sink:
            self.proc = subprocess.Popen(
                [ENVFACTORY, "env", "serve", name, "--transport", "http",
                 "--port", str(self.port), *options], cwd=ROOT, stderr=sink,
                env={**os.environ, **environ} if environ else None)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
                return
            except OSError:
                assert self.proc.poll() is None, self.log()
                time.sleep(0.1)
        raise AssertionError("server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)

    def log(self) -> str:
        return self.stderr.read_text()

    def client_connections(self) -> list[Any]:
        """The server's open TCP connections but its listening socket: none once it has
        finished with every request (closing a connection is a handler's last act)."""
        return [c for c in psutil.Process(self.proc.pid).net_connections(kind="tcp")
                if c.status != psutil.CONN_LISTEN]

    def post(self, body: bytes | Iterator[bytes], **headers: str) -> httpx.Response:
        return httpx.post(self.url + "/", content=body, timeout=30,
                          headers={"Content-Type": "application/json",
                                   "Accept": "application/json, text/event-stream", **headers})


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[Callable[..., HttpServer]]:
    started: list[HttpServer] = []

    def start(*options: str, **keywords: Any) -> HttpServer:
        started.append(HttpServer(tmp_path, *options, **keywords))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def jsonrpc(method: str, params: Any = None, id: int = 7) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def error_of(response: httpx.Response) -> tuple[int, int, Any]:
    body = response.json()
    return response.status_code, body["error"]["code"], body["id"]


async def test_http_sessions_are_isolated(http_server: Callable[..., HttpServer]) -> None:
    url = http_server().url
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


def test_http_bad_requests_get_jsonrpc_errors(http_server: Callable[..., HttpServer]) -> None:
    """JSON-RPC 2.0 section 5.1's codes, not HTTP 500 or "Invalid params"."""
    server = http_server()
    deep_arguments: Any = 0
    for _ in range(150):
        deep_arguments = {"a": deep_arguments}
    cases: list[tuple[bytes, tuple[int, int, Any]]] = [
        (b"[" * 100_000 + b"]" * 100_000, (400, -32700, None)),  # was 500 (RecursionError)
        (jsonrpc("tools/call", {"name": "get_balance", "arguments": deep_arguments}),
         (400, -32600, 7)),
        (b'{"jsonrpc": "2.0", "id": 1, "method": ', (400, -32700, None)),
        (b"\xff\xfe", (400, -32700, None)),
        (b"[]", (400, -32600, None)),
        (b'{"jsonrpc": "1.0", "id": 3, "method": "ping"}', (400, -32600, 3)),
        (jsonrpc("no/such"), (200, -32601, 7)),  # was -32602
    ]
    for body, expected in cases:
        response = server.post(body)
        assert response.headers["content-type"] == "application/json"
        assert error_of(response) == expected, body[:60]
    assert "Method not found: no/such" in server.post(jsonrpc("no/such")).text
    # a notification of a kind MCP does not define: accepted, no answer, nothing logged
    unknown = server.post(b'{"jsonrpc": "2.0", "method": "notifications/foo"}')
    assert (unknown.status_code, unknown.content) == (202, b"")
    assert server.log() == ""
    # a known method with bad params: the SDK's -32602, and one line in the log
    initialize = server.post(jsonrpc("initialize", {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}, id=1))
    session = {"mcp-session-id": initialize.headers["mcp-session-id"]}
    server.post(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', **session)
    bad_params = server.post(jsonrpc("tools/call", {"nome": "x"}), **session)
    assert '"code":-32602' in bad_params.text
    wait_until(lambda: server.log().endswith("\n"), what="the warning line in the log")
    assert server.log().startswith("WARNING:root:Failed to validate request: ")
    assert server.log().count("\n") == 1


def test_http_request_bodies_are_bounded(http_server: Callable[..., HttpServer]) -> None:
    default = http_server()
    twenty_mb = jsonrpc("tools/call", {"name": "save_scenario",
                                       "arguments": {"pad": "x" * 20_000_000}})
    response = default.post(twenty_mb)
    assert error_of(response) == (413, -32600, None)  # was 200
    assert "at most 16777216 bytes" in response.json()["error"]["message"]
    small = http_server("--max-body-bytes", "2000")
    body = jsonrpc("tools/call", {"name": "save_scenario", "arguments": {"pad": "x" * 3000}})
    assert error_of(small.post(body)) == (413, -32600, None)
    # without Content-Length (chunked) the limit holds while reading
    assert error_of(small.post(iter([body[:1500], body[1500:]]))) == (413, -32600, None)
    # a body under the limit reaches the MCP server (which asks for a session)
    assert small.post(jsonrpc("tools/list")).status_code == 400
    assert "Missing session ID" in small.post(jsonrpc("tools/list")).text


async def test_http_normal_disconnects_log_nothing(
        http_server: Callable[..., HttpServer]) -> None:
    server = http_server()
    for _ in range(3):
        async with (streamable_http_client(server.url) as (read, write, _),
                    ClientSession(read, write) as session):
            await session.initialize()
            assert (await session.list_tools()).tools
            assert not (await session.call_tool("open_account", {"owner": "ada"})).isError
    wait_until(lambda: not server.client_connections(),
               what="the server to close every client connection")
    server.stop()
    assert server.log() == ""  # was a 10-line ClosedResourceError traceback per session


def test_unknown_environment_is_one_line_saying_how_to_list_them() -> None:
    done = serve("nope")
    assert (done.returncode, done.stderr) == (
        1, "error: unknown environment 'nope'; `envfactory env list` names them "
           "(or give module:Class)\n")  # was every registered name on one 400-character line
    typo = serve("calender")
    assert typo.returncode == 1 and typo.stderr.count("\n") == 1
    assert "did you mean calendar? " in typo.stderr


async def test_env_show_lists_what_serve_exposes_with_the_control_tools_marked() -> None:
    shown = subprocess.run([ENVFACTORY, "env", "show", LEDGER], cwd=ROOT, capture_output=True,
                           text=True, timeout=60, env={**os.environ, "COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    headings = (re.fullmatch(r"(\w+) \((read|write|control)\)", line)
                for line in shown.stdout.splitlines())
    kinds = {match[1]: match[2] for match in headings if match}
    assert {name for name, kind in kinds.items() if kind == "control"} == {
        "load_scenario", "save_scenario"}  # were not listed
    assert kinds["transfer"] == "write" and kinds["get_balance"] == "read"
    async with stdio_session(LEDGER) as session:
        served = {tool.name for tool in (await session.list_tools()).tools}
    assert set(kinds) == served
    as_json = subprocess.run([ENVFACTORY, "env", "show", LEDGER, "--json"], cwd=ROOT,
                             capture_output=True, text=True, timeout=60)
    own = {spec["name"] for spec in json.loads(as_json.stdout)}
    assert own == served - {"load_scenario", "save_scenario"}  # --json: the environment's own


def test_a_too_large_body_gets_its_413_even_from_a_client_that_closes(
        http_server: Callable[..., HttpServer]) -> None:
    """urllib sends its whole body, asking for `Connection: close`: answering early and
    closing reset the connection (Broken pipe / Connection reset by peer, not the 413)."""
    server = http_server()
    twenty_mb = jsonrpc("tools/call", {"name": "save_scenario",
                                       "arguments": {"pad": "x" * 20_000_000}})
    request = urllib.request.Request(server.url + "/", data=twenty_mb, headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)  # noqa: S310 - a local test server
    assert refused.value.code == 413
    error = json.loads(refused.value.read())
    assert (error["id"], error["error"]["code"]) == (None, -32600)
    # a client that waits for `100 Continue` is answered before it sends the body
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(b"POST /mcp/ HTTP/1.1\r\nHost: localhost\r\n"
                     b"Content-Type: application/json\r\nExpect: 100-continue\r\n"
                     + f"Content-Length: {len(twenty_mb)}\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(4096)
            assert chunk, head
            head += chunk
    assert head.startswith(b"HTTP/1.1 413 ") and b"\r\nconnection: close\r\n" in head.lower()


def test_mcp_without_the_trailing_slash_is_the_same_endpoint(
        http_server: Callable[..., HttpServer]) -> None:
    server = http_server()
    initialize = jsonrpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "test", "version": "0"}}, id=1)
    for path in ("/mcp", "/mcp/"):
        response = httpx.post(f"http://127.0.0.1:{server.port}{path}", content=initialize,
                              timeout=30, headers={
                                  "Content-Type": "application/json",
                                  "Accept": "application/json, text/event-stream"})
        assert response.status_code == 200, (path, response)  # `/mcp` was a bare 307
        assert response.headers["mcp-session-id"]
    assert httpx.get(f"http://127.0.0.1:{server.port}/other", timeout=30).status_code == 404


# --- the EnvFactory release's environments (a hand-written release-shaped fixture) -----

RELEASE_FIXTURE = {"ENVFACTORY_RELEASE_DIR": str(ROOT / "tests" / "data" / "release_fixture")}
SHARED_RELEASE = ROOT.parent / "shared" / "data" / "envfactory_release"


async def _check_library_session(s: ClientSession) -> None:
    """The fixture's `Library` started from scenario_001 (b1, two copies)."""
    tools = {t.name: t for t in (await s.list_tools()).tools}
    assert set(tools) == {"borrow_book", "get_book", "load_scenario", "save_scenario"}
    annotations = tools["get_book"].annotations
    assert annotations is not None and annotations.readOnlyHint is True
    assert json.loads(text(await s.call_tool("get_book", {"book_id": "b1"})))["copies"] == 2
    borrowed = await s.call_tool("borrow_book", {"book_id": "b1"})
    assert json.loads(text(borrowed)) == {"book_id": "b1", "copies_left": 1}
    missing = await s.call_tool("borrow_book", {"book_id": "zz"})
    assert missing.isError and text(missing) == "Book zz not found"
    saved = json.loads(text(await s.call_tool("save_scenario", {})))
    assert saved["books"]["b1"]["copies"] == 1
    # the server's own model refuses a bad scenario; the session's state is kept
    refused = await s.call_tool("load_scenario", {"scenario": {"books": {},
                                                               "current_time": "noon"}})
    assert refused.isError and "current_time" in text(refused)
    assert json.loads(text(await s.call_tool("save_scenario", {}))) == saved


async def test_a_release_environment_over_stdio_from_a_named_scenario() -> None:
    async with stdio_session("release/Library@scenario_001", environ=RELEASE_FIXTURE) as s:
        await _check_library_session(s)


async def test_a_release_environment_over_http_one_instance_per_session(
        http_server: Callable[..., HttpServer]) -> None:
    url = http_server(name="release/Library@scenario_001", environ=RELEASE_FIXTURE).url
    async with streamable_http_client(url) as (r1, w1, _), ClientSession(r1, w1) as a:
        await a.initialize()
        await _check_library_session(a)
        async with streamable_http_client(url) as (r2, w2, _), ClientSession(r2, w2) as b:
            await b.initialize()  # a fresh instance: a's borrow is not here
            assert json.loads(text(await b.call_tool("get_book", {"book_id": "b1"})))[
                "copies"] == 2


def test_a_release_environment_that_cannot_start_is_one_line() -> None:
    for name, named in [("release/Library@scenario_003", "expects a validation error"),
                        ("release/Library@scenario_005", "books.b3.copies"),
                        ("release/ImportFails", "importing it failed: ModuleNotFoundError")]:
        done = subprocess.run([ENVFACTORY, "env", "serve", name], cwd=ROOT, input="",
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, **RELEASE_FIXTURE})
        lines = [x for x in done.stderr.splitlines() if x.startswith("error:")]
        assert done.returncode == 1 and len(lines) == 1 and named in lines[0], done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.skipif(not (SHARED_RELEASE / "envs" / "tools").is_dir(),
                    reason=f"EnvFactory release not found at {SHARED_RELEASE}")
async def test_the_releases_hotel_booking_answers_a_real_mcp_client() -> None:
    environ = {"ENVFACTORY_RELEASE_DIR": str(SHARED_RELEASE)}
    checkpoint = json.loads((SHARED_RELEASE / "envs" / "intermediate"
                             / "HotelBooking_checkpoint.json").read_text())
    first = next(x for x in checkpoint["scenarios"] if x["expected_behavior"] == "pass")
    async with stdio_session(f"release/HotelBooking@{first['scenario_id']}",
                             environ=environ) as s:
        tools = {t.name for t in (await s.list_tools()).tools}
        assert tools == {"book_hotel", "cancel_booking", "get_hotel_details", "get_hotels",
                         "search_destinations", "load_scenario", "save_scenario"}
        saved = json.loads(text(await s.call_tool("save_scenario", {})))
        assert set(saved) == set(first["scenario_data"])
        hotel = next(iter(first["scenario_data"]["hotels"]))
        details = await s.call_tool("get_hotel_details", {"hotel_id": hotel})
        expected = first["scenario_data"]["hotel_details_map"][hotel]
        got = json.loads(text(details))["hotel_details"]
        assert {k: got[k] for k in expected} == expected
        # the server's own answers (HotelBooking.py: an unknown id is an empty result, an
        # empty one its wrapper's ValueError)
        unknown = await s.call_tool("get_hotel_details", {"hotel_id": "no-such-hotel"})
        assert json.loads(text(unknown)) == {"hotel_details": {}}
        empty = await s.call_tool("get_hotel_details", {"hotel_id": ""})
        assert empty.isError and text(empty) == "Hotel ID must be a non-empty string"
