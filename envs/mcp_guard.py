"""What the streamable-HTTP MCP endpoint checks before the SDK sees a request.

The SDK's transport reads any body whole, lets a deeply nested one crash its JSON
parser (HTTP 500), answers a method it does not know with "Invalid params" (-32602)
and logs a traceback when a client closes its session normally. `RequestGuard` wraps
the endpoint: a POST body is read up to a limit (413 beyond it; see `_read_body` for how
the 413 reaches a client that is still sending), parsed once, and
answered with the JSON-RPC error the specification prescribes when it is not one
well-formed message (-32700 parse error, -32600 invalid request, -32601 method not
found), and a notification of a kind MCP does not define is accepted and dropped (a
notification gets no answer); what passes is handed on unchanged. `quiet_sdk_logs`
drops the SDK's tracebacks for streams closed by a departing client and keeps its
warning about a malformed request to one line.
"""

from __future__ import annotations

import json
import logging
from typing import Any, get_args

import anyio
from mcp import types
from pydantic import ValidationError
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["DEFAULT_MAX_BODY_BYTES", "MAX_DISCARD_BYTES", "MAX_NESTING", "RequestGuard",
           "quiet_sdk_logs"]

#: 16 MiB: room for a τ² database as a load_scenario argument (the airline DB is 7 MB)
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
#: how much of a too-large body is read and thrown away before the 413 is sent (at least
#: this, or 4 times the limit); past it the 413 goes out at once and the connection closes
MAX_DISCARD_BYTES = 256 * 1024 * 1024
#: deepest nesting of arrays/objects accepted in a message (scenarios are < 20 deep)
MAX_NESTING = 100

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND = -32700, -32600, -32601

#: every request method of the MCP version the SDK implements; the server answers
#: those it has no handler for with "Method not found" itself
CLIENT_METHODS = frozenset(
    method
    for request in get_args(types.ClientRequestType)
    for method in get_args(request.model_fields["method"].annotation)
)
CLIENT_NOTIFICATIONS = frozenset(
    method
    for notification in get_args(types.ClientNotificationType)
    for method in get_args(notification.model_fields["method"].annotation)
)


class _Dropped(Exception):
    """A notification nobody handles: HTTP 202, nothing forwarded, nothing logged."""


class _Rejected(Exception):
    def __init__(self, status: int, code: int, message: str, request_id: Any = None,
                 close: bool = False) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.request_id = status, code, message, request_id
        self.close = close  # answered with `Connection: close`: the body is left unread


class RequestGuard:
    """ASGI middleware: bounded, well-formed JSON-RPC POST bodies only."""

    def __init__(self, app: ASGIApp, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        try:
            body = await self._read_body(scope, receive)
            if body is None:  # the client went away mid-request
                return
            _check_message(body)
        except _Dropped:
            await Response(status_code=202)(scope, receive, send)
            return
        except _Rejected as e:
            error = {"jsonrpc": "2.0", "id": e.request_id,
                     "error": {"code": e.code, "message": e.message}}
            await Response(json.dumps(error), status_code=e.status,
                           headers={"Connection": "close"} if e.close else None,
                           media_type="application/json")(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    async def _read_body(self, scope: Scope, receive: Receive) -> bytes | None:
        """The whole body, or `_Rejected` (413) past the limit.

        A client that sends its whole body before it reads (httpx, curl, and urllib, which
        also asks for `Connection: close`) must see the 413 even so: answering while it is
        still sending and then closing resets the connection, and the reset destroys the
        answer. So a too-large body is read to its end and thrown away (up to
        `MAX_DISCARD_BYTES`) before the 413 goes out. A client that waits for
        `100 Continue` has sent nothing yet: it gets the 413 at once and never sends it.
        """
        limit = self.max_body_bytes
        headers = dict(scope["headers"])
        declared = headers.get(b"content-length")
        too_large = declared is not None and declared.isdigit() and int(declared) > limit
        if too_large and headers.get(b"expect", b"").lower() == b"100-continue":
            raise _too_large(limit, close=True)
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            more = message.get("more_body", False)
            if too_large or size > limit:
                too_large = True
                chunks.clear()
                if not more:
                    raise _too_large(limit)
                if size > max(MAX_DISCARD_BYTES, 4 * limit):
                    raise _too_large(limit, close=True)
                continue
            chunks.append(chunk)
            if not more:
                return b"".join(chunks)


def _too_large(limit: int, close: bool = False) -> _Rejected:
    return _Rejected(413, INVALID_REQUEST,
                     f"Request body too large: this server accepts at most {limit} bytes",
                     close=close)


def _check_message(body: bytes) -> None:
    """Raise `_Rejected` unless `body` is one JSON-RPC message with a known method
    (`_Dropped` for a notification of an unknown kind)."""
    try:
        raw = json.loads(body)
    except RecursionError:
        raise _Rejected(400, PARSE_ERROR,
                        f"Parse error: nested deeper than {MAX_NESTING} levels") from None
    except (ValueError, UnicodeDecodeError) as e:  # JSONDecodeError is a ValueError
        raise _Rejected(400, PARSE_ERROR, f"Parse error: {e}") from None
    if not isinstance(raw, dict):
        raise _Rejected(400, INVALID_REQUEST,
                        "Invalid Request: expected one JSON-RPC message object")
    request_id = raw.get("id") if isinstance(raw.get("id"), str | int) else None
    if _depth(raw) > MAX_NESTING:
        raise _Rejected(400, INVALID_REQUEST,
                        f"Invalid Request: nested deeper than {MAX_NESTING} levels", request_id)
    try:
        message = types.JSONRPCMessage.model_validate(raw)
    except ValidationError:
        raise _Rejected(400, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message",
                        request_id) from None
    root = message.root
    if isinstance(root, types.JSONRPCRequest) and root.method not in CLIENT_METHODS:
        raise _Rejected(200, METHOD_NOT_FOUND, f"Method not found: {root.method}", root.id)
    if isinstance(root, types.JSONRPCNotification) and root.method not in CLIENT_NOTIFICATIONS:
        raise _Dropped


def _depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_NESTING:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that yields the already-read body, then the client's own events."""
    pending = True

    async def replayed() -> Message:
        nonlocal pending
        if pending:
            pending = False
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


_DISCONNECTS = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)


class _DropDisconnects(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, _DISCONNECTS)


class _FirstLineOfValidationWarnings(logging.Filter):
    """The SDK logs "Failed to validate request: <a pydantic error per union member>"
    (about 30 lines) on the root logger; the first line says what happened."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message.startswith("Failed to validate") and "\n" in message:
            record.msg, record.args = message.splitlines()[0], None
        return True


def quiet_sdk_logs() -> None:
    """Stop the SDK from logging a traceback for every closed session, and a page for
    every malformed request. Idempotent."""
    for name, kind in (("mcp.server.streamable_http", _DropDisconnects),
                       ("", _FirstLineOfValidationWarnings)):
        logger = logging.getLogger(name)
        if not any(isinstance(f, kind) for f in logger.filters):
            logger.addFilter(kind())
