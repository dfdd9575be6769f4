"""Inspect logs → canonical Trajectories → replay: one format closes the loop.

A run is converted with `envfactory trajectories`, and the converted file replayed with
`envfactory/replay` must score exactly as the run did (every benchmark on the loop)."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from typer.testing import CliRunner

from envfactory.cli import app
from harness.trajectory import read_jsonl
from synthesis.task_specs import build_all

DATA = Path(__file__).parents[1] / "data"


def scores(log: EvalLog) -> dict[str, object]:
    return {str(s.id): next(iter(s.scores.values())).value for s in log.samples or []}


def export(log: EvalLog, out: Path) -> Path:
    result = CliRunner().invoke(app, ["trajectories", log.location, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_envfactory_run_round_trips_through_a_trajectory(tmp_path: Path) -> None:
    from tasks.envfactory.envfactory import envfactory

    data_dir = tmp_path / "data"
    build_all(DATA / "envfactory_specs", DATA / "envfactory_splits.json", data_dir)
    (run,) = inspect_eval(envfactory(data_dir=str(data_dir)), model="envfactory/oracle",
                          log_dir=str(tmp_path / "run"), display="none")
    path = export(run, tmp_path / "runs.jsonl")
    (trajectory,) = read_jsonl(path)
    task = read_jsonl(data_dir / "heldout.jsonl")[0]
    assert trajectory.environments == ["calendar"] and trajectory.termination == "turns_done"
    assert [t.user for t in trajectory.turns] == [t.user for t in task.turns]
    assert [[c.qualified_name for c in t.calls] for t in trajectory.turns] == [
        [c.qualified_name for c in t.gold_calls] for t in task.turns]
    assert all(c.ok for c in trajectory.observed_calls())
    assert trajectory.final_state == task.final_state
    (replay,) = inspect_eval(envfactory(data_dir=str(data_dir)), model="envfactory/replay",
                             model_args={"path": str(path)}, log_dir=str(tmp_path / "replay"),
                             display="none")
    assert scores(replay) == scores(run)


@pytest.mark.parametrize("model", ["envfactory/oracle", "none"])
def test_bfcl_run_round_trips_through_a_trajectory(model: str, tmp_path: Path) -> None:
    """Oracle (all correct) and a do-nothing replay (all wrong) keep their verdicts."""
    from tasks.bfcl_multiturn.bfcl_multiturn import bfcl_multiturn

    ids = ["multi_turn_base_0", "multi_turn_base_3", "multi_turn_miss_func_5"]
    if model == "none":  # a recorded agent that only ever answers in text
        empty = tmp_path / "empty.jsonl"
        empty.write_text("".join(f'{{"id": "{i}", "turns": []}}\n' for i in ids))
        model_args = {"path": str(empty)}
        model = "envfactory/replay"
    else:
        model_args = {}
    (run,) = inspect_eval(bfcl_multiturn(category="base,miss_func"), model=model,
                          model_args=model_args, sample_id=ids,
                          log_dir=str(tmp_path / "run"), display="none")
    path = export(run, tmp_path / "runs.jsonl")
    records = read_jsonl(path)
    assert {r.id for r in records} == set(ids)
    assert all(r.environments and r.environments[0].startswith("bfcl/") for r in records)
    (replay,) = inspect_eval(bfcl_multiturn(category="base,miss_func"),
                             model="envfactory/replay", model_args={"path": str(path)},
                             sample_id=ids, log_dir=str(tmp_path / "replay"), display="none")
    assert scores(replay) == scores(run)
    assert set(scores(run).values()) == ({"C"} if not model_args else {"I"})
