"""MCP-Atlas (scaleapi/mcp-atlas, commit 5b6220c): `inspect eval tasks/mcp_atlas`.

Single-turn tasks over real MCP servers: the model gets the task's prompt and the tools
of its enabled list (its needed servers plus distractors), calls them through the real
servers — started per sample from their pinned npm/PyPI packages, on a fresh copy of
upstream's `/data` — until it answers without a tool call (at most 100 calls, 60 s per
call). The `judge` role (required) scores each of the task's claims against the answer,
exactly as upstream's `score_claims.py`: coverage = mean claim score (1 / 0.5 / 0), pass
iff coverage >= 0.75.

    make install-mcp-atlas          # the keyless local servers, pinned
    envfactory mcp-atlas doctor     # what a run needs, what is missing, how to get it
    inspect eval tasks/mcp_atlas --model openai/gpt-4.1 --model-role judge=openai/<judge>

Options: `subset` (offline: tasks needing only keyless local servers; available: what
can run on this machine; all), `data_dir` (a local copy of the tasks instead of the Hub
dataset `ScaleAI/MCP-Atlas`; also `MCP_ATLAS_TASKS`), `revision` (a commit of the Hub
dataset; default the pinned one), `max_tool_calls` (100), `tool_timeout` (60). Tasks of
the subset that cannot run here are skipped with their reasons (`mcp_atlas_skipped` in
the log), never scored 0. Metrics:
pass@0.75, pass@0.5, mean coverage. The release commit, the dataset's revision, the
servers' pinned packages and the judge model are in every log.

What a run needs is checked when the task is built, before any server starts: without
`--model-role judge=...` (in Python, `mcp_atlas(judge=<model>)` for a task built before
`eval()`, which binds the role on the task), or without the release files or tasks,
`inspect eval` stops with one line and exits 1.
"""

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import Model

from harness import task_options
from harness.inspect_compat import PrerequisiteError
from tasks._mcp_atlas.agent import MAX_TOOL_CALLS, TOOL_TIMEOUT, atlas_solver
from tasks._mcp_atlas.dataset import HUB_REVISION, AtlasTask, load_tasks
from tasks._mcp_atlas.release import release
from tasks._mcp_atlas.scoring import mcp_atlas_scorer, require_judge
from tasks._mcp_atlas.selection import SUBSETS, Subset, select
from tasks._mcp_atlas.servers import templates


class AtlasUnavailable(PrerequisiteError, RuntimeError):
    """What the task needs is not here: Inspect prints the line and exits 1, before any
    sample runs."""

    def __init__(self, message: str) -> None:
        full = f"{message}; `envfactory mcp-atlas doctor` lists what is missing and how to get it"
        super().__init__(full)
        self.args = (full,)  # PrerequisiteError keeps only `.message`; str() reads args


def _sample(t: AtlasTask, servers: list[str]) -> Sample:
    return Sample(id=t.task_id, input=t.prompt, metadata={
        "task_id": t.task_id, "claims": t.claims, "enabled_tools": t.enabled_tools,
        "required_servers": t.required_servers(servers), "task": t.model_dump()})


@task
def mcp_atlas(subset: str = "offline", data_dir: str | None = None,
              revision: str = HUB_REVISION,
              max_tool_calls: int = MAX_TOOL_CALLS, tool_timeout: float = TOOL_TIMEOUT,
              judge: str | Model | None = None) -> Task:
    """MCP-Atlas public tasks whose servers can run here (see the module docstring)."""
    task_options.one_of("subset", subset, SUBSETS)
    task_options.integer("max_tool_calls", max_tool_calls, minimum=1)
    task_options.number("tool_timeout", tool_timeout, minimum=0.0)
    require_judge(judge)
    chosen: Subset = subset  # type: ignore[assignment]
    try:
        tasks, source = load_tasks(data_dir, revision)
        selection = select(tasks, chosen)
        names = [t.name for t in templates()]
    except (OSError, ValueError) as e:  # missing release files, tasks, a bad table
        raise AtlasUnavailable(f"MCP-Atlas cannot start: {e}") from None
    if not selection.runnable:
        reasons = "; ".join(f"{k}: {v}" for k, v in list(selection.skipped.items())[:5])
        raise AtlasUnavailable(
            f"no MCP-Atlas task of subset {subset!r} can run here ({selection.population} in "
            f"the subset, all skipped{': ' + reasons if reasons else ''})")
    return Task(
        name="mcp_atlas",
        dataset=MemoryDataset([_sample(t, names) for t in selection.runnable],
                              name="mcp_atlas", location=source.origin),
        solver=atlas_solver(max_tool_calls, tool_timeout, selection.available_servers),
        scorer=mcp_atlas_scorer(),
        model_roles={"judge": judge} if judge is not None else None,
        metadata={"benchmark": "mcp_atlas", **release().provenance(),
                  "mcp_atlas_dataset": source.origin,
                  "mcp_atlas_dataset_revision": source.revision,
                  "mcp_atlas_subset": subset, "mcp_atlas_population": selection.population,
                  "mcp_atlas_runnable": len(selection.runnable),
                  "mcp_atlas_skipped": selection.skipped,
                  "mcp_atlas_unavailable_servers": selection.unavailable_servers,
                  "mcp_atlas_servers": {t.name: t.requirement for t in templates()
                                        if t.name in selection.available_servers},
                  "max_tool_calls": max_tool_calls, "tool_timeout": tool_timeout},
        version="1",
    )
