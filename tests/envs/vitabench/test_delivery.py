"""The delivery domain answers every call exactly as the official code does.

Ground truth: `tests/data/vitabench/official/delivery_calls.json`, recorded by running the
official release (commit 96f3b85) on real delivery tasks (4 Chinese, 4 English) of the
shared snapshot: each call sent through upstream's `Environment.get_response` on the
environment `vita run` builds, its tool message content and error flag kept. The calls
cover every delivery and toolkit tool (search ranking, order creation from each task's
required orders with their prices and times, payment, status, modification, cancellation,
refusals and errors). Upstream's order ids hash the wall clock; the recording pinned that
clock to the port's deterministic stand-in (task time as a UTC epoch + orders so far).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from envs.vitabench.delivery import DeliveryEnvironment
from envs.vitabench.release import Language
from tests.envs.vitabench.conftest import OFFICIAL, delivery_tasks
from tests.shared_data import needs_vitabench

RECORDED: list[dict[str, Any]] = json.loads((OFFICIAL / "delivery_calls.json").read_text())
LANG: dict[str, Language] = {"chinese": "zh", "english": "en"}

pytestmark = needs_vitabench


def replay(record: dict[str, Any]) -> list[tuple[int, str, str, str]]:
    language = LANG[record["language"]]
    task = delivery_tasks(language)[record["task_id"]]
    env = DeliveryEnvironment.from_environment(task["environment"], language)
    mismatches = []
    for i, call in enumerate(record["calls"]):
        result = env.call(call["name"], call["arguments"])
        if result.text() != call["content"] or result.ok == call["error"]:
            mismatches.append((i, call["name"], call["content"][:300], result.text()[:300]))
    return mismatches


@pytest.mark.parametrize("record", RECORDED, ids=lambda r: f"{r['task_id']}-{r['language']}")
def test_every_call_matches_the_official_tool_message(vita_data: Path,
                                                      record: dict[str, Any]) -> None:
    assert replay(record) == []


FUZZ: list[dict[str, Any]] = json.loads((OFFICIAL / "delivery_fuzz.json").read_text())


@pytest.mark.parametrize("record", FUZZ, ids=lambda r: f"{r['task_id']}-{r['language']}")
def test_odd_arguments_fail_or_refuse_as_upstream(vita_data: Path,
                                                  record: dict[str, Any]) -> None:
    """`delivery_fuzz.json`: 250 seeded random calls per task (6 tasks) with arguments of
    every JSON type, missing and extra keys — what models send — recorded from the
    official code (tool message sha256 and head)."""
    language = LANG[record["language"]]
    task = delivery_tasks(language)[record["task_id"]]
    env = DeliveryEnvironment.from_environment(task["environment"], language)
    mismatches = []
    for call in record["calls"]:
        result = env.call(call["name"], call["arguments"])
        digest = hashlib.sha256(result.text().encode()).hexdigest()
        if digest != call["content_sha256"] or result.ok == call["error"]:
            mismatches.append((call["name"], call["arguments"], call["content_head"],
                               result.text()[:160]))
    assert mismatches == []


def test_the_recording_covers_every_delivery_and_toolkit_tool(vita_data: Path) -> None:
    called = {call["name"] for record in RECORDED for call in record["calls"]}
    offered = {o["function"]["name"] for o in DeliveryEnvironment.official_tool_objects("zh")}
    assert offered <= called


def test_a_required_order_is_recreated_with_upstreams_price_and_times(vita_data: Path) -> None:
    """Hand-checked on task 10711001 (zh): store 金土锅·草芽过桥米线, one 25.0 product, the
    user's hospital address 1,115.38 m away (haversine, R = 6,371 km) -> round(25 + 1115 *
    0.00651) = 32 minutes. A number reads as a JSON string (upstream's `to_json_str`)."""
    task = delivery_tasks("zh")["10711001"]
    env = DeliveryEnvironment.from_environment(task["environment"], "zh")
    required = task["evaluation_criteria"]["expected_states"][0]["required_orders"][0]
    store = task["environment"]["stores"][required["store_id"]]["location"]
    place = required["location"]
    distance = env.call("longitude_latitude_to_distance", {
        "longitude1": place["longitude"], "latitude1": place["latitude"],
        "longitude2": store["longitude"], "latitude2": store["latitude"]})
    assert distance.text() == '"1115.0"'
    result = env.call("create_delivery_order", {
        "user_id": "U000001", "store_id": required["store_id"],
        "product_ids": ["S26110520013660896_P88296"], "product_cnts": [1],
        "address": place["address"], "dispatch_time": "2025-06-21 11:30:00"})
    assert result.ok
    assert ("dispatch_time:2025-06-21 11:30:00, shipping_time:32.0, "
            "delivery_time:2025-06-21 12:02:00, total_price:25.0") in result.text()


def test_store_search_ranks_substring_matches_first_in_database_order(vita_data: Path) -> None:
    """Hand-checked on task G0721003 (zh, nine stores): exactly three store names contain
    苏宁广场店, so they score partial_ratio 100 and lead, ties in database order; all nine
    stores are listed (fewer than the top 100)."""
    task = delivery_tasks("zh")["G0721003"]
    env = DeliveryEnvironment.from_environment(task["environment"], "zh")
    lines = env.call("delivery_store_search_recommand", {"keywords": ["苏宁广场店"]}).text()
    ids = [line.split("store_id=")[1].split(",")[0] for line in lines.splitlines()]
    assert ids[:3] == ["S32352534561955193_S72446", "S93830810283846794_S56337",
                       "S20176046083245914_S04897"]
    assert sorted(ids) == sorted(task["environment"]["stores"])
