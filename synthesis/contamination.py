"""Contamination check: does synthesized training data overlap the benchmarks we evaluate?

Three signals, each reported with the closest pairs so a person can judge them:

1. *13-gram overlap* — a user turn sharing any 13-word span (lowercased, punctuation
   stripped) with a benchmark prompt was almost certainly copied from it;
2. *embedding nearest neighbour* — the cosine of each user turn to its closest benchmark
   prompt (one matrix product over L2-normalised vectors), flagged above a threshold, to
   catch paraphrases the n-grams miss;
3. *tool overlap* — environments whose tools carry a benchmark API's names (after
   normalisation) and parameters (name Jaccard). EnvFactory's own environments clone
   BFCL's and τ²'s, so this is expected for them; it is reported, and flags items only
   when asked.

The references are every benchmark we report: BFCL v3, τ²-bench, VitaBench and MCP-Atlas
(`LOADERS`: each one's user-facing texts, and its tool names and schemas). They are read
from files already on this machine and nothing is downloaded; a source that is absent
(bfcl-eval not installed, no release files) is skipped, and the report says which were
compared and why not. Trajectories that use a benchmark's own environments
(`envs.registry.benchmark_of`) are always flagged (`benchmark_env`).

Long stages report `on_progress(stage, done, total)`; the command draws the bars.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from envs.metadata import load_metadata_dir
from envs.registry import benchmark_of
from harness.trajectory import Trajectory
from synthesis.embedders import Embedder

__all__ = [
    "ApiEnv",
    "BenchmarkPrompt",
    "ContaminationReport",
    "EnvOverlap",
    "LOADERS",
    "NearPair",
    "References",
    "SourceStatus",
    "UserTurn",
    "bfcl_apis",
    "bfcl_prompts",
    "check",
    "embedding_pairs",
    "load_references",
    "mcp_atlas_apis",
    "mcp_atlas_prompts",
    "env_overlaps",
    "metadata_apis",
    "ngram_pairs",
    "normalise_name",
    "normalise_words",
    "markdown",
    "registry_apis",
    "resolve_envs",
    "tau2_apis",
    "tau2_prompts",
    "user_turns",
    "vitabench_apis",
    "vitabench_prompts",
    "without_flagged",
]

NGRAM = 13
#: texts embedded per progress step
EMBED_CHUNK = 256

#: `on_progress(stage, done, total)`, as `envfactory.cli.progress.stage_bars` draws it
OnProgress = Callable[[str, int, int | None], None]
_PUNCT = re.compile(r"[^\w\s]|_")
_NAME = re.compile(r"[^a-z0-9]")


# -- records ---------------------------------------------------------------------------


class BenchmarkPrompt(BaseModel):
    source: str  # "bfcl" | "tau2" | "vitabench" | "mcp_atlas"
    id: str
    text: str


class UserTurn(BaseModel):
    trajectory: str
    turn: int
    text: str


class SourceStatus(BaseModel):
    """One benchmark source: compared (with how many prompts or tools) or skipped."""

    name: str
    compared: bool
    count: int = 0
    reason: str | None = None


class NearPair(BaseModel):
    trajectory: str
    turn: int
    user: str
    source: str
    prompt_id: str
    prompt: str
    #: ngram: shared 13-grams; embedding: cosine
    score: float
    #: ngram: the first shared span
    span: str | None = None


class ApiTool(BaseModel):
    name: str
    params: list[str]


class ApiEnv(BaseModel):
    """One environment's tool names and parameter names, wherever they came from."""

    source: str
    env: str
    tools: list[ApiTool]


class EnvOverlap(BaseModel):
    env: str
    benchmark_env: str
    #: tool-name pairs equal after normalisation, with their parameter-name Jaccard
    matches: list[tuple[str, str, float]]
    #: share of `env`'s tools whose name a benchmark tool shares
    share: float
    mean_param_jaccard: float


