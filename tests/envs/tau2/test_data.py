"""The τ² release loader: download into the cache (tested against a local mirror through
file:// URLs), cache reuse, atomic writes, and clear errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from envs.tau2 import data


@pytest.fixture
def mirror(tmp_path: Path, tau2_data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A local copy laid out like raw.githubusercontent.com: the repository at the pinned
    commit, and at the later tag the split files come from."""
    for ref in (data.RELEASE_COMMIT, data.SPLIT_RELEASE):
        target = (tmp_path / "mirror" / data.REPOSITORY / ref / "data" / "tau2" / "domains"
                  / "airline")
        target.mkdir(parents=True)
        for name in ("policy.md", "split_tasks.json"):
            shutil.copy(tau2_data_dir / "domains" / "airline" / name, target / name)
    monkeypatch.delenv("TAU2_DATA_DIR")
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("ENVFACTORY_GITHUB_RAW", (tmp_path / "mirror").as_uri())
    data._load.cache_clear()
    return tmp_path


def test_download_then_cache(mirror: Path, tau2_data_dir: Path) -> None:
    policy = data.read_text("domains/airline/policy.md")
    assert policy == (tau2_data_dir / "domains/airline/policy.md").read_text()
    cached = mirror / "cache" / "tau2" / data.RELEASE / "domains/airline/policy.md"
    assert cached.exists() and not list(cached.parent.glob("*.part"))
    assert "train" in data.load_split("airline")  # split files come from the later tag
    shutil.rmtree(mirror / "mirror")  # the second read never touches the network
    assert data.read_text("domains/airline/policy.md") == policy


def test_missing_file_names_the_override(mirror: Path) -> None:
    with pytest.raises(FileNotFoundError, match="set TAU2_DATA_DIR"):
        data.read_text("domains/airline/nope.md")


def test_override_without_domains_is_an_error(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="has no domains/ folder"):
        data.data_dir()
