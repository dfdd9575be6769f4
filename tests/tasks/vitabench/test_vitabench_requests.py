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

OTA and cross-domain runs (`"tasks": "synthetic"` in the manifest) play synthetic task
files (`tests/data/vitabench/synthetic/`, built from the recorded hand-made environments:
no OTA or cross-domain task file is in the local snapshot) that the official code read
from its own data folder; upstream's order-id clock was frozen as ours for the recording
(the database's time plus its number of orders), so the booked order's id is the same.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from tasks.vitabench.vitabench import (
    vitabench_cross,
    vitabench_delivery,
    vitabench_instore,
    vitabench_ota,
)
from testkit.recording_server import RecordingServer, Reply, ReplyCall
from tests.shared_data import VITABENCH_DATA, VITABENCH_OFFICIAL, needs_vitabench

pytestmark = [needs_vitabench, pytest.mark.usefixtures("use_vitabench_data")]

RECORDED = VITABENCH_OFFICIAL / "requests"
MANIFEST = json.loads((RECORDED / "manifest.json").read_text())["runs"]
TASKS = {"delivery": vitabench_delivery, "instore": vitabench_instore,
         "ota": vitabench_ota, "cross": vitabench_cross}
SYNTHETIC = VITABENCH_OFFICIAL.parent / "synthetic" / "domains"


@pytest.fixture
def synthetic_data(use_vitabench_data: Path, tmp_path: Path,
                   monkeypatch: pytest.MonkeyPatch) -> Path:
    """`use_vitabench_data`'s folder with the synthetic OTA and cross-domain task files
    beside the shared snapshot's delivery and instore ones."""
    root = tmp_path / "vitabench-synthetic"
    (root / "domains").mkdir(parents=True)
    for entry in use_vitabench_data.iterdir():
        if entry.name != "domains":
            (root / entry.name).symlink_to(entry.resolve())
    for name in ("delivery", "instore"):
        if (VITABENCH_DATA / "domains" / name).exists():
            (root / "domains" / name).symlink_to(VITABENCH_DATA / "domains" / name)
    for name in ("ota", "cross_domain"):
        (root / "domains" / name).symlink_to(SYNTHETIC / name)
    monkeypatch.setenv("VITABENCH_DATA_DIR", str(root))
    return root


def kind(body: dict[str, Any]) -> str:
    last = (body.get("messages") or [{}])[-1]
    if isinstance(last.get("content"), str) and last["content"].startswith("\n# Input\n"):
        return "judge"
    return "agent" if body.get("tools") else "user"


def call(name: str, **arguments: Any) -> ReplyCall:
    return ReplyCall(name=name, arguments=json.dumps(arguments, ensure_ascii=False))


def booking_agent(behaviour: str, language: str, history: list[dict[str, Any]]) -> Reply:
    """The OTA and cross-domain scripts: a hotel search (with a delivery store search for
    cross), a booking, then payment and the order's detail (detail and an instore shop
    search for cross), then text. The step is the count of tool-calling agent messages;
    the order id is read from the last tool result that shows an order."""
    step = sum(m["role"] == "assistant" and bool(m.get("tool_calls")) for m in history)
    shown = [re.match(r"Order\(order_id:([^,]+),", m.get("content") or "")
             for m in history if m["role"] == "tool"]
    order = next((found.group(1) for found in reversed(shown) if found), "none")
    hotel = {"hotel_id": "H330106001", "room_id": "H330106001_R002", "user_id": "U200317"}
    search = call("hotel_search_recommand", city_name={"en": "Hangzhou", "zh": "杭州"}[language],
                  key_words=["lake view", "swimming pool"])
    if behaviour == "ota_book":
        plan = [[search], [call("create_hotel_order", **hotel)],
                [call("pay_hotel_order", order_id=order),
                 call("get_hotel_order_detail", order_id=order)]]
    else:
        plan = [[search, call("delivery_store_search_recommand", keywords=["hotpot"])],
                [call("create_hotel_order", **hotel)],
                [call("get_hotel_order_detail", order_id=order),
                 call("instore_shop_search_recommend", keywords=["massage"])]]
    if step < len(plan):
        return Reply(tool_calls=plan[step])
    return Reply(content="Your room is booked. Anything else?")


def responder(behaviour: str, language: str) -> Any:
    """The scripted models both harnesses talked to (the recording drivers')."""

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
        if behaviour in ("ota_book", "cross_book"):
            if kind(body) == "user":
                return Reply(content="I want to book a hotel in Hangzhou." if said == 0
                             else "No, that's all. ###STOP###")
            return booking_agent(behaviour, language, history)
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
def test_requests_equal_the_official_ones(run: dict[str, Any], tmp_path: Path,
                                          request: pytest.FixtureRequest) -> None:
    if run.get("tasks") == "synthetic":
        request.getfixturevalue("synthetic_data")
    expected = [json.loads(line) for line in
                (RECORDED / f"{run['name']}.jsonl").read_text().splitlines()]
    with RecordingServer(responder(run["behaviour"], run["language"])) as server:

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
