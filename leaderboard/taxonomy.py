"""Why samples failed: one category per failed trial, counted per row and benchmark.

Only failed trials are read (by id and epoch, without their events: `samples.py`), and each is
converted with `harness.logs.trajectory_of` into the canonical `Trajectory`, so the rules
below read one shape for every benchmark: the episode's messages (tool calls with their
parse errors and results), its turns with gold calls where the task carried them
(EnvFactory tasks), its termination, plus the score's metadata (BFCL's official error
type) and the sample's error and limit. The first rule that matches names the failure:

1. simulated-user or judge failure — the user side errored, or the judge gave no score
2. step/error limit — a step, error, tool-call or Inspect limit (or BFCL's force-quit)
3. other — an exception ended the sample (its message is the example's detail)
4. no tool use — the agent never called a tool
5. malformed call — a call whose arguments could not be decoded, or an invalid message
6. unknown tool — a tool result of kind `unknown_tool` (a tool the agent was not offered,
   in any benchmark's wording: ours, τ²'s and VitaBench's `Tool 'x' not found.`, ...)
7. stopped early — the episode ended before the task's user turns were all played
8. wrong arguments — a call failed with kind `invalid_arguments` and never fixed
9. failed to recover from a tool error — any other tool error never followed by a
   successful call of that tool

Rules 6 and 8 read the `ErrorKind` every tool result carries (`Message.error_kind`,
`Call.error_kind`). Logs written before results carried kinds have none; for those alone
the rules fall back to matching our wordings of the time (`_LEGACY_*`).
10. missing required call / wrong arguments / extra writes — against the gold calls
    (EnvFactory's gold trajectory, BFCL's ground truth), in this order: some gold tool
    never called; some gold call never made with its gold (unmasked) arguments; every
    gold call made, plus calls the gold lacks
11. other — none of the above (the score's explanation is the example's detail)
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

import anyio
from inspect_ai.log import EvalSample

from envs.concurrency import bounded_gather
from envs.errors import ErrorKind
from harness.logs import trajectory_of
from harness.trajectory import Trajectory
from leaderboard import columns as cols
from leaderboard.records import FailureExample, LogRecord, TaxonomyCount
from leaderboard.samples import read_samples

__all__ = ["CATEGORIES", "EXAMPLES_PER_CATEGORY", "PARALLEL_FROM", "classify", "classify_logs",
           "classify_sample", "failed_trials", "taxonomy"]

USER_JUDGE = "simulated-user or judge failure"
LIMIT = "step/error limit"
NO_TOOL_USE = "no tool use"
MALFORMED = "malformed call"
UNKNOWN_TOOL = "unknown tool"
STOPPED_EARLY = "stopped early"
WRONG_ARGUMENTS = "wrong arguments"
NO_RECOVERY = "failed to recover from a tool error"
MISSING_CALL = "missing required call"
EXTRA_WRITES = "extra writes"
OTHER = "other"
CATEGORIES = (MALFORMED, UNKNOWN_TOOL, WRONG_ARGUMENTS, MISSING_CALL, EXTRA_WRITES,
              NO_TOOL_USE, NO_RECOVERY, STOPPED_EARLY, LIMIT, USER_JUDGE, OTHER)
EXAMPLES_PER_CATEGORY = 3
PARALLEL_FROM = 400
"""Failed trials from which `taxonomy(workers>1)` starts processes (each imports Inspect,
about a second, so fewer are classified faster in this one)."""

_LIMIT_ENDINGS = {"max_steps", "too_many_errors", "turn_step_limit", "max_tool_calls",
                  "limit"}
#: only for logs written before tool results carried an `ErrorKind`: our wordings then
#: for invalid arguments and for an unknown tool (with or without the "Error: " prefix)
_LEGACY_INVALID_ARGS = re.compile(r"^(Invalid arguments for tool|Arguments for tool .* must be)")
_LEGACY_UNKNOWN = re.compile(r"^(Error: )?Unknown tool ")
_CALL_NAME = re.compile(r"^\s*([\w.]+)\s*\(")


def _gold_names_bfcl(meta: dict[str, Any]) -> list[str] | None:
    truth = meta.get("ground_truth")
    if not isinstance(truth, list):
        return None
    names = []
    for turn in truth:
        for call in turn if isinstance(turn, list) else [turn]:
            match = _CALL_NAME.match(str(call))
            if match:
                names.append(match.group(1))
    return names


def _kind(kind: ErrorKind | None, text: str) -> ErrorKind | None:
    """A tool result's kind; for a result without one (a log from before kinds), the kind
    its text says in our wording of the time, if it says one."""
    if kind is not None:
        return kind
    if _LEGACY_UNKNOWN.match(text):
        return ErrorKind.UNKNOWN_TOOL
    if _LEGACY_INVALID_ARGS.match(text):
        return ErrorKind.INVALID_ARGUMENTS
    return None


def _matches(observed: dict[str, Any], gold: dict[str, Any], masked: list[str]) -> bool:
    return all(observed.get(k) == v for k, v in gold.items() if k not in masked)


def classify(traj: Trajectory, *, error: str | None = None, limit: str | None = None,
             score_meta: dict[str, Any] | None = None, user_turns: int | None = None,
             agent_calls: int | None = None, gold_names: list[str] | None = None,
             values: dict[str, float] | None = None) -> tuple[str, str]:
    """(category, detail) of one failed trial. `agent_calls` counts the agent's tool
    calls where the episode record has none (a single-turn task); `user_turns` is how
    many user turns the task has; `gold_names` are gold tool names where the task's
    gold is only a list of call strings (BFCL)."""
    meta = score_meta or {}
    error_type = str(meta.get("error_type") or "")
    ending = traj.termination or str(meta.get("termination") or "") or None
    unscored = values is not None and not values and not error
    if ending == "user_error" or unscored or (error and re.search(r"\b(user|judge)\b", error)):
        return USER_JUDGE, error or str(meta.get("explanation") or "no score (judge failed)")
    if limit or ending in _LIMIT_ENDINGS or "force_terminated" in error_type:
        return LIMIT, f"{limit or ending or error_type}"
    if error or ending in ("agent_error", "error"):
        return OTHER, f"error: {error or ending}"
    agent = [m for m in traj.messages if m.role == "assistant"]
    calls = [c for m in agent for c in m.tool_calls or []]
    n_calls = len(calls) if traj.messages else (agent_calls or 0)
    if n_calls == 0 or "relevance_error" in error_type and "irrelevance" not in error_type:
        return NO_TOOL_USE, "the agent made no tool call"
    malformed = next((c for c in calls if c.parse_error), None)
    if malformed is not None or ending == "invalid_agent_message" or (
            error_type.startswith("ast_decoder")):
        detail = f"{malformed.name}: {malformed.parse_error}" if malformed else error_type
        return MALFORMED, detail
    results = [m for m in traj.messages if m.role == "tool" and m.requestor != "user"]
    unknown = next((m for m in results
                    if _kind(m.error_kind, m.content or "") is ErrorKind.UNKNOWN_TOOL), None)
    if unknown is not None:
        return UNKNOWN_TOOL, (unknown.content or "")[:200]
    if user_turns is not None and traj.turns and len(traj.turns) < user_turns:
        return STOPPED_EARLY, f"ended ({ending}) after {len(traj.turns)} of {user_turns} turns"
    observed = [c for t in traj.turns for c in t.calls]
    for i, call in enumerate(observed):
        if call.ok is False and not any(later.ok and later.name == call.name
                                        for later in observed[i + 1:]):
            text = str(call.result or "")[:200]
            if _kind(call.error_kind, text) is ErrorKind.INVALID_ARGUMENTS:
                return WRONG_ARGUMENTS, text
            return NO_RECOVERY, f"{call.name}: {text}"
    gold = traj.gold_calls()
    if gold:
        called = {c.name for c in observed if c.ok}
        missing = [g for g in gold if g.name not in called]
        if missing:
            return MISSING_CALL, ", ".join(f"{g.qualified_name} never called"
                                           for g in missing[:3])
        for g in gold:
            same = [c for c in observed if c.name == g.name and c.ok]
            if not any(_matches(c.arguments, g.arguments, g.masked_arguments) for c in same):
                return WRONG_ARGUMENTS, f"{g.qualified_name}: gold {g.arguments}"
        extra = [c.name for c in observed if c.ok and c.name not in {g.name for g in gold}]
        if extra:
            return EXTRA_WRITES, f"calls beyond the gold: {', '.join(extra[:5])}"
    elif gold_names is not None:
        names = {c.name for c in calls}
        absent = [g for g in gold_names if g not in names]
        if absent or "empty_turn" in error_type:
            return MISSING_CALL, f"{error_type}: {', '.join(absent[:5]) or 'a turn without calls'}"
        extra = sorted(names - set(gold_names))
        if extra:
            return EXTRA_WRITES, f"{error_type}: calls beyond the gold: {', '.join(extra[:5])}"
        return WRONG_ARGUMENTS, error_type or "gold tools called with other arguments"
    if error_type:
        if "wrong_func_name" in error_type or "wrong_count" in error_type:
            return MISSING_CALL, error_type
        if "irrelevance" in error_type:
            return EXTRA_WRITES, error_type
        return WRONG_ARGUMENTS, error_type
    return OTHER, str(meta.get("explanation") or "")[:200]


def classify_sample(sample: EvalSample, rec: LogRecord,
                    values: dict[str, float] | None = None) -> tuple[str, str]:
    """Classify one failed sample of `rec`'s log (its body already read)."""
    traj = trajectory_of(sample, model=rec.model, task=rec.task)
    meta = dict(sample.metadata or {})
    score = next(iter((sample.scores or {}).values()), None)
    score_meta = dict(score.metadata or {}) if score is not None else {}
    if score is not None and score.explanation:
        score_meta.setdefault("explanation", score.explanation)
    if score is not None and score.reason:
        score_meta.setdefault("reason", score.reason)
    user_turns = None
    if isinstance(meta.get("question"), list):
        user_turns = len(meta["question"])
    elif isinstance(meta.get("trajectory"), dict):
        user_turns = len(meta["trajectory"].get("turns") or []) or None
    agent_calls = sum(len(m.tool_calls or []) for m in sample.messages
                      if m.role == "assistant")
    return classify(traj, error=sample.error.message if sample.error else None,
                    limit=sample.limit.type if sample.limit else None,
                    score_meta=score_meta, user_turns=user_turns, agent_calls=agent_calls,
                    gold_names=_gold_names_bfcl(meta) if rec.benchmark == "bfcl_multi_turn"
                    else None, values=values)


