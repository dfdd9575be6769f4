"""A recording OpenAI-compatible server on 127.0.0.1, for request-level fidelity checks.

Fidelity is proved on the wire: the official harness and our Inspect task are pointed at
the same server, which appends every request body to a JSONL file and answers with what a
*responder* returns. A responder is a deterministic function of the request (a scripted
behaviour: look up, write, send bad arguments, stop...), so both harnesses live through
the same conversation and their recorded requests can be diffed field by field.

It speaks Chat Completions (`/v1/chat/completions`) and the Responses API
(`/v1/responses`), non-streaming, which is what the official BFCL handlers, LiteLLM
(τ²) and Inspect's `openai/` provider send by default. A reply may carry reasoning
(`ReplyReasoning`): on the Responses API it is the first output item, `type:
"reasoning"` with a summary and `encrypted_content`, as a reasoning model answers a
request with `include: ["reasoning.encrypted_content"]`, so a test can check that a
harness sends it back in later requests; Chat Completions has no such item and leaves
it out.

    with RecordingServer(responder, record=Path("requests.jsonl")) as server:
        ...  # OPENAI_BASE_URL=server.url

or, for a harness in another virtual environment:

    python -m testkit.recording_server --port 8765 --record out.jsonl \
        --responder mypackage.behaviours:lookup_then_stop
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import threading
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = ["Api", "RecordedRequest", "Reply", "ReplyCall", "ReplyReasoning", "RecordingServer",
           "Responder"]

Api = Literal["chat", "responses"]


class ReplyCall(BaseModel):
    """One tool call the scripted model makes; `arguments` is sent as-is (it may be bad JSON)."""

    name: str
    arguments: str = "{}"


class ReplyReasoning(BaseModel):
    """A reasoning item: its readable summary and the opaque blob only the server can
    read (`encrypted_content`), which a harness must send back unchanged."""

    summary: str
    encrypted_content: str


class Reply(BaseModel):
    """What the scripted model answers: text, tool calls, or both (after its reasoning,
    on the Responses API)."""

    content: str | None = None
    tool_calls: list[ReplyCall] = Field(default_factory=list)
    reasoning: ReplyReasoning | None = None


class RecordedRequest(BaseModel):
    """One request as it arrived: which API, its path and its JSON body."""

    index: int
    api: Api
    path: str
    body: dict[str, Any]


Responder = Callable[[Api, Mapping[str, Any]], Reply]


def _chat_response(reply: Reply, model: str, ids: itertools.count[int]) -> dict[str, Any]:
    calls = [{"id": f"call_{next(ids)}", "type": "function",
              "function": {"name": c.name, "arguments": c.arguments}} for c in reply.tool_calls]
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{next(ids)}", "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _responses_response(reply: Reply, model: str, ids: itertools.count[int]) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        output.append({"type": "reasoning", "id": f"rs_{next(ids)}",
                       "summary": [{"type": "summary_text", "text": reply.reasoning.summary}],
                       "encrypted_content": reply.reasoning.encrypted_content})
    if reply.content is not None:
        output.append({"type": "message", "id": f"msg_{next(ids)}", "role": "assistant",
                       "status": "completed",
                       "content": [{"type": "output_text", "text": reply.content,
                                    "annotations": []}]})
    for call in reply.tool_calls:
        n = next(ids)
        output.append({"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                       "name": call.name, "arguments": call.arguments, "status": "completed"})
    return {
        "id": f"resp_{next(ids)}", "object": "response", "created_at": int(time.time()),
        "model": model, "status": "completed", "output": output,
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                  "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    }


class RecordingServer:
    """A threaded HTTP server answering from `responder` and recording every request."""

    def __init__(self, responder: Responder, record: Path | None = None,
                 host: str = "127.0.0.1", port: int = 0) -> None:
        self.responder = responder
        self.record = record
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd = ThreadingHTTPServer((host, port), self._handler_class())
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL for OpenAI clients (`OPENAI_BASE_URL`), ending in `/v1`."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """Record one request and build the API response for the responder's reply."""
        api: Api = "responses" if path.rstrip("/").endswith("/responses") else "chat"
        with self._lock:
            recorded = RecordedRequest(index=len(self.requests), api=api, path=path, body=body)
            self.requests.append(recorded)
            if self.record is not None:
                with self.record.open("a", encoding="utf-8") as out:
                    out.write(recorded.model_dump_json() + "\n")
        reply = self.responder(api, body)
        model = str(body.get("model", "scripted"))
        build = _responses_response if api == "responses" else _chat_response
        return build(reply, model, self._ids)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, status: int, payload: Mapping[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [
                        {"id": "scripted", "object": "model", "owned_by": "envfactory"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError as error:
                    self._send(400, {"error": {"message": f"request body is not JSON: {error}"}})
                    return
                path = self.path.split("?")[0]
                if not path.rstrip("/").endswith(("/chat/completions", "/responses")):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                try:
                    self._send(200, server.answer(path, body))
                except Exception as error:  # the responder's bug, reported to the client
                    self._send(500, {"error": {"message": f"{type(error).__name__}: {error}"}})

            def log_message(self, format: str, *args: Any) -> None:
                pass  # requests are in the record; keep test output quiet

        return Handler

    def start(self) -> RecordingServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> RecordingServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def _load_responder(spec: str) -> Responder:
    module_name, _, attr = spec.partition(":")
    if not attr:
        raise SystemExit(f"--responder must be module:function, got {spec!r}")
    responder: Responder = getattr(importlib.import_module(module_name), attr)
    return responder


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--record", type=Path, required=True, help="JSONL file to append to")
    parser.add_argument("--responder", required=True, help="module:function returning a Reply")
    args = parser.parse_args(argv)
    server = RecordingServer(_load_responder(args.responder), args.record, port=args.port)
    print(f"recording server at {server.url}, writing {args.record}", flush=True)
    try:
        server._httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._httpd.server_close()


if __name__ == "__main__":
    main()
