"""The `envfactory` console script: version, environments, doctor."""

from __future__ import annotations

import json

from typer.testing import CliRunner

import envfactory
from envfactory.cli import app

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


def test_env_show_unknown_name_is_a_clear_error() -> None:
    result = runner.invoke(app, ["env", "show", "nope"])
    assert result.exit_code == 1 and "unknown environment 'nope'" in result.output


def test_doctor_reports_pinned_bfcl() -> None:
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    assert "bfcl-eval 2025.8.6.2" in result.output and "BFCL_v3" in result.output
