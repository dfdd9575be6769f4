"""Where the tests find benchmark data: `../shared/data` beside the checkout.

The product downloads its data or is pointed at it (`TAU2_DATA_DIR`); tests read the
small local copies instead, and skip with a reason where they are absent, so that the
suite passes on a fresh clone with no `../shared` beside it. One place for the paths, so
every suite agrees on them.

- `ENVFACTORY_TEST_DATA`: another folder laid out like `shared/data`.
- `ENVFACTORY_TEST_NO_SHARED=1`: pretend there is none (and ignore `TAU2_DATA_DIR`), to
  check the fresh-clone case on a machine that has the data (`.ci/run` does).

Tests never set `TAU2_DATA_DIR` process-wide: those that need it take the
`use_tau2_data` fixture, which sets it for that one test.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HIDDEN = os.environ.get("ENVFACTORY_TEST_NO_SHARED") == "1"
_BESIDE = Path(__file__).resolve().parents[2] / "shared" / "data"

#: the shared test data; a folder that does not exist when it is hidden
SHARED_DATA = (_BESIDE / "hidden-by-ENVFACTORY_TEST_NO_SHARED" if HIDDEN
               else Path(os.environ.get("ENVFACTORY_TEST_DATA") or _BESIDE))
#: the τ² release files: `TAU2_DATA_DIR` when the caller set it, else the shared copy
TAU2_DATA = (SHARED_DATA / "tau2" if HIDDEN
             else Path(os.environ.get("TAU2_DATA_DIR") or SHARED_DATA / "tau2"))
HAVE_TAU2 = (TAU2_DATA / "domains").is_dir()

needs_tau2 = pytest.mark.skipif(not HAVE_TAU2,
                                reason=f"τ² release data not found at {TAU2_DATA}")


@pytest.fixture
def use_tau2_data(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """`TAU2_DATA_DIR` pointed at the test copy for one test (pair with `needs_tau2`)."""
    monkeypatch.setenv("TAU2_DATA_DIR", str(TAU2_DATA))
    yield TAU2_DATA

#: the VitaBench snapshot (delivery zh/en, instore en, prompts, models.yaml)
VITABENCH_DATA = SHARED_DATA / "vitabench"
HAVE_VITABENCH = (VITABENCH_DATA / "domains").is_dir()

needs_vitabench = pytest.mark.skipif(
    not HAVE_VITABENCH, reason=f"VitaBench data not found at {VITABENCH_DATA}")


#: what tests record from the official VitaBench code (tool objects, tables, requests)
VITABENCH_OFFICIAL = Path(__file__).resolve().parent / "data" / "vitabench" / "official"
#: the release's tool-description tables at 96f3b85 (`src/vita/...`, read as data):
#: `VITABENCH_SOURCE_DIR` when the caller set it, else the shared copy
VITABENCH_SOURCE = (VITABENCH_DATA / "source" if HIDDEN
                    else Path(os.environ.get("VITABENCH_SOURCE_DIR")
                              or VITABENCH_DATA / "source"))
HAVE_VITABENCH_SOURCE = (VITABENCH_SOURCE / "src" / "vita" / "environment"
                         / "toolkit_schema.py").is_file()

needs_vitabench_source = pytest.mark.skipif(
    not HAVE_VITABENCH_SOURCE,
    reason=f"VitaBench tool-description tables not found at {VITABENCH_SOURCE}/src/vita")


@pytest.fixture
def use_vitabench_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """`VITABENCH_DATA_DIR` for one test: the shared snapshot (`domains/`, `prompts/`,
    `models.yaml`, linked) plus the tool objects and tables recorded from the official
    code, with an empty cache, so that nothing is derived or downloaded (pair with
    `needs_vitabench`). `VITABENCH_SOURCE_DIR` points at the shared description tables
    when they are there, so a file the folder lacks is read from the real release
    rather than fetched."""
    root = tmp_path / "vitabench-data"
    root.mkdir()
    for name in ("domains", "prompts", "models.yaml"):
        if (VITABENCH_DATA / name).exists():
            (root / name).symlink_to(VITABENCH_DATA / name)
    for name in ("tools", "tables"):
        (root / name).symlink_to(VITABENCH_OFFICIAL / name)
    monkeypatch.setenv("VITABENCH_DATA_DIR", str(root))
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path / "cache"))
    if HAVE_VITABENCH_SOURCE:
        monkeypatch.setenv("VITABENCH_SOURCE_DIR", str(VITABENCH_SOURCE))
    yield root

#: the MCP-Atlas snapshot (10 sample tasks, the server template, upstream's data/)
MCP_ATLAS_DATA = SHARED_DATA / "mcp_atlas"
HAVE_MCP_ATLAS = (MCP_ATLAS_DATA / "sample_tasks.csv").is_file()
#: fixtures from the pinned upstream commit: recorded outputs of its code, its requests
MCP_ATLAS_OFFICIAL = Path(__file__).resolve().parent / "data" / "mcp_atlas" / "official"

needs_mcp_atlas = pytest.mark.skipif(
    not HAVE_MCP_ATLAS, reason=f"MCP-Atlas data not found at {MCP_ATLAS_DATA}")
#: upstream's source files the product reads as data (`MCP_ATLAS_SOURCE_DIR`): the scorer
#: (judge prompt, schema, cut-off), the agent environment's tables, the failure taxonomy
MCP_ATLAS_SOURCE = MCP_ATLAS_DATA / "source"
HAVE_MCP_ATLAS_SOURCE = (MCP_ATLAS_SOURCE / "services" / "scoring" / "score_claims.py").is_file()


@pytest.fixture
def use_mcp_atlas_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """For one test: `MCP_ATLAS_DATA_DIR` at the shared snapshot, `MCP_ATLAS_SOURCE_DIR`
    at its upstream source files, `MCP_ATLAS_TASKS` at the sample CSV, and an empty
    download cache. The servers `make install-mcp-atlas` installed stay where they are:
    `MCP_ATLAS_SERVERS_DIR` is pinned to the caller's value or default before the cache
    moves. Pair with `needs_mcp_atlas` (a snapshot without `source/` skips)."""
    from envs.release_registry import MCP_ATLAS_SERVERS

    if not HAVE_MCP_ATLAS_SOURCE:
        pytest.skip(f"MCP-Atlas source files not found at {MCP_ATLAS_SOURCE}")
    monkeypatch.setenv("MCP_ATLAS_SERVERS_DIR", str(MCP_ATLAS_SERVERS.path()))
    monkeypatch.setenv("MCP_ATLAS_DATA_DIR", str(MCP_ATLAS_DATA))
    monkeypatch.setenv("MCP_ATLAS_SOURCE_DIR", str(MCP_ATLAS_SOURCE))
    monkeypatch.setenv("MCP_ATLAS_TASKS", str(MCP_ATLAS_DATA / "sample_tasks.csv"))
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path / "cache"))
    yield MCP_ATLAS_DATA

#: the EnvFactory release's copy (LARK-AI-Lab/EnvFactory at eff3b22: envs/{tools,
#: intermediate,metadata}, the prompt modules, the dataset writer); test input only
ENVFACTORY_RELEASE = SHARED_DATA / "envfactory_release"


def release_scenario(name: str, scenario_id: str) -> dict[str, Any]:
    """`scenario_data` of one scenario of the release's `<name>_checkpoint.json`."""
    checkpoint = ENVFACTORY_RELEASE / "envs" / "intermediate" / f"{name}_checkpoint.json"
    scenarios = json.loads(checkpoint.read_text(encoding="utf-8"))["scenarios"]
    return dict(next(s for s in scenarios if s["scenario_id"] == scenario_id)["scenario_data"])


_imports = itertools.count()


def release_api(name: str, scenario_id: str | None = None) -> Any:
    """The release server's own `api` object, from a fresh import of its file (and loaded
    with one of its checkpoint's scenarios): the reference that tests of our release
    environments compare with, never our code."""
    server = ENVFACTORY_RELEASE / "envs" / "tools" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(
        f"release_{name}_reference_{next(_imports)}", server)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if scenario_id is not None:
        module.api.load_scenario(release_scenario(name, scenario_id))
    return module.api
