"""Held-out EnvFactory tasks: `inspect eval tasks/envfactory --model ...`.

Multi-turn tasks over our own environment pool, scored with the paper's composite
reward (R, R_traj, R_state, P_length, P_format as separate metrics, per environment
and per domain). The held-out environments never appear in training data.
"""

from inspect_ai import Task, task

from harness import task_options
from tasks.envfactory.episode import (
    DATA_DIR,
    envfactory_scorer,
    envfactory_solver,
    load_dataset,
)


@task
def envfactory(split: str = "heldout", transport: str = "inprocess", alpha: float = 0.5,
               max_steps: int = 10, data_dir: str | None = None) -> Task:
    """EnvFactory held-out suite.

    Args:
        split: "heldout" (default), "train" or "all".
        transport: "inprocess" (tools on the sample's own environments) or "mcp"
            (one `envfactory env serve` stdio server per environment per sample).
        alpha: weight of R_traj in the composite reward.
        max_steps: tool-calling assistant messages allowed per user turn.
        data_dir: directory with <split>.jsonl task files (default: the shipped tasks).
    """
    task_options.one_of("split", split, ("heldout", "train", "all"))
    task_options.one_of("transport", transport, ("inprocess", "mcp"))
    task_options.number("alpha", alpha, 0.0, 1.0)
    task_options.integer("max_steps", max_steps, minimum=1)
    tasks_dir = task_options.directory("data_dir", data_dir) if data_dir else DATA_DIR
    return Task(
        dataset=load_dataset(split, tasks_dir),
        solver=envfactory_solver(transport=transport, max_steps=max_steps),
        scorer=envfactory_scorer(alpha=alpha),
        metadata={"benchmark": "envfactory", "split": split, "transport": transport},
        version="1",
    )
