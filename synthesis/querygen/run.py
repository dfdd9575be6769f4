"""`envfactory synth queries`: many chains -> trajectories.jsonl + rejections.jsonl, resumable.

Chain i of a run gets a seed derived from (base seed, i) and the id `qg-<seed>-<i>`, so a
run is a pure function of its arguments and the models. Outcomes are written in chain
order, each as one write of a full line followed by flush and fsync; a rerun of the same
command drops a torn last line, skips every id already in either file and appends the
rest, so a run killed at any point and rerun ends with the same files as one that never
stopped. Held-out environments (``splits.json``) are only sampled when the split asks;
a benchmark's own environments (`envs.registry.benchmark_of`: `bfcl/*`, `tau2/*`, ...) are
never sampled, whatever the graph holds: training on them would make their scores
meaningless.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from inspect_ai.model import Model
from pydantic import BaseModel, Field

from envs.hashing import file_sha256
from envs.jsonl import append_line, complete_lines, write_atomic
from envs.registry import benchmark_of
from envs.release_registry import ENVFACTORY
from harness.results_file import write_in_order
from synthesis.chain import ToolChain
from synthesis.graph import ToolGraph
from synthesis.querygen.config import QueryGenConfig
from synthesis.querygen.synthesize import Kept, Outcome, Rejected
from synthesis.sampler import SamplerName, sample_chain

__all__ = ["BadRunArgs", "Manifest", "RunArgs", "RunSummary", "Synthesize", "allowed_envs",
           "benchmark_envs", "chain_id", "chain_seed", "done_ids", "run_queries"]

TRAJECTORIES = "trajectories.jsonl"
REJECTIONS = "rejections.jsonl"
MANIFEST = "manifest.json"

#: the per-chain step (synthesis.querygen.synthesize, or a stand-in in tests)
Synthesize = Callable[..., Awaitable[Outcome]]


class BadRunArgs(ValueError):
    """An argument of the run that cannot be used (the command names `option` in a usage
    error rather than reporting a failure)."""

    def __init__(self, message: str, option: str) -> None:
        super().__init__(message)
        self.option = option


class RunArgs(BaseModel):
    """What determines a run's output (with the models); recorded in the manifest."""

    graph: Path
    out: Path
    n: int = Field(ge=1)
    seed: int = 0
    preset: str = "sft_nonconv"
    split: str = "train"
    envs: list[str] | None = None
    sampler: SamplerName = "topology"
    max_nodes: int = Field(default=10, ge=1)
    max_concurrency: int = Field(default=4, ge=1)


