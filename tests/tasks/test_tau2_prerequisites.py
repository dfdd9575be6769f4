"""τ² fails before any sample, in one line: a release file that is not there (offline, a
partial `TAU2_DATA_DIR`), a `-T domain=`, a grade file with nothing to grade or an
unknown domain, a `--judge` that cannot judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from harness.inspect_compat import PrerequisiteError
from harness.task_options import TaskOptionError
from tasks.tau2.tau2 import tau2_airline, tau2_retail
from tests.shared_data import TAU2_DATA, needs_tau2


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No `TAU2_DATA_DIR`, an empty cache, and a GitHub mirror that has no file."""
    from envs.tau2 import data

    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path / "cache"))
    (tmp_path / "mirror").mkdir()
    monkeypatch.setenv("ENVFACTORY_GITHUB_RAW", (tmp_path / "mirror").as_uri())
    data._load.cache_clear()
    return tmp_path / "cache"


def test_offline_the_task_fails_at_construction_naming_file_tag_and_remedy(
        offline: Path) -> None:
    with pytest.raises(PrerequisiteError) as raised:
        tau2_airline()
    message = str(raised.value)
    assert "\n" not in message
    # the first file read is the split file, which comes from the later tag
    assert "τ² v0.2.1 file data/tau2/domains/airline/split_tasks.json" in message
    assert "/sierra-research/tau2-bench/v0.2.1/data/tau2/domains/airline/" in message
    assert "set TAU2_DATA_DIR" in message
    assert str(offline / "tau2" / "v0.2.0") in message  # the cache it looked in
    assert message.endswith("pre-fetch them with network access: `envfactory data fetch tau2`")


@needs_tau2
def test_a_partial_data_dir_fails_at_construction_naming_the_missing_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tasks and splits are there, the database is not: before, the samples failed one
    by one (and `inspect eval` exited 0); now the task is never built."""
    from envs.tau2 import data

    airline = tmp_path / "tau2" / "domains" / "airline"
    airline.mkdir(parents=True)
    for name in ("tasks.json", "split_tasks.json", "policy.md"):
        (airline / name).symlink_to(TAU2_DATA / "domains" / "airline" / name)
    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path / "tau2"))
    data._load.cache_clear()
    with pytest.raises(PrerequisiteError,
                       match=r"domains/airline/db\.json missing from TAU2_DATA_DIR=.*"
                             r"v0\.2\.0's files, with domains/\*/split_tasks\.json from "
                             r"v0\.2\.1"):
        tau2_airline()


def test_an_unknown_domain_option_lists_the_domains() -> None:
    with pytest.raises(TaskOptionError) as raised:
        tau2_airline(domain="nope")
    assert str(raised.value) == (
        "-T domain='nope': unknown τ² domain; use one of airline, retail, telecom, as the "
        "task tasks/tau2/tau2.py@tau2_<domain>")


def test_another_domain_option_names_its_task() -> None:
    with pytest.raises(TaskOptionError, match=r"inspect eval tasks/tau2/tau2\.py@tau2_retail$"):
        tau2_airline(domain="retail")


@needs_tau2
@pytest.mark.usefixtures("use_tau2_data")
def test_the_tasks_own_domain_is_accepted() -> None:
    assert tau2_retail(domain="retail").name == "tau2_retail"


def test_the_log_names_both_tags() -> None:
    from envs.tau2 import data

    assert data.version_info()["tau2_release"] == "v0.2.0"
    assert data.version_info()["tau2_split_release"] == "v0.2.1"


def test_grade_of_an_empty_file_fails(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = CliRunner().invoke(app, ["tau2", "grade", str(empty)])
    assert result.exit_code == 1
    assert result.output.strip() == f"error: {empty}: holds no conversation records to grade"


def test_grade_of_an_unknown_domain_lists_the_domains(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps({"domain": "nope", "task_id": "0",
                                "termination_reason": "user_stop", "messages": []}) + "\n")
    result = CliRunner().invoke(app, ["tau2", "grade", str(path)])
    assert result.exit_code == 1
    assert result.output.strip() == (f"error: {path}:1: unknown τ² domain 'nope'; use one "
                                     "of airline, retail, telecom")


@pytest.mark.parametrize("judge", ["envfactory/oracle", "envfactory/replay"])
def test_grade_refuses_a_judge_that_cannot_judge(tmp_path: Path, judge: str) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text("")
    result = CliRunner().invoke(app, ["tau2", "grade", str(path), "--judge", judge])
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"error: Invalid value for '--judge': {judge} cannot judge")
