"""Release files fetched over HTTP into a cache, atomically, resumably, with retries.

Every pinned release (`envs.releases.PinnedRelease`) downloads the files it needs through
this one function, whether a run asks for a file the first time or `envfactory data fetch`
fetches them all ahead. A file appears under its name only when complete (the bytes go to
`<name>.part`, checked against the server's length, then renamed into place), so a file
that is there is a whole download. An interrupted download keeps its `.part`: the next
try asks for the rest (HTTP `Range`), and a server that answers with the whole file
instead restarts it cleanly; the URLs name a pinned commit, so the bytes already there
cannot belong to another version. Two processes fetching the same file never share a
`.part`: the first holds a lock on it, a second writes a private one of its own.

A transient failure (a timeout, a reset connection, HTTP 429 or 5xx) is retried after a
short pause, since a first run of a benchmark fetches dozens of files and one hiccup
should not fail it; a permanent one (404, a wrong commit) fails at once and says how to
do without the network. Whoever wants to show progress (bytes per file) wraps the calls
in `observed(hook)`.
"""

from __future__ import annotations

import contextlib
import fcntl
import http.client
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import BinaryIO

__all__ = ["ATTEMPTS", "Progress", "fetch", "observed"]

#: tries per file; the pauses between them are 1 s, 2 s, ... (`backoff` scales them)
ATTEMPTS = 3
#: HTTP statuses worth a second try (rate limited, server trouble)
_TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_CHUNK = 1 << 16

#: `hook(what, bytes_done, bytes_total)` as a file downloads (total None when unknown);
#: `bytes_done == bytes_total` once more when the file is in place
Progress = Callable[[str, int, "int | None"], None]
_observer: ContextVar[Progress | None] = ContextVar("envfactory_download_observer",
                                                    default=None)


@contextlib.contextmanager
def observed(hook: Progress) -> Iterator[None]:
    """Report every download started inside the block to `hook`."""
    token = _observer.set(hook)
    try:
        yield
    finally:
        _observer.reset(token)


def _transient(error: OSError | http.client.HTTPException) -> bool:
    """Whether trying again may help: any network-level failure (a body cut short
    included), or a retryable status."""
    if isinstance(error, http.client.HTTPException):
        return True
    if isinstance(error, urllib.error.HTTPError):
        return error.code in _TRANSIENT_STATUS
    # file:// URLs of missing files raise URLError wrapping FileNotFoundError: permanent
    reason = getattr(error, "reason", None)
    return not isinstance(error, FileNotFoundError) and not isinstance(reason, FileNotFoundError)


@contextlib.contextmanager
def _part_file(target: Path) -> Iterator[tuple[BinaryIO, Path, bool]]:
    """The `.part` file to write `target` through, locked for this process, and whether
    its bytes may be resumed (a private file when another process holds the shared one)."""
    shared = target.with_name(f"{target.name}.part")
    out = shared.open("a+b")
    try:
        fcntl.flock(out, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        out.close()
        private = target.with_name(f"{target.name}.{os.getpid()}.part")
        with private.open("w+b") as mine:
            try:
                yield mine, private, False
            finally:
                private.unlink(missing_ok=True)
        return
    try:
        yield out, shared, True
    finally:
        out.close()


def _download(url: str, out: BinaryIO, what: str, timeout: float) -> None:
    """Append the rest of `url` to `out` (from its current end), or rewrite it whole when
    the server sends the whole file; raise when the body ends short."""
    have = out.seek(0, os.SEEK_END)
    headers = {"Range": f"bytes={have}-"} if have else {}
    try:
        response = urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                          timeout=timeout)
    except urllib.error.HTTPError as e:
        if e.code != 416 or not have:
            raise
        # the `.part` is not a prefix of the file (longer than it): start again
        out.truncate(0)
        _download(url, out, what, timeout)
        return
    with response:
        status = getattr(response, "status", None)
        if not (have and status == 206):
            out.truncate(0)
            out.seek(0)
            have = 0
        length = response.headers.get("Content-Length")
        total = have + int(length) if length is not None else None
        hook = _observer.get()
        done = have
        while chunk := response.read(_CHUNK):
            out.write(chunk)
            done += len(chunk)
            if hook is not None:
                hook(what, done, total)
        out.flush()
        # a connection closed early ends a chunked read quietly: check the length
        if total is not None and done != total:
            raise http.client.IncompleteRead(b"", total - done)


def fetch(url: str, target: Path, what: str, remedy: str, *,
          attempts: int = ATTEMPTS, backoff: float = 1.0, timeout: float = 60) -> None:
    """Download `url` into `target` (resuming an earlier `.part` of it); `what` names the
    file in errors and progress, `remedy` tells the user how to point at a local copy
    instead."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with _part_file(target) as (out, partial, resumable):
        if target.is_file():  # another process finished it while this one waited
            return
        for attempt in range(1, attempts + 1):
            try:
                if not resumable:
                    out.truncate(0)
                _download(url, out, what, timeout)
            except (OSError, http.client.HTTPException) as e:
                transient = _transient(e)
                if not transient:
                    out.truncate(0)
                if attempt < attempts and transient:
                    time.sleep(backoff * attempt)
                    continue
                tried = f" after {attempt} attempts" if attempt > 1 else ""
                size = out.seek(0, os.SEEK_END)
                if not size:
                    partial.unlink(missing_ok=True)
                kept = (f"; the {size} bytes so far are kept in {partial.name}, so a later "
                        "fetch resumes" if resumable and size else "")
                raise FileNotFoundError(
                    f"cannot download {what} from {url}{tried} ({e}){kept}; {remedy}") from e
            os.replace(partial, target)
            return