class Manifest(BaseModel):
    """Provenance of one output directory."""

    preset: str
    seed: int
    n: int
    split: str
    sampler: str
    max_nodes: int
    graph: str
    graph_sha256: str
    #: which prompts the graph's LLM passes ran with, per pass (`synthesis.graph_llm`)
    graph_prompts: dict[str, str] = Field(default_factory=dict)
    models: dict[str, str]
    #: each role's generation settings (e.g. --max-tokens), non-default fields only
    generate: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: environments chains may use (graph ∩ --envs ∩ split, no benchmark's)
    allowed_environments: list[str]
    #: the graph's benchmark environments, left out of sampling
    excluded_benchmark_environments: list[str] = Field(default_factory=list)
    #: environments the written records actually use
    environments: list[str] = Field(default_factory=list)
    config: dict[str, Any]
    #: which QueryGen ran: "release" (the release's prompts and state machine) or "ours"
    pipeline: str = "ours"
    #: how a turn's candidate was chosen (release pipeline): llm | state | both
    select: str | None = None
    #: where the release's prompts were read from (pipeline "release")
    release: dict[str, str] = Field(default_factory=dict)
    kept: int = 0
    rejected: dict[str, int] = Field(default_factory=dict)


class RunSummary(BaseModel):
    kept: int
    rejected: dict[str, int]
    skipped: int
    written: int
    #: the graph's benchmark environments that were left out
    excluded: list[str] = Field(default_factory=list)

    @property
    def failed(self) -> int:
        """Chains that gave no trajectory (every rejection reason)."""
        return sum(self.rejected.values())


def chain_seed(seed: int, index: int) -> int:
    """Chain `index`'s sampling seed: stable across runs, Python versions and machines."""
    digest = hashlib.sha256(f"querygen:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def chain_id(seed: int, index: int) -> str:
    return f"qg-{seed}-{index:06d}"


def benchmark_envs(names: Sequence[str]) -> list[str]:
    """Those of `names` that are a benchmark's own environments (never training data)."""
    return [e for e in names if benchmark_of(e) is not None]


def allowed_envs(graph_envs: Sequence[str], splits: Mapping[str, Sequence[str]], split: str,
                 wanted: Sequence[str] | None) -> list[str]:
    """The environments a run may sample: the graph's, narrowed by `wanted`, minus every
    environment of another split (environments in no split count as training ones) and
    every benchmark's (`envs.registry.benchmark_of`)."""
    if split not in splits:
        raise BadRunArgs(f"unknown split {split!r}; splits.json has {sorted(splits)}",
                         "--split")
    foreign = {e for name, envs in splits.items() if name != split for e in envs}
    if split != "train":
        # a non-training split is exactly its listed environments
        foreign |= {e for e in graph_envs if e not in splits[split]}
    benchmark = set(benchmark_envs(graph_envs))
    pool = [e for e in graph_envs if e not in foreign and e not in benchmark]
    if wanted is None:
        if not pool:
            raise BadRunArgs(f"the graph has no environment of split {split!r}"
                             + (f" besides benchmark environments ({len(benchmark)}), "
                                "which are never training data; build the graph without "
                                "them" if benchmark else ""), "--graph")
        return pool
    named = benchmark_envs(wanted)
    if named:
        raise BadRunArgs(f"{', '.join(named)}: a benchmark's environments "
                         f"({', '.join(sorted({str(benchmark_of(e)) for e in named}))}), "
                         "never training data; name others", "--envs")
    missing = [e for e in wanted if e not in graph_envs]
    if missing:
        raise BadRunArgs(f"environments not in the graph: {', '.join(missing)} (the graph "
                         f"has {', '.join(pool) or 'none usable'})", "--envs")
    barred = [e for e in wanted if e in foreign]
    if barred:
        raise BadRunArgs(f"environments {', '.join(barred)} are not in split {split!r}; "
                         "pass --split to use them", "--envs")
    return [e for e in graph_envs if e in wanted]


def done_ids(out: Path) -> dict[str, dict[str, Any]]:
    """id -> record of every finished chain in `out` (kept or rejected)."""
    done: dict[str, dict[str, Any]] = {}
    for name in (TRAJECTORIES, REJECTIONS):
        for i, line in enumerate(complete_lines(out / name)):
            try:
                record = json.loads(line)
                done[record["id"]] = record
            except (json.JSONDecodeError, KeyError, TypeError):
                raise ValueError(f"{out / name}:{i + 1}: not a record; remove the directory "
                                 "to start over") from None
    return done


def _record_envs(record: Mapping[str, Any]) -> list[str]:
    return list(record.get("environments") or [])


async def run_queries(args: RunArgs, config: QueryGenConfig, splits: Mapping[str, Sequence[str]],
                      synthesize: Synthesize, models: Mapping[str, Model],
                      on_outcome: Callable[[dict[str, Any]], None] | None = None,
                      on_resume: Callable[[int], None] | None = None) -> RunSummary:
    """Synthesize chains 0..n-1 of `args` into `args.out`, resuming what is there.
    `on_resume(k)` is told how many chains were already done; `on_outcome` sees each new
    record (with "kind": "kept" | "rejected") as it is written."""
    graph = ToolGraph.load(args.graph)
    envs = allowed_envs(graph.environments(), splits, args.split, args.envs)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    config = config.model_copy(update={"split": args.split})
    manifest = Manifest(
        preset=args.preset, seed=args.seed, n=args.n, split=args.split, sampler=args.sampler,
        max_nodes=args.max_nodes, graph=str(args.graph),
        graph_sha256=file_sha256(args.graph),
        graph_prompts=dict(graph.g.graph.get("llm_prompts", {})),
        models={role: str(m) for role, m in models.items()},
        generate={role: m.config.model_dump(mode="json", exclude_none=True)
                  for role, m in models.items()},
        allowed_environments=envs,
        excluded_benchmark_environments=benchmark_envs(graph.environments()),
        config=config.model_dump(mode="json"), pipeline=config.pipeline,
        select=config.select if config.pipeline == "release" else None,
        release=ENVFACTORY.provenance() if config.pipeline == "release" else {})
    old = out / MANIFEST
    if old.exists():
        before = Manifest.model_validate_json(old.read_text(encoding="utf-8"))
        keys = ("preset", "seed", "split", "sampler", "max_nodes", "graph_sha256", "models",
                "generate", "allowed_environments", "config")
        changed = [k for k in keys if getattr(before, k) != getattr(manifest, k)]
        if changed:
            raise BadRunArgs(f"{out} holds a run with other {', '.join(changed)}; use "
                             "another --out-dir or remove it", "--out-dir")
    write_atomic(out / MANIFEST, manifest.model_dump_json(indent=2) + "\n")

    done = done_ids(out)
    ids = [chain_id(args.seed, i) for i in range(args.n)]
    todo = [i for i, cid in enumerate(ids) if cid not in done]
    if on_resume:
        on_resume(len(ids) - len(todo))
    async def one(j: int) -> dict[str, Any]:
        i = todo[j]
        cid, seed = ids[i], chain_seed(args.seed, i)
        chain: ToolChain | None = None
        try:
            chain = sample_chain(graph, seed, args.sampler, args.max_nodes, envs)
        except ValueError as e:
            outcome: Outcome = Rejected(reason="sampling_failed", detail=str(e))
        else:
            outcome = await synthesize(chain, config, traj_id=cid, models=models)
        if isinstance(outcome, Kept):
            return {"kind": "kept", **outcome.trajectory.model_dump(mode="json")}
        return {"kind": "rejected", "id": cid, "seed": seed, "reason": outcome.reason,
                "detail": outcome.detail, "turn": outcome.turn,
                "environments": chain.environments if chain else [],
                "chain": chain.model_dump(mode="json") if chain else None}

    def store(record: dict[str, Any]) -> None:
        kind = record.pop("kind")
        append_line(out / (TRAJECTORIES if kind == "kept" else REJECTIONS), record)
        if on_outcome:
            on_outcome({"kind": kind, **record})

    written = await write_in_order(one, len(todo), 0, None, write=store,
                                   max_concurrency=args.max_concurrency)
    records = done_ids(out)
    kept = sum(1 for r in records.values() if "reason" not in r)
    rejected = Counter(str(r["reason"]) for r in records.values() if "reason" in r)
    used = {e for r in records.values() for e in _record_envs(r)}
    manifest.environments = [e for e in envs if e in used]
    manifest.kept, manifest.rejected = kept, dict(sorted(rejected.items()))
    write_atomic(out / MANIFEST, manifest.model_dump_json(indent=2) + "\n")
    return RunSummary(kept=kept, rejected=manifest.rejected, skipped=len(done),
                      written=len(written),
                      excluded=manifest.excluded_benchmark_environments)
