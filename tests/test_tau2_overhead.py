"""`benchmarks/tau2_overhead.py`'s arithmetic (hand-computed figures) and the scripted τ²
agent and user behind its server (`benchmarks/tau2_scripted.py`): expected calls and
words are read from the release's tasks.json, not from the script."""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from testkit.recording_server import RecordingServer
from tests.shared_data import needs_tau2, use_tau2_data

with mock.patch.dict(os.environ):  # the script's import defaults TAU2_DATA_DIR: not here
    from benchmarks.tau2_overhead import figures_of, marginal_of

__all__ = ["use_tau2_data"]


def test_marginal_per_step_is_the_long_run_less_the_short_one() -> None:
    # (12.5 - 4.5) s over (90 - 10) extra steps = 100 ms; 1000 / 100 = 10 steps/s
    assert marginal_of(12.5, 90, 4.5, 10) == {"marginal_cpu_ms_per_step": 100.0,
                                              "steps_per_s_per_core": 10.0}
    assert marginal_of(5.0, 10, 4.5, 10) == {"marginal_cpu_ms_per_step": None,
                                             "steps_per_s_per_core": None}


def _run(requests: int, cpu_s: float, wall_s: float, seen: list[float] | None = None
         ) -> dict[str, Any]:
    seen = seen or [cpu_s]
    return {"requests": requests, "cpu_s": cpu_s, "wall_s": wall_s, "rc": 0,
            "conversations": 3, "reward": 1.0, "cpu_seen_s": seen,
            "cpu_spread_s": max(seen) - min(seen)}


def test_figures_per_step_and_ratio_to_the_official() -> None:
    runs = {"official": _run(101, 12.0, 30.0), "defaults": _run(101, 9.0, 20.0)}
    startup = {"official": _run(1, 7.0, 8.0, [7.0, 7.5]), "defaults": _run(1, 6.0, 7.0)}
    f = figures_of(runs, startup)
    # official: (12 - 7) s / 100 steps = 50 ms; spread 0.5 s / 100 = 5 ms (not < 10%)
    assert f["official"]["marginal_cpu_ms_per_step"] == 50.0
    assert f["official"]["steps_per_s_per_core"] == 20.0
    assert f["official"]["marginal_uncertainty_ms"] == 5.0
    assert f["official"]["marginal_stable"] is False
    # ours: (9 - 6) s / 100 = 30 ms -> 0.6 of the official; one start-up run: no spread
    assert f["defaults"]["marginal_cpu_ms_per_step"] == 30.0
    assert f["defaults"]["marginal_cpu_ratio_vs_official"] == 0.6
    assert f["defaults"]["marginal_uncertainty_ms"] is None
    assert f["defaults"]["marginal_stable"] is None
    assert f["defaults"]["cpu_ms_per_step"] == round(9000 / 101, 2)
    assert f["defaults"]["wall_ratio_vs_official"] == round((20 / 101) / (30 / 101), 2)
    assert "marginal_cpu_ratio_vs_official" not in f["official"]


def test_no_ratio_without_the_official() -> None:
    f = figures_of({"defaults": _run(11, 9.0, 20.0)}, {"defaults": _run(1, 6.0, 7.0)})
    assert f["defaults"]["marginal_cpu_ms_per_step"] == 300.0
    assert "marginal_cpu_ratio_vs_official" not in f["defaults"]


# -- the scripted server ------------------------------------------------------------------


def _raw_task(data: Path, domain: str, task_id: str) -> dict[str, Any]:
    tasks = json.loads((data / "domains" / domain / "tasks.json").read_text())
    return next(t for t in tasks if str(t["id"]) == task_id)


