"""VitaBench (release 2025-11, commit 96f3b85): `inspect eval tasks/vitabench ...`.

Four tasks, one per task set — `vitabench_delivery`, `vitabench_instore`,
`vitabench_ota` (100 tasks each) and `vitabench_cross` (100 cross-domain tasks over all
three, the paper's main result). The agent greets, a simulated user (model role `user`,
default: the agent's model) plays the task's persona and instructions, the agent works
the task's own database through the release's tools, and a rubric judge (model role
`judge`, required) grades the conversation in sliding windows. Reward 1 iff every rubric
is met. Metrics: avg_reward, avg@k, pass^k and pass@k for k = 1..epochs; the paper
reports Avg@4, Pass@4 and Pass^4: use `--epochs 4`.

    inspect eval tasks/vitabench/vitabench.py@vitabench_cross --model openai/gpt-4.1 \\
        --model-role user=openai/gpt-4.1 --model-role judge=openai/<judge> --epochs 4

Options: `language` (zh as upstream, or en), `revision` (2025-11; the 2026-01 seam needs
local files), `max_steps` (300), `temperature` (0.0 for the agent and the user; Inspect's
`--temperature` and a role's own config take precedence). The revision, its commit, the
language, the user and judge models, and the json_repair version are in every log.

Every release file a sample reads (tasks, prompt templates, tool descriptions, the
holiday table) is read when the task is built, so a missing one stops `inspect eval`
with one line (what is missing, where it was looked for, how to get it) and exit 1
before any sample runs; `inspect eval` itself exits 0 for a run whose samples all
failed.
"""

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset

from envs.vitabench.release import LANGUAGES, REVISIONS, Language, Release, release
from harness import task_options
from harness.inspect_compat import PrerequisiteError
from harness.judge import check_bound_judge
from harness.metrics import pass_hat_k
from tasks._vitabench.dataset import load_dataset
from tasks._vitabench.judge import JSON_REPAIR_VERSION
from tasks._vitabench.orchestrator import (
    MAX_STEPS,
    TEMPERATURE,
    read_release_files,
    vitabench_solver,
)
from tasks._vitabench.scoring import vitabench_scorer


def _files(files: Release, task_set: str, language: Language) -> MemoryDataset:
    """The set's samples, after reading every release file a sample reads; a missing
    file is one line for Inspect to print (where it was looked for, how to get it)."""
    try:
        dataset = load_dataset(files, task_set, language)
        read_release_files(task_set, language, files.revision.name)
    except FileNotFoundError as e:
        raise PrerequisiteError(f"vitabench_{task_set} cannot start: {e}; "
                                f"{files.lookup_hint()}") from None
    return dataset


def _vitabench(task_set: str, language: str, revision: str, max_steps: int,
               temperature: float, epochs: int) -> Task:
    task_options.one_of("language", language, LANGUAGES)
    task_options.one_of("revision", revision, REVISIONS)
    task_options.integer("max_steps", max_steps, minimum=1)
    task_options.number("temperature", temperature, minimum=0.0)
    task_options.integer("epochs", epochs, minimum=1)
    files = release(revision)
    lang: Language = "zh" if language == "zh" else "en"
    check_bound_judge()
    return Task(
        name=f"vitabench_{task_set}",
        dataset=_files(files, task_set, lang),
        solver=vitabench_solver(task_set, lang, revision, max_steps, temperature),
        scorer=vitabench_scorer(task_set, lang, revision),
        epochs=Epochs(epochs, pass_hat_k(include_pass_at=True, include_avg_at=True)),
        metadata={"benchmark": "vitabench", "task_set": task_set, "language": lang,
                  "max_steps": max_steps, "temperature": temperature,
                  "json_repair": JSON_REPAIR_VERSION, **files.provenance()},
        version="1",
    )


@task
def vitabench_delivery(language: str = "zh", revision: str = "2025-11",
                       max_steps: int = MAX_STEPS, temperature: float = TEMPERATURE,
                       epochs: int = 1) -> Task:
    """VitaBench food delivery (100 tasks)."""
    return _vitabench("delivery", language, revision, max_steps, temperature, epochs)


@task
def vitabench_instore(language: str = "zh", revision: str = "2025-11",
                      max_steps: int = MAX_STEPS, temperature: float = TEMPERATURE,
                      epochs: int = 1) -> Task:
    """VitaBench in-store consumption: shops, bookings, reservations (100 tasks)."""
    return _vitabench("instore", language, revision, max_steps, temperature, epochs)


@task
def vitabench_ota(language: str = "zh", revision: str = "2025-11",
                  max_steps: int = MAX_STEPS, temperature: float = TEMPERATURE,
                  epochs: int = 1) -> Task:
    """VitaBench online travel: hotels, attractions, flights, trains (100 tasks)."""
    return _vitabench("ota", language, revision, max_steps, temperature, epochs)


@task
def vitabench_cross(language: str = "zh", revision: str = "2025-11",
                    max_steps: int = MAX_STEPS, temperature: float = TEMPERATURE,
                    epochs: int = 1) -> Task:
    """VitaBench cross-scenario: delivery, in-store and travel in one conversation, all
    66 tools (100 tasks; the paper's main VitaBench result)."""
    return _vitabench("cross", language, revision, max_steps, temperature, epochs)
