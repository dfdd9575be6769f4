"""Which columns a log fills, and how a sample's score becomes a number.

Each benchmark's task writes `benchmark` into its eval metadata (`tasks/*/…py`); that
and the task name pick the columns below. A column is a headline metric or one of its
parts, computed from per-sample values as the task's own metric does (so the cell can
be checked against the value the log reports): BFCL multi-turn `overall` is the
unweighted mean of its categories, τ² and VitaBench succeed per trial at reward 1,
MCP-Atlas at coverage ≥ 0.75. A log of an unknown task still gets a column: its headline
metric, with the interval its `stderr` metric gives.

Where a benchmark has more than one way to aggregate, the column says which it is
(`Column.aggregate`, printed with the column settings): BFCL single-turn's sample mean
(the headline the reported rows are filed under) sits beside BFCL's official aggregate;
VitaBench's average is the paper's (delivery, in-store, OTA), with cross-domain a column of
its own; the Overall column is the paper's (`leaderboard.overall`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from envs.bfcl.categories import LIVE_CATEGORIES, MULTI_TURN_CATEGORIES

__all__ = ["BENCHMARKS", "BFCL_ST_OFFICIAL", "ROLES", "VITABENCH_PAPER_SETS", "Column",
           "benchmark_of", "columns_for", "order_key"]


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
    #: which aggregate the value is, in words (shown with the column's settings)
    aggregate: str = ""
    #: a weighted mean over groups of strata: (group, its strata pooled, weight); the
    #: value exists only when every group has samples
    groups: tuple[tuple[str, tuple[str, ...], float], ...] = ()


BFCL_MT_CATEGORIES = MULTI_TURN_CATEGORIES
TAU2_DOMAINS = ("airline", "retail", "telecom")
VITABENCH_SETS = ("cross", "delivery", "instore", "ota")
#: the sets the paper's VitaBench average is over (its Deliver / Store / OTA columns)
VITABENCH_PAPER_SETS = ("delivery", "instore", "ota")
ENVFACTORY_PARTS = ("r_traj", "r_state", "p_length", "p_format")

#: benchmark -> display name, in column order
BENCHMARKS = {
    "bfcl_multi_turn": "BFCL multi-turn",
    "bfcl_singleturn": "BFCL single-turn",
    "tau2": "τ²-bench",
    "envfactory": "EnvFactory held-out",
    "vitabench": "VitaBench",
    "mcp_atlas": "MCP-Atlas",
    "overall": "Overall",
}

#: benchmark -> the model roles its scoring depends on besides the model under test: the
#: simulated user (without one bound, τ² and VitaBench let the checkpoint play its own user)
#: and the judge (VitaBench's rubrics, MCP-Atlas's claims)
ROLES: dict[str, tuple[str, ...]] = {"tau2": ("user",), "vitabench": ("user", "judge"),
                                     "mcp_atlas": ("judge",)}

#: BFCL's official single-turn aggregate (`eval_runner_helper.generate_leaderboard_csv`, as
#: `tasks._bfcl.singleturn.scoring.leaderboard_summary` computes it): non-live overall =
#: unweighted mean of [mean(simple, java, javascript), multiple, parallel,
#: parallel_multiple, irrelevance]; live overall = sample-weighted over the six live
#: categories; single-turn overall = the unweighted mean of the two
BFCL_ST_OFFICIAL = (
    *((c, (c,), 1 / 30) for c in ("simple", "java", "javascript")),
    *((c, (c,), 1 / 10) for c in ("multiple", "parallel", "parallel_multiple", "irrelevance")),
    ("live", LIVE_CATEGORIES, 1 / 2),
)


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
    if task_set == "cross":
        return [Column("vitabench.cross", "VitaBench cross-domain avg", "vitabench",
                       "avg_reward", "reward", headline=True, threshold=1.0,
                       log_metric="vitabench_scorer/avg_reward",
                       aggregate="the cross-domain tasks' success rate, a column of its own: "
                                 "not part of the paper's VitaBench average")]
    return [Column(f"vitabench.{task_set}", f"VitaBench {task_set} avg", "vitabench",
                   "avg_reward", "reward", threshold=1.0,
                   log_metric="vitabench_scorer/avg_reward")]


ALL_COLUMNS: list[Column] = [
    *_bfcl_mt(),
    Column("bfcl_st", "BFCL ST sample mean", "bfcl_singleturn", "accuracy", "correct",
           headline=True, log_metric="bfcl_singleturn_scorer/accuracy",
           aggregate="sample mean: correct samples over all single-turn samples run (each "
                     "category weighted by its size); the reported rows' BFCLv3 single-turn "
                     "numbers are filed here, the paper not saying which aggregate they are"),
    Column("bfcl_st.official", "BFCL ST official overall", "bfcl_singleturn", "overall",
           "correct", groups=BFCL_ST_OFFICIAL,
           aggregate="BFCL's official aggregates: non-live overall = unweighted mean of "
                     "[mean(simple, java, javascript), multiple, parallel, parallel_multiple, "
                     "irrelevance]; live overall = sample-weighted over the six live "
                     "categories; this = the unweighted mean of the two (v3's overall "
                     "without multi-turn); shown only where every category ran"),
    *[c for d in TAU2_DOMAINS for c in _tau2(d)],
    Column("tau2", "τ² average", "tau2", "pass^1", "reward", headline=True,
           aggregate="unweighted mean of the airline, retail and telecom pass^1"),
    Column("envfactory", "EnvFactory R", "envfactory", "R", "reward", headline=True,
           log_metric="reward/mean"),
    *[Column(f"envfactory.{p}", f"EnvFactory {p}", "envfactory", p, p,
             log_metric=f"{p}/mean") for p in ENVFACTORY_PARTS],
    *[c for s in VITABENCH_PAPER_SETS for c in _vitabench(s)],
    Column("vitabench", "VitaBench average", "vitabench", "avg_reward", "reward",
           headline=True,
           aggregate="the paper's: unweighted mean of the delivery, in-store and OTA sets "
                     "(cross-domain is its own column)"),
    *_vitabench("cross"),
    Column("mcp_atlas", "MCP-Atlas pass@0.75", "mcp_atlas", "pass@0.75", "pass",
           headline=True, log_metric="mcp_atlas_scorer/pass@0.75"),
    Column("mcp_atlas.coverage", "MCP-Atlas coverage", "mcp_atlas", "mean_coverage",
           "coverage", log_metric="mcp_atlas_scorer/mean_coverage"),
    Column("overall", "Overall (paper's)", "overall", "mean", "value", headline=True,
           aggregate="the paper's Overall: unweighted mean of BFCL (the mean of BFCL MT "
                     "overall and BFCL ST), τ² average, VitaBench average and MCP-Atlas pass "
                     "rate; a row lacking a part gets a partial value, marked"),
]
_BY_KEY = {c.key: c for c in ALL_COLUMNS}

#: averages over a benchmark's parts (their own cells, never averaged across rows)
AVERAGES = {"tau2": [f"tau2.{d}" for d in TAU2_DOMAINS],
            "vitabench": [f"vitabench.{s}" for s in VITABENCH_PAPER_SETS]}


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
    """A BFCL sample's category: multi-turn's from its official id, else (and for
    single-turn) the sample's or score's `category` metadata."""
    if benchmark == "bfcl_singleturn":
        category = (meta or {}).get("category")
        return str(category) if category is not None else None
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
