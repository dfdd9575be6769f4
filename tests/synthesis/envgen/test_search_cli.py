"""`envfactory envgen search`: the plain index search and the search agent behind --sketch."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai.model import ChatMessage, Model, ModelOutput
from inspect_ai.tool import ToolCall
from typer.testing import CliRunner

import envfactory.cli.envgen_search as envgen_search
import synthesis.envgen.search_agent as search_agent
from envfactory.cli import app
from harness.providers.responder import reply, responder_model
from synthesis.envgen.description import from_sketch
from tests.synthesis.envgen.test_search_agent import GOOD

CORPUS = Path(__file__).resolve().parents[2] / "data" / "envgen_corpus"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["envgen", "search", *args], env={"COLUMNS": "300"})
    return result.exit_code, result.output


def test_plain_search_prints_ranked_hits(tmp_path: Path) -> None:
    code, out = run("severe weather alerts", "--corpus", str(CORPUS), "--k", "2",
                    "--index-dir", str(tmp_path))
    assert code == 0, out
    assert "6 files, 32 sections (6 indexed, 0 removed, 0 unchanged)" in out
    rows = [line for line in out.splitlines() if "weather.rst" in line]
    assert len(rows) == 2
    assert "Weather Service > Alerts" in rows[0] and "13.6" in rows[0]
    assert "Weather Service" in rows[1]
    assert (tmp_path / "envgen_corpus.sqlite").is_file()
    code, out = run("zyzzyva", "--corpus", str(CORPUS), "--index-dir", str(tmp_path))
    assert code == 0 and "no section matches 'zyzzyva'" in out
    assert "6 unchanged" in out  # the index was reused


def test_usage_errors(tmp_path: Path) -> None:
    code, out = run("x", "--corpus", str(tmp_path / "nowhere"), "--index-dir", str(tmp_path))
    assert code == 2 and "nowhere: not a directory" in out
    code, out = run("x", "--corpus", str(CORPUS), "--model", "mockllm/model")
    assert code == 2 and "need --sketch OUT_DIR" in out


def scripted_searcher(monkeypatch: pytest.MonkeyPatch,
                      respond: Callable[[list[ChatMessage]], ModelOutput]) -> list[str]:
    """Make the CLI's searcher role a scripted model; returns the roles it asked for."""
    asked: list[str] = []

    def fake(roles: list[str], *args: object, **kwargs: object) -> dict[str, Model]:
        asked.extend(roles)
        return {role: responder_model(respond) for role in roles}

    monkeypatch.setattr(envgen_search, "role_models", fake)
    return asked


def test_sketch_runs_the_agent_and_writes_sketches(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    prompts: list[str] = []

    def respond(messages: list[ChatMessage]) -> ModelOutput:
        prompts.append(messages[0].text)
        if len(messages) == 2:
            return reply(calls=[ToolCall(id="c1", function="search_docs",
                                         arguments={"query": "invitation"})])
        if len(messages) == 4:
            return reply(calls=[ToolCall(id="c2", function="write_sketch",
                                         arguments={"code": GOOD})])
        return reply("Proposed: Calendar.")

    asked = scripted_searcher(monkeypatch, respond)
    out_dir = tmp_path / "sketches"
    code, out = run("a calendar API with events and invitations", "--corpus", str(CORPUS),
                    "--index-dir", str(tmp_path), "--sketch", str(out_dir), "--model", "x/y")
    assert code == 0, out
    assert asked == ["searcher"]
    assert "calendar_sketch.py" in out and "Proposed: Calendar." in out
    assert "1 searches, 0 reads, 0 web searches, 0 sketches refused, 3 model calls" in out
    assert [t.name for t in from_sketch(out_dir / "calendar_sketch.py").tools] == [
        "create_event", "send_invitation", "respond_to_invitation", "list_invitations"]
    assert "web_search" not in prompts[0]


def test_web_search_needs_network_and_is_offered_when_enabled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen_tools: list[str] = []

    def respond(messages: list[ChatMessage]) -> ModelOutput:
        seen_tools.append(messages[0].text)
        if len(messages) == 2:
            return reply(calls=[ToolCall(id="c1", function="write_sketch",
                                         arguments={"code": GOOD})])
        return reply("Done.")

    scripted_searcher(monkeypatch, respond)
    monkeypatch.setattr(search_agent, "network_available", lambda: False)
    code, out = run("calendar", "--corpus", str(CORPUS), "--index-dir", str(tmp_path),
                    "--sketch", str(tmp_path / "a"), "--web-search", "tavily")
    assert code == 2 and "--web-search: this machine has no network" in out
    assert seen_tools == []
    monkeypatch.setattr(search_agent, "network_available", lambda: True)
    code, out = run("calendar", "--corpus", str(CORPUS), "--index-dir", str(tmp_path),
                    "--sketch", str(tmp_path / "b"), "--web-search", "tavily")
    assert code == 0, out
    assert "web_search(query) searches the web" in seen_tools[0]
