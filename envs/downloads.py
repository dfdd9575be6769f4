"""Release files fetched over HTTP into a cache, atomically.

Every benchmark port (τ², VitaBench) pins an upstream commit and downloads the files it
needs the first time they are asked for; an interrupted download leaves no half file, and
a failure says how to do without the network."""

from __future__ import annotations

import urllib.request
from pathlib import Path

__all__ = ["fetch"]


def fetch(url: str, target: Path, what: str, remedy: str) -> None:
    """Download `url` into `target`; `what` names the file in errors, `remedy` tells the
    user how to point at a local copy instead."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(target.suffix + ".part")
    try:
        with urllib.request.urlopen(url, timeout=60) as response, partial.open("wb") as out:
            out.write(response.read())
    except OSError as e:
        raise FileNotFoundError(f"cannot download {what} from {url} ({e}); {remedy}") from e
    partial.replace(target)
