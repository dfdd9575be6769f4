"""Run a generated environment's tests in the sandbox and read the verdict per criterion.

One validation run is one sandboxed `pytest` over the generated module, our built-in
checks (`builtin_checks.py`) and the test agent's file(s), with a JUnit XML report that
comes back as a file. Each test belongs to one of the four criteria by its name prefix
(`test_interface_*`, `test_exec_*`, `test_behaviour_*`, `test_state_*`). Failures are
grouped (same criterion, tool and first error line) and ranked by severity the way the
release ranks them (envfactory.md §6: load/schema errors first): import and syntax
errors, then interface, executability, behaviour, state; within a rank, the groups
with more failing tests come first.

The same run serves `envgen verify` (environments EnvGen did not write): `states` adds the
starting states the built-in checks run on (`states.json`), `target` names a registered
environment to load instead of a module file (`target.json`), and the evidence the checks
record for each failure (`evidence.jsonl`) comes back on the result.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from synthesis.envgen.description import ApiDescription

__all__ = ["CRITERIA", "FailureGroup", "Probe", "TestOutcome", "ValidationResult", "criterion_of",
           "parse_junit", "probe", "rank_failures", "sandbox_files", "validate"]

Criterion = Literal["interface", "executability", "behaviour", "state"]
CRITERIA: tuple[Criterion, ...] = ("interface", "executability", "behaviour", "state")
_PREFIXES: tuple[tuple[str, Criterion], ...] = (
    ("test_interface", "interface"), ("test_exec", "executability"),
    ("test_behaviour", "behaviour"), ("test_behavior", "behaviour"), ("test_state", "state"))
#: severity ranks: lower is worse (fixed first)
SEVERITY = {"import": 0, "interface": 1, "executability": 2, "behaviour": 3, "state": 4}
_IMPORT_ERRORS = re.compile(r"\b(SyntaxError|IndentationError|ImportError|"
                            r"ModuleNotFoundError|FormatError)\b")

MODULE = "generated_env.py"
BUILTIN = "test_envgen_builtin.py"
REPORT = "report.xml"
EVIDENCE = "evidence.jsonl"
_HERE = Path(__file__).resolve().parent
REPO_ROOT = _HERE.parents[1]

Runner = Callable[..., Any]


class TestOutcome(BaseModel):
    """One test's result."""

    __test__ = False  # not a pytest class

    name: str
    file: str
    criterion: Criterion
    outcome: Literal["passed", "failed", "error", "skipped"]
    message: str = ""
    #: the failure's text (assertion, traceback tail), cut to a few KB
    output: str = ""
    #: the tester's test (False: a built-in check)
    agent: bool = True

    @property
    def failed(self) -> bool:
        return self.outcome in ("failed", "error")


class FailureGroup(BaseModel):
    severity: str
    criterion: Criterion
    key: str
    tests: list[str]
    message: str
    output: str


class ValidationResult(BaseModel):
    sandbox_verdict: str
    sandbox_detail: str = ""
    tests: list[TestOutcome] = Field(default_factory=list)
    wall_s: float = 0.0
    #: what the built-in checks recorded per failure: test, tool, arguments,
    #: starting_state, what (happened)
    evidence: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(t.outcome == "passed" for t in self.tests)

    @property
    def failed(self) -> int:
        return sum(t.failed for t in self.tests)

    @property
    def all_passed(self) -> bool:
        return bool(self.tests) and self.failed == 0

    def criteria(self) -> dict[str, dict[str, int]]:
        """{criterion: {"passed": n, "failed": m}} for all four criteria."""
        out: dict[str, dict[str, int]] = {c: {"passed": 0, "failed": 0} for c in CRITERIA}
        for t in self.tests:
            if t.outcome == "passed":
                out[t.criterion]["passed"] += 1
            elif t.failed:
                out[t.criterion]["failed"] += 1
        return out

    def failing_criteria(self) -> list[str]:
        return [c for c, n in self.criteria().items() if n["failed"]]

    def score(self) -> tuple[int, ...]:
        """Ordering key of results over the same tests: more passing tests first, then
        fewer failures of each severity from the worst down (bigger is better)."""
        groups = rank_failures(self)
        per_rank = [-sum(len(g.tests) for g in groups if SEVERITY[g.severity] == r)
                    for r in range(len(SEVERITY))]
        return (self.passed, *per_rank)


def criterion_of(test_name: str) -> Criterion:
    """The criterion a test's name declares; untagged tests count as behaviour."""
    bare = test_name.rpartition("::")[2]
    for prefix, criterion in _PREFIXES:
        if bare.startswith(prefix):
            return criterion
    return "behaviour"


def _tool_in(name: str, tools: Sequence[str]) -> str:
    """The described tool a test is about (from its name or parameter), '' if none."""
    for tool in sorted(tools, key=len, reverse=True):
        if re.search(rf"(^|[_\[]){re.escape(tool)}($|[_\]])", name):
            return tool
    return ""


def _severity(t: TestOutcome) -> str:
    if _IMPORT_ERRORS.search(t.message) or t.name == "test_exec_import":
        return "import"
    return t.criterion


def rank_failures(result: ValidationResult, tools: Sequence[str] = ()) -> list[FailureGroup]:
    """Failing tests grouped by (severity, tool, first error line), worst first."""
    groups: dict[tuple[str, str, str], list[TestOutcome]] = {}
    for t in result.tests:
        if not t.failed:
            continue
        first = (t.message.strip().splitlines() or [""])[0][:200]
        key = (_severity(t), _tool_in(t.name, tools), first)
        groups.setdefault(key, []).append(t)
    ranked = sorted(groups.items(), key=lambda kv: (SEVERITY[kv[0][0]], -len(kv[1]), kv[0]))
    return [FailureGroup(severity=sev, criterion=ts[0].criterion,
                         key=f"{sev}:{tool or '-'}", tests=[t.name for t in ts],
                         message=first, output=ts[0].output)
            for (sev, tool, first), ts in ranked]