def _failed(rec: LogRecord, column: cols.Column) -> list[tuple[str, int]]:
    out = []
    threshold = column.threshold if column.threshold is not None else 1.0
    for s in rec.samples:
        value = s.values.get(column.component)
        if s.error or value is None or value < threshold - 1e-6:
            out.append((s.id, s.epoch))
    return out


def failed_trials(rec: LogRecord) -> list[tuple[str, int]]:
    """(sample id, epoch) of each trial that failed its benchmark's headline measure."""
    headline = next((c for c in cols.columns_for(rec.benchmark, rec.task, {
        "domain": rec.comparability.get("domain"),
        "task_set": rec.comparability.get("task_set")}) if c.headline), None)
    if headline is None:
        headline = cols.columns_for(rec.benchmark, rec.task, {})[0]
    return _failed(rec, headline)


#: (row, benchmark, category, example) of one classified trial
Verdict = tuple[str, str, str, FailureExample]


def classify_logs(records: list[LogRecord], max_per_log: int | None = None
                  ) -> list[list[Verdict]]:
    """Every failed trial of each log classified (per log, in order), the logs' failed
    samples read concurrently in one event loop."""

    async def one(rec: LogRecord) -> list[Verdict]:
        wanted = failed_trials(rec)[:max_per_log]
        ints = {s.id for s in rec.samples if s.int_id}
        samples = await read_samples(
            rec.path, [(int(i) if i in ints else i, e) for i, e in wanted])
        by_id = {(s.id, s.epoch): s for s in rec.samples}
        out = []
        for (sample_id, epoch), sample in zip(wanted, samples, strict=True):
            category, detail = classify_sample(sample, rec, by_id[(sample_id, epoch)].values)
            out.append((rec.row, rec.benchmark, category, FailureExample(
                log=rec.path, sample_id=sample_id, epoch=epoch, detail=detail[:300])))
        return out

    async def run() -> list[list[Verdict]]:
        return await bounded_gather((one(rec) for rec in records), 16)

    return anyio.run(run)


