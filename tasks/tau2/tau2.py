"""τ²-bench (release v0.2.0 grading): `inspect eval tasks/tau2 --model ... --epochs 4`.

Three tasks — `tau2_airline` (50), `tau2_retail` (114), `tau2_telecom` (114 base) — in
which the agent greets, a simulated user (model role `user`) follows the official
guidelines and its scenario, and the reward is τ²'s (DB, environment assertions,
actions, communicated info; NL assertions by the `judge` role where the reward basis
asks). Metrics: pass^k for k = 1..epochs and the average reward. Use `--epochs 4` for
numbers comparable with the τ² leaderboard.

The domain is the task (`tau2_airline`, ...): a `-T domain=` is refused with the task to
run instead, since Inspect hands `-T` options to every task of `tasks/tau2` and would
otherwise ignore it with a warning and run all three. The release files every sample
reads (tasks, splits, database, policy, guidelines, tool objects) are read when the task
is built, so a missing one stops `inspect eval` with one line and exit 1 before any
sample runs.

Options shared by the three tasks: `max_steps` (200, as `tau2 run`); `max_errors`
(default off: v0.2.0 never counts tool errors; e.g. 10 enforces the limit of later
releases); `temperature` (0.0) and `seed` (300; trial t's per-request seed is derived as
upstream's `--seed`) for both the agent and the user — Inspect's `--temperature` /
`--seed` and a role's own config take precedence. The values sent are in the task's and
each sample's metadata.
"""

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset

from envs.tau2 import data
from envs.tau2.tasks import Task as Tau2Task
from harness import task_options
from harness.inspect_compat import PrerequisiteError
from harness.judge import check_bound_judge
from harness.metrics import pass_hat_k
from tasks._tau2.dataset import load_dataset
from tasks._tau2.orchestrator import SEED, TEMPERATURE, read_release_files, tau2_solver
from tasks._tau2.scoring import tau2_scorer


def _domain_option(domain: str, chosen: object) -> None:
    """`-T domain=`: only the task's own domain; otherwise the task to run instead."""
    if chosen is None or chosen == domain:
        return
    if chosen in data.DOMAINS:
        allowed = f"a τ² domain is chosen by task: inspect eval tasks/tau2/tau2.py@tau2_{chosen}"
    else:
        allowed = (f"unknown τ² domain; use one of {', '.join(data.DOMAINS)}, as the task "
                   f"tasks/tau2/tau2.py@tau2_<domain>")
    raise task_options.TaskOptionError("domain", chosen, allowed)


def _files(domain: str, split: str, mode: str, solo: bool) -> MemoryDataset:
    """The split's samples, after reading every release file a sample reads; a missing
    file is one line for Inspect to print (where it was looked for, how to get it)."""
    try:
        task_options.one_of("split", split, data.load_split(domain))
        dataset = load_dataset(domain, split)
        read_release_files(Tau2Task.model_validate((dataset[0].metadata or {})["task"]), domain,
                           mode, solo)
    except FileNotFoundError as e:
        raise PrerequisiteError(f"τ² {domain} cannot start: {e}; {data.lookup_hint()}"
                                ) from None
    return dataset


def _tau2(domain: str, split: str, mode: str, max_steps: int, max_errors: int | None,
          epochs: int, solo: bool = False, temperature: float = TEMPERATURE,
          seed: int = SEED, chosen: object = None) -> Task:
    _domain_option(domain, chosen)
    check_bound_judge()
    task_options.one_of("mode", mode, ("default", "oracle_plan"))
    task_options.integer("max_steps", max_steps, minimum=1)
    if max_errors is not None:
        task_options.integer("max_errors", max_errors, minimum=1)
    task_options.integer("epochs", epochs, minimum=1)
    task_options.boolean("solo", solo)
    task_options.number("temperature", temperature, minimum=0.0)
    task_options.integer("seed", seed, minimum=0)
    if solo and domain != "telecom":
        raise task_options.TaskOptionError(
            "solo", solo, "solo (no-user) mode exists upstream for telecom only")
    return Task(
        name=f"tau2_{domain}",
        dataset=_files(domain, split, mode, solo),
        solver=tau2_solver(domain, mode=mode, max_steps=max_steps, max_errors=max_errors,
                           solo=solo, temperature=temperature, seed=seed),
        scorer=tau2_scorer(domain),
        epochs=Epochs(epochs, pass_hat_k()),
        metadata={"benchmark": "tau2", "domain": domain, "split": split, "mode": mode,
                  "solo": solo, "max_steps": max_steps, "max_errors": max_errors,
                  "temperature": temperature, "seed": seed,
                  **data.version_info()},
        version="1",
    )


@task
def tau2_airline(split: str = "base", mode: str = "default", max_steps: int = 200,
                 max_errors: int | None = None, epochs: int = 1,
                 temperature: float = TEMPERATURE, seed: int = SEED,
                 domain: str | None = None) -> Task:
    """τ² airline (50 tasks)."""
    return _tau2("airline", split, mode, max_steps, max_errors, epochs,
                 temperature=temperature, seed=seed, chosen=domain)


@task
def tau2_retail(split: str = "base", mode: str = "default", max_steps: int = 200,
                max_errors: int | None = None, epochs: int = 1,
                temperature: float = TEMPERATURE, seed: int = SEED,
                domain: str | None = None) -> Task:
    """τ² retail (114 tasks)."""
    return _tau2("retail", split, mode, max_steps, max_errors, epochs,
                 temperature=temperature, seed=seed, chosen=domain)


@task
def tau2_telecom(split: str = "base", mode: str = "default", max_steps: int = 200,
                 max_errors: int | None = None, epochs: int = 1, solo: bool = False,
                 temperature: float = TEMPERATURE, seed: int = SEED,
                 domain: str | None = None) -> Task:
    """τ² telecom (114 base tasks; the user acts on a simulated phone). `solo=true`: no
    user; the agent gets the ticket, both toolkits and a `done` tool."""
    return _tau2("telecom", split, mode, max_steps, max_errors, epochs, solo,
                 temperature, seed, chosen=domain)
