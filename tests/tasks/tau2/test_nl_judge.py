"""τ²'s NL-assertion judge request against upstream's, on the wire.

`tests/data/tau2/official/nl_judge_request.json` was recorded by running v0.2.0's own
`NLAssertionsEvaluator.evaluate_nl_assertions` (unmodified, real litellm) against
`testkit.recording_server` (its `recorded` and `driver` fields say how); it holds the two
release files the judge reads (MIT), the trajectory, the assertions, the HTTP body litellm
sent and the checks upstream returned. Our judge (`tasks._tau2.scoring.model_judge`) reads
the same files through `TAU2_SOURCE_DIR`, talks to the same server with the same scripted
reply through Inspect's `openai/` provider, and must send the same messages and
temperature and come back with the same verdicts.
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import get_model

from harness.trajectory import Message
from tasks._tau2 import nl_assertions
from tasks._tau2.scoring import model_judge
from testkit.recording_server import Api, RecordingServer, Reply

FIXTURE = Path(__file__).parents[2] / "data" / "tau2" / "official" / "nl_judge_request.json"
RECORDED: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))


def scripted_judge(api: Api, body: Mapping[str, Any]) -> Reply:
    """The recording's responder (`driver["drv/behaviours.py"]`): all met but the second."""
    user = body["messages"][-1]["content"]
    found = re.search(r"expectedOutcomes:\n\s*(\[.*\])", user, re.S)
    assert found is not None, user
    listed = ast.literal_eval(found.group(1))
    return Reply(content=json.dumps({"results": [
        {"expectedOutcome": a, "reasoning": f"r{i}", "metExpectation": i != 1}
        for i, a in enumerate(listed)]}))


@pytest.fixture
def release_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The recorded release files as a `TAU2_SOURCE_DIR` (the prompt cache emptied)."""
    for relative, text in RECORDED["sources"].items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("TAU2_SOURCE_DIR", str(tmp_path))
    nl_assertions.nl_assertion_prompt.cache_clear()
    yield tmp_path
    nl_assertions.nl_assertion_prompt.cache_clear()


def trajectory() -> list[Message]:
    return [Message.model_validate(m) for m in RECORDED["trajectory"]]


def run_judge(server: RecordingServer) -> list[dict[str, Any]]:
    model = get_model("openai/gpt-4o-mini", base_url=server.url, api_key="sk-scripted")
    judge = model_judge(model)

    async def call() -> list[dict[str, Any]]:
        return await judge(trajectory(), list(RECORDED["assertions"]))

    return asyncio.run(call())


def test_the_request_equals_upstreams(release_source: Path) -> None:
    with RecordingServer(scripted_judge) as server:
        results = run_judge(server)
    (sent,) = server.requests
    expected = RECORDED["request"]
    assert sent.body["messages"] == expected["messages"]
    assert sent.body["temperature"] == expected["temperature"] == 0.0
    assert [(r["expectedOutcome"], r["metExpectation"], r["reasoning"]) for r in results] == [
        (c["nl_assertion"], c["met"], c["justification"]) for c in RECORDED["checks"]]


def test_every_message_is_rendered_with_upstreams_labels(release_source: Path) -> None:
    """Hand-read from the recording: a tool-call message without text reads `None`, an
    empty one stays (nothing is dropped), tool results are `tool:` lines, and the
    assertions are printed as a Python list."""
    user = nl_assertions.nl_assertion_prompt().render(trajectory(), RECORDED["assertions"])
    assert "\nassistant: None\ntool: {\"reservation_id\"" in user
    assert "\nassistant: \ntool: Error: user not found\n" in user
    assert user.startswith("\n        conversation:\n        assistant: Hi! How can I help")
    assert "expectedOutcomes:\n        ['Agent should not cancel reservation EHGLP3.', " in user


def test_the_system_prompt_is_the_releases(release_source: Path) -> None:
    system = nl_assertions.nl_assertion_prompt().system
    assert system == RECORDED["request"]["messages"][0]["content"]
    assert system.startswith("\n        TASK\n        - You will be given a list of expected")


def test_a_release_of_another_shape_is_refused_naming_the_file(release_source: Path) -> None:
    path = release_source / "src/tau2/evaluator/evaluator_nl_assertions.py"
    path.write_text(path.read_text(encoding="utf-8").replace("user_prompt = f", "user_prompt = "),
                    encoding="utf-8")
    with pytest.raises(ValueError, match=r"evaluator_nl_assertions\.py: the f-string "
                                         r"`user_prompt` not found"):
        nl_assertions.nl_assertion_prompt()
