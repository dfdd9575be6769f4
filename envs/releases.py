"""Pinned upstream releases and the one cache folder, as one mechanism.

A benchmark is faithful only to a fixed upstream: τ²'s tasks and policies, VitaBench's
prompts, MCP-Atlas's server template, the EnvFactory release's environments. Each such
release is a `PinnedRelease`: a GitHub repository at a commit (or tag), the files a run
reads, and an environment variable that points at a local copy instead. Its files resolve
the same way everywhere: the override folder if the variable is set (used as is; a missing
file is an error that names the variable), else the cache, downloading a missing file from
the repository at the pinned ref through the one downloader (`envs.downloads.fetch`). What
every log records about the files (`provenance()`) and what `envfactory doctor` reports
(`local_status()`, which downloads nothing) come from the same object, so they cannot
disagree with what a run reads.

Everything the project keeps on disk between runs lives under `cache_dir(...)`, which
honours `ENVFACTORY_CACHE` (default `~/.cache/envfactory`); folders a user may move on
their own (local models, generated environments, BFCL's project root) are `CacheFolder`s
whose override variable wins over the cache.

Hub reads (`hub_snapshot`) require a commit: the Hub's branches move, and a benchmark's
numbers must name the data they came from.

`envs.release_registry` lists every release and cache folder (what `doctor` iterates).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tarfile
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from envs.downloads import fetch
from envs.locks import ExclusiveLock

__all__ = ["CACHE_VAR", "GITHUB_ARCHIVE_VAR", "GITHUB_RAW_VAR", "CacheFolder", "PinnedRelease",
           "ReleaseFile", "ReleaseStatus", "UnpinnedRevision", "cache_dir", "hub_snapshot"]

#: where everything cached lives (default `~/.cache/envfactory`)
CACHE_VAR = "ENVFACTORY_CACHE"
#: a mirror of raw.githubusercontent.com (`<base>/<owner>/<name>/<ref>/<path>`); tests
#: point it at a `file://` folder
GITHUB_RAW_VAR = "ENVFACTORY_GITHUB_RAW"
_GITHUB_RAW = "https://raw.githubusercontent.com"
#: a mirror of codeload.github.com (`<base>/<owner>/<name>/tar.gz/<ref>`), where a
#: release's whole folders come from (the commit's archive); tests point it at 127.0.0.1
GITHUB_ARCHIVE_VAR = "ENVFACTORY_GITHUB_ARCHIVE"
_GITHUB_ARCHIVE = "https://codeload.github.com"

logger = logging.getLogger(__name__)


def cache_dir(*parts: str) -> Path:
    """`$ENVFACTORY_CACHE/<parts...>` (default `~/.cache/envfactory/<parts...>`); created
    by whoever writes into it, not here."""
    configured = os.environ.get(CACHE_VAR)
    root = Path(configured).expanduser() if configured else Path.home() / ".cache" / "envfactory"
    return root.joinpath(*parts)


class ReleaseStatus(BaseModel):
    """What is on this machine for one release or cache folder (nothing is downloaded)."""

    name: str
    #: the folder looked in
    where: str
    #: the override variable when it is set (then the folder is the user's, used as is)
    override: str | None = None
    present: list[str]
    missing: list[str]
    #: whether a missing file is fetched when a run first needs it
    fetched_on_use: bool
    #: why the folder cannot be used at all (an override that is not a release)
    error: str | None = None
    #: what makes the missing ones available
    hint: str = ""
    #: a release's files, or a folder the project writes itself
    kind: Literal["release", "cache"] = "release"

    @property
    def state(self) -> Literal["present", "partial", "absent"]:
        if not self.missing:
            return "present"
        return "partial" if self.present else "absent"

    @property
    def problem(self) -> bool:
        """Missing files nothing will fetch: a run that needs them fails naming the file."""
        return bool(self.missing) and not self.fetched_on_use


class ReleaseFile(BaseModel):
    """One file of a pinned release: where it is fetched from and where a run reads it
    (what `envfactory data fetch --list` shows; nothing is downloaded to describe it)."""

    release: str
    #: the path under the data root (a data file) or in the repository (a source file)
    relative: str
    kind: Literal["data", "source"]
    url: str
    #: the ref's human name (a tag, a revision) or the ref itself
    label: str
    #: where a run reads it
    local: str
    #: the variable whose folder a run reads instead of the cache, when it is set
    override: str | None = None

    @property
    def cached(self) -> bool:
        return Path(self.local).is_file()

    @property
    def size(self) -> int | None:
        return Path(self.local).stat().st_size if self.cached else None


#: the fields a release's provenance may record
Recorded = Literal["label", "ref", "repository", "data", "source"]


@dataclass(frozen=True)
class PinnedRelease:
    """One upstream repository at one commit or tag, and the files the project reads."""

    #: registry key (`tau2`, `vitabench-2025-11`, ...)
    name: str
    #: how messages name it (`τ²`, `VitaBench`, ...)
    title: str
    #: GitHub `owner/name`
    repository: str
    #: the commit (or tag) every file is fetched at
    ref: str
    #: the data files a run reads, relative to the data root (what `local_status` counts)
    files: tuple[str, ...] = ()
    #: folders a run reads whole: fetched together from the commit's archive (only these
    #: folders are extracted) when `archive` is set, else only readable from the override
    folders: tuple[str, ...] = ()
    archive: bool = False
    #: the variable naming a local data root, and what that folder must look like
    override: str | None = None
    override_hint: str = "a local copy of the release"
    #: the variable naming a local source tree (source files read as data), and its hint
    source_override: str | None = None
    source_hint: str = "a checkout of the repository"
    #: a folder an override must hold to be taken for a release at all
    required: str | None = None
    #: cache subfolder (default `<name>/<ref>`); source files go under `source_subdir`
    cache: tuple[str, ...] = ()
    source_subdir: str = ""
    #: (local prefix, upstream prefix): where a data file lives in the repository; the
    #: first matching prefix wins, no match means the same path
    layout: tuple[tuple[str, str], ...] = ()
    #: a human name of the ref (a tag, a revision name)
    label: str = ""
    #: provenance key -> field, in the order logs record them
    record: tuple[tuple[str, Recorded], ...] = ()

    # --- where things are -------------------------------------------------------------

    @property
    def cache_path(self) -> Path:
        return cache_dir(*(self.cache or (self.name, self.ref)))

    def data_root(self) -> Path:
        """The override folder (checked for `required`) or the cache."""
        configured = os.environ.get(self.override) if self.override else None
        if not configured:
            return self.cache_path
        root = Path(configured).expanduser()
        if self.required and not (root / self.required).is_dir():
            raise FileNotFoundError(f"{self.override}={root} has no {self.required}/ folder")
        return root

    def source_root(self) -> Path:
        configured = os.environ.get(self.source_override) if self.source_override else None
        if configured:
            return Path(configured).expanduser()
        return self.cache_path / self.source_subdir if self.source_subdir else self.cache_path

    def upstream_path(self, relative: str) -> str:
        """Where data file `relative` lives in the repository."""
        for local, upstream in self.layout:
            if relative.startswith(local):
                return upstream + relative[len(local):]
        return relative

    def url(self, upstream: str) -> str:
        base = os.environ.get(GITHUB_RAW_VAR) or _GITHUB_RAW
        return f"{base.rstrip('/')}/{self.repository}/{self.ref}/{urllib.parse.quote(upstream)}"

    # --- reading ----------------------------------------------------------------------

    def path(self, relative: str) -> Path:
        """Data file `relative`: from the override (which must hold it), else the cache,
        fetched at the pinned ref the first time."""
        if self.override and os.environ.get(self.override):
            path = self.data_root() / relative
            if not path.is_file():
                raise FileNotFoundError(
                    f"{path} missing from {self.override}={os.environ[self.override]}")
            return path
        path = self.cache_path / relative
        if not path.is_file() and self.archive and any(
                relative.startswith(f + "/") for f in self.folders):
            self.fetch_folders()  # a folder's file comes with its folder, or not at all
            if not path.is_file():
                raise FileNotFoundError(f"{relative} is not in {self.repository}@{self.ref}")
        elif not path.is_file():
            remedy = (f"set {self.override} to {self.override_hint}" if self.override
                      else "check the network")
            self._fetch(self.upstream_path(relative), path, remedy)
        return path

    def source_path(self, relative: str) -> Path:
        """A repository file read as data (`relative` is its path in the repository)."""
        configured = os.environ.get(self.source_override) if self.source_override else None
        path = self.source_root() / relative
        if configured:
            if not path.is_file():
                raise FileNotFoundError(f"{path} missing from {self.source_override}={configured}")
            return path
        if not path.is_file():
            remedy = (f"set {self.source_override} to {self.source_hint}" if self.source_override
                      else "check the network")
            self._fetch(relative, path, remedy)
        return path

    def source_text(self, relative: str) -> str:
        return self.source_path(relative).read_text(encoding="utf-8")

    # --- whole folders ------------------------------------------------------------------

    def archive_url(self) -> str:
        base = os.environ.get(GITHUB_ARCHIVE_VAR) or _GITHUB_ARCHIVE
        return f"{base.rstrip('/')}/{self.repository}/tar.gz/{self.ref}"

    @property
    def folders_marker(self) -> Path:
        """Written once every folder is in place, so a folder that is there is whole."""
        return self.cache_path / ".folders-complete"

    def folders_present(self) -> bool:
        """Whether the folders are where a run reads them (override or cache)."""
        if self.override and os.environ.get(self.override):
            root = self.data_root()
            return all((root / f).is_dir() for f in self.folders)
        return self.folders_marker.is_file()

    def fetch_folders(self) -> Path:
        """The cache root holding `folders`, downloading the commit's archive through the
        one downloader and extracting only those folders (regular files, no path that
        leaves them) when they are not there yet; the archive is removed afterwards. Two
        processes fetching at once: the second waits and finds them in place."""
        if not self.archive:
            raise FileNotFoundError(f"{self.title}'s folders {', '.join(self.folders)} are not "
                                    f"fetched; set {self.override} to {self.override_hint}")
        root = self.cache_path
        with ExclusiveLock(root / ".folders.lock", wait=True,
                           busy=lambda _record: BlockingIOError(root)):
            if self.folders_marker.is_file():
                return root
            archive = root / f"{self.repository.replace('/', '-')}-{self.ref}.tar.gz"
            remedy = (f"set {self.override} to {self.override_hint}" if self.override
                      else "check the network")
            if not archive.is_file():
                fetch(self.archive_url(), archive, f"{self.title} archive at {self.ref}", remedy)
            staging = Path(tempfile.mkdtemp(prefix=".folders-", dir=root))
            try:
                self._extract(archive, staging)
                for folder in self.folders:
                    target = root / folder
                    if target.exists():  # an earlier, interrupted extraction
                        shutil.rmtree(target)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(staging / folder, target)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
            self.folders_marker.write_text(self.ref + "\n", encoding="utf-8")
            archive.unlink(missing_ok=True)
        return root

    def _extract(self, archive: Path, staging: Path) -> None:
        """Extract the members under `<top>/<folder>/` for each folder into `staging`;
        an archive that lacks a folder is an error naming it (a wrong commit, a mirror
        that serves something else)."""
        found: set[str] = set()
        try:
            with tarfile.open(archive, "r:gz") as tar:
                for member in tar:
                    top, _, inner = member.name.partition("/")
                    folder = next((f for f in self.folders
                                   if inner.startswith(f + "/")), None)
                    if folder is None or not member.isfile():
                        continue
                    parts = Path(inner).parts
                    if ".." in parts or Path(inner).is_absolute():
                        continue
                    found.add(folder)
                    source = tar.extractfile(member)
                    if source is None:
                        continue
                    target = staging / inner
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with source, target.open("wb") as out:
                        shutil.copyfileobj(source, out)
        except (tarfile.TarError, EOFError, OSError) as e:
            archive.unlink(missing_ok=True)  # a corrupt download: the next try starts over
            raise FileNotFoundError(f"{archive}: not a readable tar.gz archive of "
                                    f"{self.repository}@{self.ref} ({e})") from e
        missing = [f for f in self.folders if f not in found]
        if missing:
            archive.unlink(missing_ok=True)
            raise FileNotFoundError(f"{self.archive_url()}: the archive has no "
                                    f"{', '.join(f + '/' for f in missing)}")
        for folder in self.folders:
            (staging / folder).mkdir(parents=True, exist_ok=True)

    def _fetch(self, upstream: str, target: Path, remedy: str) -> None:
        fetch(self.url(upstream), target, f"{self.title} file {upstream}", remedy)

    def fetch(self, relative: str, *, source: bool = False) -> Path:
        """Data file (or, with `source`, repository file) `relative`, downloaded into the
        cache unless it is there or an override names the folder to read."""
        return self.source_path(relative) if source else self.path(relative)

    # --- reporting --------------------------------------------------------------------

    def describe(self, relative: str, *, source: bool = False) -> ReleaseFile:
        """Where file `relative` comes from and where a run reads it (`fetch` above)."""
        variable = self.source_override if source else self.override
        override = variable if variable and os.environ.get(variable) else None
        if source:
            local = self.source_root() / relative
        else:
            local = (Path(os.environ[override]).expanduser() if override
                     else self.cache_path) / relative
        return ReleaseFile(
            release=self.name, relative=relative, kind="source" if source else "data",
            url=self.url(relative if source else self.upstream_path(relative)),
            label=self.label or self.ref, local=str(local), override=override)

    def provenance(self) -> dict[str, str]:
        """What every log records about where the release's files came from."""
        values: dict[Recorded, Callable[[], str]] = {
            "label": lambda: self.label or self.ref, "ref": lambda: self.ref,
            "repository": lambda: self.repository, "data": lambda: str(self.data_root()),
            "source": lambda: str(self.source_root())}
        record = self.record or ((f"{self.name}_commit", "ref"), (f"{self.name}_data", "data"))
        return {key: values[what]() for key, what in record}

    def local_status(self) -> ReleaseStatus:
        """Which of the release's files and folders are where a run would look."""
        override = self.override if self.override and os.environ.get(self.override) else None
        root = Path(os.environ[override]).expanduser() if override else self.cache_path
        needed = [*self.files, *(f + "/" for f in self.folders)]
        error = None
        if override and self.required and not (root / self.required).is_dir():
            needed = [self.required + "/", *needed]
            error = f"{override}={root} has no {self.required}/ folder"
        folders_there = override is not None or self.folders_marker.is_file()
        present = [r for r in needed if _exists(root / r, folder=r.endswith("/"))
                   and (folders_there or not r.endswith("/"))]
        missing = [r for r in needed if r not in present]
        # files download one by one; whole folders come from the archive, or need the override
        fetched = override is None and (self.archive or not any(r.endswith("/") for r in missing))
        hint = (f"set {self.override} to {self.override_hint}" if self.override
                else "downloaded on first use")
        return ReleaseStatus(name=self.name, where=str(root), override=override,
                             present=present, missing=missing, fetched_on_use=fetched,
                             error=error, hint=hint)


