"""EnvGen registration: generated environments listed, created, served over MCP and read
by the tool graph like the pool's, and only when their report shows every test passing."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from envs import registry
from envs.generated import (
    ENV_VAR,
    GeneratedEnvError,
    generated_dir,
    list_generated,
    register_generated,
    report_problem,
)
from envs.world import World

ROOT = Path(__file__).resolve().parents[2]
SHELF = ROOT / "tests" / "data" / "envgen_generated" / "shelf.py"
NOTES = ROOT / "tests" / "data" / "envfactory_format" / "NotesAPI.py"
ENVFACTORY = str(Path(sys.executable).parent / "envfactory")
PASSED: dict[str, Any] = {  # the fields of EnvGen's EnvReport that registration reads
    "all_passed": True, "tests_failed": 0, "failing_criteria": [], "revisions": 1,
    "criteria": {c: {"passed": 3, "failed": 0}
                 for c in ("interface", "executability", "behaviour", "state")}}


@pytest.fixture
def gen_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "generated"
    monkeypatch.setenv(ENV_VAR, str(root))
    return root


def test_generated_dir_default_and_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.delenv("ENVFACTORY_CACHE", raising=False)
    assert generated_dir() == Path.home() / ".cache" / "envfactory" / "generated_envs"
    monkeypatch.setenv("ENVFACTORY_CACHE", "/srv/cache")  # the one cache root moves it
    assert generated_dir() == Path("/srv/cache/generated_envs")
    monkeypatch.setenv(ENV_VAR, "/srv/envs")
    assert generated_dir() == Path("/srv/envs")


def test_register_contract_env_then_list_create_and_call(gen_root: Path) -> None:
    folder = register_generated(SHELF, "shelf", PASSED)
    assert folder == gen_root / "shelf"
    assert sorted(p.name for p in folder.iterdir()) == [
        "environment.py", "registration.json", "report.json"]
    assert (folder / "environment.py").read_bytes() == SHELF.read_bytes()
    assert json.loads((folder / "report.json").read_text()) == PASSED
    info = json.loads((folder / "registration.json").read_text())
    assert (info["kind"], info["tools"]) == ("contract", 3)

    entry = registry.get("generated/shelf")
    assert entry.source == "generated (contract)"
    assert entry.description == "A small bookshelf: add books, look them up, lend them out."
    assert [(s.name, s.write) for s in entry.specs()] == [
        ("add_book", True), ("get_book", False), ("lend_book", True)]
    assert "generated/shelf" in [e.name for e in registry.all_entries()]
    env = registry.create("generated/shelf")
    assert env.call("add_book", {"title": "Emma"}).content == {"book_id": "B2"}
    assert env.call("lend_book", {"book_id": "B2"}).content == "B2 lent"
    refused = env.call("lend_book", {"book_id": "B2"})
    assert (refused.ok, refused.error) == (False, "B2 is already on loan")
    # every create() is a fresh world
    assert registry.create("generated/shelf").call("get_book", {"book_id": "B2"}).ok is False
    # QueryGen and the harness reach it through World, with qualified names
    world = World(["generated/shelf"])
    assert "generated/shelf-get_book" in [q for q, _ in world.tools()]
    assert world.call_qualified("generated/shelf-get_book", {"book_id": "B1"}).content == {
        "book_id": "B1", "title": "Dune", "on_loan": False}


def test_register_envfactory_format_file(gen_root: Path) -> None:
    register_generated(NOTES, "notes", PASSED)
    entry = registry.get("generated/notes")
    assert entry.source == "generated (envfactory-format)"
    assert [s.name for s in entry.specs()] == ["create_note", "get_note", "tag_note"]
    env = registry.create("generated/notes")
    assert env.call("create_note", {"title": "milk"}).content == {"note_id": "N1"}
    assert env.call("get_note", {"note_id": "N1"}).content["title"] == "milk"
    assert registry.create("generated/notes").call("get_note", {"note_id": "N1"}).ok is False


@pytest.mark.parametrize(("report", "reason"), [
    ({}, "all_passed: None, not true"),
    ({"all_passed": False}, "all_passed: False, not true"),
    ({"all_passed": "yes"}, "all_passed: 'yes', not true"),
    ({"all_passed": True, "criteria": {"interface": {"passed": 2, "failed": 0},
                                       "state": {"passed": 1, "failed": 1}}},
     "failing criteria: state"),
    ({"all_passed": True, "criteria": {"behaviour": False, "interface": True}},
     "failing criteria: behaviour"),
    ({"all_passed": True, "failed": 2}, "counts 2 failed tests"),
    ({"all_passed": True, "tests_failed": 1}, r"counts 1 failed tests \(tests_failed\)"),
    ({"all_passed": True, "failing_criteria": ["interface"]}, "failing criteria: interface"),
])
def test_a_report_without_every_test_passing_is_refused(gen_root: Path, report: dict[str, Any],
                                                        reason: str) -> None:
    assert re.search(reason, report_problem(report) or "")
    with pytest.raises(GeneratedEnvError, match=rf"cannot register 'shelf' from .*shelf.py: "
                                                rf"its report .*{reason}.*only an environment "
                                                "whose tests all pass is registered"):
        register_generated(SHELF, "shelf", report)
    assert not gen_root.exists() or list(gen_root.iterdir()) == []
    assert report_problem(PASSED) is None


def test_bad_names_and_files_are_refused(tmp_path: Path, gen_root: Path) -> None:
    for name in ("", "1abc", "a/b", "a-b", "../x", "x" * 65):
        with pytest.raises(GeneratedEnvError, match="a name is a letter followed by"):
            register_generated(SHELF, name, PASSED)
    with pytest.raises(GeneratedEnvError, match="is not a file"):
        register_generated(tmp_path / "missing.py", "x", PASSED)
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n")
    with pytest.raises(GeneratedEnvError, match=r"broken.py: importing it failed: SyntaxError"):
        register_generated(broken, "broken", PASSED)
    plain = tmp_path / "plain.py"
    plain.write_text("X = 1\n")
    with pytest.raises(GeneratedEnvError, match=r"plain.py: no Environment subclass, and not "
                                                r"EnvFactory's single-file format either"):
        register_generated(plain, "plain", PASSED)
    two = tmp_path / "two.py"
    two.write_text(SHELF.read_text() + "\n\nclass Other(Environment):\n    State = ShelfState\n")
    with pytest.raises(GeneratedEnvError, match=r"defines 2 environments \(Other, Shelf\)"):
        register_generated(two, "two", PASSED)
    bad_default = tmp_path / "bad_default.py"
    bad_default.write_text(SHELF.read_text().replace(
        'return ShelfState(books={"B1": Book(book_id="B1", title="Dune")}, next_id=2)',
        "raise RuntimeError('no seed')"))
    with pytest.raises(GeneratedEnvError, match="building it failed: RuntimeError: no seed"):
        register_generated(bad_default, "bad_default", PASSED)
    assert list_generated() == []


def test_reregistering_replaces_the_previous_version(tmp_path: Path, gen_root: Path) -> None:
    register_generated(SHELF, "shelf", PASSED)
    newer = tmp_path / "shelf.py"
    newer.write_text(SHELF.read_text().replace('title="Dune"', 'title="Emma"'))
    register_generated(newer, "shelf", {**PASSED, "revisions": 2})
    assert [n for n, _, _ in list_generated()] == ["shelf"]
    assert sorted(p.name for p in gen_root.iterdir()) == ["shelf"]  # no staging left behind
    assert registry.create("generated/shelf").call("get_book", {"book_id": "B1"}).content[
        "title"] == "Emma"
    assert json.loads((gen_root / "shelf" / "report.json").read_text())["revisions"] == 2


def test_a_broken_registration_fails_alone(gen_root: Path) -> None:
    register_generated(SHELF, "shelf", PASSED)
    register_generated(NOTES, "notes", PASSED)
    (gen_root / "notes" / "environment.py").write_text("raise ImportError('gone')\n")
    names = [e.name for e in registry.all_entries()]
    assert {"generated/shelf", "generated/notes"} <= set(names)
    with pytest.raises(KeyError, match=r"'generated/notes' cannot be loaded: .*environment.py: "
                                       r"importing it failed: ImportError: gone"):
        registry.get("generated/notes")
    assert registry.create("generated/shelf").call("get_book", {"book_id": "B1"}).ok


def run_cli(*args: str) -> tuple[int, str]:
    """`envfactory ARGS` in-process (the console script's app; MCP serving below runs the
    real script)."""
    from typer.testing import CliRunner

    from envfactory.cli import app

    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "250"})
    return result.exit_code, result.output


def test_env_list_and_show_through_the_cli(gen_root: Path) -> None:
    register_generated(SHELF, "shelf", PASSED)
    register_generated(NOTES, "notes", PASSED)
    (gen_root / "notes" / "environment.py").write_text("def broken(:\n")
    code, listed = run_cli("env", "list")
    assert code == 0, listed
    rows = {line.split("│")[1].strip(): line for line in listed.splitlines()
            if line.count("│") >= 4}
    assert [c.strip() for c in rows["generated/shelf"].split("│")[1:5]] == [
        "generated/shelf", "3", "2", "generated (contract)"]
    assert "unavailable" in rows["generated/notes"] and "SyntaxError" in listed
    assert "email" in rows  # the pool is still listed
    code, shown = run_cli("env", "show", "generated/shelf", "--json")
    assert code == 0
    assert [s["name"] for s in json.loads(shown)] == ["add_book", "get_book", "lend_book"]
    code, broken = run_cli("env", "show", "generated/notes")
    assert code == 1 and "cannot be loaded" in broken


async def test_served_over_mcp(gen_root: Path) -> None:
    register_generated(SHELF, "shelf", PASSED)
    params = StdioServerParameters(command=ENVFACTORY, args=["env", "serve", "generated/shelf"],
                                   cwd=str(ROOT), env={**os.environ, ENV_VAR: str(gen_root)})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert {"add_book", "get_book", "lend_book", "save_scenario"} <= set(tools)
        assert tools["get_book"].annotations.readOnlyHint is True
        added = await session.call_tool("add_book", {"title": "Emma"})
        assert json.loads(added.content[0].text) == {"book_id": "B2"}
        await session.call_tool("lend_book", {"book_id": "B2"})
        again = await session.call_tool("lend_book", {"book_id": "B2"})
        assert again.isError and again.content[0].text == "B2 is already on loan"
        saved = json.loads((await session.call_tool("save_scenario", {})).content[0].text)
        assert saved["books"]["B2"] == {"book_id": "B2", "title": "Emma", "on_loan": True}


def test_the_tool_graph_reads_generated_envs(gen_root: Path) -> None:
    from synthesis.graph import build_graph, specs_from_registry
    from tests.synthesis.test_graph import AxisEmbedder

    register_generated(SHELF, "shelf", PASSED)
    sources = specs_from_registry(["generated/shelf"])
    graph = build_graph(sources, AxisEmbedder())
    # get_book's result (book_id, title, on_loan) feeds lend_book's book_id and add_book's
    # title; add_book and lend_book return open dict / str results ("result"): no edges
    depends = {(a, b) for a, b, kind in graph.g.edges(data="kind") if kind == "Tool_Depend"}
    assert depends == {("generated/shelf-get_book", "generated/shelf-lend_book"),
                       ("generated/shelf-get_book", "generated/shelf-add_book")}


async def test_querygen_writes_states_for_generated_envs(gen_root: Path) -> None:
    from harness.providers.responder import reply, responder_model
    from synthesis.querygen.agents import write_state

    register_generated(SHELF, "shelf", PASSED)
    state = {"books": {"B7": {"book_id": "B7", "title": "Persuasion", "on_loan": True}},
             "next_id": 8}
    model = responder_model(lambda _: reply(f"<state>{json.dumps(state)}</state>"))
    default = registry.create("generated/shelf").snapshot()
    written = await write_state(model, "generated/shelf", "a reader", default, retries=0)
    assert written == state  # validated by the generated environment's own State model