def sandbox_files(description: ApiDescription, code: str, tests: Mapping[str, str], *,
                  states: Mapping[str, Any] | None = None,
                  target: str | None = None) -> dict[str, str]:
    """The files of one validation run: the module, the description, conftest, our checks
    and the tester's files (named `test_agent*.py`); the starting states (`states.json`)
    and the registered environment to load (`target.json`) when given."""
    files = {
        MODULE: code,
        "description.json": description.model_dump_json(indent=2),
        "conftest.py": (_HERE / "sandbox_conftest.py").read_text(encoding="utf-8"),
        BUILTIN: (_HERE / "builtin_checks.py").read_text(encoding="utf-8"),
        "pytest.ini": "[pytest]\naddopts =\n",
    }
    if states is not None:
        files["states.json"] = json.dumps(states, ensure_ascii=False, default=str)
    if target is not None:
        files["target.json"] = json.dumps({"registry": target})
    for name, text in tests.items():
        files[name] = text
    return files


def _cut(text: str, limit: int = 3000) -> str:
    return text if len(text) <= limit else text[:limit // 3] + "\n...\n" + text[-2 * limit // 3:]


def parse_junit(xml: str, builtin: str = BUILTIN) -> list[TestOutcome]:
    """Test outcomes from pytest's JUnit XML (xunit1: `file`, `classname`, `name`)."""
    root = ET.fromstring(xml)
    out: list[TestOutcome] = []
    for case in root.iter("testcase"):
        name = case.get("name", "")
        module = (case.get("classname") or "").split(".")[0]
        file = case.get("file") or (module + ".py" if module else "")
        outcome: Literal["passed", "failed", "error", "skipped"] = "passed"
        message = text = ""
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                outcome = "failed" if tag == "failure" else tag  # type: ignore[assignment]
                message = node.get("message") or ""
                text = node.text or ""
                break
        out.append(TestOutcome(name=name, file=file, criterion=criterion_of(name),
                               outcome=outcome, message=_cut(message, 600), output=_cut(text),
                               agent=Path(file).name != builtin))
    return out


def _runner(runner: Runner | None, limits: Any) -> tuple[Runner, Any]:
    """The sandbox (helper module `sandbox`) unless a caller passes its own runner."""
    if runner is None or limits is None:
        from synthesis.envgen import sandbox

        return runner or sandbox.run_sandboxed, limits or sandbox.SandboxLimits()
    return runner, limits


def _evidence(text: str | None) -> list[dict[str, Any]]:
    out = []
    for line in (text or "").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut by the output cap
        if isinstance(record, dict):
            out.append(record)
    return out


def validate(description: ApiDescription, code: str, tests: Mapping[str, str], *,
             limits: Any = None, runner: Runner | None = None,
             states: Mapping[str, Any] | None = None,
             target: str | None = None) -> ValidationResult:
    """Run everything in the sandbox; a run that leaves no report (a timeout, a memory
    limit, a crash of pytest itself) is one failed `test_exec_run` carrying the verdict."""
    run, limits = _runner(runner, limits)
    files = sandbox_files(description, code, tests, states=states, target=target)
    argv = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o",
            "junit_family=xunit1", f"--junitxml={REPORT}", BUILTIN, *sorted(tests)]
    result = run(argv, files=files, limits=limits, python_path=[REPO_ROOT])
    report = result.files.get(REPORT)
    outcomes: list[TestOutcome] = []
    if report:
        try:
            outcomes = parse_junit(report)
        except ET.ParseError:
            outcomes = []
    if not outcomes:
        tail = _cut((result.stdout or "") + "\n" + (result.stderr or ""))
        outcomes = [TestOutcome(name="test_exec_run", file=BUILTIN, criterion="executability",
                                outcome="error", agent=False,
                                message=f"the test run ended with verdict {result.verdict}: "
                                        f"{result.detail}",
                                output=tail)]
    return ValidationResult(sandbox_verdict=result.verdict, sandbox_detail=result.detail,
                            tests=outcomes, wall_s=result.wall_s,
                            evidence=_evidence(result.files.get(EVIDENCE)))


PROBE = "probe.json"
_PROBE_SCRIPT = """import json
from conftest import load_factory
env = load_factory()()
state = getattr(type(env), "State", None)
json.dump({"state_schema": state.model_json_schema() if state is not None else None,
           "default_state": env.snapshot()}, open("probe.json", "w", encoding="utf-8"))
"""


class Probe(BaseModel):
    """What the test agent may know of the generated module besides the description: the
    JSON schema of its state and its default data (never its code)."""

    ok: bool
    state_schema: dict[str, Any] | None = None
    default_state: Any = None
    detail: str = ""


def probe(description: ApiDescription, code: str, *, limits: Any = None,
          runner: Runner | None = None, target: str | None = None) -> Probe:
    """Import the module (or load the registered `target`) in the sandbox and read its
    state schema and default state."""
    run, limits = _runner(runner, limits)
    files = sandbox_files(description, code, {}, target=target)
    files["probe_env.py"] = _PROBE_SCRIPT
    result = run(["python", "probe_env.py"], files=files, limits=limits,
                 python_path=[REPO_ROOT])
    text = result.files.get(PROBE)
    if result.verdict != "ok" or not text:
        return Probe(ok=False, detail=f"{result.verdict}: {result.detail} "
                                      f"{_cut(result.stderr or '', 800)}".strip())
    data = json.loads(text)
    return Probe(ok=True, state_schema=data.get("state_schema"),
                 default_state=data.get("default_state"))
