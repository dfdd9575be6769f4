"""Which MCP-Atlas tasks run here, and why the others do not.

Availability is a result, not a footnote: most of upstream's 36 servers call live web
APIs or need keys, so a run on a given machine covers a subset. A task runs when every
server its reference run called can start here (installed at the pinned version, keys
set, network where needed) and the git repositories it reads are present. `subset`
chooses the population the run speaks for:

- `offline`: tasks whose required servers are all keyless local servers (`OFFLINE`);
- `available`: tasks whose required servers can all start on this machine now;
- `all`: every task.

Tasks of the population that cannot run are skipped with their reasons, listed in the
log's metadata and never scored as 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from tasks._mcp_atlas.dataset import AtlasTask, server_of, tool_name_mappings
from tasks._mcp_atlas.servers import OFFLINE, availability, repos_dir, templates

__all__ = ["SUBSETS", "Selection", "Subset", "select"]

Subset = Literal["offline", "available", "all"]
SUBSETS: tuple[Subset, ...] = ("offline", "available", "all")


class Selection(BaseModel):
    """The population a run speaks for, split into what runs and what is skipped."""

    subset: Subset
    runnable: list[AtlasTask]
    #: task id -> why it cannot run here
    skipped: dict[str, str] = Field(default_factory=dict)
    #: task id -> what blocks it, in short (a server's name, `repos/<name>`, or
    #: `unknown tool`), so that a report can count the tasks each missing piece costs
    blocked_by: dict[str, list[str]] = Field(default_factory=dict)
    #: servers that can start here (the others' tools are missing from the offers)
    available_servers: list[str] = Field(default_factory=list)
    #: server -> why it cannot start, for every server some task of the population needs
    unavailable_servers: dict[str, str] = Field(default_factory=dict)

    @property
    def population(self) -> int:
        return len(self.runnable) + len(self.skipped)


def select(tasks: Sequence[AtlasTask], subset: Subset) -> Selection:
    names = [t.name for t in templates()]
    status = {name: availability(name) for name in names}
    available = [name for name in names if status[name].ok]
    runnable: list[AtlasTask] = []
    skipped: dict[str, str] = {}
    blocked_by: dict[str, list[str]] = {}
    unavailable: dict[str, str] = {}
    mappings = tool_name_mappings()
    for task in tasks:
        required = task.required_servers(names)
        orphans = sorted({t for t in task.reference_tools()
                          if server_of(mappings.get(t, t), names) is None})
        if subset == "offline" and (orphans or not set(required) <= set(OFFLINE)):
            continue
        if subset == "available" and (orphans or not set(required) <= set(available)):
            continue
        reasons = [f"the reference run calls {', '.join(orphans)}, of no server in the "
                   "template (upstream cannot run it either)"] if orphans else []
        blocked = ["unknown tool"] if orphans else []
        down = [s for s in required if not status[s].ok]
        reasons += [f"{s}: {status[s].reason}" for s in down]
        unavailable.update({s: status[s].reason for s in down})
        absent = [r for r in task.repos() if not (repos_dir() / r).is_dir()]
        reasons += [f"git repository {r!r} not in {repos_dir()} (`envfactory mcp-atlas "
                    "install --repos` clones it)" for r in absent]
        blocked += [*down, *(f"repos/{r}" for r in absent)]
        if reasons:
            skipped[task.task_id] = "; ".join(reasons)
            blocked_by[task.task_id] = blocked
        else:
            runnable.append(task)
    return Selection(subset=subset, runnable=runnable, skipped=skipped, blocked_by=blocked_by,
                     available_servers=available, unavailable_servers=unavailable)
