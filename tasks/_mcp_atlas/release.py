"""MCP-Atlas release files: the pinned commit's files, cached, or folders you point at.

What the benchmark's models read besides the task — the judge's prompt, the server set
and its pinned packages, the files the servers serve — belongs to upstream's release, so
it is read from these files at run time, never copied into our code:

- **data** (`MCP_ATLAS_DATA_DIR`, laid out like `../shared/data/mcp_atlas`):
  `mcp_server_template.json` (the 36 servers with their pinned npx/uvx packages) and
  `data/` (what upstream's image puts in `/data`: CSVs, `repos/...`). Downloaded from
  `services/agent-environment/` of the commit.
- **source** (`MCP_ATLAS_SOURCE_DIR`, a checkout of the repository, or any folder laid out
  like one): code files read as data, such as `services/scoring/score_claims.py`, whose
  claim-judging prompt is rendered from its own f-string (`tasks._mcp_atlas.claims`).

Without an override, files live in `cache_dir("mcp_atlas", <commit>)` and missing ones are
fetched from GitHub at the commit: the files are the `PinnedRelease`
`envs.release_registry.MCP_ATLAS`, defined there beside every other release so that
`doctor` lists it. The tasks themselves come from the Hub dataset
(`tasks._mcp_atlas.dataset`). Every log records the commit and where the files came from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.release_registry import MCP_ATLAS, MCP_ATLAS_DATA_FILES, MCP_ATLAS_TEMPLATE
from envs.releases import PinnedRelease

__all__ = ["DATA_FILES", "Release", "release"]

DATA_FILES = MCP_ATLAS_DATA_FILES
TEMPLATE = MCP_ATLAS_TEMPLATE


@dataclass(frozen=True)
class Release:
    """The files of the pinned commit: where they come from and how to read them."""

    files: PinnedRelease = MCP_ATLAS

    @property
    def commit(self) -> str:
        return self.files.ref

    @property
    def cache(self) -> Path:
        return self.files.cache_path

    def template(self) -> dict[str, Any]:
        """The server template's `mcpServers` table, in upstream's order."""
        path = self.files.path(TEMPLATE)
        try:
            servers = json.loads(path.read_text(encoding="utf-8"))["mcpServers"]
        except (ValueError, KeyError) as e:
            raise ValueError(f"{path}: not an MCP server template ({e!r})") from e
        if not isinstance(servers, dict):
            raise ValueError(f"{path}: `mcpServers` must be an object")
        return servers

    def data_dir(self) -> Path:
        """The folder whose contents each sample gets as its own `/data` (every file of
        DATA_FILES present; a download fetches the missing ones)."""
        status = self.files.local_status()
        if status.override is not None:
            lacking = [f.removeprefix("data/") for f in status.missing if f.startswith("data/")]
            if lacking:
                raise FileNotFoundError(f"{Path(status.where) / 'data'} lacks "
                                        f"{', '.join(lacking)} ({status.override}={status.where})")
            return Path(status.where) / "data"
        for name in DATA_FILES:
            self.files.path(f"data/{name}")
        return self.cache / "data"

    def source_text(self, relative: str) -> str:
        """A file of the repository (e.g. `services/scoring/score_claims.py`), as text."""
        return self.files.source_text(relative)

    def provenance(self) -> dict[str, str]:
        """What every log records about where the benchmark's files came from."""
        return self.files.provenance()


def release() -> Release:
    return Release()
