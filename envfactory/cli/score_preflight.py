"""What `envfactory score` checks before a suite runs: each task is built here, in this
process, as `inspect eval` builds it before any sample runs. A task that refuses to start
(its data or release files missing, no MCP-Atlas task whose servers can run here) is
listed as skipped with its own message, instead of an eval-set that fails or a cell
scored 0. MCP-Atlas says which of its tasks can run and which servers are missing.

Only the CLI may import `tasks/` (DESIGN.md), so the check lives here and reaches
`training.autoscore` as its `Preflight` callback.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from typing import Any

from training.autoscore import Preflight, SuiteTask, TaskCheck
from training.reporting import Say

__all__ = ["check_roles", "task_preflight"]

#: providers whose model, once made, loads weights or starts a server: not made to check
_HEAVY_PROVIDERS = ("hf/", "vllm/", "sglang/", "llama-cpp-python/", "transformer_lens/",
                    "nnterp/")


def check_roles(roles: Mapping[str, str]) -> None:
    """Make each role's model once, before anything runs, so that an unknown provider, a
    missing API key or a judge that cannot judge (`envfactory/oracle`) is one error now,
    not every task failing at its start. Raises the harness's one-line errors."""
    from inspect_ai.model import get_model

    from harness.judge import judge_model, model_errors

    for role, model in roles.items():
        if model.startswith(_HEAVY_PROVIDERS):
            continue
        if role == "judge":
            judge_model(model)
        else:
            with model_errors(role, model):
                get_model(model, memoize=False)


def _task_function(task: SuiteTask) -> Any:
    """The `@task` function a suite task names (`tasks/<folder>/<file>.py@<name>`)."""
    file, name = task.task.rsplit("@", 1)
    module = importlib.import_module(file.removesuffix(".py").replace("/", "."))
    return getattr(module, name)


def _atlas_report(metadata: Mapping[str, Any]) -> str:
    """What an MCP-Atlas task built for this machine will run, from its metadata."""
    skipped = metadata.get("mcp_atlas_skipped") or {}
    missing = metadata.get("mcp_atlas_unavailable_servers") or {}
    line = (f"subset {metadata.get('mcp_atlas_subset')}: {metadata.get('mcp_atlas_runnable')} "
            f"of {metadata.get('mcp_atlas_population')} tasks can run here, "
            f"{len(skipped)} skipped (listed in the log's mcp_atlas_skipped)")
    if missing:
        line += "; servers not available: " + ", ".join(
            f"{name} ({why})" for name, why in sorted(missing.items()))
    return line


def task_preflight(say: Say) -> Preflight:
    """The preflight `score_model` asks before a run: the reason a task cannot start here
    (it does not build), or for a `stratify` task its sample ids by stratum. The judge
    role is handed to a task that takes it as an argument (MCP-Atlas refuses to build
    without one); others see it bound at run time."""

    def check(task: SuiteTask, roles: Mapping[str, str]) -> TaskCheck:
        from harness.inspect_compat import PrerequisiteError  # Inspect: not for --help

        function = _task_function(task)
        args: dict[str, Any] = dict(task.args)
        if "judge" in inspect.signature(function).parameters and roles.get("judge"):
            args["judge"] = roles["judge"]
        try:
            built = function(**args)
        except (PrerequisiteError, OSError, ValueError) as e:  # a task option's error too
            return TaskCheck(reason=str(e).strip() or type(e).__name__)
        metadata = built.metadata or {}
        if metadata.get("benchmark") == "mcp_atlas":
            say(f"{task.name}: {_atlas_report(metadata)}")
        else:
            say(f"{task.name}: {len(built.dataset)} samples")
        strata: dict[str, list[str]] = {}
        for sample in built.dataset if task.stratify else ():
            value = (sample.metadata or {}).get(task.stratify)
            strata.setdefault(str(value), []).append(str(sample.id))
        return TaskCheck(strata=strata)

    return check
