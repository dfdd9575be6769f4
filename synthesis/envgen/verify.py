"""`envfactory envgen verify`: EnvGen's validation stage on environments it did not write.

A target is a release-format server file (`SERVER.py`; its description is the metadata
beside it in a release-shaped root `envs/{tools,metadata,intermediate}`, its starting
states the checkpoint's scenarios), a release environment (`release/Airline`, or
`release` for all of them) or any registered environment (`generated/x`, a pool one,
checked against its own tool list). Each target is one `validate` run in the sandbox —
the same run, built-in checks (`builtin_checks.py`) and per-call limits as EnvGen's own
outputs get — on the default state and every scenario that expects `pass`, with the
`validation_error` scenarios to be refused, plus the tester's tests when a tester model
is given. Its verdict, the four criteria and every failure with its evidence go to
`OUT/<Name>/report.json`; `OUT/summary.json` adds the counts per criterion, the defect
groups and, for release servers, the agreement with the release's own last LLM verdict
(`agreement`). A rerun keeps finished reports. Release verdicts are also recorded where
`envs.release_envs.verified_names()` reads them (`RELEASE_VERIFY`).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from inspect_ai.model import Model
from pydantic import BaseModel, Field

from envs.concurrency import bounded_gather
from envs.jsonl import write_atomic
from synthesis.envgen.description import ApiDescription, ToolDescription, from_metadata
from synthesis.envgen.validate import CRITERIA, Probe, ValidationResult, probe, validate

__all__ = ["AGREEMENT_ROWS", "Failure", "Target", "VerifyInputError", "VerifyReport",
           "agreement", "defect_groups", "failures_of", "passed_criteria", "record_release",
           "resolve_targets", "summary", "verdict_of", "verify"]

REPORT = "report.json"
SUMMARY = "summary.json"
#: the tester's tests, kept in the report folder
TESTS_FILE = "test_agent.py"
#: the release's last LLM verdict, as the rows of the 2x2
AGREEMENT_ROWS = ("passed", "failed", "none")
#: seconds one tool call may run in the built-in checks
CALL_SECONDS = 5.0
#: sandbox limits of one environment's run: a release server has up to ~30 tools on ~5
#: starting states (hundreds of tests); hangs are caught per call, so the run's own limits
#: only guard against a runaway
LIMITS: dict[str, Any] = {"cpu_seconds": 600, "wall_seconds": 900}
_SANDBOX_FAILURES = ("timeout", "cpu_limit", "memory_limit", "process_limit",
                     "network_blocked", "write_blocked", "crashed")

#: target name, event text (progress callbacks)
OnEvent = Callable[[str, str], None]


class VerifyInputError(ValueError):
    """A target that cannot be verified at all (no such file or environment, no metadata);
    the message names it."""


class Target(BaseModel):
    """One environment to verify."""

    #: the name it is reported and recorded under: `release/Airline`, `pool/x`, `Airline`
    name: str
    kind: Literal["release", "server", "registry"]
    server: Path | None = None
    metadata: Path | None = None
    checkpoint: Path | None = None
    #: starting states: {"id", "data"} (data None: the default state)
    states: list[dict[str, Any]] = Field(default_factory=list)
    #: scenarios that expect `validation_error`: {"id", "data"}
    refused: list[dict[str, Any]] = Field(default_factory=list)
    #: malformed checkpoint entries, one line each (skipped, counted)
    scenario_problems: list[str] = Field(default_factory=list)
    #: the release's last validation round's `all_passed` (release servers only)
    release_llm_verdict: bool | None = None

    @property
    def folder(self) -> str:
        return _folder(self.name)


class Failure(BaseModel):
    """One failed check with its evidence."""

    criterion: str
    test: str
    tool: str = ""
    arguments: Any = None
    starting_state: str = ""
    what: str


class VerifyReport(BaseModel):
    """`OUT/<Name>/report.json`."""

    name: str
    kind: str
    source: str
    #: what the interface was checked against: a metadata file, or the environment itself
    description_source: str
    verdict: Literal["passed", "failed"]
    criteria: dict[str, bool]
    tests_passed: int
    tests_failed: int
    starting_states: list[str]
    refused_scenarios: list[str]
    scenario_problems: list[str]
    failures: list[Failure]
    release_llm_verdict: bool | None = None
    tester: str | None = None
    sandbox_verdict: str
    sandbox_detail: str
    wall_s: float


# -- targets -------------------------------------------------------------------------------

def _folder(name: str) -> str:
    """A target's report folder: the release's own name, else the name with `/` -> `__`."""
    return name.removeprefix("release/").replace("/", "__")


def _release_target(env: Any, name: str) -> Target:
    if env.problem is not None:
        raise VerifyInputError(env.problem)
    if env.metadata is None:
        raise VerifyInputError(f"{env.server}: no metadata beside it (expected "
                               f"envs/metadata/{env.name}_metadata.json in its release root); "
                               "verify reads the description from there")
    from envs.release_envs import ReleaseEnvError

    try:
        scenarios, problems = env.scenarios(), env.scenario_problems()
        llm = env.llm_verdict()
    except ReleaseEnvError as e:  # the whole checkpoint is unreadable: no scenarios
        scenarios, problems, llm = [], [str(e)], None
    return Target(name=name, kind="release" if name.startswith("release/") else "server",
                  server=env.server, metadata=env.metadata, checkpoint=env.checkpoint,
                  states=[{"id": "default", "data": None}] + [
                      {"id": s.scenario_id, "data": s.data} for s in scenarios if s.startable],
                  refused=[{"id": s.scenario_id, "data": s.data} for s in scenarios
                           if not s.startable],
                  scenario_problems=problems, release_llm_verdict=llm)


def _server_target(path: Path) -> Target:
    from envs.release_envs import ReleaseEnvError, get_release, release_root

    path = path.resolve()
    if path.parent.name != "tools" or path.parent.parent.name != "envs":
        raise VerifyInputError(f"{path}: not in a release-shaped root (ROOT/envs/tools/"
                               f"{path.name}, with ROOT/envs/metadata/{path.stem}_metadata.json)")
    root = path.parents[2]
    try:
        env = get_release(path.stem, root)
    except ReleaseEnvError as e:
        raise VerifyInputError(str(e)) from None
    try:
        official = release_root()
    except FileNotFoundError:
        official = None
    is_release = official is not None and official.resolve() == root
    return _release_target(env, f"release/{env.name}" if is_release else env.name)


def resolve_targets(specs: Sequence[str]) -> tuple[list[Target], list[str]]:
    """The targets named on the command line, in order, without duplicates, and one line
    per release server that `release` had to skip (it cannot be listed: the line names the
    file and why); raises `VerifyInputError` naming the first spec that cannot be verified."""
    from envs.release_envs import PREFIX, ReleaseEnvError, get_release, list_release

    out: dict[str, Target] = {}
    skipped: list[str] = []
    for spec in specs:
        targets: list[Target]
        if spec == "release":
            try:
                envs = list_release()
            except (ReleaseEnvError, FileNotFoundError) as e:
                raise VerifyInputError(f"release: {e}") from None
            if not envs:
                try:
                    get_release("-")  # the "no release here" message, when that is why
                except (ReleaseEnvError, FileNotFoundError) as e:
                    raise VerifyInputError(f"release: {e}") from None
                raise VerifyInputError("release: the release root holds no server")
            skipped += [e.problem for e in envs if e.problem is not None]
            targets = [_release_target(e, e.qualified) for e in envs if e.problem is None]
        elif spec.endswith(".py") or ("/" in spec and Path(spec).exists()):
            if not Path(spec).is_file():
                raise VerifyInputError(f"{spec}: no such server file")
            targets = [_server_target(Path(spec))]
        elif spec.startswith(PREFIX):
            if "@" in spec:
                raise VerifyInputError(f"{spec}: verify an environment, not one starting state "
                                       f"(its scenarios are all checked): {spec.split('@')[0]}")
            try:
                targets = [_release_target(get_release(spec), spec)]
            except (ReleaseEnvError, FileNotFoundError) as e:
                raise VerifyInputError(f"{spec}: {e}") from None
        else:
            from envs.registry import get

            try:
                get(spec)
            except KeyError as e:
                raise VerifyInputError(f"{spec}: {e.args[0]}") from None
            targets = [Target(name=spec, kind="registry",
                              states=[{"id": "default", "data": None}])]
        for t in targets:
            out.setdefault(t.name, t)
    return list(out.values()), skipped


def _description(target: Target) -> tuple[ApiDescription, str]:
    """The description the interface is checked against, and where it came from."""
    if target.metadata is not None:
        return from_metadata(target.metadata), str(target.metadata)
    from envs.registry import get

    entry = get(target.name)
    tools = [ToolDescription(name=s.name, description=s.description, parameters=s.parameters,
                             write=bool(s.write), write_source="declared")
             for s in entry.specs()]
    # the environment's own tool list: the interface checks then test what the model is
    # shown against what the tools accept (no separate description exists)
    description = ApiDescription(
        name=target.name, description=entry.description or target.name, tools=tools,
        source="environment", source_path=entry.source)
    return description, f"the environment's own tool list ({entry.source})"


# -- one target ----------------------------------------------------------------------------

def passed_criteria(result: ValidationResult) -> dict[str, bool]:
    """criterion -> no failed test of it (and, for executability, a sandbox run that ended
    by itself, not by a limit or a blocked network/write attempt)."""
    counts = result.criteria()
    out: dict[str, bool] = {c: counts[c]["failed"] == 0 for c in CRITERIA}
    if result.sandbox_verdict in _SANDBOX_FAILURES:
        out["executability"] = False
    return out


def verdict_of(result: ValidationResult) -> Literal["passed", "failed"]:
    """Passed when tests ran and every criterion passed."""
    return "passed" if result.tests and all(passed_criteria(result).values()) else "failed"


def failures_of(result: ValidationResult) -> list[Failure]:
    """Every failed test with its evidence: what the built-in checks recorded, else the
    test's own message (the tester's tests, a run that left no report)."""
    by_test: dict[str, list[dict[str, Any]]] = {}
    for record in result.evidence:
        by_test.setdefault(str(record.get("test", "")), []).append(record)
    out: list[Failure] = []
    for t in result.tests:
        if not t.failed:
            continue
        records = by_test.get(t.name) or [{}]
        for r in records:
            out.append(Failure(criterion=t.criterion, test=t.name, tool=str(r.get("tool") or ""),
                               arguments=r.get("arguments"),
                               starting_state=str(r.get("starting_state") or ""),
                               what=str(r.get("what") or t.message or t.output)[:2000]))
    if result.sandbox_verdict in _SANDBOX_FAILURES:
        out.append(Failure(criterion="executability", test="sandbox",
                           what=f"the sandbox run ended with verdict {result.sandbox_verdict}: "
                                f"{result.sandbox_detail}"))
    return out


def _states_doc(target: Target, call_seconds: float) -> dict[str, Any]:
    return {"states": target.states, "refused": target.refused, "call_seconds": call_seconds}


async def _tester_tests(target: Target, description: ApiDescription, code: str,
                        folder: Path, tester: Model, limits: Any) -> str:
    """The tester's tests (written once, kept in the report folder for a rerun)."""
    from synthesis.envgen import agents

    path = folder / TESTS_FILE
    if path.exists():
        return path.read_text(encoding="utf-8")
    target_name = target.name if target.kind == "registry" else None
    found: Probe = await asyncio.to_thread(probe, description, code, limits=limits,
                                           target=target_name)
    reply = await agents.write_tests(tester, description, found.state_schema,
                                     found.default_state)
    write_atomic(path, reply.code)
    return reply.code


