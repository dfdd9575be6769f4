"""Held-out EnvFactory tasks: `inspect eval tasks/envfactory --model ...`.

Multi-turn tasks over our own environment pool, scored with the paper's composite
reward (R, R_traj, R_state, P_length, P_format as separate metrics, per environment
and per domain): `strict` by default, the release's with `-T reward=release`
(`harness.rewards`); the log's task metadata records the variant, α and γ. The held-out
environments never appear in training data.
"""

from inspect_ai import Task, task

from harness import task_options
from harness.rewards import VARIANTS, RewardSettings
from tasks._envfactory.dataset import DATA_DIR, TURNS, load_dataset
from tasks._envfactory.orchestrator import envfactory_solver
from tasks._envfactory.scoring import envfactory_scorer


@task
def envfactory(split: str = "heldout", transport: str = "inprocess",
               reward: str = "strict", alpha: float = 0.5, gamma: float = 0.05,
               max_turn_steps: int = 10, max_steps: int | None = None,
               data_dir: str | None = None, turns: str = "all") -> Task:
    """EnvFactory held-out suite.

    Args:
        split: "heldout" (default), "train" or "all".
        transport: "inprocess" (tools on the sample's own environments) or "mcp"
            (one `envfactory env serve` stdio server per environment per sample).
        reward: "strict" (default; `harness.rewards`' hardened reward) or "release" (the
            reward the paper trained with, rule for rule).
        alpha: weight of R_traj in the composite reward.
        gamma: P_length per extra call (the release's 0.05).
        max_turn_steps: tool-calling assistant messages allowed per user turn (the
            release's max_assistant_turns).
        max_steps: hops in the whole episode, as `-T max_steps` means in τ² and VitaBench
            (default: no limit, as the release). Before, this task's `max_steps` was the
            per-turn limit, now `max_turn_steps`.
        data_dir: directory with <split>.jsonl task files (default: the shipped tasks).
        turns: "all" (default) or "first": each task's first user turn alone, scored
            against that turn's gold calls and gold state, the samples interleaved by
            first environment (many short samples: `make demo` measures behaviour on them).
    """
    task_options.one_of("split", split, ("heldout", "train", "all"))
    task_options.one_of("transport", transport, ("inprocess", "mcp"))
    task_options.one_of("turns", turns, TURNS)
    task_options.one_of("reward", reward, VARIANTS)
    task_options.number("alpha", alpha, 0.0, 1.0)
    task_options.number("gamma", gamma, 0.0)
    settings = RewardSettings.model_validate({"variant": reward, "alpha": alpha,
                                              "gamma": gamma})
    task_options.integer("max_turn_steps", max_turn_steps, minimum=1)
    if max_steps is not None:
        task_options.integer("max_steps", max_steps, minimum=1)
    tasks_dir = task_options.directory("data_dir", data_dir) if data_dir else DATA_DIR
    return Task(
        dataset=load_dataset(split, tasks_dir, turns),
        solver=envfactory_solver(transport=transport, max_turn_steps=max_turn_steps,
                                 max_steps=max_steps),
        scorer=envfactory_scorer(settings.variant, settings.alpha, settings.gamma),
        metadata={"benchmark": "envfactory", "split": split, "turns": turns,
                  "transport": transport,
                  "reward": settings.model_dump()},
        version="1",
    )
