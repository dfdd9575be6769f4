"""Upstream's outputs, recorded, and the test doubles that stand where upstream's judge was.

`recorded(name)` reads `tests/data/mcp_atlas/official/recorded/<name>.json`: what the
official code of the pinned commit returned (claims it extracted, prompts it rendered,
scores and requests of a scripted judging run, its tables), recorded once; see that
folder's README. No upstream code is kept in the repository.

The product reads a few literals of upstream's files at run time (the judge prompt's
f-string, the schema, the response cut-off, TOOL_NAME_MAPPINGS, CACHEABLE_SERVERS); tests
point `MCP_ATLAS_SOURCE_DIR` at the real files (`tests.shared_data.MCP_ATLAS_SOURCE`), so
what the product reads from them is compared with what upstream's code returned.

`JudgeServer` is a local chat-completions endpoint (testkit's recording server) answering
each claim's requests from a script (the claim is found in the prompt), for upstream's
aiohttp client (when recording) and Inspect's openai-api provider alike; it records every
request body.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from typing import Any

from testkit.recording_server import Api, RecordingServer, Reply
from testkit.scripted import Answer, Request, ScriptedModel
from tests.shared_data import MCP_ATLAS_OFFICIAL

RECORDED = MCP_ATLAS_OFFICIAL / "recorded"
SCORER_FILE = "services/scoring/score_claims.py"
ENVIRONMENT_MAIN = "services/agent-environment/src/agent_environment/main.py"
TAXONOMY_FILE = "services/diagnostics/mcp_failure_taxonomy.py"


@cache
def _load(name: str) -> str:
    return (RECORDED / f"{name}.json").read_text(encoding="utf-8")


def recorded(name: str) -> dict[str, Any]:
    """A recorded file (`claims`, `judge`, `scoring`, `tables`), as a fresh copy."""
    value: dict[str, Any] = json.loads(_load(name))
    return value


def digest(value: Any) -> str:
    """sha256 of `value`'s JSON, as the recording hashed claims and prompts."""
    return hashlib.sha256(json.dumps(value, ensure_ascii=False).encode()).hexdigest()


def normalised_request(body: dict[str, Any]) -> dict[str, Any]:
    """A copy of a chat-completions body whose prompt, if over 4,096 characters, is replaced
    by its sha256 and length (as the recording keeps the 500,000-character one)."""
    body = json.loads(json.dumps(body))
    content = body["messages"][0]["content"]
    if len(content) > 4096:
        body["messages"][0]["content"] = f"sha256:{digest(content)} ({len(content)} chars)"
    return body


class JudgeServer:
    """`/v1/chat/completions` answering from `script`: claim -> replies, one per request
    (a reply is the message content; the last one repeats); `requests` holds the bodies."""

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

    def __call__(self, api: Api, body: Mapping[str, Any]) -> Reply:
        """The recording server's responder."""
        return Reply(content=self.reply_for(dict(body)))

    @contextmanager
    def running(self) -> Iterator[str]:
        """Serve on a free local port (testkit's recording server); yields the base URL
        (without `/v1`)."""
        with RecordingServer(self) as server:
            yield server.url.removesuffix("/v1")


class ScriptedJudge(ScriptedModel):
    """A judge sent one user message, the prompt: `answer(prompt)` gives each reply; it
    records the requests (`prompts`, `configs`)."""

    def __init__(self, answer: Callable[[str], str]) -> None:
        def respond(request: Request) -> Answer:
            assert len(request.messages) == 1 and request.messages[0].role == "user"
            return answer(request.messages[0].text)

        super().__init__(respond)


def verdict(outcome: str, **fields: Any) -> str:
    """A judge reply with upstream's four fields."""
    return json.dumps({"claim_text": fields.pop("claim_text", "the claim"),
                       "coverage_outcome": outcome, "justification": f"judged {outcome}",
                       "confidence_level": 0.9, **fields})
