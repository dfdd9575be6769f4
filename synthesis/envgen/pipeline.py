"""`envfactory envgen build`: API descriptions -> verified, registered environments, resumable.

Per environment the stages are describe -> code -> tests -> validate -> (revise ->
validate)* -> register -> report. After every stage `OUT/<env>/state.json` records what
is done (stage, files written, latest results, tokens per role, the revision history),
written atomically after the files it names, so a run killed at any point and rerun
skips finished environments and continues each interrupted one from its last completed
stage, without repeating a model call whose answer is on disk.

The revision loop runs up to `max_revisions` times while a test fails. Each revision's
result is compared with the result of the code it would replace, on the same tests,
*before* replacing it; the better one is kept and the loop goes on (the release assigns
first and compares after, so it always stops after two revisions, envfactory.md §6).
When the coder argues that failing tests are wrong, the tester may rewrite them; the
baseline is then re-run on the new tests so the comparison stays fair, and the
dispute is recorded in the report. An environment is registered only when every test
passes. The validation is `envgen verify`'s (one validator): the same sandboxed run and
built-in checks, and each report carries verify's per-criterion verdict and the failures
with their evidence (`verify`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from inspect_ai.model import Model
from pydantic import BaseModel, Field

from envs.concurrency import bounded_gather
from envs.jsonl import write_atomic
from synthesis.envgen import agents
from synthesis.envgen.agents import AgentFailure, AgentReply, WrongTest
from synthesis.envgen.description import ApiDescription, load_description
from synthesis.envgen.validate import Probe, ValidationResult, probe, rank_failures, validate

__all__ = ["BuildConfig", "Checkpoint", "EnvReport", "Manifest", "RevisionRecord", "build",
           "load_checkpoint", "summary_rows"]

ROLES = agents.ROLES
STATE = "state.json"
REPORT = "report.json"
MANIFEST = "manifest.json"
CODE = "env.py"
TESTS = "test_agent.py"

Stage = Literal["new", "described", "coded", "tested", "validated", "revision_written",
                "revised", "registered", "done"]
Verdict = Literal["pending", "passed", "failed", "error"]

#: the test file when the tester gave no usable reply
_NO_TESTS = """def test_behaviour_tester_failed():
    raise AssertionError({problem})