class ContaminationReport(BaseModel):
    data: list[str]
    trajectories: int
    user_turns: int
    sources: list[SourceStatus]
    ngram: int = NGRAM
    ngram_flagged: list[NearPair] = Field(default_factory=list)
    embedder: str | None = None
    embedding_threshold: float | None = None
    embedding_flagged: list[NearPair] = Field(default_factory=list)
    embedding_closest: list[NearPair] = Field(default_factory=list)
    tool_share_threshold: float
    tool_overlaps: list[EnvOverlap] = Field(default_factory=list)
    unresolved_envs: list[str] = Field(default_factory=list)
    #: environments of the data that are a benchmark's own -> the benchmark
    benchmark_envs: dict[str, str] = Field(default_factory=dict)
    flagged: dict[str, list[str]] = Field(
        default_factory=dict,
        description="trajectory id -> reasons (benchmark_env, ngram, embedding, tools)")


# -- text ------------------------------------------------------------------------------


def normalise_words(text: str) -> list[str]:
    """Lowercased words with punctuation (and underscores) replaced by spaces."""
    return _PUNCT.sub(" ", text.lower()).split()


def _ngrams(words: Sequence[str], n: int) -> Iterable[tuple[str, ...]]:
    return (tuple(words[i:i + n]) for i in range(len(words) - n + 1))


def user_turns(trajectories: Iterable[Trajectory]) -> list[UserTurn]:
    return [UserTurn(trajectory=t.id, turn=i, text=turn.user)
            for t in trajectories for i, turn in enumerate(t.turns) if turn.user.strip()]


def ngram_pairs(turns: Sequence[UserTurn], prompts: Sequence[BenchmarkPrompt],
                n: int = NGRAM, on_progress: OnProgress | None = None) -> list[NearPair]:
    """Every user turn sharing at least one word n-gram with a prompt, paired with the
    prompt it shares most with; most shared first."""
    index: dict[tuple[str, ...], list[int]] = {}
    for j, p in enumerate(prompts):
        for g in set(_ngrams(normalise_words(p.text), n)):
            index.setdefault(g, []).append(j)
    pairs = []
    for done, t in enumerate(turns, 1):
        if on_progress and (done % 500 == 0 or done == len(turns)):
            on_progress("13-gram overlap (user turns)", done, len(turns))
        shared: dict[int, list[tuple[str, ...]]] = {}
        for g in dict.fromkeys(_ngrams(normalise_words(t.text), n)):
            for j in index.get(g, ()):
                shared.setdefault(j, []).append(g)
        if shared:
            j, grams = max(shared.items(), key=lambda kv: (len(kv[1]), -kv[0]))
            p = prompts[j]
            pairs.append(NearPair(trajectory=t.trajectory, turn=t.turn, user=t.text,
                                  source=p.source, prompt_id=p.id, prompt=p.text,
                                  score=float(len(grams)), span=" ".join(grams[0])))
    return sorted(pairs, key=lambda p: -p.score)


def _embed(embedder: Embedder, texts: Sequence[str], stage: str,
           on_progress: OnProgress | None) -> np.ndarray:
    """`texts` embedded in chunks, so a long pass reports as it goes."""
    chunks = []
    for start in range(0, len(texts), EMBED_CHUNK):
        chunks.append(np.asarray(embedder.embed(list(texts[start:start + EMBED_CHUNK])),
                                 dtype=np.float32))
        if on_progress:
            on_progress(stage, min(start + EMBED_CHUNK, len(texts)), len(texts))
    return np.concatenate(chunks)


def embedding_pairs(turns: Sequence[UserTurn], prompts: Sequence[BenchmarkPrompt],
                    embedder: Embedder, on_progress: OnProgress | None = None
                    ) -> list[NearPair]:
    """Each user turn's nearest prompt by cosine (vectors are L2-normalised), best first."""
    if not turns or not prompts:
        return []
    u = _embed(embedder, [t.text for t in turns], "embedding user turns", on_progress)
    b = _embed(embedder, [p.text for p in prompts], "embedding benchmark texts", on_progress)
    sims = u @ b.T
    best = sims.argmax(axis=1)
    pairs = [NearPair(trajectory=t.trajectory, turn=t.turn, user=t.text,
                      source=prompts[int(j)].source, prompt_id=prompts[int(j)].id,
                      prompt=prompts[int(j)].text, score=float(sims[i, j]))
             for i, (t, j) in enumerate(zip(turns, best, strict=True))]
    return sorted(pairs, key=lambda p: -p.score)


