"""What `inspect eval tasks/mcp_atlas` refuses when the task is built, before any sample
or server runs: no judge, missing files. Inspect prints a `PrerequisiteError` as its
message alone and exits 1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.inspect_compat import PrerequisiteError
from tasks._mcp_atlas.scoring import JudgeRoleMissing
from tasks.mcp_atlas import mcp_atlas as task_module
from tasks.mcp_atlas.mcp_atlas import AtlasUnavailable, mcp_atlas

ROOT = Path(__file__).resolve().parents[3]


def never(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the tasks were loaded before the judge was checked")


def test_no_judge_is_refused_before_anything_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(task_module, "load_tasks", never)
    with pytest.raises(JudgeRoleMissing, match=r"--model-role judge=<model>") as raised:
        mcp_atlas()
    assert isinstance(raised.value, PrerequisiteError)


def test_a_missing_release_is_one_prerequisite_line(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_ATLAS_TASKS", str(tmp_path / "no-such-tasks.csv"))
    with pytest.raises(AtlasUnavailable, match="MCP-Atlas cannot start: .*no-such-tasks.csv"
                       ".*`envfactory mcp-atlas doctor`") as raised:
        mcp_atlas(judge="mockllm/model")
    assert isinstance(raised.value, PrerequisiteError)


def test_inspect_eval_without_a_judge_exits_1_in_one_message(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "tasks/mcp_atlas", "--model",
         "mockllm/model", "--log-dir", str(tmp_path / "logs"), "--display", "plain"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    output = " ".join((done.stdout + done.stderr).split())  # Inspect wraps the line
    assert done.returncode == 1, output
    assert "MCP-Atlas is scored by a 'judge' model, and none is set" in output
    assert "--model-role judge=<model>" in output and "Traceback" not in output
    assert not (tmp_path / "logs").exists() or not any((tmp_path / "logs").iterdir())
