"""The VitaBench release files: overrides, the cache, and the real download path, run
against a local copy laid out as upstream's repository at the pinned commit (a
`file://` URL stands in for raw.githubusercontent.com)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envs.vitabench.release import REPOSITORY, REVISIONS, release
from tests.shared_data import VITABENCH_DATA, needs_vitabench

COMMIT = REVISIONS["2025-11"].commit


@pytest.fixture
def upstream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake raw.githubusercontent.com: `<root>/<repository>/<commit>/data/vita/domains/...`,
    `.../src/vita/prompts/...`."""
    mirror = tmp_path / "upstream"
    root = mirror / REPOSITORY
    domains = root / COMMIT / "data" / "vita" / "domains" / "delivery"
    domains.mkdir(parents=True)
    (domains / "tasks_en.json").write_text(json.dumps([{"id": "T1"}]))
    prompts = root / COMMIT / "src" / "vita" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "agent_system_prompt.yaml").write_text("english: 'time {time}'\n")
    monkeypatch.setenv("ENVFACTORY_GITHUB_RAW", mirror.as_uri())
    monkeypatch.delenv("VITABENCH_DATA_DIR", raising=False)
    monkeypatch.delenv("VITABENCH_SOURCE_DIR", raising=False)
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path / "cache"))
    return root


def test_files_download_once_into_the_revisions_cache(upstream: Path, tmp_path: Path) -> None:
    files = release()
    path = files.tasks_path("delivery", "en")
    assert path == tmp_path / "cache" / "vitabench" / "2025-11" / "domains/delivery/tasks_en.json"
    assert json.loads(path.read_text()) == [{"id": "T1"}]
    prompt = files.data_path("prompts/agent_system_prompt.yaml")
    assert prompt.read_text() == "english: 'time {time}'\n"
    # a second read is the cache's: the upstream copy may go away
    (upstream / COMMIT / "data" / "vita" / "domains" / "delivery" / "tasks_en.json").unlink()
    assert files.tasks_path("delivery", "en").read_text() == path.read_text()
    assert not list(path.parent.glob("*.part"))


def test_a_failed_download_says_how_to_do_without_the_network(upstream: Path) -> None:
    with pytest.raises(FileNotFoundError, match="VITABENCH_DATA_DIR") as failure:
        release().tasks_path("ota", "zh")
    assert "data/vita/domains/ota/tasks.json" in str(failure.value)
    with pytest.raises(FileNotFoundError, match="VITABENCH_SOURCE_DIR"):
        release().source_text("src/vita/domains/ota/tools_schema.py")


def test_an_override_is_used_as_is_and_a_missing_file_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VITABENCH_DATA_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="domains/cross_domain/tasks_en.json missing"):
        release().tasks_path("cross", "en")


def test_unknown_revision_and_set_are_refused() -> None:
    with pytest.raises(ValueError, match="known: 2025-11, 2026-01"):
        release("2024")
    with pytest.raises(ValueError, match="unknown VitaBench task set 'food'"):
        release().tasks_path("food", "zh")


def test_provenance_names_revision_commit_and_origin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VITABENCH_DATA_DIR", "/data/vita")
    info = release().provenance()
    assert info["vitabench_revision"] == "2025-11"
    assert info["vitabench_commit"] == COMMIT
    assert info["vitabench_data"] == "/data/vita"


@needs_vitabench
def test_local_status_lists_what_a_folder_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VITABENCH_DATA_DIR", str(VITABENCH_DATA))
    status = release().local_status()
    assert status.where == str(VITABENCH_DATA)
    assert status.override == "VITABENCH_DATA_DIR" and status.problem
    # the snapshot has delivery zh/en and instore en, and the prompts
    assert "domains/delivery/tasks.json" in status.present
    assert "domains/instore/tasks_en.json" in status.present
    assert "prompts/sliding_window_eval_template.yaml" in status.present
    assert set(status.missing) == {"domains/instore/tasks.json", "domains/ota/tasks.json",
                            "domains/ota/tasks_en.json", "domains/cross_domain/tasks.json",
                            "domains/cross_domain/tasks_en.json"}
