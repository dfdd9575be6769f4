"""VitaBench release files: pinned downloads with a cache, or directories you point at.

Everything a model reads in VitaBench — task instructions and personas, the agent and
user-simulator prompts, the judge's templates, and the tool descriptions with their pre-
and postconditions — is data of the release, so it is read from these files at run time.

Two kinds of file, each with an override:

- **data** (`VITABENCH_DATA_DIR`, laid out like `../shared/data/vitabench`):
  `domains/<set>/tasks.json` (Chinese) and `tasks_en.json` (English), `prompts/*.yaml`,
  `models.yaml`. Downloaded from upstream's `data/vita/domains/` and `src/vita/prompts/`.
- **source** (`VITABENCH_SOURCE_DIR`, an extracted `src/` tree of the release): the tool
  description tables (`src/vita/domains/*/tools_schema.py`,
  `src/vita/environment/toolkit_schema.py`), read as data, never executed.

Without an override, files live in `cache_dir("vitabench", <revision>)` and missing ones
are fetched from GitHub at the revision's commit: each revision is a `PinnedRelease`
(`envs.releases`). A revision is a name for an upstream commit (`REVISIONS`);
`-T revision=` picks one, and every log records the revision, its commit and where the
files came from.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from envs.releases import PinnedRelease, ReleaseStatus

__all__ = ["DEFAULT_REVISION", "LANGUAGES", "REPOSITORY", "REVISIONS", "TASK_SETS", "Language",
           "Release",
           "Revision", "release"]

REPOSITORY = "meituan-longcat/vitabench"

Language = Literal["zh", "en"]
LANGUAGES: tuple[Language, ...] = ("zh", "en")
#: upstream's names for the languages (its `--language` values and prompt-YAML keys)
UPSTREAM_LANGUAGE: dict[Language, str] = {"zh": "chinese", "en": "english"}

#: task set -> its folder under `domains/`
TASK_SETS: dict[str, str] = {"delivery": "delivery", "instore": "instore", "ota": "ota",
                             "cross": "cross_domain"}


#: the prompt templates a run reads
PROMPTS = ("agent_system_prompt", "user_system_prompt", "sliding_window_eval_template")


@dataclass(frozen=True)
class Revision:
    """One upstream commit of VitaBench and what is known about it."""

    name: str
    commit: str
    description: str


REVISIONS: dict[str, Revision] = {
    "2025-11": Revision(
        "2025-11", "96f3b8529d8ea38d330de2405af7e32a1454f6cd",
        "the original release with English tasks (2025-11-06); the paper's numbers"),
    # The 2026 revision ("rectified datasets and tools, upgraded evaluation models") changed
    # tools and data; its tools are not ported yet, so it runs only where its files are
    # given locally and the tool tables still match (envs.vitabench checks them by name).
    "2026-01": Revision(
        "2026-01", "229a8c0",
        "upstream's 2026 update (data and tools rectified; judge glm-5.1); "
        "needs VITABENCH_DATA_DIR and VITABENCH_SOURCE_DIR"),
}
DEFAULT_REVISION = "2025-11"


@dataclass(frozen=True)
class Release:
    """The files of one revision: where they come from and how to read them."""

    revision: Revision

    @property
    def pinned(self) -> PinnedRelease:
        """The revision as a pinned release (data files, source files, provenance)."""
        return PinnedRelease(
            name=f"vitabench-{self.revision.name}", title="VitaBench", repository=REPOSITORY,
            ref=self.revision.commit, label=self.revision.name,
            files=tuple([f"domains/{folder}/{name}" for folder in TASK_SETS.values()
                         for name in ("tasks.json", "tasks_en.json")]
                        + [f"prompts/{name}.yaml" for name in PROMPTS]),
            override="VITABENCH_DATA_DIR",
            override_hint="a folder laid out like domains/<set>/tasks[_en].json, "
                          "prompts/*.yaml, models.yaml",
            source_override="VITABENCH_SOURCE_DIR",
            source_hint="an extracted release tree (the folder holding src/vita)",
            cache=("vitabench", self.revision.name),
            # tasks under data/vita/, prompts/*.yaml and models.yaml under src/vita/
            layout=(("domains/", "data/vita/domains/"), ("", "src/vita/")),
            record=(("vitabench_revision", "label"), ("vitabench_commit", "ref"),
                    ("vitabench_data", "data"), ("vitabench_source", "source")))

    @property
    def cache(self) -> Path:
        return self.pinned.cache_path

    def data_path(self, relative: str) -> Path:
        """A data file (`domains/...`, `prompts/...`, `models.yaml`), fetched if needed."""
        return self.pinned.path(relative)

    def source_text(self, relative: str) -> str:
        """A release source file (`src/vita/...`), read as text."""
        return self.pinned.source_text(relative)

    def tasks_path(self, task_set: str, language: Language) -> Path:
        if task_set not in TASK_SETS:
            raise ValueError(f"unknown VitaBench task set {task_set!r}; "
                             f"choose one of {', '.join(TASK_SETS)}")
        name = "tasks.json" if language == "zh" else "tasks_en.json"
        return self.data_path(f"domains/{TASK_SETS[task_set]}/{name}")

    def provenance(self) -> dict[str, str]:
        """What every log records about where the benchmark's files came from."""
        return self.pinned.provenance()

    def lookup_hint(self) -> str:
        """Where this revision's files are looked for and how to make them available, for
        an error that stops a run (the file's own error names the file and its URL)."""
        pinned = self.pinned
        places = []
        for variable, root, what in (
                (pinned.override, pinned.cache_path, "data files"),
                (pinned.source_override, pinned.source_root(),
                 "source files (tool descriptions and holiday table, unless the data "
                 "folder has tools/ and tables/)")):
            configured = os.environ.get(variable or "")
            places.append(f"{what} from {variable}={configured}" if configured
                          else f"{what} from the cache {root} ({variable} unset)")
        return (f"VitaBench {self.revision.name} reads {' and '.join(places)}; files not "
                f"in the cache download on first use from {REPOSITORY} at "
                f"{self.revision.commit[:7]}; pre-fetch them with network access: "
                f"`envfactory data fetch vitabench`")

    def local_status(self) -> ReleaseStatus:
        """Where data files are looked up, and which of the task files and prompt
        templates are there and which are not (nothing is downloaded)."""
        return self.pinned.local_status()


def release(revision: str = DEFAULT_REVISION) -> Release:
    if revision not in REVISIONS:
        raise ValueError(f"unknown VitaBench revision {revision!r}; "
                         f"known: {', '.join(REVISIONS)}")
    return Release(REVISIONS[revision])
