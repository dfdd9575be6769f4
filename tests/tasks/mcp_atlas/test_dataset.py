"""MCP-Atlas tasks: the local copy, the Hub snapshot path offline, required servers.

Expected values are read by hand from the sample CSV (its reference trajectories).
"""

from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import pytest

from tasks._mcp_atlas.dataset import (
    HUB_DATASET,
    HUB_REVISION,
    AtlasTask,
    cacheable_servers,
    load_tasks,
    tool_name_mappings,
)
from tasks._mcp_atlas.release import release
from tests.shared_data import MCP_ATLAS_DATA, needs_mcp_atlas
from tests.tasks.mcp_atlas.official import recorded

pytestmark = [needs_mcp_atlas, pytest.mark.usefixtures("use_mcp_atlas_data")]
SAMPLE = MCP_ATLAS_DATA / "sample_tasks.csv"


def names() -> list[str]:
    return list(release().template())


def test_local_copy_reads_every_sample_task() -> None:
    tasks, source = load_tasks(str(SAMPLE))
    assert len(tasks) == 10 and source.revision.startswith("local:")
    by_id = {t.task_id: t for t in tasks}
    pet = by_id["5c6d7e8f9a"]
    assert pet.prompt.startswith("Please check the files on my pc")
    assert len(pet.enabled_tools) == 15 and pet.enabled_tools[0] == "filesystem_read_file"
    assert pet.required_servers(names()) == ["filesystem", "calculator"]
    assert pet.enabled_servers(names()) == ["calculator", "filesystem", "wikipedia"]
    assert by_id["c6d7e8f9a0"].required_servers(names()) == ["memory", "filesystem"]
    assert by_id["e5f6d7c8b9"].repos() == ["storyteller"]
    assert by_id["4b5c6d7e8f"].reference_tools() == ["calculator_calculate"] * 10


def test_old_tool_names_map_as_upstream_environment_maps_them() -> None:
    assert tool_name_mappings()["brave_brave_web_search"] == "brave-search_brave_web_search"


def test_a_folder_of_task_files_and_bad_rows(tmp_path: Path) -> None:
    folder = tmp_path / "tasks"
    folder.mkdir()
    shutil.copy(SAMPLE, folder / "part.csv")
    tasks, source = load_tasks(str(folder))
    assert len(tasks) == 10 and source.files == [str(folder / "part.csv")]
    csv.field_size_limit(sys.maxsize)
    with SAMPLE.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    bad = tmp_path / "bad.csv"
    with bad.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=["TASK", "PROMPT", "ENABLED_TOOLS"])
        writer.writeheader()
        writer.writerow({k: rows[0][k] for k in ("TASK", "PROMPT", "ENABLED_TOOLS")})
    with pytest.raises(ValueError, match="GTFA_CLAIMS"):
        load_tasks(str(bad))
    with pytest.raises(FileNotFoundError, match="MCP-Atlas tasks not found"):
        load_tasks(str(tmp_path / "nowhere"))


def test_the_hub_snapshot_is_read_from_the_hub_cache_offline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The download path for real: `snapshot_download` with `HF_HUB_OFFLINE=1` finds the
    pinned commit's snapshot in the Hub cache layout, and its commit is the recorded
    revision."""
    monkeypatch.delenv("MCP_ATLAS_TASKS")
    commit = HUB_REVISION
    repo = tmp_path / "hub" / f"datasets--{HUB_DATASET.replace('/', '--')}"
    snapshot = repo / "snapshots" / commit / "data"
    snapshot.mkdir(parents=True)
    shutil.copy(SAMPLE, snapshot / "train.csv")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    tasks, source = load_tasks()
    assert len(tasks) == 10
    assert source.revision == commit and source.origin == f"hf://datasets/{HUB_DATASET}"
    assert source.files == ["data/train.csv"]


def test_a_moving_hub_revision_is_refused_naming_the_option(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_ATLAS_TASKS")
    with pytest.raises(ValueError, match=r"pinned commit .* not 'main'; set -T revision="):
        load_tasks(revision="main")


def test_without_a_local_copy_or_the_hub_the_error_says_what_to_set(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_ATLAS_TASKS")
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(FileNotFoundError, match="MCP_ATLAS_TASKS"):
        load_tasks()


def test_repos_are_the_git_clones_the_reference_calls_name() -> None:
    """Shipped folders and files under /data/repos are not repositories to clone."""
    calls = ['{"repo_path": "/data/repos/snake-game"}',
             '{"path": "/data/repos/memory_mcp_server/memories-for-mcp.json"}',
             '{"command": "ls /data/repos/storyteller/src /data/repos/snake-game"}',
             '{"path": "/data/repos/git_submodule_info.csv"}',
             '{"path": "/x/data/repos/elsewhere"}']
    task = AtlasTask(task_id="t", prompt="p", enabled_tools=[], claims="[]", trajectory=[
        {"role": "assistant", "tool_calls": [
            {"id": str(i), "function": {"name": "git_git_log", "arguments": a}}]}
        for i, a in enumerate(calls)])
    assert task.repos() == ["snake-game", "storyteller"]


def test_tables_read_from_upstreams_files_are_the_recorded_ones(
        official_source: Path) -> None:
    """What the product reads from the real `main.py` equals what upstream's own module
    held when the fixtures were recorded (`recorded/tables.json`)."""
    tables = recorded("tables")
    assert tool_name_mappings() == tables["TOOL_NAME_MAPPINGS"]
    assert sorted(cacheable_servers()) == tables["CACHEABLE_SERVERS"]
    assert len(tables["TOOL_NAME_MAPPINGS"]) == 7 and "brave-search" in cacheable_servers()
