"""BFCL v3 single-turn: `inspect eval tasks/bfcl_singleturn/bfcl_singleturn.py@bfcl_simple`.

One task per category (`bfcl_simple`, `bfcl_java`, ..., `bfcl_live_relevance`) and
`bfcl_singleturn` for any selection (`-T category=all|non_live|live|ast|relevance|
simple,multiple,...`). One model call per entry with the official tools and no system
prompt (as bfcl-eval's OpenAI FC handler), scored by the official `ast_checker` /
relevance rules. Sample ids are the official entry ids (`--sample-id simple_12`,
`live_simple_3-3-0`). Metrics: `accuracy` over all samples, per-category accuracy, and
the leaderboard aggregates `non_live` / `live` (plus `non_live_simple_ast`) when every
category they need is in the run. Offline check: `--model envfactory/oracle`.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig

from harness import task_options
from tasks._bfcl.common import dataset_metadata
from tasks._bfcl.singleturn import (
    CATEGORIES,
    bfcl_singleturn_scorer,
    bfcl_singleturn_solver,
    check_version,
    load_dataset,
    resolve_categories,
)

TEMPERATURE = 0.001  # `bfcl generate` default


@task
def bfcl_singleturn(category: str = "all", version: str | None = None) -> Task:
    """BFCL v3 single-turn categories.

    Args:
        category: "all" (13 categories), a collection (non_live, live, ast, relevance,
            python) or a comma-separated list of categories.
        version: the bfcl-eval release to score against; must be the installed one
            (pinned 2025.8.6.2 = BFCL v3 data).
    """
    categories = task_options.parsed("category", category, resolve_categories)
    return _task(categories, version, name=None)


def _task(categories: list[str], version: str | None, name: str | None) -> Task:
    task_options.parsed("version", version, check_version)
    return Task(
        dataset=load_dataset(categories),
        solver=bfcl_singleturn_solver(),
        scorer=bfcl_singleturn_scorer(),
        config=GenerateConfig(temperature=TEMPERATURE),
        metadata={"benchmark": "bfcl_singleturn", "categories": categories,
                  **dataset_metadata()},
        name=name,
        version="1",
    )


@task
def bfcl_simple(version: str | None = None) -> Task:
    return _task(["simple"], version, "bfcl_simple")


@task
def bfcl_java(version: str | None = None) -> Task:
    return _task(["java"], version, "bfcl_java")


@task
def bfcl_javascript(version: str | None = None) -> Task:
    return _task(["javascript"], version, "bfcl_javascript")


@task
def bfcl_multiple(version: str | None = None) -> Task:
    return _task(["multiple"], version, "bfcl_multiple")


@task
def bfcl_parallel(version: str | None = None) -> Task:
    return _task(["parallel"], version, "bfcl_parallel")


@task
def bfcl_parallel_multiple(version: str | None = None) -> Task:
    return _task(["parallel_multiple"], version, "bfcl_parallel_multiple")


@task
def bfcl_irrelevance(version: str | None = None) -> Task:
    return _task(["irrelevance"], version, "bfcl_irrelevance")


@task
def bfcl_live_simple(version: str | None = None) -> Task:
    return _task(["live_simple"], version, "bfcl_live_simple")


@task
def bfcl_live_multiple(version: str | None = None) -> Task:
    return _task(["live_multiple"], version, "bfcl_live_multiple")


@task
def bfcl_live_parallel(version: str | None = None) -> Task:
    return _task(["live_parallel"], version, "bfcl_live_parallel")


@task
def bfcl_live_parallel_multiple(version: str | None = None) -> Task:
    return _task(["live_parallel_multiple"], version, "bfcl_live_parallel_multiple")


@task
def bfcl_live_irrelevance(version: str | None = None) -> Task:
    return _task(["live_irrelevance"], version, "bfcl_live_irrelevance")


@task
def bfcl_live_relevance(version: str | None = None) -> Task:
    return _task(["live_relevance"], version, "bfcl_live_relevance")


#: Task function per category, e.g. CATEGORY_TASKS["live_simple"] is `bfcl_live_simple`.
CATEGORY_TASKS = {
    "simple": bfcl_simple, "java": bfcl_java, "javascript": bfcl_javascript,
    "multiple": bfcl_multiple, "parallel": bfcl_parallel,
    "parallel_multiple": bfcl_parallel_multiple, "irrelevance": bfcl_irrelevance,
    "live_simple": bfcl_live_simple, "live_multiple": bfcl_live_multiple,
    "live_parallel": bfcl_live_parallel, "live_parallel_multiple": bfcl_live_parallel_multiple,
    "live_irrelevance": bfcl_live_irrelevance, "live_relevance": bfcl_live_relevance,
}
assert set(CATEGORY_TASKS) == set(CATEGORIES)