def _post(server: RecordingServer, messages: list[dict[str, Any]]) -> dict[str, Any]:
    body = json.dumps({"model": "bench", "messages": messages}).encode()
    request = urllib.request.Request(f"{server.url}/chat/completions", body,
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as r:
        message: dict[str, Any] = json.load(r)["choices"][0]["message"]
    return message


def _converse(server: RecordingServer, scenario_prompt: str
              ) -> tuple[str, list[dict[str, Any]], str, str]:
    """User's first words, the agent's turn (its messages), and the user's answer."""
    user_view: list[dict[str, Any]] = [
        {"role": "system", "content": scenario_prompt},
        {"role": "user", "content": "Hi! How can I help you today?"}]
    opening = _post(server, user_view)["content"]
    agent_view: list[dict[str, Any]] = [{"role": "system", "content": "<policy>x</policy>"},
                                        {"role": "user", "content": opening}]
    turn = []
    for _ in range(20):
        message = _post(server, agent_view)
        turn.append(message)
        agent_view.append(message)
        if not message.get("tool_calls"):
            break
        for call in message["tool_calls"]:
            agent_view.append({"role": "tool", "tool_call_id": call["id"], "content": "{}"})
    user_view += [{"role": "assistant", "content": opening},
                  {"role": "user", "content": turn[-1]["content"]}]
    return opening, turn, turn[-1]["content"], _post(server, user_view)["content"]


def _scenario_prompt(domain: str, task_id: str) -> str:
    from envs.tau2 import data
    from envs.tau2.tasks import Task

    raw = next(t for t in data.load_tasks(domain) if str(t["id"]) == task_id)
    scenario = Task.model_validate(raw).user_scenario.render()
    return f"guidelines\n\n<scenario>\n{scenario}\n</scenario>"  # upstream's SYSTEM_PROMPT


@needs_tau2
@pytest.mark.parametrize("task_id", ["1", "7"])
def test_scripted_agent_calls_the_gold_actions_then_the_user_stops(
        use_tau2_data: Path, task_id: str) -> None:
    from benchmarks.tau2_scripted import respond

    raw = _raw_task(use_tau2_data, "airline", task_id)
    gold = raw["evaluation_criteria"]["actions"]
    info = raw["evaluation_criteria"]["communicate_info"]
    with RecordingServer(respond) as server:
        opening, turn, last, answer = _converse(server, _scenario_prompt("airline", task_id))
    assert raw["user_scenario"]["instructions"]["task_instructions"].splitlines()[0] in opening
    calls = [c for m in turn for c in m.get("tool_calls") or []]
    assert all(len(m.get("tool_calls") or []) <= 1 for m in turn)  # one call per message
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] \
        == [(a["name"], a["arguments"]) for a in gold]
    assert all(i in last for i in info)  # task 7 says "1628"; task 1 has nothing to say
    assert answer == "###STOP###"  # τ²'s user stop token
    assert len(server.requests) == 1 + len(gold) + 1 + 1


@needs_tau2
def test_a_task_with_user_actions_is_not_scripted(use_tau2_data: Path) -> None:
    """Telecom's gold has the user's phone actions: its scenarios are not served."""
    from benchmarks.tau2_scripted import respond

    tasks = json.loads((use_tau2_data / "domains/telecom/tasks.json").read_text())
    task = next(t for t in tasks if any(a.get("requestor") == "user" for a in
                                        t["evaluation_criteria"].get("actions") or []))
    with pytest.raises(LookupError, match="no τ² task of airline, retail"):
        respond("chat", {"messages": [{"role": "system",
                                       "content": _scenario_prompt("telecom", task["id"])}]})


@needs_tau2
def test_an_unknown_scenario_is_named(use_tau2_data: Path) -> None:
    from benchmarks.tau2_scripted import respond

    with pytest.raises(LookupError, match="no τ² task of airline, retail has this scenario"):
        respond("chat", {"messages": [{"role": "system", "content": "<policy>p</policy>"},
                                      {"role": "user", "content": "hello"}]})


def test_the_role_is_read_from_the_system_prompt() -> None:
    from benchmarks.tau2_scripted import role_of

    assert role_of([{"role": "system", "content": "g\n\n<scenario>\nx\n</scenario>"}]) == "user"
    assert role_of([{"role": "system", "content": "<policy>p</policy>"}]) == "assistant"
