"""Fixtures of the MCP-Atlas suites."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shared_data import HAVE_MCP_ATLAS_SOURCE, MCP_ATLAS_SOURCE


@pytest.fixture
def official_source(monkeypatch: pytest.MonkeyPatch) -> Path:
    """`MCP_ATLAS_SOURCE_DIR` at upstream's own files (`../shared/data/mcp_atlas/source`)
    for one test, so that what the product reads from them is compared with what
    upstream's code returned (`official.recorded`); skips where they are absent."""
    if not HAVE_MCP_ATLAS_SOURCE:
        pytest.skip(f"MCP-Atlas source files not found at {MCP_ATLAS_SOURCE}")
    monkeypatch.setenv("MCP_ATLAS_SOURCE_DIR", str(MCP_ATLAS_SOURCE))
    return MCP_ATLAS_SOURCE