async def verify_target(target: Target, out: Path, *, limits: Any = None,
                        tester: Model | None = None,
                        call_seconds: float = CALL_SECONDS) -> VerifyReport:
    """Verify one target into `out/<folder>/report.json` (an existing report is kept)."""
    from synthesis.envgen.agents import AgentFailure

    folder = out / target.folder
    done = folder / REPORT
    if done.exists():
        try:
            return VerifyReport.model_validate_json(done.read_text(encoding="utf-8"))
        except ValueError:
            pass  # a report of another version: verify again
    folder.mkdir(parents=True, exist_ok=True)
    description, described_by = _description(target)
    code = target.server.read_text(encoding="utf-8") if target.server else ""
    registry = target.name if target.kind == "registry" else None
    tests: dict[str, str] = {}
    if tester is not None:
        try:
            tests[TESTS_FILE] = await _tester_tests(target, description, code, folder, tester,
                                                    limits)
        except AgentFailure as e:
            tests[TESTS_FILE] = ("def test_behaviour_tester_failed():\n"
                                 f"    raise AssertionError({str(e)!r})\n")
    started = time.perf_counter()
    result = await asyncio.to_thread(validate, description, code, tests, limits=limits,
                                     states=_states_doc(target, call_seconds), target=registry)
    criteria = passed_criteria(result)
    report = VerifyReport(
        name=target.name, kind=target.kind,
        source=str(target.server) if target.server else target.name,
        description_source=described_by,
        verdict=verdict_of(result),
        criteria=criteria, tests_passed=result.passed, tests_failed=result.failed,
        starting_states=[s["id"] for s in target.states],
        refused_scenarios=[s["id"] for s in target.refused],
        scenario_problems=target.scenario_problems, failures=failures_of(result),
        release_llm_verdict=target.release_llm_verdict,
        tester=str(tester) if tester is not None else None,
        sandbox_verdict=result.sandbox_verdict, sandbox_detail=result.sandbox_detail,
        wall_s=round(time.perf_counter() - started, 3))
    write_atomic(done, report.model_dump_json(indent=2))
    return report


