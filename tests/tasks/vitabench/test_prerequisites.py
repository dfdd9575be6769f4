"""VitaBench fails before any sample, in one line, and `inspect eval` exits non-zero: the
release's tool-description tables not there (before: every sample failed, the log said
"Task interrupted" and `inspect eval` exited 0), a judge that cannot judge; and its grade
refuses an unusable `--judge` (exit 2) and an empty file (exit 1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from harness.inspect_compat import PrerequisiteError
from harness.judge import UnfitJudgeError, UnknownModelError, judge_model
from tasks.vitabench.vitabench import vitabench_delivery
from tests.shared_data import VITABENCH_DATA, needs_vitabench

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def no_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The shared task snapshot, no tool objects or tables, an empty cache, a GitHub mirror
    that has no file: the environment a user without the source tables is in."""
    (tmp_path / "mirror").mkdir()
    env = {"VITABENCH_DATA_DIR": str(VITABENCH_DATA),
           "ENVFACTORY_CACHE": str(tmp_path / "cache"),
           "ENVFACTORY_GITHUB_RAW": (tmp_path / "mirror").as_uri()}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("VITABENCH_SOURCE_DIR", raising=False)
    return env


@needs_vitabench
def test_without_the_tool_tables_the_task_is_not_built(no_tables: dict[str, str]) -> None:
    with pytest.raises(PrerequisiteError) as raised:
        vitabench_delivery()
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("vitabench_delivery cannot start: cannot download VitaBench "
                              "file src/vita/environment/toolkit_schema.py from ")
    assert "set VITABENCH_SOURCE_DIR to an extracted release tree" in message
    assert (f"from the cache {no_tables['ENVFACTORY_CACHE']}/vitabench/2025-11 "
            "(VITABENCH_SOURCE_DIR unset)") in message
    assert "`envfactory data fetch vitabench`" in message


@needs_vitabench
def test_inspect_eval_exits_non_zero_with_one_message(no_tables: dict[str, str],
                                                      tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "VITABENCH_SOURCE_DIR"} | no_tables
    done = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval",
         "tasks/vitabench/vitabench.py@vitabench_delivery", "--model", "mockllm/model",
         "--limit", "1", "--log-dir", str(tmp_path / "logs"), "--display", "plain"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    output = (done.stdout + done.stderr).strip()
    assert done.returncode == 1, output
    assert "Traceback" not in output
    # one message (Inspect's console may wrap it at the terminal's width), nothing else
    (wrapped,) = [p for p in output.split("\n\n") if p.strip()]
    message = wrapped.replace("\n", "")
    assert message.startswith("vitabench_delivery cannot start: ")
    assert message.endswith("pre-fetch them with network access: "
                            "`envfactory data fetch vitabench`")
    assert not (tmp_path / "logs").exists()  # no sample ran, no log was started


def test_the_episode_players_cannot_judge() -> None:
    for name in ("envfactory/oracle", "envfactory/replay"):
        with pytest.raises(UnfitJudgeError, match=f"^{name} cannot judge: .* judge with an LLM"):
            judge_model(name)
    assert str(judge_model("mockllm/model")) == "mockllm/model"


def test_an_unknown_provider_names_the_role_and_the_model() -> None:
    with pytest.raises(UnknownModelError,
                       match=r"^the judge model 'nosuch/model': Model API nosuch .* not "
                             r"recognized\.$"):
        judge_model("nosuch/model")


@pytest.mark.parametrize(("judge", "says"), [
    ("envfactory/oracle", "envfactory/oracle cannot judge: "),
    ("nosuch/model", "the judge model 'nosuch/model': Model API nosuch"),
])
def test_grade_refuses_an_unusable_judge(tmp_path: Path, judge: str, says: str) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps({"task_id": "1", "set": "delivery", "language": "en",
                                "termination_reason": "user_stop", "messages": []}) + "\n")
    result = CliRunner().invoke(app, ["vitabench", "grade", str(path), "--judge", judge])
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"error: Invalid value for '--judge': {says}")


def test_grade_of_an_empty_file_fails(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    result = CliRunner().invoke(app, ["vitabench", "grade", str(empty),
                                      "--judge", "mockllm/model"])
    assert result.exit_code == 1
    assert result.output.strip() == f"error: {empty}: holds no conversation records to grade"
