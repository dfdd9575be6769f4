"""Which columns a log fills, and how a sample's score becomes a number.

Each benchmark's task writes `benchmark` into its eval metadata (`tasks/*/…py`); that
and the task name pick the columns below. A column is a headline metric or one of its
parts, computed from per-sample values as the task's own metric does (so the cell can
be checked against the value the log reports): BFCL multi-turn `overall` is the
unweighted mean of its categories, τ² and VitaBench succeed per trial at reward 1,
MCP-Atlas at coverage ≥ 0.75. A log of an unknown task still gets a column: its headline
metric, with the interval its `stderr` metric gives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from envs.bfcl.categories import MULTI_TURN_CATEGORIES

__all__ = ["BENCHMARKS", "Column", "benchmark_of", "columns_for", "order_key"]


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    benchmark: str
    metric: str
    #: the per-sample score component it averages
    component: str
    headline: bool = False
    #: restrict to one stratum (a BFCL multi-turn category)
    stratum: str | None = None
    #: overall = unweighted mean over strata (the official BFCL multi-turn formula)
    stratified: bool = False
    #: a trial succeeds at component >= threshold (pass^k); None: the mean itself
    threshold: float | None = None
    #: the log's own metric to cross-check against, `<score>/<metric>`
    log_metric: str | None = None


BFCL_MT_CATEGORIES = MULTI_TURN_CATEGORIES
TAU2_DOMAINS = ("airline", "retail", "telecom")
VITABENCH_SETS = ("cross", "delivery", "instore", "ota")
ENVFACTORY_PARTS = ("r_traj", "r_state", "p_length", "p_format")

#: benchmark -> display name, in column order
BENCHMARKS = {
    "bfcl_multi_turn": "BFCL multi-turn",
    "bfcl_singleturn": "BFCL single-turn",
    "tau2": "τ²-bench",
    "envfactory": "EnvFactory held-out",
    "vitabench": "VitaBench",
    "mcp_atlas": "MCP-Atlas",
}


def _bfcl_mt() -> list[Column]:
    cols = [Column("bfcl_mt", "BFCL MT overall", "bfcl_multi_turn", "accuracy", "correct",
                   headline=True, stratified=True,
                   log_metric="bfcl_multi_turn_scorer/overall")]
    cols += [Column(f"bfcl_mt.{c}", f"BFCL MT {c}", "bfcl_multi_turn", "accuracy", "correct",
                    stratum=c, log_metric=f"bfcl_multi_turn_scorer/{c}")
             for c in BFCL_MT_CATEGORIES]
    return cols


def _tau2(domain: str) -> list[Column]:
    return [Column(f"tau2.{domain}", f"τ² {domain} pass^1", "tau2", "pass^1", "reward",
                   threshold=1.0, log_metric="tau2_scorer/pass^1")]


def _vitabench(task_set: str) -> list[Column]:
    return [Column(f"vitabench.{task_set}", f"VitaBench {task_set} avg", "vitabench",
                   "avg_reward", "reward", threshold=1.0,
                   log_metric="vitabench_scorer/avg_reward")]


ALL_COLUMNS: list[Column] = [
    *_bfcl_mt(),
    Column("bfcl_st", "BFCL ST accuracy", "bfcl_singleturn", "accuracy", "correct",
           headline=True, log_metric="bfcl_singleturn_scorer/accuracy"),
    *[c for d in TAU2_DOMAINS for c in _tau2(d)],
    Column("tau2", "τ² average", "tau2", "pass^1", "reward", headline=True),
    Column("envfactory", "EnvFactory R", "envfactory", "R", "reward", headline=True,
           log_metric="reward/mean"),
    *[Column(f"envfactory.{p}", f"EnvFactory {p}", "envfactory", p, p,
             log_metric=f"{p}/mean") for p in ENVFACTORY_PARTS],
    *[c for s in VITABENCH_SETS for c in _vitabench(s)],
    Column("vitabench", "VitaBench average", "vitabench", "avg_reward", "reward",
           headline=True),
    Column("mcp_atlas", "MCP-Atlas pass@0.75", "mcp_atlas", "pass@0.75", "pass",
           headline=True, log_metric="mcp_atlas_scorer/pass@0.75"),
    Column("mcp_atlas.coverage", "MCP-Atlas coverage", "mcp_atlas", "mean_coverage",
           "coverage", log_metric="mcp_atlas_scorer/mean_coverage"),
]
_BY_KEY = {c.key: c for c in ALL_COLUMNS}

#: averages over a benchmark's parts (their own cells, never averaged across rows)
AVERAGES = {"tau2": [f"tau2.{d}" for d in TAU2_DOMAINS],
            "vitabench": [f"vitabench.{s}" for s in VITABENCH_SETS]}


def column(key: str) -> Column:
    return _BY_KEY[key]


def benchmark_of(task: str, metadata: dict[str, object] | None) -> str:
    """The benchmark a log belongs to: its `benchmark` metadata, else its task name."""
    value = (metadata or {}).get("benchmark")
    if isinstance(value, str) and value:
        return value
    for name in ("tau2", "vitabench", "mcp_atlas", "bfcl_singleturn", "envfactory"):
        if task.startswith(name):
            return name
    return "bfcl_multi_turn" if task.startswith("bfcl_multi") else task


def columns_for(benchmark: str, task: str, metadata: dict[str, object] | None
                ) -> list[Column]:
    """The measured columns a log of `benchmark` fills (averages are derived later)."""
    meta = metadata or {}
    if benchmark == "bfcl_multi_turn":
        return _bfcl_mt()
    if benchmark == "tau2":
        domain = meta.get("domain") or task.removeprefix("tau2_")
        return _tau2(str(domain))
    if benchmark == "vitabench":
        task_set = meta.get("task_set") or task.removeprefix("vitabench_")
        return _vitabench(str(task_set))
    if benchmark in ("bfcl_singleturn", "envfactory", "mcp_atlas"):
        return [c for c in ALL_COLUMNS if c.benchmark == benchmark and c.key not in AVERAGES]
    return [Column(task, task, task, "headline", "value", headline=True)]


_BFCL_MT_ID = re.compile(rf"^multi_turn_({'|'.join(MULTI_TURN_CATEGORIES)})_\d+$")


def stratum_of(benchmark: str, sample_id: str, meta: dict[str, object] | None) -> str | None:
    """BFCL multi-turn's category of a sample (from its official id, else metadata)."""
    if benchmark != "bfcl_multi_turn":
        return None
    match = _BFCL_MT_ID.match(sample_id)
    if match:
        return match.group(1)
    category = (meta or {}).get("category")
    return str(category) if category is not None else None


def order_key(key: str) -> tuple[int, str]:
    """Known columns in their declared order, then unknown tasks alphabetically."""
    keys = list(_BY_KEY)
    return (keys.index(key), key) if key in _BY_KEY else (len(keys), key)
