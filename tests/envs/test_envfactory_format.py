"""EnvFactory single-file servers wrapped in our contract, each instance isolated."""

from __future__ import annotations

from pathlib import Path

import pytest

from envs.envfactory_format import EnvFactoryFormatEnvironment, FormatError, load_directory

FIXTURES = Path(__file__).parents[1] / "data" / "envfactory_format"


def test_load_directory_and_tools() -> None:
    factories = load_directory(FIXTURES)
    env = factories["NotesAPI"]()
    specs = {s.name: s for s in env.tools()}
    assert set(specs) == {"create_note", "get_note", "tag_note"}  # load/save are not tools
    assert specs["create_note"].write and not specs["get_note"].write
    assert specs["create_note"].parameters["required"] == ["title"]


def test_instances_do_not_share_the_module_global_api() -> None:
    a = EnvFactoryFormatEnvironment(FIXTURES / "NotesAPI.py")
    b = EnvFactoryFormatEnvironment(FIXTURES / "NotesAPI.py")
    assert a.call("create_note", {"title": "groceries"}).content == {"note_id": "N1"}
    assert b.snapshot()["notes"] == {}
    assert b.call("create_note", {"title": "other"}).content == {"note_id": "N1"}


def test_errors_and_rollback() -> None:
    env = EnvFactoryFormatEnvironment(FIXTURES / "NotesAPI.py")
    env.call("create_note", {"title": "t"})
    env.call("tag_note", {"note_id": "N1", "tags": ["a", "b"]})
    before = env.snapshot()
    r = env.call("tag_note", {"note_id": "N1", "tags": ["c", "d"]})  # fails after one append
    assert not r.ok and r.error == "note N1 cannot have more than 3 tags"
    assert env.snapshot() == before
    assert env.call("get_note", {"note_id": "N9"}).error == "note N9 not found"
    assert "missing required argument 'title'" in (env.call("create_note", {}).error or "")
    assert "Unknown tool" in (env.call("load_scenario", {}).error or "")


def test_snapshot_round_trip_via_load_save_scenario() -> None:
    env = EnvFactoryFormatEnvironment(FIXTURES / "NotesAPI.py")
    env.call("create_note", {"title": "t", "body": "b"})
    snap = env.snapshot()
    other = EnvFactoryFormatEnvironment(FIXTURES / "NotesAPI.py", scenario=snap)
    assert other.snapshot() == snap


def test_bad_files_are_named(tmp_path: Path) -> None:
    (tmp_path / "Broken.py").write_text("x = 1\n")
    with pytest.raises(FormatError, match="Broken.py: expected exactly one FastMCP"):
        load_directory(tmp_path)