"""

#: env name, stage text (progress callbacks)
OnEvent = Callable[[str, str], None]


class BuildConfig(BaseModel):
    max_revisions: int = Field(default=3, ge=0)
    concurrency: int = Field(default=2, ge=1)
    #: sandbox limits of each validation run (synthesis.envgen.sandbox.SandboxLimits fields)
    limits: dict[str, Any] = Field(default_factory=dict)
    #: register environments whose tests all pass (off: only build and report)
    register_passing: bool = True


class RevisionRecord(BaseModel):
    revision: int
    #: candidate's result on the tests in force (None: the coder gave no usable reply)
    passed: int | None = None
    failed: int | None = None
    criteria: dict[str, dict[str, int]] = Field(default_factory=dict)
    #: the result of the code it would replace, on the same tests
    baseline_passed: int | None = None
    kept: bool = False
    wrong_tests: list[WrongTest] = Field(default_factory=list)
    tests_regenerated: bool = False
    note: str = ""


class Checkpoint(BaseModel):
    """`OUT/<env>/state.json`."""

    name: str
    source: str
    stage: Stage = "new"
    #: files of this environment relative to its folder: code, tests, description, ...
    files: dict[str, str] = Field(default_factory=dict)
    probe: Probe | None = None
    #: the kept code's result on the tests in force
    results: ValidationResult | None = None
    #: revision written but not yet validated (stage revision_written)
    pending: dict[str, Any] | None = None
    revisions: list[RevisionRecord] = Field(default_factory=list)
    tokens: dict[str, int] = Field(default_factory=lambda: dict.fromkeys(ROLES, 0))
    verdict: Verdict = "pending"
    registered_as: str | None = None
    error: str | None = None


class EnvReport(BaseModel):
    """`OUT/<env>/report.json`."""

    name: str
    source: str
    verdict: Verdict
    #: every test passed (what registration checks)
    all_passed: bool
    criteria: dict[str, dict[str, int]]
    failing_criteria: list[str]
    tests_passed: int
    tests_failed: int
    revisions_used: int
    revisions: list[RevisionRecord]
    tokens: dict[str, int]
    registered_as: str | None
    failures: list[dict[str, Any]]
    error: str | None = None
    #: what `envgen verify` reports for the kept code: criterion -> passed, and each
    #: failure with its evidence (tool, arguments, starting state, what happened)
    verify: dict[str, Any] = Field(default_factory=dict)


class Manifest(BaseModel):
    models: dict[str, str]
    generate: dict[str, dict[str, Any]] = Field(default_factory=dict)
    config: dict[str, Any]
    environments: list[str] = Field(default_factory=list)


def load_checkpoint(folder: Path) -> Checkpoint | None:
    path = folder / STATE
    if not path.exists():
        return None
    try:
        return Checkpoint.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as e:
        raise ValueError(f"{path}: not an EnvGen checkpoint ({e}); remove the folder to "
                         "start that environment over") from None


class _EnvBuild:
    """One environment's state machine; every step ends with a checkpoint."""

    def __init__(self, description: ApiDescription, folder: Path, models: Mapping[str, Model],
                 config: BuildConfig, on_event: OnEvent | None) -> None:
        self.d, self.folder, self.models, self.config = description, folder, models, config
        self.on_event = on_event or (lambda name, text: None)
        self.cp = load_checkpoint(folder) or Checkpoint(name=description.env_name,
                                                        source=description.source_path)

    # -- files and checkpoints ---------------------------------------------------------

    def save(self, stage: Stage | None = None) -> None:
        if stage is not None:
            self.cp.stage = stage
        write_atomic(self.folder / STATE, self.cp.model_dump_json(indent=2))

    def write(self, key: str, relative: str, text: str) -> None:
        write_atomic(self.folder / relative, text)
        self.cp.files[key] = relative

    def read(self, key: str) -> str:
        return (self.folder / self.cp.files[key]).read_text(encoding="utf-8")

    def spend(self, role: str, tokens: int) -> None:
        self.cp.tokens[role] = self.cp.tokens.get(role, 0) + tokens

    def event(self, text: str) -> None:
        self.on_event(self.cp.name, text)

    # -- sandbox runs (blocking subprocesses, off the event loop) ---------------------

    def _limits(self) -> Any:
        from synthesis.envgen.sandbox import SandboxLimits

        return SandboxLimits(**self.config.limits)

    async def run_tests(self, code: str, tests: str) -> ValidationResult:
        return await asyncio.to_thread(validate, self.d, code, {TESTS: tests},
                                       limits=self._limits())

    # -- stages ------------------------------------------------------------------------

    async def run(self) -> Checkpoint:
        if self.cp.stage == "done":
            self.event("done (earlier run)")
            return self.cp
        try:
            await self._stages()
        except AgentFailure as e:
            self.spend(e.role, e.tokens)
            self.cp.verdict, self.cp.error = "error", str(e)
            self.finish()
        return self.cp

    async def _stages(self) -> None:
        cp = self.cp
        if cp.stage == "new":
            self.event("describe")
            self.write("description", "description.json", self.d.model_dump_json(indent=2))
            self.save("described")
        if cp.stage == "described":
            self.event("code")
            reply = await self._agent("coder", agents.write_code(self.models["coder"], self.d))
            self.write("code", CODE, reply.code)
            self.write("code_0", f"revisions/0/{CODE}", reply.code)
            self.save("coded")
        if cp.stage == "coded":
            self.event("tests")
            cp.probe = await asyncio.to_thread(probe, self.d, self.read("code"),
                                               limits=self._limits())
            try:
                reply = await self._agent("tester", agents.write_tests(
                    self.models["tester"], self.d, cp.probe.state_schema,
                    cp.probe.default_state))
                tests = reply.code
            except AgentFailure as e:
                # recorded, and the built-in checks still run; the standing failure keeps
                # the environment from passing (and from revisions the coder cannot help)
                self.spend(e.role, e.tokens)
                cp.error = str(e)
                tests = _NO_TESTS.format(problem=repr(str(e)))
            self.write("tests", f"tests/{TESTS}", tests)
            self.save("tested")
        if cp.stage == "tested":
            self.event("validate")
            cp.results = await self.run_tests(self.read("code"), self.read("tests"))
            self.save("validated")
        while cp.stage in ("validated", "revision_written", "revised"):
            assert cp.results is not None
            if cp.stage == "revision_written":
                await self._validate_revision()
            elif (cp.results.all_passed or len(cp.revisions) >= self.config.max_revisions
                  or cp.error is not None):
                break
            else:
                await self._write_revision(len(cp.revisions) + 1)
        if cp.stage in ("validated", "revised"):
            assert cp.results is not None
            cp.verdict = "passed" if cp.results.all_passed else "failed"
            if cp.verdict == "passed" and self.config.register_passing:
                self.event("register")
                try:
                    self._register()
                except ValueError as e:  # GeneratedEnvError: refused, with the reason
                    cp.error = f"registration refused: {e}"
            self.save("registered")
        if cp.stage == "registered":
            self.finish()

    async def _agent(self, role: str, call: Any) -> AgentReply:
        reply: AgentReply = await call
        self.spend(role, reply.tokens)
        return reply

    async def _write_revision(self, k: int) -> None:
        cp = self.cp
        assert cp.results is not None
        self.event(f"revise {k}/{self.config.max_revisions}")
        groups = rank_failures(cp.results, [t.name for t in self.d.tools])
        try:
            reply = await self._agent("coder", agents.revise_code(
                self.models["coder"], self.d, self.read("code"), groups, k,
                self.config.max_revisions))
        except AgentFailure as e:
            self.spend("coder", e.tokens)
            cp.revisions.append(RevisionRecord(revision=k, note=f"no usable reply: {e.problem}"))
            self.save("revised")
            return
        self.write(f"code_{k}", f"revisions/{k}/{CODE}", reply.code)
        failing = {t.name for t in cp.results.tests if t.failed and t.agent}
        disputed = [w for w in reply.wrong_tests if w.test.partition("[")[0] in
                    {f.partition("[")[0] for f in failing}]
        cp.pending = {"revision": k, "wrong_tests": [w.model_dump() for w in reply.wrong_tests],
                      "disputed": [w.model_dump() for w in disputed]}
        self.save("revision_written")

    async def _validate_revision(self) -> None:
        cp = self.cp
        assert cp.pending is not None and cp.results is not None
        k = int(cp.pending["revision"])
        self.event(f"validate revision {k}")
        disputed = [WrongTest.model_validate(w) for w in cp.pending["disputed"]]
        record = RevisionRecord(revision=k, wrong_tests=[
            WrongTest.model_validate(w) for w in cp.pending["wrong_tests"]])
        baseline = cp.results
        if disputed and not cp.pending.get("tests_done"):
            probe_ = cp.probe or Probe(ok=False)
            try:
                reply = await self._agent("tester", agents.regenerate_tests(
                    self.models["tester"], self.d, self.read("tests"), disputed,
                    probe_.state_schema, probe_.default_state))
            except AgentFailure as e:
                self.spend("tester", e.tokens)
                record.note = f"tests kept: the tester gave no usable reply ({e.problem})"
            else:
                if reply.code != self.read("tests"):
                    self.write(f"tests_{k}", f"tests/revision_{k}/{TESTS}", reply.code)
                    self.cp.files["tests"] = f"tests/revision_{k}/{TESTS}"
                    record.tests_regenerated = True
                    record.note = ("the tester rewrote the disputed tests: "
                                   + ", ".join(w.test for w in disputed))
                    # the kept code's result on the new tests: the fair baseline
                    cp.results = baseline = await self.run_tests(self.read("code"),
                                                                 self.read("tests"))
            cp.pending["tests_done"] = True
            cp.pending["record"] = record.model_dump(mode="json")
            self.save()
        elif cp.pending.get("record"):
            record = RevisionRecord.model_validate(cp.pending["record"])
        candidate = (self.folder / cp.files[f"code_{k}"]).read_text(encoding="utf-8")
        result = await self.run_tests(candidate, self.read("tests"))
        record.passed, record.failed = result.passed, result.failed
        record.criteria = result.criteria()
        record.baseline_passed = baseline.passed
        # compare with the code it would replace before replacing it
        record.kept = result.score() > baseline.score()
        if record.kept:
            self.write("code", CODE, candidate)
            cp.results = result
        else:
            kept = "not better than the kept code; kept the previous version"
            record.note = f"{record.note}; {kept}" if record.note else kept
        cp.revisions.append(record)
        cp.pending = None
        self.save("revised")

    def _register(self) -> None:
        from envs.generated import register_generated

        path = register_generated(self.folder / CODE, self.cp.name, self.report().model_dump(
            mode="json"))
        self.cp.registered_as = f"generated/{self.cp.name}"
        self.cp.files["registered"] = str(path)

    def report(self) -> EnvReport:
        cp = self.cp
        res = cp.results
        groups = rank_failures(res, [t.name for t in self.d.tools]) if res else []
        return EnvReport(
            name=cp.name, source=cp.source, verdict=cp.verdict,
            all_passed=bool(res and res.all_passed),
            criteria=res.criteria() if res else {},
            failing_criteria=res.failing_criteria() if res else [],
            tests_passed=res.passed if res else 0, tests_failed=res.failed if res else 0,
            revisions_used=len(cp.revisions), revisions=cp.revisions, tokens=dict(cp.tokens),
            registered_as=cp.registered_as,
            failures=[g.model_dump(include={"severity", "criterion", "key", "tests",
                                            "message"}) for g in groups],
            error=cp.error, verify=_verify_view(res))

    def finish(self) -> None:
        write_atomic(self.folder / REPORT, self.report().model_dump_json(indent=2))
        self.save("done")
        self.event(f"done: {self.cp.verdict}")


