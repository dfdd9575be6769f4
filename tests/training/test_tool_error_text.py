"""The same mistake reads the same in evaluation and in a GRPO rollout (no train/eval skew).

A scripted agent makes three mistakes in a real Inspect eval of the held-out EnvFactory
task: it calls a tool it was not offered, calls a real tool with an argument the tool
does not take, and makes a call the tool refuses by its own rules. The tool messages that
agent is sent next are then compared, byte for byte, with what `training.verl.session`
returns for the same calls on the same start state (the session verl's tools call, which
needs no verl itself). The error kinds travel along: the Inspect tool message's metadata,
the canonical `Trajectory` converted from the log, and the verl session's call records.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessageTool

from harness.logs import trajectory_of
from harness.trajectory import ERROR_KIND_KEY
from synthesis.task_specs import build_all
from tasks.envfactory.envfactory import envfactory
from testkit.scripted import Request, ScriptedModel, call
from training.verl.session import CALLS_KEY, RolloutSessions, row_tools_kwargs

DATA = Path(__file__).parents[1] / "data"

#: (qualified name, arguments, kind): one of each mistake
MISTAKES: list[tuple[str, dict[str, Any], str]] = [
    ("calendar-no_such_tool", {}, "unknown_tool"),
    ("calendar-list_calendars", {"nope": 1}, "invalid_arguments"),
    ("calendar-get_event", {"event_id": "ev-9999"}, "refused"),
]


def mistaken(request: Request) -> Any:
    """All three mistakes in the first answer, then text for the rest of the episode."""
    if any(m.role == "tool" for m in request.messages):
        return "Done."
    return [call(name, arguments, id=f"m{i}") for i, (name, arguments, _) in
            enumerate(MISTAKES)]


@pytest.fixture(scope="module")
def smoke_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("envfactory_data")
    build_all(DATA / "envfactory_specs", DATA / "envfactory_splits.json", out)
    return out


def test_eval_and_verl_rollout_show_the_same_error_text(smoke_dir: Path,
                                                        tmp_path: Path) -> None:
    agent = ScriptedModel(mistaken)
    (log,) = inspect_eval(envfactory(data_dir=str(smoke_dir)), model=agent.model, limit=1,
                          log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    (sample,) = log.samples or []
    # what the model was sent: the tool messages of its second request
    sent = [m for m in agent.requests[1].messages if isinstance(m, ChatMessageTool)]
    assert [m.tool_call_id for m in sent] == ["m0", "m1", "m2"]
    assert [(m.metadata or {}).get(ERROR_KIND_KEY) for m in sent] == [
        kind for _, _, kind in MISTAKES]
    assert all(m.error is None for m in sent)  # `error` would change what providers send
    traj = trajectory_of(sample)
    recorded = [m for m in traj.messages if m.role == "tool"]
    assert [m.error_kind for m in recorded] == [kind for _, _, kind in MISTAKES]
    assert [c.error_kind for c in traj.turns[0].calls] == [kind for _, _, kind in MISTAKES]

    sessions = RolloutSessions()
    tools_kwargs = row_tools_kwargs(traj.environments, traj.initial_state)
    extra_fields: dict[str, Any] = {}
    rollout = [sessions.call("r1", name, arguments, tools_kwargs, extra_fields)
               for name, arguments, _ in MISTAKES]

    assert rollout == [m.text for m in sent]  # byte for byte, each mistake
    assert rollout[0].startswith("Error: Unknown tool 'calendar-no_such_tool'. Available "
                                 "tools: calendar-")
    assert rollout[1].startswith("Error: Invalid arguments for tool 'list_calendars': "
                                 "unexpected argument 'nope'")
    assert [c.get("error_kind") for c in extra_fields[CALLS_KEY]] == [
        kind for _, _, kind in MISTAKES]