# -- many targets --------------------------------------------------------------------------

def agreement(reports: Iterable[VerifyReport]) -> dict[str, dict[str, int]]:
    """The 2x2 (plus a `none` row) of the release's last LLM verdict (rows: passed, failed,
    none) against our executable verdict (columns: passed, failed), over release servers."""
    table = {row: {"passed": 0, "failed": 0} for row in AGREEMENT_ROWS}
    for r in reports:
        if r.kind not in ("release", "server"):
            continue
        row = ("none" if r.release_llm_verdict is None
               else "passed" if r.release_llm_verdict else "failed")
        table[row][r.verdict] += 1
    return table


_SPECIFICS = re.compile(r"'[^']*'|\"[^\"]*\"|\[[^\]]*\]|\{[^}]*\}|\([^)]*\)|\d+(\.\d+)?")
#: the first exception name in a message (what follows it is instance detail)
_RAISED = re.compile(r"\b\w*(Error|Exception|Timeout)\b")


def _defect_key(f: Failure) -> str:
    """The check and the shape of its message: the tool's (and parameter's) name, quoted,
    bracketed and numeric parts blanked, and whatever follows an exception's name dropped."""
    check = f.test.partition("[")[0]
    first = (f.what.strip().splitlines() or [""])[0]
    if f.tool:
        first = re.sub(r"TOOL\.\w+", "TOOL.PARAM", first.replace(f.tool, "TOOL"))
    raised = _RAISED.search(first)
    if raised:
        first = first[:raised.end()]
    return f"{check}: {re.sub(r'[ ]+', ' ', _SPECIFICS.sub('…', first))[:160]}"


