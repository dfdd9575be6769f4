"""Every local delivery task's required orders, re-created with the tools from the task's
initial world (`envs.vitabench.feasibility`, delivery's recreator).

Ground truth 1: `tests/data/vitabench/official/delivery_feasibility.json`, the tool
messages (sha256 and head) the official release (96f3b85) gives for the same recreation
steps on all 100 + 100 tasks — so the orders our tools make (ids pinned as in
test_delivery.py) are upstream's, price, coordinates and times included.
Ground truth 2: the four infeasible orders, checked by hand in the task files: two name a
product that no store of the task sells, one lists an order inside its products, one
belongs to another user than the task's.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from envs.vitabench.delivery import RECREATORS, DeliveryEnvironment
from envs.vitabench.feasibility import check_tasks
from envs.vitabench.release import Language
from tests.envs.vitabench.conftest import OFFICIAL, delivery_tasks
from tests.shared_data import needs_vitabench

pytestmark = needs_vitabench

RECORDED: list[dict[str, Any]] = json.loads(
    (OFFICIAL / "delivery_feasibility.json").read_text())
LANG: dict[str, Language] = {"chinese": "zh", "english": "en"}

INFEASIBLE = [
    "30711009 30711009T03: the order's products hold an entry that is no product",
    "80715001 80715001T02: create_delivery_order: Error: S75401753354131701_P99357 not found",
    "90714001 90714001T02: create_delivery_order: User ID does not match",
    "I0716002 I0716002T01: create_delivery_order: Error: S20095944891750071_P71251 not found",
]


def environment(task: Any, language: Language) -> DeliveryEnvironment:
    return DeliveryEnvironment.from_environment(task["environment"], language)


@pytest.mark.parametrize("language", ["chinese", "english"])
def test_recreation_calls_match_the_official_tool_messages(vita_data: Path,
                                                           language: str) -> None:
    mismatches = []
    for record in (r for r in RECORDED if r["language"] == language):
        env = environment(delivery_tasks(LANG[language])[record["task_id"]], LANG[language])
        for call in record["calls"]:
            result = env.call(call["name"], call["arguments"])
            digest = hashlib.sha256(result.text().encode()).hexdigest()
            if digest != call["content_sha256"] or result.ok == call["error"]:
                mismatches.append((record["task_id"], call["name"], call["content_head"],
                                   result.text()[:160]))
    assert mismatches == []
    assert sum(len(r["calls"]) for r in RECORDED if r["language"] == language) > 500


@pytest.mark.parametrize("language", ["zh", "en"])
def test_required_orders_are_feasible_except_four_data_faults(vita_data: Path,
                                                               language: Language) -> None:
    report = check_tasks(delivery_tasks(language).values(), language, environment, RECREATORS)
    assert (report.feasible, report.total) == (96, 100)
    assert report.exceptions() == INFEASIBLE
    orders = [check for task in report.tasks for check in task.orders]
    assert (sum(check.feasible for check in orders), len(orders)) == (194, 198)
