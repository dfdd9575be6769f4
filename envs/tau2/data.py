"""τ²-bench release files: a pinned download with a cache, or a directory you point at.

The files are a `PinnedRelease` (`envs.releases`): `TAU2_DATA_DIR` (a directory laid out
like upstream's `data/tau2/`), else the cache (`cache_dir("tau2", <release>)`), fetching
missing files from the upstream repository at the pinned commit. Policies and
user-simulator guidelines are read from these files, never pasted in code.

Which file comes from which tag: everything — tasks, databases, policies, the
user-simulator guidelines, the `src/` tool modules — is v0.2.0's (commit f8de30c), except
`domains/<domain>/split_tasks.json`, which upstream added in v0.2.1 and which is fetched
from that tag (a split that selects none of v0.2.0's task ids is an error, never an empty
run). A `TAU2_DATA_DIR` must hold both: v0.2.0's `data/tau2` with v0.2.1's split files
added. Download errors name the tag of the file (`τ² v0.2.1 file ...`), and every log
records both tags (`tau2_release`, `tau2_split_release`).
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

from envs.releases import PinnedRelease

__all__ = ["CONFIG_SOURCE", "DOMAINS", "FILES", "GUIDELINES", "NL_ASSERTIONS_SOURCE", "RELEASE",
           "RELEASE_COMMIT", "REPOSITORY", "SPLITS", "SPLIT_RELEASE", "TAU2", "cache_dir",
           "check_domain", "data_dir",
           "gc_paused", "load_db", "load_split", "load_tasks", "lookup_hint", "read_text",
           "release_of",
           "version_info"]

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
#: the domains of the release, as `tau2_<domain>` tasks and grade records name them
DOMAINS = tuple(FILES)
GUIDELINES = ["simulation_guidelines.md", "simulation_guidelines_tools.md"]
#: repository files the NL-assertion judge reads as data (`tasks._tau2.nl_assertions`):
#: its prompt and message rendering, and its sampling arguments
NL_ASSERTIONS_SOURCE = "src/tau2/evaluator/evaluator_nl_assertions.py"
CONFIG_SOURCE = "src/tau2/config.py"
_OVERRIDE = "TAU2_DATA_DIR"
_HINT = (f"a local copy of upstream's data/tau2 ({RELEASE}'s files, with "
         f"domains/*/split_tasks.json from {SPLIT_RELEASE})")

#: the release: data files, and the `src/` modules the tool objects are derived from
TAU2 = PinnedRelease(
    name="tau2", title=f"τ² {RELEASE}", repository=REPOSITORY, ref=RELEASE_COMMIT,
    label=RELEASE,
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
    name="tau2-splits", title=f"τ² {SPLIT_RELEASE}", repository=REPOSITORY, ref=SPLIT_RELEASE,
    files=tuple(f"domains/{domain}/split_tasks.json" for domain in FILES),
    override=_OVERRIDE, override_hint=_HINT, required="domains", cache=("tau2", RELEASE),
    layout=(("", "data/tau2/"),))


def data_dir() -> Path:
    """The root holding `domains/` and `user_simulator/`."""
    return TAU2.data_root()


def cache_dir() -> Path:
    """Where downloaded and derived release files are kept (whatever `TAU2_DATA_DIR` says)."""
    return TAU2.cache_path


def check_domain(domain: str) -> str:
    """`domain` if the release has it (the error lists those it has)."""
    if domain not in DOMAINS:
        raise ValueError(f"unknown τ² domain {domain!r}; use one of {', '.join(DOMAINS)}")
    return domain


def release_of(relative: str) -> PinnedRelease:
    """The tag a data file comes from: the split files v0.2.1's, the rest v0.2.0's."""
    return SPLITS if relative.endswith("split_tasks.json") else TAU2


def _path(relative: str) -> Path:
    return release_of(relative).path(relative)


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
    check_domain(domain)
    ext = "toml" if domain == "telecom" else "json"
    return _load(f"domains/{domain}/{name}.{ext}")


def load_tasks(domain: str) -> list[dict[str, Any]]:
    return list(_load(f"domains/{check_domain(domain)}/tasks.json"))


def load_split(domain: str) -> dict[str, list[str]]:
    return dict(_load(f"domains/{check_domain(domain)}/split_tasks.json"))


def lookup_hint() -> str:
    """Where the files are looked for and how to make them available, for an error that
    stops a run (the file's own error names the file, its tag and its URL)."""
    configured = os.environ.get(_OVERRIDE)
    if configured:
        return (f"{_OVERRIDE}={configured} is used as is (nothing is downloaded): it must "
                f"hold {_HINT}")
    return (f"τ² files are looked for in the cache {cache_dir()} ({_OVERRIDE} unset) and "
            f"downloaded on first use; pre-fetch them with network access: "
            f"`envfactory data fetch tau2`")


def version_info() -> dict[str, str]:
    """What every log records: the release (v0.2.0), the tag of the split files (v0.2.1)
    and the data folder read."""
    return {**TAU2.provenance(), "tau2_split_release": SPLIT_RELEASE}


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
