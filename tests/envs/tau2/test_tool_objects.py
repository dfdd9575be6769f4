"""The tool objects offered to models are the official harness's, exactly.

Ground truth: `shared/data/tau2/tools/*.json`, the objects the official v0.2.0 CLI sent
(recorded from its requests). Derivation from the release's sources needs an extracted
v0.2.0 tree in `TAU2_SOURCE_DIR` (e.g. `git -C <tau2-bench clone> archive v0.2.0 src |
tar -x -C /tmp/tau2-v0.2.0`); without one those tests skip.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from envs.tau2 import data, tool_objects
from envs.tau2.tool_objects import TOOLKITS, SourceTree, derive_tool_objects, official_tools

SOURCE = Path(os.environ.get("TAU2_SOURCE_DIR", "/nonexistent"))
needs_source = pytest.mark.skipif(
    not (SOURCE / "src" / "tau2").is_dir(),
    reason="TAU2_SOURCE_DIR does not point at an extracted tau2-bench v0.2.0 tree")


def recorded(tau2_data_dir: Path, toolkit: str) -> list[dict[str, Any]]:
    path = tau2_data_dir / "tools" / f"{toolkit}.json"
    if not path.exists():
        pytest.skip(f"recorded tool objects not found at {path}")
    return list(json.loads(path.read_text()))


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No recorded tools in the data dir and an empty cache."""
    (tmp_path / "data" / "domains").mkdir(parents=True)
    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path / "cache"))
    official_tools.cache_clear()
    yield tmp_path / "cache" / "tau2" / data.RELEASE
    official_tools.cache_clear()


@needs_source
@pytest.mark.parametrize("toolkit", list(TOOLKITS))
def test_derived_from_the_sources_equals_what_the_official_harness_sent(
        toolkit: str, tau2_data_dir: Path) -> None:
    derived = derive_tool_objects(toolkit, SourceTree(SOURCE, download=False))
    want = recorded(tau2_data_dir, toolkit)
    assert derived == want
    assert json.dumps(derived) == json.dumps(want)  # key order too


def test_the_recorded_files_are_read_as_they_are(tau2_data_dir: Path) -> None:
    official_tools.cache_clear()
    for toolkit in TOOLKITS:
        assert list(official_tools(toolkit)) == recorded(tau2_data_dir, toolkit)
    counts = {t: len(official_tools(t)) for t in TOOLKITS}
    assert counts == {"airline": 14, "retail": 15, "telecom": 13, "telecom_user": 30}


@needs_source
def test_derived_once_into_the_cache_from_a_local_tree(
        fresh_cache: Path, tau2_data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAU2_SOURCE_DIR", str(SOURCE))
    assert list(official_tools("airline")) == recorded(tau2_data_dir, "airline")
    cached = fresh_cache / "tools" / "airline.json"
    assert json.loads(cached.read_text()) == recorded(tau2_data_dir, "airline")
    monkeypatch.setenv("TAU2_SOURCE_DIR", "/nonexistent")  # the cache is enough now
    official_tools.cache_clear()
    assert list(official_tools("airline")) == recorded(tau2_data_dir, "airline")


@needs_source
def test_sources_are_downloaded_at_the_pinned_commit(
        fresh_cache: Path, tau2_data_dir: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    mirror = tmp_path / "mirror"
    shutil.copytree(SOURCE / "src", mirror / data.REPOSITORY / data.RELEASE_COMMIT / "src")
    monkeypatch.delenv("TAU2_SOURCE_DIR", raising=False)
    monkeypatch.setenv("ENVFACTORY_GITHUB_RAW", mirror.as_uri())
    assert list(official_tools("telecom_user")) == recorded(tau2_data_dir, "telecom_user")
    fetched = sorted(p.relative_to(fresh_cache / "source").as_posix()
                     for p in (fresh_cache / "source").rglob("*.py"))
    assert fetched == ["src/tau2/domains/telecom/user_data_model.py",
                       "src/tau2/domains/telecom/user_tools.py",
                       "src/tau2/utils/pydantic_utils.py"]


def test_without_sources_or_network_the_error_says_what_to_set(
        fresh_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TAU2_SOURCE_DIR", raising=False)
    monkeypatch.setenv("ENVFACTORY_GITHUB_RAW", (tmp_path / "no-mirror").as_uri())
    with pytest.raises(FileNotFoundError, match="set TAU2_SOURCE_DIR"):
        official_tools("retail")
    with pytest.raises(ValueError, match="unknown τ² toolkit 'bank'"):
        official_tools("bank")


def test_constructs_outside_the_known_set_are_refused(tmp_path: Path) -> None:
    module = tmp_path / "src" / "tau2" / "domains" / "airline" / "tools.py"
    module.parent.mkdir(parents=True)
    module.write_text("import os\nclass AirlineTools(ToolKitBase):\n"
                      "    @is_tool(ToolType.READ)\n"
                      "    def f(self, x: os.PathLike) -> str:\n        return ''\n")
    with pytest.raises(ValueError, match="unsupported construct"):
        tool_objects.derive_tool_objects("airline", SourceTree(tmp_path, download=False))


@pytest.mark.parametrize("toolkit", list(TOOLKITS))
def test_environment_specs_are_the_official_objects(toolkit: str, tau2_data_dir: Path) -> None:
    """Every path that shows a τ² tool (the τ² task, `envfactory env serve`) reads the
    environment's specs: they are the release's objects, in its order."""
    from envs import registry

    official_tools.cache_clear()
    env = registry.create(f"tau2/{toolkit}")
    assert [{"type": "function", "function": {"name": s.name, "description": s.description,
                                              "parameters": s.parameters}}
            for s in env.tools()] == recorded(tau2_data_dir, toolkit)
