"""BFCL v3 single-turn: `inspect eval tasks/bfcl_singleturn -T category=simple`.

One task, `bfcl_singleturn`, so that `inspect eval tasks/bfcl_singleturn` runs (and
pays for) every entry once; the selection is a task option (`-T category=all|non_live|
live|ast|relevance|python|non_python|simple,multiple,...`; bfcl-eval V4's names
`simple_python`, `simple_java`, `simple_javascript` are accepted too). One model call
per entry with the official tools and no system prompt (as bfcl-eval's OpenAI FC
handler), scored by the official `ast_checker` / relevance rules. Sample ids are the
official entry ids (`--sample-id simple_12`, `live_simple_3-3-0`). Metrics: `accuracy`
over all samples, per-category accuracy, and the leaderboard aggregates `non_live` /
`live` (plus `non_live_simple_ast`) when every category they need is in the run.
Offline check: `--model envfactory/oracle`.
"""

from __future__ import annotations

from inspect_ai import Task, task

from harness import task_options
from harness.generation_config import bfcl_config
from tasks._bfcl.common import dataset_metadata
from tasks._bfcl.singleturn import (
    bfcl_singleturn_scorer,
    bfcl_singleturn_solver,
    check_version,
    load_dataset,
    resolve_categories,
)


@task
def bfcl_singleturn(category: str = "all", version: str | None = None) -> Task:
    """BFCL v3 single-turn categories.

    Args:
        category: "all" (13 categories), a collection (non_live, live, ast, relevance,
            python, non_python) or a comma-separated list of categories (simple, java,
            javascript, multiple, parallel, parallel_multiple, irrelevance, live_simple,
            live_multiple, live_parallel, live_parallel_multiple, live_irrelevance,
            live_relevance; or V4's simple_python, simple_java, simple_javascript).
        version: the bfcl-eval release to score against; must be the installed one
            (pinned 2025.8.6.2 = BFCL v3 data).
    """
    categories = task_options.parsed("category", category, resolve_categories)
    task_options.parsed("version", version, check_version)
    return Task(
        dataset=load_dataset(categories),
        solver=bfcl_singleturn_solver(),
        scorer=bfcl_singleturn_scorer(),
        config=bfcl_config(),  # `bfcl generate`'s temperature and reasoning summaries
        metadata={"benchmark": "bfcl_singleturn", "categories": categories,
                  **dataset_metadata()},
        version="1",
    )
