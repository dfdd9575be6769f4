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

Without an override, files live in `$ENVFACTORY_CACHE/mcp_atlas/<commit>/` (default
`~/.cache/envfactory`) and missing ones are fetched from GitHub at the commit. The tasks
themselves come from the Hub dataset (`tasks._mcp_atlas.dataset`). Every log records the
commit and where the files came from.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.downloads import fetch

__all__ = ["COMMIT", "DATA_FILES", "Release", "release"]

REPO_RAW = "https://raw.githubusercontent.com/scaleapi/mcp-atlas"
#: the pinned upstream commit (2026: harness v2.0.0, `max_tool_calls=100`, scorer as verified
#: in the notes' §14a)
COMMIT = "5b6220c64d55072d4ab6c028fa4aba063da9901b"
#: where upstream keeps the agent environment's files
ENVIRONMENT = "services/agent-environment"
#: the files of upstream's `data/` folder at COMMIT (git ls-tree), which become `/data`
DATA_FILES = (
    "Barber Shop.csv",
    "CoinbaseTradeHistory.csv",
    "Covid 19 impacts on hospitals.csv",
    "Crime_records.csv",
    "Pet Care 2023 Weekly Financials.csv",
    "Top Movies.csv",
    "fantasy sports.csv",
    "food and beverage consumption.csv",
    "repos/git_submodule_info.csv",
    "repos/mcp_code_executor_workspace/pyproject.toml",
    "repos/mcp_code_executor_workspace/this-folder-contains-venv.txt",
    "repos/memory_mcp_server/memories-for-mcp.json",
    "repos/memory_mcp_server/this-folder-used-for-memory-mcp-server.txt",
)
TEMPLATE = "mcp_server_template.json"


def cache_root() -> Path:
    """`$ENVFACTORY_CACHE/mcp_atlas` (default `~/.cache/envfactory/mcp_atlas`)."""
    root = Path(os.environ.get("ENVFACTORY_CACHE", Path.home() / ".cache" / "envfactory"))
    return root / "mcp_atlas"


@dataclass(frozen=True)
class Release:
    """The files of the pinned commit: where they come from and how to read them."""

    commit: str = COMMIT

    @property
    def cache(self) -> Path:
        return cache_root() / self.commit

    def _data_root(self) -> Path | None:
        override = os.environ.get("MCP_ATLAS_DATA_DIR")
        return Path(override) if override else None

    def template(self) -> dict[str, Any]:
        """The server template's `mcpServers` table, in upstream's order."""
        path = self._data_file(TEMPLATE, f"{ENVIRONMENT}/src/agent_environment/{TEMPLATE}")
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
        override = self._data_root()
        if override is not None:
            root = override / "data"
            missing = [f for f in DATA_FILES if not (root / f).is_file()]
            if missing:
                raise FileNotFoundError(f"{root} lacks {', '.join(missing)} "
                                        f"(MCP_ATLAS_DATA_DIR={override})")
            return root
        for name in DATA_FILES:
            self._data_file(f"data/{name}", f"{ENVIRONMENT}/data/{name}")
        return self.cache / "data"

    def source_text(self, relative: str) -> str:
        """A file of the repository (e.g. `services/scoring/score_claims.py`), as text."""
        override = os.environ.get("MCP_ATLAS_SOURCE_DIR")
        if override:
            path = Path(override) / relative
            if not path.is_file():
                raise FileNotFoundError(f"{path} missing from MCP_ATLAS_SOURCE_DIR={override}")
            return path.read_text(encoding="utf-8")
        return self._cached(relative, relative, "set MCP_ATLAS_SOURCE_DIR to a checkout of "
                            "scaleapi/mcp-atlas").read_text(encoding="utf-8")

    def provenance(self) -> dict[str, str]:
        """What every log records about where the benchmark's files came from."""
        return {"mcp_atlas_commit": self.commit,
                "mcp_atlas_data": os.environ.get("MCP_ATLAS_DATA_DIR") or str(self.cache),
                "mcp_atlas_source": os.environ.get("MCP_ATLAS_SOURCE_DIR") or str(self.cache)}

    def _data_file(self, relative: str, upstream: str) -> Path:
        override = self._data_root()
        if override is not None:
            path = override / relative
            if not path.is_file():
                raise FileNotFoundError(f"{path} missing from MCP_ATLAS_DATA_DIR={override}")
            return path
        return self._cached(relative, upstream, "set MCP_ATLAS_DATA_DIR to a folder laid out "
                            f"like {TEMPLATE} + data/ (upstream's {ENVIRONMENT}/data)")

    def _cached(self, relative: str, upstream: str, remedy: str) -> Path:
        path = self.cache / relative
        if not path.is_file():
            url = f"{REPO_RAW}/{self.commit}/{upstream.replace(' ', '%20')}"
            fetch(url, path, f"MCP-Atlas file {upstream}", remedy)
        return path


def release() -> Release:
    return Release()