def _exists(path: Path, *, folder: bool) -> bool:
    return path.is_dir() if folder else path.is_file()


@dataclass(frozen=True)
class CacheFolder:
    """A folder the project writes and reads back (indexes, models, environments): under
    the cache unless its override variable (if it has one) names another place."""

    name: str
    parts: tuple[str, ...]
    override: str | None = None

    def path(self) -> Path:
        configured = os.environ.get(self.override) if self.override else None
        return Path(configured).expanduser() if configured else cache_dir(*self.parts)

    def local_status(self) -> ReleaseStatus:
        root = self.path()
        override = self.override if self.override and os.environ.get(self.override) else None
        entries = sorted(p.name for p in root.iterdir()) if root.is_dir() else []
        return ReleaseStatus(name=self.name, where=str(root), override=override,
                             present=entries, missing=[] if root.is_dir() else [root.name + "/"],
                             fetched_on_use=True, hint="created when first written",
                             kind="cache")


# --- the Hub --------------------------------------------------------------------------

_COMMIT = re.compile(r"[0-9a-f]{40}")


class UnpinnedRevision(ValueError):
    """A Hub read asked for a branch, a tag or nothing instead of a commit."""

#: Hub client errors worth a second try (the client itself raises these for 5xx/429 and
#: dropped connections); anything else (a missing repo, a gated one, offline and not
#: cached) is permanent
_HUB_TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})


