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


def test_restoring_a_scenario_loaded_before_resets_the_episode() -> None:
    """The reset to a scenario this instance already loaded skips the deep undo copy;
    the state it gives is the scenario's, again and again, and never the caller's."""
    env = EnvFactoryFormatEnvironment(FIXTURES / "NotesAPI.py")
    env.call("create_note", {"title": "start"})
    start = env.snapshot()
    for _ in range(3):
        env.restore(start)
        assert env.snapshot() == start
        assert env.call("create_note", {"title": "x"}).content == {"note_id": "N2"}
        env.call("tag_note", {"note_id": "N1", "tags": ["a"]})
        assert env.snapshot() != start
    start["notes"]["N1"]["title"] = "edited by the caller"
    env.restore(start)  # other JSON now: loaded (and validated) as given
    assert env.snapshot()["notes"]["N1"]["title"] == "edited by the caller"


def test_a_known_scenario_that_fails_to_load_after_all_changes_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    env = EnvFactoryFormatEnvironment(FIXTURES / "NotesAPI.py")
    start = env.snapshot()
    env.restore(start)
    env.call("create_note", {"title": "kept"})
    before = env.snapshot()
    real = env.api.load_scenario

    def half_then_fail(scenario: dict) -> None:  # binds new attributes, then refuses
        real(scenario)
        raise ValueError("refused")

    monkeypatch.setattr(env.api, "load_scenario", half_then_fail)
    with pytest.raises(ValueError, match="refused"):
        env.restore(start)
    monkeypatch.undo()
    assert env.snapshot() == before
