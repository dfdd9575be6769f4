"""τ²-bench release files: a pinned download with a cache, or a directory you point at.

Resolution order: `TAU2_DATA_DIR` (a directory laid out like upstream's `data/tau2/`),
else the cache (`$ENVFACTORY_CACHE/tau2/<release>`, default `~/.cache/envfactory`),
downloading missing files from the upstream repository's raw files at the pinned tag.
Policies and user-simulator guidelines are read from these files, never pasted in code.
"""

from __future__ import annotations

import gc
import json
import os
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from envs.downloads import fetch

__all__ = ["RELEASE", "RELEASE_COMMIT", "cache_dir", "data_dir", "download", "gc_paused",
           "load_db", "load_split", "load_tasks", "read_text"]

RELEASE = "v0.2.0"
#: the commit the tag names; source files (tool modules) are fetched at it
RELEASE_COMMIT = "f8de30c298689cbe0117d76a378e7315a17e5bd8"
REPO_RAW = "https://raw.githubusercontent.com/sierra-research/tau2-bench"
#: split files came after v0.2.0 upstream; they are fetched from this later tag
SPLIT_RELEASE = "v0.2.1"

FILES = {
    "airline": ["db.json", "policy.md", "tasks.json", "split_tasks.json"],
    "retail": ["db.json", "policy.md", "tasks.json", "split_tasks.json"],
    "telecom": ["db.toml", "user_db.toml", "main_policy.md", "main_policy_solo.md",
                "tech_support_manual.md", "tech_support_workflow.md",
                "tech_support_workflow_solo.md", "tasks.json", "split_tasks.json"],
}
GUIDELINES = ["simulation_guidelines.md", "simulation_guidelines_tools.md"]


def data_dir() -> Path:
    """The root holding `domains/` and `user_simulator/`."""
    override = os.environ.get("TAU2_DATA_DIR")
    if override:
        root = Path(override)
        if not (root / "domains").is_dir():
            raise FileNotFoundError(f"TAU2_DATA_DIR={root} has no domains/ folder")
        return root
    return cache_dir()


def cache_dir() -> Path:
    """Where downloaded and derived release files are kept (whatever `TAU2_DATA_DIR` says)."""
    cache_root = Path(os.environ.get("ENVFACTORY_CACHE", Path.home() / ".cache" / "envfactory"))
    return cache_root / "tau2" / RELEASE


def _path(relative: str) -> Path:
    path = data_dir() / relative
    if not path.exists():
        if os.environ.get("TAU2_DATA_DIR"):
            raise FileNotFoundError(f"{path} missing from TAU2_DATA_DIR")
        _download(relative, path)
    return path


def _download(relative: str, target: Path) -> None:
    tag = SPLIT_RELEASE if relative.endswith("split_tasks.json") else RELEASE
    download(f"{tag}/data/tau2/{relative}", target,
             "set TAU2_DATA_DIR to a local copy of the release's data/tau2 folder")


def download(repo_path: str, target: Path, remedy: str) -> None:
    """Fetch `<ref>/<path>` of the upstream repository's raw files into `target`;
    `remedy` tells the user how to do without the network."""
    fetch(f"{REPO_RAW}/{repo_path}", target, f"τ² file {repo_path}", remedy)


def read_text(relative: str) -> str:
    return _path(relative).read_text(encoding="utf-8")


@cache
def _load(relative: str) -> Any:
    path = _path(relative)
    if path.suffix == ".toml":
        with path.open("rb") as f:
            return tomllib.load(f)
    return json.loads(path.read_text(encoding="utf-8"))


def load_db(domain: str, name: str = "db") -> Any:
    """The parsed database file (cached; callers validate into their own models)."""
    ext = "toml" if domain == "telecom" else "json"
    return _load(f"domains/{domain}/{name}.{ext}")


def load_tasks(domain: str) -> list[dict[str, Any]]:
    return list(_load(f"domains/{domain}/tasks.json"))


def load_split(domain: str) -> dict[str, list[str]]:
    return dict(_load(f"domains/{domain}/split_tasks.json"))


def version_info() -> dict[str, str]:
    return {"tau2_release": RELEASE, "tau2_data_dir": str(data_dir())}


@contextmanager
def gc_paused() -> Iterator[None]:
    """Validating a release DB allocates ~10^5 acyclic objects; the cyclic collector
    would rescan them many times over and triple the time (≈0.3 s → 0.1 s for airline)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
