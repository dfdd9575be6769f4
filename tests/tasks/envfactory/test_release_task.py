"""A held-out-style task on a release environment: `tasks/envfactory -T data_dir=DIR` over
`release/Airline@scenario_002` (the release's Airline server at eff3b22, its checkpoint's
second scenario loaded through the server's own `load_scenario`).

The task file is written here at run time from the shared copy of the release (never
committed). Its gold states come from the release's own code, not ours: the server file
is imported as a plain module and its `api` object (the `AirlineAPI` every MCP wrapper
calls) loads the scenario, runs the gold calls and saves the state, as the release's
`save_scenario` tool would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

from harness.gold import GoldMessage, Position
from harness.trajectory import Call, Provenance, Trajectory, Turn, write_jsonl
from tasks.envfactory.envfactory import envfactory
from testkit.oracle import edited_oracle
from tests.shared_data import ENVFACTORY_RELEASE as RELEASE
from tests.shared_data import release_api

SERVER = RELEASE / "envs" / "tools" / "Airline.py"
ENV = "release/Airline@scenario_002"

pytestmark = pytest.mark.skipif(not SERVER.is_file(),
                                reason=f"no EnvFactory release copy at {RELEASE}")


def plain(state: Any) -> dict[str, Any]:
    return dict(json.loads(json.dumps(state)))


def write_task(out: Path) -> Path:
    """`out/heldout.jsonl` with one two-turn task: read reservation RES_001 (scenario_002's
    one reservation, user_101's), then cancel it. Returns `out`."""
    api = release_api("Airline", "scenario_002")
    initial = plain(api.save_scenario())
    assert initial["reservations"]["RES_001"]["status"] == "Confirmed"
    api.get_reservation_details("RES_001")
    api.cancel_reservation("RES_001")
    final = plain(api.save_scenario())
    # what the release's cancel does (Airline.py, AirlineAPI.cancel_reservation)
    assert final["reservations"]["RES_001"]["status"] == "cancelled"
    assert final["users"]["user_101"]["reservations"] == []
    task = Trajectory(
        id="release-airline-cancel", environments=[ENV], initial_state={ENV: initial},
        turns=[Turn(user="Could you pull up my reservation RES_001?",
                    gold_calls=[Call(env=ENV, name="get_reservation_details",
                                     arguments={"reservation_id": "RES_001"})]),
               Turn(user="Thanks. Please cancel it.",
                    gold_calls=[Call(env=ENV, name="cancel_reservation",
                                     arguments={"reservation_id": "RES_001"})])],
        final_state={ENV: final},
        provenance=Provenance(source="hand-written", split="heldout", domain="travel"))
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / "heldout.jsonl", [task])
    return out


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ENVFACTORY_RELEASE_DIR", str(RELEASE))
    return write_task(tmp_path / "tasks")


def run(model: Any, data_dir: Path, log_dir: Path) -> EvalLog:
    (log,) = inspect_eval(envfactory(data_dir=str(data_dir)), model=model,
                          log_dir=str(log_dir), display="none")
    assert log.status == "success", log.error
    return log


def reward(log: EvalLog) -> dict[str, float]:
    (sample,) = log.samples or []
    assert sample.scores is not None
    return dict(next(iter(sample.scores.values())).value)  # type: ignore[arg-type]


def test_oracle_scores_one_and_sees_the_release_tool_names(data_dir: Path,
                                                           tmp_path: Path) -> None:
    log = run("envfactory/oracle", data_dir, tmp_path)
    assert reward(log) == {"reward": 1.0, "r_traj": 1.0, "r_state": 1.0, "p_length": 0.0,
                           "p_format": 0.0}
    (sample,) = log.samples or []
    called = [c.function for m in sample.messages if m.role == "assistant"
              for c in m.tool_calls or []]  # type: ignore[union-attr]
    # the model-facing names are the release's own "Server-tool"
    assert called == ["Airline-get_reservation_details", "Airline-cancel_reservation"]
    tool_texts = [m.text for m in sample.messages if m.role == "tool"]
    # the release's answers: RES_001's details, then the refund of 80% of 950.0
    assert json.loads(tool_texts[0])["user_id"] == "user_101"
    assert json.loads(tool_texts[1]) == {"reservation_id": "RES_001", "status": "cancelled",
                                         "refund_amount": 760.0}


def cancel_another(gold: GoldMessage, position: Position) -> GoldMessage:
    """Turn two cancels a reservation that does not exist (the release answers `{}`)."""
    if position.turn == 1 and gold.calls:
        gold.calls[0].arguments["reservation_id"] = "RES_999"
    return gold


def test_an_edited_oracle_scores_lower(data_dir: Path, tmp_path: Path) -> None:
    got = reward(run(edited_oracle(cancel_another), data_dir, tmp_path))
    # the gold cancel has no match (R_traj 0) and RES_001 stays confirmed (R_state 0)
    assert got["r_traj"] == 0.0 and got["r_state"] == 0.0 and got["reward"] == 0.0


def test_a_task_on_a_validation_error_scenario_is_skipped_and_counted(
        data_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """scenario_004 expects a validation error, so it is no starting state: a task naming
    it is skipped with one line (file, line, reason), the other task runs."""
    good = json.loads((data_dir / "heldout.jsonl").read_text(encoding="utf-8"))
    bad_env = ENV.replace("scenario_002", "scenario_004")
    bad = json.loads(json.dumps(good).replace(ENV, bad_env))
    bad["id"] = "release-airline-bad-start"
    (data_dir / "heldout.jsonl").write_text(
        json.dumps(bad) + "\n" + json.dumps(good) + "\n", encoding="utf-8")
    with caplog.at_level("WARNING", logger="tasks._envfactory.dataset"):
        log = run("envfactory/oracle", data_dir, tmp_path)
    assert [s.id for s in log.samples or []] == ["release-airline-cancel"]
    assert reward(log)["reward"] == 1.0
    assert log.eval.dataset.name == "envfactory_heldout (1 tasks skipped)"
    (line,) = [r.getMessage() for r in caplog.records]
    assert line.startswith(f"{data_dir / 'heldout.jsonl'}:1: task release-airline-bad-start "
                           "skipped:") and "expects a validation error" in line

    (data_dir / "heldout.jsonl").write_text(json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no usable task"):
        envfactory(data_dir=str(data_dir))
