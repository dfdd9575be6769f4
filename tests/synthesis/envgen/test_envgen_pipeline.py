"""The EnvGen pipeline end to end with scripted coder/tester models and the real sandbox:
first-try pass, repairs on revision 2 and 3, a stop at the limit, disputed tests, bad
replies, checkpoints and a resume after `kill -9` of `envfactory envgen build`."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from synthesis.envgen.pipeline import BuildConfig, EnvReport, build, load_checkpoint
from testkit.waiting import wait_until
from tests.synthesis.envgen import scripted

ROOT = Path(__file__).resolve().parents[3]


def _build(tmp_path: Path, *names: str, **config: Any) -> dict[str, EnvReport]:
    paths = [scripted.tally_sketch(tmp_path, n) for n in names]
    config.setdefault("register_passing", False)
    reports = asyncio.run(build(paths, tmp_path / "out", scripted.models(),
                                BuildConfig(**config)))
    return {r.name: r for r in reports}


def _report(tmp_path: Path, env: str) -> dict[str, Any]:
    return json.loads((tmp_path / "out" / env / "report.json").read_text(encoding="utf-8"))


def test_correct_environment_passes_first_try(tmp_path: Path) -> None:
    r = _build(tmp_path, "Tally")["tally"]
    assert (r.verdict, r.all_passed, r.revisions_used) == ("passed", True, 0)
    # built-in checks on Tally's 4 tools (add/remove declared writes, get/list reads; 3
    # with required parameters) in its default state, plus the tester's: interface 7 + 1;
    # executability 5 + 1; behaviour 3 bad-argument checks + 6; state 2 round trips + 2
    # reads + 2 writes + 4 refused-call checks + 3
    assert r.criteria == {"interface": {"passed": 8, "failed": 0},
                          "executability": {"passed": 6, "failed": 0},
                          "behaviour": {"passed": 9, "failed": 0},
                          "state": {"passed": 13, "failed": 0}}
    assert r.tokens == {"coder": 2, "tester": 2}  # one call each at 2 tokens
    folder = tmp_path / "out" / "tally"
    assert _report(tmp_path, "tally")["verdict"] == "passed"
    assert _report(tmp_path, "tally")["verify"]["verdict"] == "passed"
    assert (folder / "env.py").read_text() == scripted.tally_code()
    assert (folder / "tests" / "test_agent.py").read_text() == scripted.TALLY_TESTS
    cp = load_checkpoint(folder)
    assert cp is not None and cp.stage == "done"
    assert cp.probe is not None and cp.probe.default_state == {"items": {"apple": 3, "pear": 1}}


def test_planted_bug_repaired_on_revision_two(tmp_path: Path) -> None:
    r = _build(tmp_path, "TallyRev2")["tally_rev2"]
    assert (r.verdict, r.revisions_used) == ("passed", 2)
    first, second = r.revisions
    # revision 1 changed nothing: compared, not kept, and the loop went on
    assert (first.kept, first.passed, first.baseline_passed) == (False, 35, 35)
    assert (second.kept, second.passed, second.failed) == (True, 36, 0)
    assert (tmp_path / "out" / "tally_rev2" / "env.py").read_text() == scripted.tally_code()


def test_revision_three_is_reached_and_a_worse_revision_is_not_kept(tmp_path: Path) -> None:
    r = _build(tmp_path, "TallyRev3")["tally_rev3"]
    assert (r.verdict, r.revisions_used) == ("passed", 3)
    worse, better, fixed = r.revisions
    assert (worse.kept, worse.passed) == (False, 0)  # a syntax error passes nothing
    assert worse.baseline_passed == 33  # accumulate + zero bugs: 3 tests fail
    assert (better.kept, better.passed, better.baseline_passed) == (True, 35, 33)
    assert (fixed.kept, fixed.passed, fixed.failed) == (True, 36, 0)


def test_never_passing_stops_at_the_limit_with_failing_criteria(tmp_path: Path) -> None:
    r = _build(tmp_path, "TallyNever")["tally_never"]
    assert (r.verdict, r.all_passed, r.revisions_used) == ("failed", False, 3)
    assert r.failing_criteria == ["behaviour"]
    assert r.criteria["behaviour"] == {"passed": 8, "failed": 1}
    assert [g["tests"] for g in r.failures] == [["test_behaviour_add_item_accumulates"]]
    assert r.tokens["coder"] == 8  # the first reply and three revisions
    report = _report(tmp_path, "tally_never")
    assert report["failing_criteria"] == ["behaviour"] and report["registered_as"] is None
    # the same reading `envgen verify` gives: behaviour fails, by the tester's test
    assert report["verify"]["verdict"] == "failed"
    assert report["verify"]["criteria"] == {"interface": True, "executability": True,
                                            "behaviour": False, "state": True}
    assert [f["test"] for f in report["verify"]["failures"]] == [
        "test_behaviour_add_item_accumulates"]


def test_max_revisions_is_honoured(tmp_path: Path) -> None:
    r = _build(tmp_path, "TallyRev3", max_revisions=2)["tally_rev3"]
    assert (r.verdict, r.revisions_used) == ("failed", 2)


def test_disputed_test_is_regenerated_and_recorded(tmp_path: Path) -> None:
    r = _build(tmp_path, "TallyDispute")["tally_dispute"]
    assert r.verdict == "passed" and r.revisions_used == 1
    (record,) = r.revisions
    assert record.tests_regenerated
    assert [w.test for w in record.wrong_tests] == ["test_behaviour_list_items_reverse"]
    assert "test_behaviour_list_items_reverse" in record.note
    folder = tmp_path / "out" / "tally_dispute"
    assert (folder / "tests" / "revision_1" / "test_agent.py").read_text() == \
        scripted.TALLY_TESTS
    assert "list_items_reverse" in (folder / "tests" / "test_agent.py").read_text()
    assert r.tokens == {"coder": 4, "tester": 4}


def test_malformed_reply_gets_one_retry_then_a_recorded_failure(tmp_path: Path) -> None:
    reports = _build(tmp_path, "TallyRetry", "TallyMute")
    assert reports["tally_retry"].verdict == "passed"
    assert reports["tally_retry"].tokens["coder"] == 4  # the bad reply and the retry
    mute = reports["tally_mute"]
    assert mute.verdict == "error" and "no fenced ```python code block" in (mute.error or "")
    assert mute.tokens == {"coder": 4, "tester": 0}
    assert _report(tmp_path, "tally_mute")["verdict"] == "error"


def test_tester_failure_is_recorded_and_built_in_checks_still_run(tmp_path: Path) -> None:
    r = _build(tmp_path, "TallyNoTests")["tally_no_tests"]
    assert (r.verdict, r.revisions_used) == ("failed", 0)
    assert "tester: the reply has no fenced" in (r.error or "")
    # the built-in checks pass (7 interface, 5 executability, 4 state for 4 tools, 2 of
    # them reads); the standing tester failure is the one failure
    assert (r.tests_passed, r.tests_failed) == (25, 1)
    assert [g["tests"] for g in r.failures] == [["test_behaviour_tester_failed"]]
    assert r.tokens == {"coder": 2, "tester": 4}


def test_passing_environment_is_registered(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from envs import registry

    monkeypatch.setenv("ENVFACTORY_GENERATED_ENVS", str(tmp_path / "generated"))
    reports = _build(tmp_path, "Tally", "TallyNever", register_passing=True)
    assert reports["tally"].registered_as == "generated/tally"
    assert reports["tally_never"].registered_as is None
    names = {e.name for e in registry.all_entries()}
    assert "generated/tally" in names and "generated/tally_never" not in names
    env = registry.create("generated/tally")
    assert env.call("add_item", {"name": "apple", "quantity": 2}).content == {
        "name": "apple", "quantity": 5}


def test_an_existing_build_with_other_settings_is_refused(tmp_path: Path) -> None:
    _build(tmp_path, "Tally")
    with pytest.raises(ValueError, match="other config"):
        _build(tmp_path, "Tally", max_revisions=1)


# -- resume after kill -9 -------------------------------------------------------------

#: `envfactory envgen build` with the scripted model API registered first
CLI = ("import sys; import tests.synthesis.envgen.scripted; from envfactory.cli import app; "
       "sys.argv[0] = 'envfactory'; app()")


def _cli(tmp_path: Path, marker: Path, delay: float, *paths: Path) -> list[str]:
    return [sys.executable, "-c", CLI, "envgen", "build", *map(str, paths), "--out-dir",
            str(tmp_path / "out"), "--model", "envgen-scripted/auto", "-M", f"delay={delay}", "-M",
            f"marker={marker}", "--max-concurrency", "1", "--no-register"]


def _calls(marker: Path) -> list[str]:
    return marker.read_text().splitlines() if marker.exists() else []


@pytest.mark.slow
def test_resume_after_kill_continues_from_the_last_stage(tmp_path: Path) -> None:
    first = scripted.tally_sketch(tmp_path, "Tally")
    second = scripted.tally_sketch(tmp_path, "TallyRev2")
    marker = tmp_path / "calls.txt"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(_cli(tmp_path, marker, 1.0, first, second), cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state = tmp_path / "out" / "tally_rev2" / "state.json"

    def revision_written() -> bool:
        cp = load_checkpoint(state.parent) if state.exists() else None
        return cp is not None and cp.stage == "revision_written"

    wait_until(lambda: proc.poll() is not None or revision_written(), timeout=120,
               interval=0.05, what="TallyRev2's first revision on disk")
    assert proc.poll() is None and revision_written(), "no mid-build moment to kill"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = _calls(marker)
    # Tally was finished; TallyRev2 had its first code, tests and revision 1 written
    assert load_checkpoint(tmp_path / "out" / "tally").stage == "done"  # type: ignore[union-attr]
    assert before.count("coder Tally") == before.count("tester Tally") == 1
    assert before.count("coder TallyRev2") == 2 and before.count("tester TallyRev2") == 1
    rerun = subprocess.run(_cli(tmp_path, marker, 0.0, first, second), cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    new = _calls(marker)[len(before):]
    # nothing again for the finished env; only revision 2 of the interrupted one
    assert new == ["coder TallyRev2"]
    report = _report(tmp_path, "tally_rev2")
    assert report["verdict"] == "passed" and report["revisions_used"] == 2
    assert [r["kept"] for r in report["revisions"]] == [False, True]
    assert "tally_rev2" in rerun.stdout and "passed" in rerun.stdout
