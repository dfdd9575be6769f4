"""The conventions every `envfactory` command shares: one `-M` parser (Inspect's
semantics), exit 2 for usage errors and 1 with one `error:` line for failures, old flag
spellings accepted with a deprecation note, every group in `--help`, and no command code in
the library folders."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer
from inspect_ai._util.config import parse_cli_args  # what `inspect eval -M` calls
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.cli.options import parse_model_args

ROOT = Path(__file__).resolve().parents[1]
GROUPS = ("env", "models", "tasks", "tau2", "vitabench", "mcp-atlas", "synth", "envgen",
          "train", "score", "leaderboard", "hub", "demo", "doctor", "trajectories")


@pytest.mark.parametrize("args", [
    ["max_retries=2", "temperature=0.5", "org=a=b", "do_sample=false", "name=x"],
    ["device-map=auto", "stop=[a, b]", "ids=1,2,3", "empty=", "quoted='a,b'"],
])
def test_model_args_parse_as_inspect_eval_does(args: list[str]) -> None:
    assert parse_model_args(args) == parse_cli_args(args)


def test_a_model_arg_without_a_value_is_a_usage_error() -> None:
    with pytest.raises(typer.BadParameter, match="expected KEY=VALUE"):
        parse_model_args(["max_retries"])


def test_usage_errors_exit_2_and_failures_exit_1_in_one_line(tmp_path: Path) -> None:
    usage = CliRunner().invoke(app, ["env", "serve", "calendar", "--port", "0"])
    assert usage.exit_code == 2 and "--port" in usage.stderr
    missing = tmp_path / "missing.eval"
    failed = CliRunner().invoke(app, ["trajectories", str(missing), "--out",
                                      str(tmp_path / "t.jsonl")])
    assert failed.exit_code == 1 and failed.exception is not None
    lines = failed.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {missing}: ")
    assert not (tmp_path / "t.jsonl").exists()  # --out FILE is written whole or not at all
    unknown = CliRunner().invoke(app, ["env", "show", "nope"])
    assert unknown.exit_code == 1 and unknown.stderr.startswith("error: unknown environment")


def test_old_spellings_are_hidden_aliases_with_a_note(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["leaderboard", "build", str(tmp_path / "none"),
                                      "--out", str(tmp_path / "o"), "--workers", "2"])
    assert "note: --out is deprecated; use --out-dir" in result.stderr
    assert "note: --workers is deprecated; use --max-concurrency" in result.stderr
    assert result.exit_code == 1 and "no such log file or folder" in result.stderr
    shown = CliRunner().invoke(app, ["leaderboard", "build", "--help"],
                               env={"COLUMNS": "200"}).stdout
    assert "--out-dir" in shown and "--max-concurrency" in shown and "--workers" not in shown


def test_one_grade_shape() -> None:
    def options(group: str) -> set[str]:
        shown = CliRunner().invoke(app, [group, "grade", "--help"], env={"COLUMNS": "200"})
        return set(re.findall(r"--[a-z][a-z-]+", shown.stdout))

    shared = {"--results", "--max-concurrency", "--limit", "--judge", "--judge-base-url",
              "--judge-model-arg", "--judge-temperature"}
    for group in ("tau2", "vitabench", "mcp-atlas"):
        assert shared <= options(group), group


def test_help_lists_every_group() -> None:
    shown = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).stdout
    assert all(re.search(rf"│ {re.escape(group)}\s", shown) for group in GROUPS), shown


def test_no_command_code_in_the_library_folders() -> None:
    """Commands live in envfactory/cli/; the library folders give them plain functions."""
    importing = [str(path.relative_to(ROOT)) for folder in
                 ("envs", "harness", "tasks", "synthesis", "training", "leaderboard")
                 for path in sorted((ROOT / folder).rglob("*.py"))
                 if re.search(r"^\s*(import typer|from typer\b)", path.read_text(encoding="utf-8"),
                              re.MULTILINE)]
    assert importing == []