def _verify_view(result: ValidationResult | None) -> dict[str, Any]:
    """`envgen verify`'s reading of a validation result (empty before the first run)."""
    if result is None:
        return {}
    from synthesis.envgen.verify import failures_of, passed_criteria, verdict_of

    return {"verdict": verdict_of(result), "criteria": passed_criteria(result),
            "failures": [f.model_dump(mode="json") for f in failures_of(result)]}


def _manifest_check(out: Path, manifest: Manifest) -> None:
    path = out / MANIFEST
    if path.exists():
        before = Manifest.model_validate_json(path.read_text(encoding="utf-8"))
        changed = [k for k in ("models", "generate", "config")
                   if getattr(before, k) != getattr(manifest, k)]
        if changed:
            raise ValueError(f"{out} holds a build with other {', '.join(changed)}; use "
                             "another --out or remove it")
        manifest.environments = sorted(set(before.environments) | set(manifest.environments))
    write_atomic(path, manifest.model_dump_json(indent=2))


async def build(paths: Sequence[Path], out: Path, models: Mapping[str, Model],
                config: BuildConfig | None = None,
                on_event: OnEvent | None = None) -> list[EnvReport]:
    """Build every description in `paths` into `out` (resuming what is there), up to
    `config.concurrency` environments at a time; returns their reports in input order."""
    config = config or BuildConfig()
    missing = [r for r in ROLES if r not in models]
    if missing:
        raise ValueError(f"no model for roles {missing}")
    descriptions = [load_description(p) for p in paths]
    names = [d.env_name for d in descriptions]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"several descriptions are named {dupes}; build them into separate "
                         "--out folders")
    out.mkdir(parents=True, exist_ok=True)
    _manifest_check(out, Manifest(
        models={r: str(m) for r, m in models.items() if r in ROLES},
        generate={r: m.config.model_dump(mode="json", exclude_none=True)
                  for r, m in models.items() if r in ROLES},
        config=config.model_dump(mode="json", exclude={"concurrency"}), environments=names))

    async def one(d: ApiDescription) -> EnvReport:
        job = _EnvBuild(d, out / d.env_name, models, config, on_event)
        await job.run()
        return job.report()

    return await bounded_gather((one(d) for d in descriptions), config.concurrency)


def summary_rows(reports: Sequence[EnvReport]) -> list[dict[str, str]]:
    """One row per environment for the printed table."""
    rows = []
    for r in reports:
        crit = " ".join(f"{c[:5]} {n['passed']}/{n['passed'] + n['failed']}"
                        for c, n in r.criteria.items())
        rows.append({"environment": r.name, "verdict": r.verdict, "criteria": crit or "-",
                     "revisions": str(r.revisions_used),
                     "tokens": ", ".join(f"{k} {v:,}" for k, v in r.tokens.items()),
                     "registered": r.registered_as or "-"})
    return rows
