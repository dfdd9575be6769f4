"""The `envfactory` console script: version, environments, doctor (with τ² data present,
missing, or broken: it reports, never crashes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

import envfactory
from envfactory.cli import app
from envfactory.cli import env as env_cli
from tests.shared_data import TAU2_DATA, needs_tau2

runner = CliRunner()


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and envfactory.__version__ in result.output


def test_env_list_shows_bfcl_backends() -> None:
    result = runner.invoke(app, ["env", "list"])
    assert result.exit_code == 0
    assert "bfcl/GorillaFileSystem" in result.output and "bfcl/TradingBot" in result.output


def test_env_show_prints_schemas() -> None:
    result = runner.invoke(app, ["env", "show", "bfcl/TwitterAPI", "--json"])
    assert result.exit_code == 0
    specs = {s["name"]: s for s in json.loads(result.output)}
    assert specs["post_tweet"]["write"] is True
    assert specs["post_tweet"]["parameters"]["properties"]["content"]["type"] == "string"


def test_env_list_and_show_survive_unreadable_tau2_data(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh clone offline, with no τ² copy: τ² rows say why, the rest are listed."""
    from envs.tau2 import base

    def unavailable(toolkit: str) -> None:
        raise FileNotFoundError(f"cannot download τ² tools for {toolkit} [Errno -2]")

    monkeypatch.setattr(base, "official_tools", unavailable)
    monkeypatch.setattr(env_cli, "console", Console(width=400))  # one table row, one line
    result = runner.invoke(app, ["env", "list"])
    assert result.exit_code == 0, result.exception
    assert "bfcl/TradingBot" in result.output
    assert "unavailable: cannot download τ² tools for airline [Errno -2]" in result.output
    result = runner.invoke(app, ["env", "show", "tau2/airline"])
    assert result.exit_code == 1 and "tau2/airline: cannot download τ² tools" in result.output


def test_env_show_unknown_name_is_a_clear_error() -> None:
    result = runner.invoke(app, ["env", "show", "nope"])
    assert result.exit_code == 1 and "unknown environment 'nope'" in result.output


def test_doctor_reports_pinned_bfcl() -> None:
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    assert "bfcl-eval 2025.8.6.2" in result.output and "BFCL_v3" in result.output


def test_doctor_reports_a_broken_tau2_data_dir_instead_of_crashing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setenv("COLUMNS", "400")  # the releases table's cells unwrapped
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 0, result.exception
    assert "has no domains/ folder" in result.output


def test_doctor_counts_missing_tau2_files(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "domains" / "airline").mkdir(parents=True)
    (tmp_path / "domains" / "airline" / "policy.md").write_text("p")
    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "400")
    result = runner.invoke(app, ["doctor"], terminal_width=400)
    # 4 airline + 4 retail + 9 telecom files and the 2 user guidelines; one is there
    assert result.exit_code == 0, result.exception
    assert "lacks 18 of 19 files" in " ".join(result.output.split())  # rich may wrap


def test_doctor_on_an_empty_cache_says_the_files_download(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "400")
    result = runner.invoke(app, ["doctor"], terminal_width=400)
    assert result.exit_code == 0, result.exception
    assert "missing 19 of 19 files: downloaded on first use" in result.output
    # every registered release and cache has its row
    assert "│ envfactory " in result.output and "│ generated-envs " in result.output


@needs_tau2
@pytest.mark.usefixtures("use_tau2_data")
def test_doctor_finds_every_tau2_file_in_the_test_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    result = runner.invoke(app, ["doctor"], terminal_width=400)
    assert result.exit_code == 0, result.exception
    row = next(line for line in result.output.splitlines() if line.startswith("│ tau2 "))
    assert str(TAU2_DATA) in row and "present" in row
