"""What each VitaBench model is sent equals what the official `vita run` sends.

The expectations are request bodies recorded from the official code (96f3b85) talking to
a recording server (`tests/data/vitabench/official/requests/`). Here our task talks to
the same kind of server with the same scripted behaviours, and every request — agent,
user simulator and judge, in order — must match: messages (roles, order, text, tool calls
and their arguments, tool results), the tool objects, `tool_choice` and temperature; and
the run must end the same way with the same reward. Call ids are renumbered in order of
appearance (each side's server makes its own).

Left out of the comparison, because upstream adds them and no model reads them: the
request keys copied from its `models.yaml` entry (`base_url`, `headers`, `name`, ...),
`tools`/`tool_choice` sent as null to the tool-less user and judge, `tool_calls: null` on
text messages, and the non-standard `name` keys on tool calls and tool results.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from harness.recording_server import RecordingServer, Reply, ReplyCall
from tasks.vitabench.vitabench import vitabench_delivery, vitabench_instore
from tests.shared_data import VITABENCH_OFFICIAL, needs_vitabench

pytestmark = [needs_vitabench, pytest.mark.usefixtures("use_vitabench_data")]

RECORDED = VITABENCH_OFFICIAL / "requests"
MANIFEST = json.loads((RECORDED / "manifest.json").read_text())["runs"]
TASKS = {"delivery": vitabench_delivery, "instore": vitabench_instore}


def kind(body: dict[str, Any]) -> str:
    last = (body.get("messages") or [{}])[-1]
    if isinstance(last.get("content"), str) and last["content"].startswith("\n# Input\n"):
        return "judge"
    return "agent" if body.get("tools") else "user"


def responder(behaviour: str) -> Any:
    """The scripted models both harnesses talked to (the recording driver's)."""

    def respond(api: str, body: dict[str, Any]) -> Reply:
        if kind(body) == "judge":
            text = body["messages"][-1]["content"]
            found = re.search(r"<current_rubrics>\s*(.*?)\s*</current_rubrics>", text, re.S)
            states = json.loads(found.group(1)) if found else []
            return Reply(content=json.dumps(
                [{**s, "justification": "ok", "meetExpectation": True} for s in states],
                ensure_ascii=False))
        history = [m for m in body["messages"] if m["role"] != "system"]
        said = sum(m["role"] == "assistant" for m in history)
        if kind(body) == "user":
            if said == 0:
                return Reply(content="I would like some noodles delivered.")
            if behaviour == "agent_stop":
                return Reply(content="No, that's all, thank you.")
            return Reply(content="No, that's all. ###STOP###")
        if behaviour == "empty_agent":
            return Reply(content="")
        if behaviour == "agent_stop":
            return Reply(content="Anything else?" if said == 0 else "Bye ###STOP###")
        if behaviour == "agent_stop_with_call":
            return Reply(content="Done ###STOP###",
                         tool_calls=[ReplyCall(name="get_user_all_orders", arguments="{}")])
        if said == 0:
            return Reply(tool_calls=[ReplyCall(name="get_user_all_orders", arguments="{}")])
        if said == 1:
            return Reply(tool_calls=[
                ReplyCall(name="longitude_latitude_to_distance",
                          arguments='{"longitude1": 102.7, "latitude1": 25.04, '
                                    '"longitude2": 102.71, "latitude2": 25.05}'),
                ReplyCall(name="weather", arguments='{"address": "Kunming", "date_start": '
                                                    '"2025-06-21", "date_end": "2025-06-22"}')])
        return Reply(content="I checked your orders. Anything else?")

    return respond


def normalised(body: dict[str, Any]) -> dict[str, Any]:
    ids: dict[str, str] = {}

    def renumber(value: str) -> str:
        return ids.setdefault(value, f"call{len(ids)}")

    messages = []
    for m in body.get("messages") or []:
        m = {k: v for k, v in m.items() if v is not None and k != "name"}
        if "tool_calls" in m:
            m["tool_calls"] = [{"id": renumber(c["id"]), "type": c.get("type"),
                                "function": {"name": c["function"]["name"],
                                             "arguments": c["function"]["arguments"]}}
                               for c in m["tool_calls"]]
        if "tool_call_id" in m:
            m["tool_call_id"] = renumber(m["tool_call_id"])
        messages.append(m)
    return {"messages": messages, "tools": body.get("tools") or None,
            "tool_choice": body.get("tool_choice") if body.get("tools") else None,
            "temperature": body.get("temperature")}


@pytest.mark.parametrize("run", MANIFEST, ids=[r["name"] for r in MANIFEST])
def test_requests_equal_the_official_ones(run: dict[str, Any], tmp_path: Path) -> None:
    expected = [json.loads(line) for line in
                (RECORDED / f"{run['name']}.jsonl").read_text().splitlines()]
    with RecordingServer(responder(run["behaviour"])) as server:

        def model() -> Any:  # a fresh client per test: each has its own server
            return get_model("openai/gpt-4.1", base_url=server.url, api_key="sk-scripted",
                             responses_api=False, memoize=False)

        (log,) = inspect_eval(TASKS[run["task_set"]](language=run["language"]),
                              model=model(), model_roles={"user": model(), "judge": model()},
                              sample_id=run["task_id"], log_dir=str(tmp_path),
                              display="none")
        sent = [r.body for r in server.requests]
    assert log.status == "success", log.error
    assert [kind(b) for b in sent] == [kind(b) for b in expected]
    for i, (ours, theirs) in enumerate(zip(sent, expected, strict=True)):
        assert normalised(ours) == normalised(theirs), f"request {i} ({kind(theirs)})"
    (sample,) = log.samples or []
    score = next(iter((sample.scores or {}).values()))
    assert score.value == run["reward"]
    assert score.metadata is not None
    assert score.metadata["termination_reason"] == run["termination_reason"]