def defect_groups(reports: Iterable[VerifyReport]) -> list[dict[str, Any]]:
    """Failures grouped by check and message shape (names, numbers and quoted values
    blanked), most environments first; each with one example."""
    groups: dict[str, dict[str, Any]] = {}
    for r in reports:
        for f in r.failures:
            key = _defect_key(f)
            g = groups.setdefault(key, {"group": key, "criterion": f.criterion,
                                        "environments": [], "failures": 0,
                                        "example": {"environment": r.name,
                                                    **f.model_dump(mode="json")}})
            g["failures"] += 1
            if r.name not in g["environments"]:
                g["environments"].append(r.name)
    return sorted(groups.values(), key=lambda g: (-len(g["environments"]), -g["failures"],
                                                 g["group"]))


def summary(reports: Sequence[VerifyReport], out: Path, *, wall_s: float,
            skipped: Sequence[str] = ()) -> dict[str, Any]:
    """`OUT/summary.json`: per environment (verdict, criteria, report path, the shape
    `verified_names()` reads), counts, defect groups and the agreement table."""
    return {
        "environments": {r.name: {"verdict": r.verdict, "criteria": r.criteria,
                                  "report": str(out / _folder(r.name) / REPORT)}
                         for r in reports},
        "targets": len(reports),
        "passed": sum(r.verdict == "passed" for r in reports),
        "passed_per_criterion": {c: sum(r.criteria.get(c, False) for r in reports)
                                 for c in CRITERIA},
        "skipped": list(skipped),
        "scenario_problems": sum(len(r.scenario_problems) for r in reports),
        "agreement_with_release_llm_verdict": agreement(reports),
        "defect_groups": defect_groups(reports),
        "wall_s": round(wall_s, 1),
    }


