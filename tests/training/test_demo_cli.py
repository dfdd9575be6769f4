"""`envfactory demo` prints the comparison table and says where tuned does not beat base
(the training and scoring replaced by their results: `run_demo` is tested on its own)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import training.demo
from envfactory.cli import app
from training.autoscore.scoring import ScoreResult
from training.demo import Comparison


def test_demo_prints_the_table_and_the_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    result = ScoreResult(checkpoint="m", status="scored", suite="demo", serve="hf",
                         log_dir="/logs/x")
    comparisons = [
        Comparison(measure="made a tool call", n=24, base=(0.0, 0.0, 0.0),
                   tuned=(0.5, 0.3, 0.7), difference=(0.5, 0.3, 0.7)),
        Comparison(measure="reward", n=24, base=(0.0, 0.0, 0.0), tuned=(0.01, 0.0, 0.03),
                   difference=(0.01, -0.01, 0.03))]
    monkeypatch.setattr(training.demo, "run_demo",
                        lambda *a, **k: (result, result, comparisons))
    out = CliRunner().invoke(app, ["demo"], terminal_width=200)
    assert out.exit_code == 0, out.output
    assert "24 held-out first turns" in out.output
    row = next(line for line in out.output.splitlines() if "made a tool" in line)
    for cell in ("0.00 [0.00,", "0.50 [0.30,", "+0.50", "yes"):
        assert cell in row, row
    assert "tuned beats base (24 paired first turns, 95%): made a tool call" in out.output
    assert "tuned does not beat base (no significant difference): reward" in out.output
