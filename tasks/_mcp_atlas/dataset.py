"""MCP-Atlas tasks: the public split from the Hub, or a local copy, as typed records.

The public split is the Hub dataset `ScaleAI/MCP-Atlas` (500 tasks) at the pinned commit
`HUB_REVISION` (`-T revision=` names another; a branch such as `main` is refused, since it
moves). It is fetched through `envs.releases.hub_snapshot` (the Hub's cache, so a second
run and an offline run with `HF_HUB_OFFLINE=1` read the same files; transient errors
retried) and read with `datasets`; the snapshot's commit is what every log records. A
local copy — the 10 public sample tasks, a downloaded snapshot, a private split — is
chosen with `MCP_ATLAS_TASKS` or
`-T data_dir=`: a file (`.csv`, `.parquet`, `.jsonl`/`.json`) or a folder holding such
files; its record is a digest of the files.

Fields are upstream's: `TASK`, `PROMPT` (one user turn), `ENABLED_TOOLS` (the tools the
model is offered, as `server_tool` names), `GTFA_CLAIMS` (the claims the judge checks),
`TRAJECTORY` (a reference run, never scored: we use it to tell which servers a task
really needs, and the oracle replays it).
"""

from __future__ import annotations

import ast
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from envs.hashing import file_sha256, text_sha256
from envs.releases import UnpinnedRevision, hub_snapshot
from tasks._mcp_atlas.release import DATA_FILES, Release, release

__all__ = ["HUB_DATASET", "HUB_REVISION", "AtlasTask", "TaskSource", "load_tasks", "server_of",
           "cacheable_servers", "tool_name_mappings"]

HUB_DATASET = "ScaleAI/MCP-Atlas"
#: the dataset's commit: the one other public harnesses pin for the 500-task split
#: (`MCP-Atlas.parquet`, sha256 2d7bc052f14c...); a new commit is a new data version
HUB_REVISION = "8c563b55d7c967755f474299848049834d624617"
FORMATS = {".csv": "csv", ".parquet": "parquet", ".jsonl": "json", ".json": "json"}
#: what the release ships under /data/repos (the other names there are git clones)
SHIPPED_REPOS = frozenset(Path(f).parts[1] for f in DATA_FILES if f.startswith("repos/"))
#: `/data/repos/<name>` standing alone (not `/x/data/repos/...`)
_REPO_PATH = re.compile(r"(?<![\w.\-~/])/data/repos/([\w.\-~]+)")


class AtlasTask(BaseModel):
    """One task as upstream's files hold it."""

    task_id: str
    prompt: str
    enabled_tools: list[str]
    #: GTFA_CLAIMS as stored (a list literal); `tasks._mcp_atlas.claims` parses it
    claims: str
    trajectory: list[dict[str, Any]] = Field(default_factory=list)

    def reference_tools(self) -> list[str]:
        """The tools the reference run called, in order (repeats kept)."""
        return [call["function"]["name"] for message in self.trajectory
                if message.get("role") == "assistant"
                for call in message.get("tool_calls") or []]

    def required_servers(self, servers: Iterable[str]) -> list[str]:
        """The servers whose tools the reference run called (mapped as upstream's
        environment maps old names), in first-use order; what the task needs to run."""
        mappings = tool_name_mappings()
        needed: list[str] = []
        for tool in self.reference_tools():
            server = server_of(mappings.get(tool, tool), servers)
            if server is not None and server not in needed:
                needed.append(server)
        return needed

    def enabled_servers(self, servers: Iterable[str]) -> list[str]:
        """Servers owning at least one enabled tool, in `servers` order."""
        owners = {server_of(tool, servers) for tool in self.enabled_tools}
        return [s for s in servers if s in owners]

    def repos(self) -> list[str]:
        """Git repositories under `/data/repos/` the reference run's calls name, in order
        of first mention (cloned by upstream's image, not shipped with the data)."""
        found: list[str] = []
        for message in self.trajectory:
            for call in message.get("tool_calls") or []:
                for name in _REPO_PATH.findall(call["function"].get("arguments") or ""):
                    if name not in SHIPPED_REPOS and name not in found:
                        found.append(name)
        return found


def server_of(tool: str, servers: Iterable[str]) -> str | None:
    """The server a `server_tool` name belongs to (longest matching server name)."""
    for server in sorted(servers, key=len, reverse=True):
        if tool.startswith(server + "_"):
            return server
    return None


ENVIRONMENT_MAIN = "services/agent-environment/src/agent_environment/main.py"