def _hub_transient(error: Exception) -> bool:
    import httpx
    from huggingface_hub.errors import OfflineModeIsEnabled

    if isinstance(error, OfflineModeIsEnabled):  # a ConnectionError no retry will cure
        return False
    response = getattr(error, "response", None)
    status = getattr(response, "status_code", None)
    if status is not None:
        return status in _HUB_TRANSIENT_STATUS
    return isinstance(error, (ConnectionError, TimeoutError, httpx.TransportError))


def hub_snapshot(repo_id: str, revision: str | None, *, option: str,
                 repo_type: Literal["dataset", "model"] = "dataset",
                 allow_patterns: Sequence[str] | None = None,
                 attempts: int = 3, backoff: float = 2.0) -> tuple[Path, str]:
    """The local folder of `repo_id` at `revision` (the Hub's cache, so a second read and
    an offline one with `HF_HUB_OFFLINE=1` see the same files) and the commit it holds.

    `revision` must be a full commit: a branch (`main`) would read whatever was pushed
    last, and the log could not say which data produced a number. `option` names the
    setting that picks another commit, for the error. Transient failures are retried."""
    if revision is None or not _COMMIT.fullmatch(revision):
        raise UnpinnedRevision(f"the Hub {repo_type} {repo_id} must be read at a pinned commit "
                         f"(40 hex digits), not {revision!r}; set {option} to one")
    from huggingface_hub import constants, snapshot_download

    def download() -> Path:
        # offline, a commit is looked up in the cache alone (the client would otherwise
        # still ask the Hub for the commit's file list)
        return Path(snapshot_download(
            repo_id, repo_type=repo_type, revision=revision,
            allow_patterns=list(allow_patterns) if allow_patterns else None,
            local_files_only=bool(constants.HF_HUB_OFFLINE)))

    for attempt in range(1, attempts):
        try:
            folder = download()
            break
        except Exception as e:  # noqa: BLE001 - the client's errors share no base class
            if not _hub_transient(e):
                raise
            time.sleep(backoff * attempt)
    else:
        folder = download()  # the last try: its error is the caller's
    logger.info("Hub %s %s at commit %s: %s", repo_type, repo_id, folder.name, folder)
    return folder, folder.name