# -- benchmark prompts -----------------------------------------------------------------


def _dedup(prompts: Iterable[BenchmarkPrompt]) -> list[BenchmarkPrompt]:
    """One prompt per normalised text (BFCL's four multi-turn categories share turns)."""
    seen: dict[tuple[str, ...], BenchmarkPrompt] = {}
    for p in prompts:
        seen.setdefault(tuple(normalise_words(p.text)), p)
    return [p for k, p in seen.items() if k]


def bfcl_prompts() -> tuple[list[BenchmarkPrompt], SourceStatus]:
    """Every user message of the installed bfcl-eval release's question files
    (single- and multi-turn), deduplicated."""
    from envs.bfcl import package
    from envs.jsonl import read_objects

    try:
        files = sorted(package.data_dir().glob(f"{package.data_prefix()}_*.json"))
    except package.BfclNotInstalled as e:
        return [], SourceStatus(name="bfcl prompts", compared=False, reason=str(e))
    prompts = []
    for f in files:
        for entry in read_objects(f):
            for k, turn in enumerate(entry.get("question") or []):
                for m in turn if isinstance(turn, list) else [turn]:
                    if m.get("role") == "user" and m.get("content"):
                        prompts.append(BenchmarkPrompt(source="bfcl", id=f"{entry['id']}#{k}",
                                                       text=str(m["content"])))
    prompts = _dedup(prompts)
    return prompts, SourceStatus(name=f"bfcl prompts ({package.bfcl_version()})",
                                 compared=True, count=len(prompts))


TAU2_DOMAINS = ("airline", "retail", "telecom")


def tau2_prompts() -> tuple[list[BenchmarkPrompt], SourceStatus]:
    """The user scenarios (what the simulated user is told) of the τ² release's tasks,
    read from the files already on disk (`TAU2_DATA_DIR` or the cache); nothing is
    downloaded."""
    from envs.tau2 import data
    from envs.tau2.tasks import Task

    try:
        root = data.data_dir()
    except FileNotFoundError as e:
        return [], SourceStatus(name="tau2 prompts", compared=False, reason=str(e))
    present = [d for d in TAU2_DOMAINS if (root / "domains" / d / "tasks.json").is_file()]
    if not present:
        return [], SourceStatus(name="tau2 prompts", compared=False,
                                reason=f"no τ² tasks.json under {root}/domains "
                                "(set TAU2_DATA_DIR)")
    prompts = []
    for d in present:
        for raw in json.loads((root / "domains" / d / "tasks.json").read_text("utf-8")):
            task = Task.model_validate(raw)
            prompts.append(BenchmarkPrompt(source="tau2", id=f"{d}/{task.id}",
                                           text=task.user_scenario.render()))
    prompts = _dedup(prompts)
    return prompts, SourceStatus(name=f"tau2 prompts ({', '.join(present)})",
                                 compared=True, count=len(prompts))


def vitabench_prompts() -> tuple[list[BenchmarkPrompt], SourceStatus]:
    """The task instructions (what the simulated user is told) of the VitaBench task files
    already on disk (`VITABENCH_DATA_DIR` or the release cache), both languages; nothing
    is downloaded."""
    from envs.vitabench.release import release

    rel = release()
    status = rel.local_status()
    files = [f for f in status.present if f.startswith("domains/") and f.endswith(".json")]
    if not files:
        return [], SourceStatus(name="vitabench prompts", compared=False,
                                reason=f"no VitaBench task file under {status.where} "
                                       f"({status.hint})")
    prompts = []
    for f in files:
        for task in json.loads(rel.data_path(f).read_text(encoding="utf-8")):
            text = task.get("instructions") if isinstance(task, dict) else None
            if text:
                prompts.append(BenchmarkPrompt(
                    source="vitabench", id=f"{f.removeprefix('domains/')}#{task.get('id')}",
                    text=str(text)))
    prompts = _dedup(prompts)
    sets = sorted({f.split("/")[1] for f in files})
    return prompts, SourceStatus(name=f"vitabench prompts ({', '.join(sets)})",
                                 compared=True, count=len(prompts))