@cache
def _literal(source: str, name: str) -> Any:
    """The value of a module-level `NAME = <literal>` in upstream's environment."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise ValueError(f"{name} not found in upstream's {ENVIRONMENT_MAIN}")


def tool_name_mappings(rel: Release | None = None) -> dict[str, str]:
    """Upstream's table of old tool names its environment still answers
    (`brave_brave_web_search` -> `brave-search_brave_web_search`), read from the release."""
    value = _literal((rel or release()).source_text(ENVIRONMENT_MAIN), "TOOL_NAME_MAPPINGS")
    return {str(k): str(v) for k, v in dict(value).items()}


def cacheable_servers(rel: Release | None = None) -> frozenset[str]:
    """The servers whose successful results upstream's environment caches by tool and
    arguments (`CACHEABLE_SERVERS`), read from the release."""
    return frozenset(map(str, _literal((rel or release()).source_text(ENVIRONMENT_MAIN),
                                       "CACHEABLE_SERVERS")))


class TaskSource(BaseModel):
    """Where the tasks came from, for the log."""

    origin: str
    revision: str
    files: list[str]


def _files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise FileNotFoundError(f"MCP-Atlas tasks not found at {root}")
    files = sorted(p for p in root.rglob("*") if p.suffix in FORMATS and p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(root).parts))
    if not files:
        raise FileNotFoundError(f"{root} holds no task file ({', '.join(FORMATS)})")
    return files


def _digest(files: Sequence[Path]) -> str:
    """A local copy's revision label: the digest of its files' digests, in order."""
    return text_sha256("".join(file_sha256(f) for f in files))[:16]


def _hub_snapshot(revision: str) -> Path:
    try:
        folder, _commit = hub_snapshot(HUB_DATASET, revision, option="-T revision=")
    except UnpinnedRevision:
        raise  # a usage error, not a missing dataset: the message names the option
    except Exception as e:  # noqa: BLE001 - offline, gated, missing: one clear message
        raise FileNotFoundError(
            f"cannot fetch the Hub dataset {HUB_DATASET}@{revision} ({e}); set "
            "MCP_ATLAS_TASKS (or -T data_dir=) to a local copy: a CSV/parquet/JSONL file "
            "or a folder of them") from e
    return folder


def _rows(files: Sequence[Path]) -> list[dict[str, Any]]:
    import datasets

    kinds = {FORMATS[f.suffix] for f in files}
    if len(kinds) != 1:
        raise ValueError(f"task files of mixed formats: {', '.join(map(str, files))}")
    (kind,) = kinds
    split = datasets.load_dataset(kind, data_files=[str(f) for f in files], split="train")
    return [dict(row) for row in split]


def _parse_list(value: Any, field: str, where: str) -> list[Any]:
    if isinstance(value, list):
        return value
    if value is None or (isinstance(value, str) and not value.strip()):
        return []
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as e:
            if field == "ENABLED_TOOLS":  # upstream also accepts a comma-separated string
                return [t.strip() for t in value.split(",") if t.strip()]
            raise ValueError(f"{where}: {field} is not a JSON list ({e})") from e
        if isinstance(parsed, list):
            return parsed
    raise ValueError(f"{where}: {field} must be a list, got {type(value).__name__}")


def _tool_names(items: Sequence[Any]) -> list[str]:
    """Upstream's reading of ENABLED_TOOLS: names, or `{"name": ...}` objects."""
    return [t if isinstance(t, str) else t["name"] for t in items
            if isinstance(t, str) or (isinstance(t, Mapping) and t.get("name"))]


def _task(row: Mapping[str, Any], where: str) -> AtlasTask:
    missing = [f for f in ("TASK", "PROMPT", "ENABLED_TOOLS", "GTFA_CLAIMS") if f not in row]
    if missing:
        raise ValueError(f"{where}: missing field(s) {', '.join(missing)}")
    claims = row["GTFA_CLAIMS"]
    return AtlasTask(
        task_id=str(row["TASK"]).strip(), prompt=str(row["PROMPT"] or ""),
        enabled_tools=_tool_names(_parse_list(row["ENABLED_TOOLS"], "ENABLED_TOOLS", where)),
        claims=claims if isinstance(claims, str) else json.dumps(claims or []),
        trajectory=_parse_list(row.get("TRAJECTORY"), "TRAJECTORY", where))


def load_tasks(data_dir: str | None = None,
               revision: str = HUB_REVISION) -> tuple[list[AtlasTask], TaskSource]:
    """The tasks, and where they came from. `data_dir` (or `MCP_ATLAS_TASKS`) is a local
    copy; otherwise the Hub dataset at `revision`."""
    local = data_dir or os.environ.get("MCP_ATLAS_TASKS")
    if local:
        files = _files(Path(local))
        source = TaskSource(origin=str(Path(local).resolve()),
                            revision=f"local:{_digest(files)}", files=[str(f) for f in files])
    else:
        snapshot = _hub_snapshot(revision)
        files = _files(snapshot)
        source = TaskSource(origin=f"hf://datasets/{HUB_DATASET}", revision=snapshot.name,
                            files=[str(f.relative_to(snapshot)) for f in files])
    tasks = [_task(row, f"{source.origin} row {i}") for i, row in enumerate(_rows(files))]
    ids = [t.task_id for t in tasks]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ValueError(f"{source.origin}: duplicate task ids {', '.join(duplicated)}")
    return tasks, source
