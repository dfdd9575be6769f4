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

Benchmark sources may be absent on a machine (bfcl-eval not installed, no τ² release
files): they are skipped, and the report says which were compared and why not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from envs.metadata import load_metadata_dir
from harness.trajectory import Trajectory
from synthesis.embedders import Embedder

__all__ = [
    "ApiEnv",
    "BenchmarkPrompt",
    "ContaminationReport",
    "EnvOverlap",
    "NearPair",
    "SourceStatus",
    "UserTurn",
    "bfcl_apis",
    "bfcl_prompts",
    "check",
    "embedding_pairs",
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
    "without_flagged",
]

NGRAM = 13
_PUNCT = re.compile(r"[^\w\s]|_")
_NAME = re.compile(r"[^a-z0-9]")


# -- records ---------------------------------------------------------------------------


class BenchmarkPrompt(BaseModel):
    source: str  # "bfcl" | "tau2"
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
    flagged: dict[str, list[str]] = Field(
        default_factory=dict, description="trajectory id -> reasons (ngram, embedding, tools)")


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
                n: int = NGRAM) -> list[NearPair]:
    """Every user turn sharing at least one word n-gram with a prompt, paired with the
    prompt it shares most with; most shared first."""
    index: dict[tuple[str, ...], list[int]] = {}
    for j, p in enumerate(prompts):
        for g in set(_ngrams(normalise_words(p.text), n)):
            index.setdefault(g, []).append(j)
    pairs = []
    for t in turns:
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


def embedding_pairs(turns: Sequence[UserTurn], prompts: Sequence[BenchmarkPrompt],
                    embedder: Embedder) -> list[NearPair]:
    """Each user turn's nearest prompt by cosine (vectors are L2-normalised), best first."""
    if not turns or not prompts:
        return []
    u = np.asarray(embedder.embed([t.text for t in turns]), dtype=np.float32)
    b = np.asarray(embedder.embed([p.text for p in prompts]), dtype=np.float32)
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
    import json

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


# -- the whole check -------------------------------------------------------------------


def check(trajectories: Sequence[Trajectory], *, data: Sequence[str],
          prompts: Sequence[BenchmarkPrompt], benchmark_apis: Sequence[ApiEnv],
          sources: Sequence[SourceStatus], embedder: Embedder | None = None,
          embedding_threshold: float = 0.9, metadata: Sequence[ApiEnv] = (),
          tool_share: float = 0.5, flag_tools: bool = False, closest: int = 10,
          ) -> ContaminationReport:
    """Run the three signals over `trajectories` against the given benchmark material."""
    turns = user_turns(trajectories)
    report = ContaminationReport(data=list(data), trajectories=len(trajectories),
                                 user_turns=len(turns), sources=list(sources),
                                 tool_share_threshold=tool_share)
    flags: dict[str, set[str]] = {}
    report.ngram_flagged = ngram_pairs(turns, prompts)
    for p in report.ngram_flagged:
        flags.setdefault(p.trajectory, set()).add("ngram")
    if embedder is not None:
        pairs = embedding_pairs(turns, prompts, embedder)
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