def _mcp_atlas_tasks() -> tuple[list[Any], str]:
    """MCP-Atlas's tasks from `MCP_ATLAS_TASKS` or the Hub cache's pinned snapshot (never
    a download), and where they came from; FileNotFoundError when neither is here."""
    from huggingface_hub import constants

    from tasks._mcp_atlas.dataset import HUB_DATASET, HUB_REVISION, load_tasks

    local = os.environ.get("MCP_ATLAS_TASKS")
    if not local:
        cached = (Path(constants.HF_HUB_CACHE) / f"datasets--{HUB_DATASET.replace('/', '--')}"
                  / "snapshots" / HUB_REVISION)
        if not cached.is_dir():
            raise FileNotFoundError(f"no MCP-Atlas tasks here: set MCP_ATLAS_TASKS to a local "
                                    f"copy, or run the benchmark once to cache {HUB_DATASET}")
        local = str(cached)
    tasks, source = load_tasks(local)
    return tasks, source.origin


def mcp_atlas_prompts() -> tuple[list[BenchmarkPrompt], SourceStatus]:
    """The user prompt of every MCP-Atlas task (one turn each)."""
    try:
        tasks, origin = _mcp_atlas_tasks()
    except FileNotFoundError as e:
        return [], SourceStatus(name="mcp_atlas prompts", compared=False, reason=str(e))
    prompts = _dedup(BenchmarkPrompt(source="mcp_atlas", id=t.task_id, text=t.prompt)
                     for t in tasks if t.prompt.strip())
    return prompts, SourceStatus(name=f"mcp_atlas prompts ({origin})", compared=True,
                                 count=len(prompts))


# -- tools -----------------------------------------------------------------------------


def normalise_name(name: str) -> str:
    """`GetUserDetails`, `get_user_details` and `get-user-details` compare equal."""
    return _NAME.sub("", name.lower())


def _params(schema: dict[str, Any] | None) -> list[str]:
    return sorted({normalise_name(p) for p in ((schema or {}).get("properties") or {})})


def bfcl_apis() -> tuple[list[ApiEnv], SourceStatus]:
    """BFCL's multi-turn backends, from their official function docs."""
    from envs.bfcl import package
    from envs.bfcl.environment import official_function_docs

    try:
        classes = package.backend_classes()
    except package.BfclNotInstalled as e:
        return [], SourceStatus(name="bfcl apis", compared=False, reason=str(e))
    apis = [ApiEnv(source="bfcl", env=f"bfcl/{c}",
                   tools=[ApiTool(name=d["name"], params=_params(d.get("parameters")))
                          for d in official_function_docs(c)])
            for c in classes]
    return apis, SourceStatus(name="bfcl apis", compared=True,
                              count=sum(len(a.tools) for a in apis))


def registry_apis(names: Iterable[str], source: str) -> list[ApiEnv]:
    """Registered environments' tool specs (`envs.registry`)."""
    from envs import registry

    out = []
    for n in names:
        specs = registry.get(n).specs()
        out.append(ApiEnv(source=source, env=n,
                          tools=[ApiTool(name=s.name, params=_params(s.parameters))
                                 for s in specs]))
    return out


def tau2_apis() -> tuple[list[ApiEnv], SourceStatus]:
    """τ²'s toolkits as the registry's `tau2/*` entries show them (their specs come from
    the release's tool sources: `TAU2_DATA_DIR/tools` or a download)."""
    from envs import registry

    names = [e.name for e in registry.all_entries() if e.name.startswith("tau2/")]
    if not names:
        return [], SourceStatus(name="tau2 apis", compared=False, reason="no tau2/* entry")
    try:
        apis = registry_apis(names, "tau2")
    except FileNotFoundError as e:
        return [], SourceStatus(name="tau2 apis", compared=False, reason=str(e))
    return apis, SourceStatus(name="tau2 apis", compared=True,
                              count=sum(len(a.tools) for a in apis))


