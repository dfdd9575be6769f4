"""Content digests, one way: the sha256 hex digest that provenance records carry.

Checkpoint provenance (the training data, the config), export manifests, QueryGen's
manifest (the graph it sampled), Hub dataset cards and the embedding cache all name
their inputs by content; one function per kind of input keeps those names comparable
across the records that carry them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["file_sha256", "text_sha256"]


def file_sha256(path: Path | str) -> str:
    """sha256 of a file's bytes, read in 1 MiB chunks (checkpoints' data files are big)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def text_sha256(text: str) -> str:
    """sha256 of a string's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
