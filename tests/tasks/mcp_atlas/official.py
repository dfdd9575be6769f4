"""Upstream's scorer, run for expected values: `score_claims.py` of the fixture release.

The file's heavy imports (matplotlib, nest_asyncio, ...) are not needed for what the tests
call, so the named top-level definitions are taken out with `ast` and executed in a
namespace holding only what they use. `AsyncLiteLLMClient`'s tenacity retry keeps its 8
attempts, with the 60–120 s waits between them replaced by none.

`JudgeServer` is a local chat-completions endpoint answering each claim's requests from a
script (the claim is found in the prompt), for upstream's aiohttp client and Inspect's
openai-api provider alike; it records every request body.
"""

from __future__ import annotations

import ast
import asyncio
import json
import logging
import os
import random
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput, ModelUsage, get_model

from tests.shared_data import MCP_ATLAS_OFFICIAL

SCORE_CLAIMS = MCP_ATLAS_OFFICIAL / "source" / "services" / "scoring" / "score_claims.py"


def upstream(*names: str) -> dict[str, Any]:
    """A namespace with upstream's top-level functions/classes `names` defined in it."""
    import typing

    tree = ast.parse(SCORE_CLAIMS.read_text(encoding="utf-8"))
    chosen = [node for node in tree.body
              if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
              and node.name in names]
    missing = set(names) - {node.name for node in chosen}
    assert not missing, f"{SCORE_CLAIMS} lacks {missing}"
    namespace: dict[str, Any] = {"re": re, "json": json, "ast": ast, "asyncio": asyncio,
                                 "logging": logging, "os": os, "random": random,
                                 "dataclass": dataclass, **{n: getattr(typing, n) for n in
                                                            ("List", "Dict", "Any", "Optional")}}
    if "AsyncLiteLLMClient" in names:
        import aiohttp
        import tenacity

        namespace.update(aiohttp=aiohttp, retry=tenacity.retry,
                         stop_after_attempt=tenacity.stop_after_attempt,
                         wait_random_exponential=lambda **_: tenacity.wait_none())
    if "evaluate_dataframe_async" in names:
        import pandas
        from tqdm import tqdm

        namespace.update(pd=pandas, tqdm=tqdm)
    exec(compile(ast.Module(body=chosen, type_ignores=[]), str(SCORE_CLAIMS), "exec"),
         namespace)
    return namespace


def upstream_prompt(claim: str, response: str) -> str:
    """`CoverageEvaluator._get_single_claim_evaluation_prompt`, run."""
    evaluator = upstream("CoverageEvaluator")["CoverageEvaluator"]
    return evaluator._get_single_claim_evaluation_prompt(None, claim, response)


class JudgeServer:
    """`/v1/chat/completions` answering from `script`: claim -> replies, one per request
    (a reply is the message content; the last one repeats)."""

    def __init__(self, script: dict[str, list[str]]) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._sent: dict[str, int] = {}
        self._lock = threading.Lock()

    def reply_for(self, body: dict[str, Any]) -> str:
        prompt = body["messages"][0]["content"]
        with self._lock:
            self.requests.append(body)
            # the longest claim found in the prompt (claims may contain each other)
            claim = max((c for c in self.script if c in prompt), key=len)
            n = self._sent[claim] = self._sent.get(claim, 0) + 1
            replies = self.script[claim]
            return replies[min(n, len(replies)) - 1]

    def calls(self, claim: str) -> int:
        return self._sent.get(claim, 0)

    @contextmanager
    def running(self) -> Iterator[str]:
        """Serve on a free local port; yields the base URL (without `/v1`)."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                content = server.reply_for(body)
                data = json.dumps({
                    "id": "c", "object": "chat.completion", "created": 0,
                    "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                              "total_tokens": 2}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=http.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{http.server_port}"
        finally:
            http.shutdown()
            http.server_close()


async def upstream_rows(rows: list[dict[str, Any]], base_url: str) -> list[dict[str, Any]]:
    """Upstream's `evaluate_dataframe_async` on rows of `GTFA_CLAIMS` and `response`, with
    its own client against `base_url`: each row's `coverage_score` and details."""
    import pandas

    ns = upstream("EvaluatorConfig", "clean_claim_text", "extract_claims",
                  "get_single_claim_evaluation_schema", "AsyncLiteLLMClient",
                  "CoverageEvaluator", "evaluate_dataframe_async")
    config = ns["EvaluatorConfig"](model_name="judge-x", api_key="key", base_url=base_url,
                                   request_delay=0.0)
    evaluator = ns["CoverageEvaluator"](ns["AsyncLiteLLMClient"](config), config)
    scored = await ns["evaluate_dataframe_async"](pandas.DataFrame(rows), evaluator, "m")
    return [{"coverage_score": None if pandas.isna(c) else c, **json.loads(d)}
            for c, d in zip(scored["coverage_score"], scored["coverage_details_json"],
                            strict=True)]


class ScriptedJudge:
    """A mockllm judge: `answer(prompt)` gives each reply; records the prompts and configs."""

    def __init__(self, answer: Callable[[str], str]) -> None:
        self.answer = answer
        self.prompts: list[str] = []
        self.configs: list[GenerateConfig] = []

    def __call__(self, input: list[ChatMessage], tools: Any, tool_choice: Any,
                 config: GenerateConfig) -> ModelOutput:
        assert len(input) == 1 and input[0].role == "user"
        self.prompts.append(input[0].text)
        self.configs.append(config)
        output = ModelOutput.from_content("mockllm/model", self.answer(input[0].text))
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    @property
    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self, memoize=False)


def verdict(outcome: str, **fields: Any) -> str:
    """A judge reply with upstream's four fields."""
    return json.dumps({"claim_text": fields.pop("claim_text", "the claim"),
                       "coverage_outcome": outcome, "justification": f"judged {outcome}",
                       "confidence_level": 0.9, **fields})
