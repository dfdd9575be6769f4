"""τ²-bench release files: a pinned download with a cache, or a directory you point at.

The files are a `PinnedRelease` (`envs.releases`): `TAU2_DATA_DIR` (a directory laid out
like upstream's `data/tau2/`), else the cache (`cache_dir("tau2", <release>)`), fetching
missing files from the upstream repository at the pinned commit. Policies and
user-simulator guidelines are read from these files, never pasted in code.
"""

from __future__ import annotations

import gc
import json
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from envs.releases import PinnedRelease

__all__ = ["FILES", "GUIDELINES", "RELEASE", "RELEASE_COMMIT", "REPOSITORY", "SPLITS", "TAU2",
           "cache_dir",
           "data_dir", "gc_paused", "load_db", "load_split", "load_tasks", "read_text"]

RELEASE = "v0.2.0"
#: the commit the tag names; every file of the release is fetched at it
RELEASE_COMMIT = "f8de30c298689cbe0117d76a378e7315a17e5bd8"
REPOSITORY = "sierra-research/tau2-bench"
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
_OVERRIDE = "TAU2_DATA_DIR"
_HINT = "a local copy of the release's data/tau2 folder"

#: the release: data files, and the `src/` modules the tool objects are derived from
TAU2 = PinnedRelease(
    name="tau2", title="τ²", repository=REPOSITORY, ref=RELEASE_COMMIT, label=RELEASE,
    files=tuple([f"domains/{domain}/{name}" for domain, names in FILES.items()
                 for name in names] + [f"user_simulator/{name}" for name in GUIDELINES]),
    override=_OVERRIDE, override_hint=_HINT, required="domains",
    source_override="TAU2_SOURCE_DIR",
    source_hint="an extracted copy of the release, or put the tool objects in "
                "<TAU2_DATA_DIR>/tools/",
    cache=("tau2", RELEASE), source_subdir="source", layout=(("", "data/tau2/"),),
    record=(("tau2_release", "label"), ("tau2_data_dir", "data")))
#: the split files, from the later tag, kept beside the release's files
SPLITS = PinnedRelease(
    name="tau2-splits", title="τ²", repository=REPOSITORY, ref=SPLIT_RELEASE,
    files=tuple(f"domains/{domain}/split_tasks.json" for domain in FILES),
    override=_OVERRIDE, override_hint=_HINT, required="domains", cache=("tau2", RELEASE),
    layout=(("", "data/tau2/"),))


def data_dir() -> Path:
    """The root holding `domains/` and `user_simulator/`."""
    return TAU2.data_root()


def cache_dir() -> Path:
    """Where downloaded and derived release files are kept (whatever `TAU2_DATA_DIR` says)."""
    return TAU2.cache_path


def _path(relative: str) -> Path:
    return (SPLITS if relative.endswith("split_tasks.json") else TAU2).path(relative)


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
    return TAU2.provenance()


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
