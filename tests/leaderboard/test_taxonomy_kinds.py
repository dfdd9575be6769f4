"""The failure taxonomy reads error kinds: τ² and VitaBench unknown tools are classified.

Both benchmarks answer a call to a tool the agent was not offered in their upstream words
(`Tool 'x' not found.`), which the taxonomy's text rules never matched; the result's
`ErrorKind` now says `unknown_tool` beside that text. Each test runs a real Inspect eval
with a scripted agent that calls an unknown tool and then gives up, reads the log as the
leaderboard does and finds the trial under "unknown tool". The same trajectory with the
kinds stripped (a log from before kinds) is not: that was the gap.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log

from envs.tau2 import data
from envs.tau2.world import Tau2World
from harness.logs import trajectory_of
from leaderboard import taxonomy as tx
from leaderboard.read import find_logs, read_logs
from leaderboard.records import LogRecord
from tasks.tau2.tau2 import tau2_airline
from tasks.vitabench.vitabench import vitabench_delivery
from testkit.scripted import Request, ScriptedModel, by_own_turns, call, constant
from tests.shared_data import VITABENCH_DATA, needs_tau2, needs_vitabench


def unknown_then(text: str) -> ScriptedModel:
    """An agent that first calls a tool nobody offered, then answers `text`."""

    def respond(request: Request) -> Any:
        if any(m.role == "tool" for m in request.messages):
            return text
        return [call("no_such_tool", {}, id="u1")]

    return ScriptedModel(respond)


def classified(log_dir: Path) -> list[tuple[str, str]]:
    records = [r for r in read_logs(find_logs([log_dir])) if isinstance(r, LogRecord)]
    counts, _ = tx.taxonomy(records)
    return [(c.benchmark, c.category) for c in counts]


def without_kinds_category(log_dir: Path) -> str:
    """The category the same trial got from the text rules alone (kinds stripped)."""
    (path,) = find_logs([log_dir])
    (sample,) = read_eval_log(str(path)).samples or []
    traj = trajectory_of(sample)
    for m in traj.messages:
        m.error_kind = None
    for c in traj.observed_calls():
        c.error_kind = None
    return tx.classify(traj)[0]


@needs_tau2
@pytest.mark.usefixtures("use_tau2_data")
def test_tau2_unknown_tool_is_classified(tmp_path: Path) -> None:
    # a task whose gold writes, so that an agent doing nothing fails it
    writes = {s.name for s in Tau2World("airline").agent.tools() if s.write}
    task_id = next(t["id"] for t in data.load_tasks("airline") if any(
        a["name"] in writes for a in (t.get("evaluation_criteria") or {}).get("actions") or []))
    user = by_own_turns(["I want to cancel my reservation.", "###STOP###"]).model
    (log,) = inspect_eval(tau2_airline(), model=unknown_then("I cannot help, sorry.").model,
                          model_roles={"user": user}, sample_id=task_id,
                          log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    (sample,) = log.samples or []
    tool = next(m for m in trajectory_of(sample).messages if m.role == "tool")
    assert (tool.content, tool.error_kind) == ("Error: Tool 'no_such_tool' not found.",
                                               "unknown_tool")
    assert [c for b, c in classified(tmp_path)] == [tx.UNKNOWN_TOOL]
    assert without_kinds_category(tmp_path) != tx.UNKNOWN_TOOL


@needs_vitabench
@pytest.mark.usefixtures("use_vitabench_data")
def test_vitabench_unknown_tool_is_classified(tmp_path: Path) -> None:
    tasks = json.loads((VITABENCH_DATA / "domains" / "delivery" / "tasks_en.json").read_text())
    user = by_own_turns(["I need some food delivered.", "That's all. ###STOP###"]).model
    judge = constant("[]")  # no rubric judged met: the trial fails
    (log,) = inspect_eval(vitabench_delivery(language="en"),
                          model=unknown_then("All done. ###STOP###").model,
                          model_roles={"user": user, "judge": judge},
                          sample_id=str(tasks[0]["id"]), log_dir=str(tmp_path),
                          display="none")
    assert log.status == "success", log.error
    (sample,) = log.samples or []
    tool = next(m for m in trajectory_of(sample).messages if m.role == "tool")
    assert tool.error_kind == "unknown_tool"
    assert "Tool 'no_such_tool' not found." in (tool.content or "")
    assert [c for b, c in classified(tmp_path)] == [tx.UNKNOWN_TOOL]
    assert without_kinds_category(tmp_path) != tx.UNKNOWN_TOOL