def _chunks(records: list[LogRecord], size: int) -> list[list[LogRecord]]:
    return [records[i:i + size] for i in range(0, len(records), size)]


def taxonomy(records: list[LogRecord], on_logs: Callable[[int], None] | None = None,
             max_per_log: int | None = None, workers: int = 1
             ) -> tuple[list[TaxonomyCount], dict[str, dict[str, int]]]:
    """Failure counts per (row, benchmark, category) with up to
    `EXAMPLES_PER_CATEGORY` examples each, and the failed trials classified per row and
    benchmark. `max_per_log` caps the trials read per log (None: all). With `workers` >
    1 and enough failed trials to pay for starting them, the logs are classified in
    that many processes (reading and classifying is CPU-bound Python)."""
    failed = sum(len(failed_trials(r)[:max_per_log]) for r in records)
    verdicts: list[Verdict] = []
    if workers > 1 and failed >= PARALLEL_FROM:
        from concurrent.futures import ProcessPoolExecutor, as_completed

        size = max(1, len(records) // (4 * workers))
        with ProcessPoolExecutor(workers) as pool:
            futures = {pool.submit(classify_logs, chunk, max_per_log): len(chunk)
                       for chunk in _chunks(records, size)}
            results = {}
            for future in as_completed(futures):
                results[future] = future.result()
                if on_logs is not None:
                    on_logs(futures[future])
            for future in futures:  # in the records' order, so examples are stable
                verdicts += [v for per_log in results[future] for v in per_log]
    else:
        for chunk in _chunks(records, 50):
            verdicts += [v for per_log in classify_logs(chunk, max_per_log) for v in per_log]
            if on_logs is not None:
                on_logs(len(chunk))
    counts: Counter[tuple[str, str, str]] = Counter()
    examples: dict[tuple[str, str, str], list[FailureExample]] = defaultdict(list)
    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row, bench, category, example in verdicts:
        key = (row, bench, category)
        counts[key] += 1
        totals[row][bench] += 1
        if len(examples[key]) < EXAMPLES_PER_CATEGORY:
            examples[key].append(example)
    out = [TaxonomyCount(row=row, benchmark=bench, category=cat, count=n,
                         examples=examples[(row, bench, cat)])
           for (row, bench, cat), n in sorted(counts.items())]
    return out, {row: dict(v) for row, v in totals.items()}