def vitabench_apis() -> tuple[list[ApiEnv], SourceStatus]:
    """VitaBench's toolkits as its agent is offered them (English tool objects), from the
    files already on disk: `tools/<set>_en.json` in `VITABENCH_DATA_DIR` or the cache, or
    derived from a local `VITABENCH_SOURCE_DIR`; nothing is downloaded."""
    from envs.vitabench.factory import ENVIRONMENTS
    from envs.vitabench.release import release

    cache = release().cache
    data = os.environ.get("VITABENCH_DATA_DIR")
    apis, missing = [], []
    for cls in dict.fromkeys(ENVIRONMENTS.values()):
        name = f"tools/{cls.tool_set}_en.json"
        on_disk = (cache / name).is_file() or bool(data and (Path(data) / name).is_file())
        if not on_disk and not os.environ.get("VITABENCH_SOURCE_DIR"):
            missing.append(cls.tool_set)
            continue
        try:
            functions = [o["function"] for o in cls.official_tool_objects("en")]
        except (OSError, ValueError, KeyError) as e:
            missing.append(f"{cls.tool_set} ({e})")
            continue
        apis.append(ApiEnv(source="vitabench", env=f"vitabench/{cls.tool_set}",
                           tools=[ApiTool(name=f["name"], params=_params(f.get("parameters")))
                                  for f in functions]))
    reason = (f"no tool objects for {', '.join(missing)} (tools/<set>_en.json under "
              "VITABENCH_DATA_DIR or the cache, or VITABENCH_SOURCE_DIR)" if missing else None)
    if not apis:
        return [], SourceStatus(name="vitabench apis", compared=False, reason=reason)
    return apis, SourceStatus(name=f"vitabench apis ({', '.join(a.env for a in apis)})",
                              compared=True, count=sum(len(a.tools) for a in apis),
                              reason=reason)


def mcp_atlas_apis() -> tuple[list[ApiEnv], SourceStatus]:
    """The tool names MCP-Atlas offers (every task's `ENABLED_TOOLS`), one environment per
    server of the release's template when it is on disk. Names only: the schemas come from
    the live servers."""
    from tasks._mcp_atlas.dataset import server_of
    from tasks._mcp_atlas.release import TEMPLATE, release

    try:
        tasks, origin = _mcp_atlas_tasks()
    except FileNotFoundError as e:
        return [], SourceStatus(name="mcp_atlas apis", compared=False, reason=str(e))
    rel = release()
    servers = (list(rel.template()) if TEMPLATE in rel.files.local_status().present else [])
    by_server: dict[str, set[str]] = {}
    for t in tasks:
        for tool in t.enabled_tools:
            by_server.setdefault(server_of(tool, servers) or "tools", set()).add(tool)
    apis = [ApiEnv(source="mcp_atlas", env=f"mcp_atlas/{server}",
                   tools=[ApiTool(name=n, params=[]) for n in sorted(names)])
            for server, names in sorted(by_server.items())]
    return apis, SourceStatus(
        name=f"mcp_atlas apis ({origin})", compared=True,
        count=sum(len(a.tools) for a in apis),
        reason="tool names only (schemas come from the live servers)"
               + ("" if servers else f"; no {TEMPLATE} here, so not split by server"))


def metadata_apis(directory: Path) -> list[ApiEnv]:
    """EnvFactory metadata files (`{Class}_metadata.json`), one env per class name."""
    return [ApiEnv(source="metadata", env=m.class_name,
                   tools=[ApiTool(name=t.name, params=_params(t.input_schema))
                          for t in m.tools])
            for m in load_metadata_dir(directory)]


def _jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0


