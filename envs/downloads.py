"""Release files fetched over HTTP into a cache, atomically, with retries.

Every pinned release (`envs.releases.PinnedRelease`) downloads the files it needs the
first time they are asked for, through this one function. An interrupted download leaves
no half file (the bytes go to a private `.part` file that is renamed into place only when
complete, so two processes fetching the same file never see each other's partial write);
a transient failure (a timeout, a reset connection, HTTP 429 or 5xx) is retried after a
short pause, since a first run of a benchmark fetches dozens of files and one hiccup
should not fail it; a permanent one (404, a wrong commit) fails at once and says how to
do without the network.
"""

from __future__ import annotations

import http.client
import os
import shutil
import time
import urllib.error
import urllib.request
from pathlib import Path

__all__ = ["ATTEMPTS", "fetch"]

#: tries per file; the pauses between them are 1 s, 2 s, ... (`backoff` scales them)
ATTEMPTS = 3
#: HTTP statuses worth a second try (rate limited, server trouble)
_TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})


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


def fetch(url: str, target: Path, what: str, remedy: str, *,
          attempts: int = ATTEMPTS, backoff: float = 1.0, timeout: float = 60) -> None:
    """Download `url` into `target`; `what` names the file in errors, `remedy` tells the
    user how to point at a local copy instead."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.part")
    for attempt in range(1, attempts + 1):
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response, \
                    partial.open("wb") as out:
                shutil.copyfileobj(response, out)
                # a connection closed early ends a chunked read quietly: check the length
                expected = response.headers.get("Content-Length")
                if expected is not None and out.tell() != int(expected):
                    raise http.client.IncompleteRead(b"", int(expected) - out.tell())
        except (OSError, http.client.HTTPException) as e:
            partial.unlink(missing_ok=True)
            if attempt < attempts and _transient(e):
                time.sleep(backoff * attempt)
                continue
            tried = f" after {attempt} attempts" if attempt > 1 else ""
            raise FileNotFoundError(
                f"cannot download {what} from {url}{tried} ({e}); {remedy}") from e
        partial.replace(target)
        return
