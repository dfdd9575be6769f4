"""What a scoring is asked to run: the suites, their tasks and default limits, and the
error every part of `training.autoscore` raises for what cannot be scored as asked.

The suites name tasks by path (`tasks/<folder>/<file>.py@<task>`): training never imports
`tasks/` (DESIGN.md), it runs them with `inspect eval-set` from `REPO_ROOT`.

The `paper` suite is the paper's evaluation table and pins the models of the `user` and
`judge` roles (`SUITE_ROLES`): two checkpoints compared on it were simulated and judged by
the same models, so the roles are required, never defaulted to the model under test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The checkout whose `tasks/` folder is run (the eval-set subprocesses' working dir)."""

Suite = Literal["quick", "full", "demo", "paper"]


class SuiteTask(BaseModel):
    """One task of a suite: its path (relative to the repository root) and `-T` options."""

    task: str
    """`tasks/<folder>/<file>.py@<task>`, as `inspect eval-set` takes it."""
    args: dict[str, str | int] = Field(default_factory=dict)
    max_samples: int | None = None
    """At most this many samples whatever the run's `--limit` (a slow task in a fast suite)."""
    stratify: str | None = None
    """Under a `--limit N`, the first N samples of each value of this sample-metadata key
    instead of the first N of the dataset (BFCL's `category`: multi-turn's overall is the
    mean of its four categories, single-turn's official overall spans all 13, and their
    first entries are all of one category). The ids come from the task as built
    (`scoring.TaskCheck`); without them the plain `--limit` applies."""

    def limit(self, run_limit: int | None) -> int | None:
        """The `--limit` this task runs with under the run's limit."""
        if self.max_samples is None:
            return run_limit
        return self.max_samples if run_limit is None else min(run_limit, self.max_samples)

    @property
    def name(self) -> str:
        return self.task.rsplit("@", 1)[-1]


_ENVFACTORY = SuiteTask(task="tasks/envfactory/envfactory.py@envfactory",
                        args={"split": "heldout"})
_BFCL_MULTITURN = SuiteTask(task="tasks/bfcl_multiturn/bfcl_multiturn.py@bfcl_multiturn")
_BFCL_SINGLETURN = SuiteTask(task="tasks/bfcl_singleturn/bfcl_singleturn.py@bfcl_singleturn")

SUITES: dict[str, tuple[SuiteTask, ...]] = {
    # the held-out EnvFactory tasks and BFCL multi-turn (its first entries, the `base`
    # category, under a limit): a few minutes' signal per checkpoint
    "quick": (_ENVFACTORY, _BFCL_MULTITURN),
    # Every benchmark that runs with the agent model alone. τ²'s simulated user (role
    # `user`) defaults to the agent's model; bind a fixed one with
    # `--inspect-arg=--model-role --inspect-arg=user=...`. VitaBench and MCP-Atlas are
    # left out: VitaBench needs a `judge` role (a run without one fails) and MCP-Atlas
    # needs the judge plus its installed MCP servers (`envfactory mcp-atlas install`);
    # run them with plain `inspect eval` where those are configured.
    "full": (
        _ENVFACTORY,
        _BFCL_MULTITURN,
        SuiteTask(task="tasks/bfcl_singleturn/bfcl_singleturn.py@bfcl_singleturn"),
        SuiteTask(task="tasks/tau2/tau2.py@tau2_airline"),
        SuiteTask(task="tasks/tau2/tau2.py@tau2_retail"),
        SuiteTask(task="tasks/tau2/tau2.py@tau2_telecom"),
    ),
    # `envfactory demo` on 2 CPU cores in minutes: `--limit` held-out first turns
    # (`turns=first`: interleaved over the four held-out environments), one tool-calling
    # step each, so one generation per sample: 24 of them per model (enough for 95%
    # intervals on whether it calls tools, and which) in the time one whole task and 5
    # BFCL entries took; at most 40, so the demo keeps its minutes
    "demo": (
        SuiteTask(task=_ENVFACTORY.task,
                  args={**_ENVFACTORY.args, "turns": "first", "max_turn_steps": 1},
                  max_samples=40),
    ),
}

def _task(path: str, **args: str | int) -> SuiteTask:
    return SuiteTask(task=path, args=dict(args))


# The paper's evaluation table: BFCL v3 multi-turn (its four categories) and single-turn
# (13 categories, the official overall), both stratified by category under a --limit; τ²
# airline/retail/telecom; VitaBench's delivery, in-store and OTA (the paper's three;
# cross-scenario is its own task); and MCP-Atlas over the tasks whose servers this machine
# can run (`subset=available`: the log states the population, what ran and why the rest
# was skipped). Each runs against the pinned `user` and `judge` (SUITE_ROLES).
SUITES["paper"] = (
    # no -T: every category is the tasks' default, and a log without task options reads
    # as the benchmark as shipped (the leaderboard marks any option as a difference)
    _BFCL_MULTITURN.model_copy(update={"stratify": "category"}),
    _BFCL_SINGLETURN.model_copy(update={"stratify": "category"}),
    _task("tasks/tau2/tau2.py@tau2_airline"),
    _task("tasks/tau2/tau2.py@tau2_retail"),
    _task("tasks/tau2/tau2.py@tau2_telecom"),
    _task("tasks/vitabench/vitabench.py@vitabench_delivery"),
    _task("tasks/vitabench/vitabench.py@vitabench_instore"),
    _task("tasks/vitabench/vitabench.py@vitabench_ota"),
    _task("tasks/mcp_atlas/mcp_atlas.py@mcp_atlas", subset="available"),
)

SUITE_ROLES: dict[str, tuple[str, ...]] = {"paper": ("user", "judge")}
"""The model roles a suite requires (`--user`, `--judge`): refused when missing."""

DEFAULT_LIMITS: dict[str, int | None] = {"quick": 5, "full": None, "demo": 24, "paper": None}
"""Samples per task when `--limit` is not given (None: the whole benchmark)."""


class ScoreError(RuntimeError):
    """A checkpoint cannot be scored as asked (bad option, server down, vLLM missing)."""