def env_overlaps(ours: Sequence[ApiEnv], benchmarks: Sequence[ApiEnv]) -> list[EnvOverlap]:
    """For each (our env, benchmark env) sharing a tool name: the shared names, the share
    of our tools they make up, and how alike their parameters are; largest share first."""
    out = []
    for o in ours:
        for b in benchmarks:
            theirs = {normalise_name(t.name): t for t in b.tools}
            matches = [(t.name, theirs[k].name, round(_jaccard(t.params, theirs[k].params), 3))
                       for t in o.tools if (k := normalise_name(t.name)) in theirs]
            if matches:
                out.append(EnvOverlap(
                    env=o.env, benchmark_env=b.env, matches=matches,
                    share=round(len(matches) / len(o.tools), 3),
                    mean_param_jaccard=round(sum(m[2] for m in matches) / len(matches), 3)))
    return sorted(out, key=lambda e: (-e.share, e.env, e.benchmark_env))


def resolve_envs(names: Iterable[str], metadata: Sequence[ApiEnv]) -> tuple[list[ApiEnv],
                                                                             list[str]]:
    """Our environments' tools: the registry first, then the metadata files given."""
    from envs import registry

    known = {e.name for e in registry.all_entries()}
    by_class = {m.env: m for m in metadata}
    found, missing = [], []
    for n in sorted(set(names)):
        if n in known:
            try:
                found += registry_apis([n], "registry")
            except FileNotFoundError:  # τ² toolkits without their release sources
                missing.append(n)
        elif n in by_class:
            found.append(by_class[n])
        else:
            missing.append(n)
    return found, missing


# -- the references --------------------------------------------------------------------

#: every benchmark we report, prompts then tools (looked up when called, so a test can
#: replace one)
LOADERS: tuple[str, ...] = ("bfcl_prompts", "tau2_prompts", "vitabench_prompts",
                            "mcp_atlas_prompts", "bfcl_apis", "tau2_apis", "vitabench_apis",
                            "mcp_atlas_apis")


class References(BaseModel):
    """The benchmark material a check compares against, and what was found of it."""

    prompts: list[BenchmarkPrompt] = Field(default_factory=list)
    apis: list[ApiEnv] = Field(default_factory=list)
    sources: list[SourceStatus] = Field(default_factory=list)


def load_references(on_progress: OnProgress | None = None) -> References:
    """Every loader of `LOADERS`; a source that cannot be read is reported, never raised."""
    refs = References()
    module = globals()
    for done, name in enumerate(LOADERS, 1):
        items, status = module[name]()
        for item in items:
            (refs.prompts if isinstance(item, BenchmarkPrompt) else refs.apis).append(item)
        refs.sources.append(status)
        if on_progress:
            on_progress("benchmark references", done, len(LOADERS))
    return refs


# -- the whole check -------------------------------------------------------------------


def check(trajectories: Sequence[Trajectory], *, data: Sequence[str],
          prompts: Sequence[BenchmarkPrompt], benchmark_apis: Sequence[ApiEnv],
          sources: Sequence[SourceStatus], embedder: Embedder | None = None,
          embedding_threshold: float = 0.9, metadata: Sequence[ApiEnv] = (),
          tool_share: float = 0.5, flag_tools: bool = False, closest: int = 10,
          on_progress: OnProgress | None = None) -> ContaminationReport:
    """Run the three signals over `trajectories` against the given benchmark material, and
    flag every trajectory on a benchmark's own environments."""
    turns = user_turns(trajectories)
    report = ContaminationReport(data=list(data), trajectories=len(trajectories),
                                 user_turns=len(turns), sources=list(sources),
                                 tool_share_threshold=tool_share)
    flags: dict[str, set[str]] = {}
    for t in trajectories:
        for e in t.environments:
            bench = benchmark_of(e)
            if bench is not None:
                report.benchmark_envs[e] = bench
                flags.setdefault(t.id, set()).add("benchmark_env")
    report.benchmark_envs = dict(sorted(report.benchmark_envs.items()))
    report.ngram_flagged = ngram_pairs(turns, prompts, on_progress=on_progress)
    for p in report.ngram_flagged:
        flags.setdefault(p.trajectory, set()).add("ngram")
    if embedder is not None:
        pairs = embedding_pairs(turns, prompts, embedder, on_progress)
        report.embedder = embedder.name
        report.embedding_threshold = embedding_threshold
        report.embedding_flagged = [p for p in pairs if p.score >= embedding_threshold]
        report.embedding_closest = pairs[:closest]
        for p in report.embedding_flagged:
            flags.setdefault(p.trajectory, set()).add("embedding")
    ours, report.unresolved_envs = resolve_envs(
        (e for t in trajectories for e in t.environments), metadata)
    benchmark_names = {b.env for b in benchmark_apis}
    report.tool_overlaps = [o for o in env_overlaps(ours, benchmark_apis)
                            if o.env not in benchmark_names]
    if flag_tools:
        hot = {o.env for o in report.tool_overlaps if o.share >= tool_share}
        for t in trajectories:
            if hot & set(t.environments):
                flags.setdefault(t.id, set()).add("tools")
    report.flagged = {k: sorted(v) for k, v in sorted(flags.items())}
    return report


