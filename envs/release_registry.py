"""Every pinned release and cache folder the project reads, in one table.

`envfactory doctor` iterates `registered_releases()`, so a new release or cache shows up
there by being listed here. The definitions live in `envs/` (the lowest folder) even when
the code that reads a release lives higher up (MCP-Atlas's in `tasks/_mcp_atlas`, the
models' in `training/`): a definition is data about upstream files and folders, and the
one table has to be importable by everyone who reads them.
"""

from __future__ import annotations

from envs.releases import CacheFolder, PinnedRelease
from envs.tau2.data import TAU2
from envs.vitabench.release import REVISIONS, Release

__all__ = ["BENCH_VENVS", "BFCL_PROJECT_ROOT", "DEMO", "EMBEDDINGS", "ENVFACTORY",
           "ENVGEN_INDEX", "GENERATED_ENVS", "GENERATED_ENVS_VAR", "LOCAL_MODELS", "MCP_ATLAS",
           "MCP_ATLAS_DATA_FILES", "MCP_ATLAS_ENVIRONMENT", "MCP_ATLAS_SERVERS",
           "MCP_ATLAS_TEMPLATE", "RELEASE_VERIFY", "registered_releases"]

#: where upstream keeps MCP-Atlas's agent environment files
MCP_ATLAS_ENVIRONMENT = "services/agent-environment"
MCP_ATLAS_TEMPLATE = "mcp_server_template.json"
#: the files of upstream's `data/` folder at the commit (git ls-tree), which become `/data`
MCP_ATLAS_DATA_FILES = (
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
_MCP_ATLAS_COMMIT = "5b6220c64d55072d4ab6c028fa4aba063da9901b"

#: MCP-Atlas's files at the pinned commit (2026: harness v2.0.0, `max_tool_calls=100`,
#: scorer as verified in the notes' §14a); `tasks._mcp_atlas.release` reads them
MCP_ATLAS = PinnedRelease(
    name="mcp-atlas", title="MCP-Atlas", repository="scaleapi/mcp-atlas",
    ref=_MCP_ATLAS_COMMIT,
    files=(MCP_ATLAS_TEMPLATE, *(f"data/{name}" for name in MCP_ATLAS_DATA_FILES)),
    override="MCP_ATLAS_DATA_DIR",
    override_hint=f"a folder laid out like {MCP_ATLAS_TEMPLATE} + data/ "
                  f"(upstream's {MCP_ATLAS_ENVIRONMENT}/data)",
    source_override="MCP_ATLAS_SOURCE_DIR", source_hint="a checkout of scaleapi/mcp-atlas",
    cache=("mcp_atlas", _MCP_ATLAS_COMMIT),
    layout=((MCP_ATLAS_TEMPLATE,
             f"{MCP_ATLAS_ENVIRONMENT}/src/agent_environment/{MCP_ATLAS_TEMPLATE}"),
            ("data/", f"{MCP_ATLAS_ENVIRONMENT}/data/")),
    record=(("mcp_atlas_commit", "ref"), ("mcp_atlas_data", "data"),
            ("mcp_atlas_source", "source")))

#: the EnvFactory paper's release (LARK-AI-Lab/EnvFactory at eff3b22): its environments
#: (`envs/tools/*.py` single-file servers, `envs/intermediate/*_checkpoint.json` starting
#: scenarios and verdicts, `envs/metadata/*.json`) are whole folders, fetched together from
#: the commit's archive on first use (or read from a local release root); the prompt
#: modules and dataset writer are single files read as data.
#: Its provenance keys avoid the `envfactory_` prefix, which logs reserve for a scored
#: checkpoint's provenance (`leaderboard.read.PROVENANCE_PREFIX`).
ENVFACTORY = PinnedRelease(
    name="envfactory", title="EnvFactory", repository="LARK-AI-Lab/EnvFactory", ref="eff3b22",
    files=("src/gen/query_gen/prompts.py", "src/gen/query_gen/preset_config.py",
           "src/graph/prompts.py", "src/gen/env_gen/prompts.py", "src/gen/prompts.py",
           "src/utils/data_process.py",
           # QueryGen's pipeline, whose fixed texts (first inputs, retry feedback) are read
           # as data by synthesis.querygen.release_prompts
           "src/gen/query_gen/query_gen_non_conv.py", "src/gen/query_gen/query_gen_conv.py",
           "src/gen/__init__.py",
           # the tool graph's LLM passes, whose fixed texts (tool rendering, retry feedback)
           # synthesis.graph_llm_release reads as data
           "src/graph/tool_graph.py", "src/graph/tool_node.py"),
    folders=("envs/tools", "envs/intermediate", "envs/metadata"), archive=True,
    override="ENVFACTORY_RELEASE_DIR",
    override_hint="a checkout of LARK-AI-Lab/EnvFactory at eff3b22 (the folder holding envs/)",
    source_override="ENVFACTORY_RELEASE_DIR",
    source_hint="a checkout of LARK-AI-Lab/EnvFactory at eff3b22",
    required="envs", cache=("envfactory_release", "eff3b22"),
    record=(("upstream_envfactory_commit", "ref"), ("upstream_envfactory_dir", "data")))

#: what `envfactory envgen verify` recorded about the release's environments
#: (`summary.json` there; `envs.release_envs.verified_names` reads it)
RELEASE_VERIFY = CacheFolder("envfactory-release-verify", ("envfactory_release", "verify"),
                             "ENVFACTORY_RELEASE_VERIFY_DIR")
#: bfcl-eval's working folder (it creates result/, score/ there on import)
BFCL_PROJECT_ROOT = CacheFolder("bfcl-project-root", ("bfcl",), "BFCL_PROJECT_ROOT")
#: embedding vectors keyed by model and text (sqlite)
EMBEDDINGS = CacheFolder("embeddings", ("embeddings",))
#: the EnvGen search agent's corpus indexes (sqlite)
ENVGEN_INDEX = CacheFolder("envgen-corpus-index", ("envgen_index",))
#: where EnvGen registers environments whose tests all pass (`envs.generated`)
GENERATED_ENVS_VAR = "ENVFACTORY_GENERATED_ENVS"
GENERATED_ENVS = CacheFolder("generated-envs", ("generated_envs",), GENERATED_ENVS_VAR)
#: the models `envfactory models prepare` writes (`training.local_models`)
LOCAL_MODELS = CacheFolder("local-models", ("models",), "ENVFACTORY_MODELS_DIR")
#: `envfactory demo`'s tuned model and logs
DEMO = CacheFolder("demo", ("demo",))
#: the pinned MCP-Atlas servers (npm prefix, one venv per Python server)
MCP_ATLAS_SERVERS = CacheFolder("mcp-atlas-servers", ("mcp_atlas", "servers"),
                                "MCP_ATLAS_SERVERS_DIR")
#: the official harnesses' venvs the speed benchmarks compare with
BENCH_VENVS = CacheFolder("bench-venvs", ("bench",))


def registered_releases() -> list[PinnedRelease | CacheFolder]:
    """Every release (each VitaBench revision on its own) and cache folder, in the order
    `doctor` lists them."""
    return [BFCL_PROJECT_ROOT, TAU2, *(Release(r).pinned for r in REVISIONS.values()),
            MCP_ATLAS, ENVFACTORY, RELEASE_VERIFY, MCP_ATLAS_SERVERS, EMBEDDINGS, ENVGEN_INDEX,
            GENERATED_ENVS, LOCAL_MODELS, DEMO, BENCH_VENVS]