def record_release(reports: Sequence[VerifyReport], out: Path,
                   record_dir: Path | None = None) -> Path | None:
    """Merge the release environments' verdicts into `<RELEASE_VERIFY>/summary.json`
    (what `verified_names()` reads); None when no target was a release environment."""
    from envs.release_envs import PREFIX
    from envs.release_registry import RELEASE_VERIFY

    mine = {r.name: {"verdict": r.verdict, "criteria": r.criteria,
                     "report": str((out / _folder(r.name) / REPORT).resolve())}
            for r in reports if r.name.startswith(PREFIX)}
    if not mine:
        return None
    path = (record_dir or RELEASE_VERIFY.path()) / SUMMARY
    recorded: dict[str, Any] = {}
    if path.is_file():
        try:
            recorded = dict(json.loads(path.read_text(encoding="utf-8")).get("environments", {}))
        except (ValueError, AttributeError):
            recorded = {}  # unreadable: this run's record replaces it
    recorded.update(mine)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps({"environments": dict(sorted(recorded.items()))}, indent=2))
    return path


async def verify(targets: Sequence[Target], out: Path, *, concurrency: int = 2,
                 tester: Model | None = None, limits: Mapping[str, Any] | None = None,
                 call_seconds: float = CALL_SECONDS,
                 on_event: OnEvent | None = None) -> list[VerifyReport]:
    """Verify every target into `out` (finished reports kept), up to `concurrency` at a
    time; the reports in input order."""
    from synthesis.envgen.sandbox import SandboxLimits

    sandbox_limits = SandboxLimits(**{**LIMITS, **(limits or {})})
    event = on_event or (lambda name, text: None)
    out.mkdir(parents=True, exist_ok=True)

    async def one(t: Target) -> VerifyReport:
        kept = (out / t.folder / REPORT).exists()
        event(t.name, "verify")
        report = await verify_target(t, out, limits=sandbox_limits, tester=tester,
                                     call_seconds=call_seconds)
        event(t.name, f"done: {report.verdict}{' (earlier run)' if kept else ''}")
        return report

    return await bounded_gather((one(t) for t in targets), concurrency)