def without_flagged(trajectories: Sequence[Trajectory],
                    report: ContaminationReport) -> list[Trajectory]:
    return [t for t in trajectories if t.id not in report.flagged]


def markdown(report: ContaminationReport, limit: int = 10) -> str:
    """The report for people: sources, counts, and the closest pairs."""
    def cut(s: str, n: int = 120) -> str:
        s = " ".join(s.split())
        return s if len(s) <= n else s[:n - 1] + "…"

    def cell(s: str) -> str:
        return cut(s).replace("|", "\\|")

    lines = [f"# Contamination report: {', '.join(report.data)}", "",
             f"{report.trajectories} trajectories, {report.user_turns} user turns; "
             f"{len(report.flagged)} flagged.", "", "## Sources", "",
             "| source | compared | count | reason |", "|---|---|---|---|"]
    lines += [f"| {s.name} | {'yes' if s.compared else 'no'} | {s.count} | {s.reason or ''} |"
              for s in report.sources]
    if report.benchmark_envs:
        lines += ["", f"## Benchmark environments in the data: {len(report.benchmark_envs)}",
                  "", "Every trajectory using one is flagged (`benchmark_env`).", ""]
        lines += [f"- {e} ({bench})" for e, bench in report.benchmark_envs.items()]
    lines += ["", f"## {report.ngram}-gram overlap: {len(report.ngram_flagged)} turns", ""]
    if report.ngram_flagged:
        lines += ["| trajectory | turn | shared | prompt | span |", "|---|---|---|---|---|"]
        lines += [f"| {p.trajectory} | {p.turn} | {int(p.score)} | {p.prompt_id} | "
                  f"{cell(p.span or '')} |" for p in report.ngram_flagged[:limit]]
    if report.embedder is not None:
        lines += ["", f"## Embedding nearest neighbours ({report.embedder}, threshold "
                  f"{report.embedding_threshold}): {len(report.embedding_flagged)} flagged", "",
                  "| cosine | trajectory | turn | user | prompt id | prompt |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {p.score:.3f} | {p.trajectory} | {p.turn} | {cell(p.user)} | "
                  f"{p.prompt_id} | {cell(p.prompt)} |" for p in report.embedding_closest]
    lines += ["", f"## Tool overlap (share threshold {report.tool_share_threshold})", "",
              "| env | benchmark env | shared names | share | mean param Jaccard |",
              "|---|---|---|---|---|"]
    lines += [f"| {o.env} | {o.benchmark_env} | {len(o.matches)} | {o.share:.2f} | "
              f"{o.mean_param_jaccard:.2f} |" for o in report.tool_overlaps]
    if report.unresolved_envs:
        lines += ["", f"Environments not resolved (no tools compared): "
                  f"{', '.join(report.unresolved_envs)}"]
    return "\n".join(lines) + "\n"
