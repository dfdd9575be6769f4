"""BFCL v3 multi-turn: `inspect eval tasks/bfcl_multiturn --model ...`.

Four categories (base, miss_func, miss_param, long_context; 200 entries each) in one
task, with per-category accuracy and `overall` = their unweighted mean (the official
multi-turn formula). Sample ids are the official entry ids, so `--sample-id
multi_turn_base_12` selects one entry.
"""

from inspect_ai import Task, task

from harness import task_options
from harness.generation_config import bfcl_config
from tasks._bfcl.common import check_version, dataset_metadata
from tasks._bfcl.multiturn import (
    bfcl_multi_turn_scorer,
    bfcl_multi_turn_solver,
    load_dataset,
    resolve_categories,
)


@task
def bfcl_multiturn(category: str = "all", version: str | None = None) -> Task:
    """BFCL multi-turn.

    Args:
        category: "all" (or bfcl-eval's "multi_turn"), or a comma-separated subset of
            base, miss_func, miss_param, long_context, by these names or bfcl-eval's
            (multi_turn_base, multi_turn_miss_func, ...).
        version: the bfcl-eval release to score against (default: the installed one,
            pinned 2025.8.6.2 = BFCL v3); must match what is installed.
    """
    task_options.parsed("version", version, check_version)
    categories = task_options.parsed("category", category, resolve_categories)
    dataset = load_dataset(categories)
    return Task(
        dataset=dataset,
        solver=bfcl_multi_turn_solver(),
        scorer=bfcl_multi_turn_scorer(),
        config=bfcl_config(),  # `bfcl generate`'s temperature and reasoning summaries
        metadata={"benchmark": "bfcl_multi_turn", "categories": categories,
                  **dataset_metadata()},
        version="1",
    )
