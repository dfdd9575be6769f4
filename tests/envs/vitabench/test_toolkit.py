"""The shared toolkit, the per-episode registries and the tool-message rules.

Registries: `tests/data/vitabench/official/delivery_registry.json` records, from the
official release (96f3b85), what upstream's thread registries hold (`Location.get_all()`,
`get_all_products()`, `get_all_stores()`, in order) after loading six delivery tasks and
after one `create_delivery_order` on each (which registers the ordered products, with
their count and attributes, and the order's address). Tool outputs of the toolkit tools
on real tasks are checked in test_delivery.py (recorded the same way).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envs.vitabench.base import vita_text
from envs.vitabench.delivery import DeliveryEnvironment
from envs.vitabench.release import Language
from tests.envs.vitabench.conftest import OFFICIAL, delivery_tasks
from tests.shared_data import needs_vitabench

REGISTRIES: list[dict[str, Any]] = json.loads(
    (OFFICIAL / "delivery_registry.json").read_text())
LANG: dict[str, Language] = {"chinese": "zh", "english": "en"}


def registries(env: DeliveryEnvironment) -> dict[str, Any]:
    return {"locations": [[k, repr(v)] for k, v in env.registry.locations.items()],
            "products": [[k, repr(v)] for k, v in env.registry.products.items()],
            "stores": list(env.registry.stores)}


@needs_vitabench
@pytest.mark.parametrize("record", REGISTRIES, ids=lambda r: f"{r['task_id']}-{r['language']}")
def test_registries_follow_upstreams_construction_order(vita_data: Path,
                                                        record: dict[str, Any]) -> None:
    language = LANG[record["language"]]
    task = delivery_tasks(language)[record["task_id"]]
    env = DeliveryEnvironment.from_environment(task["environment"], language)
    assert registries(env) == record["loaded"]
    assert env.call("create_delivery_order", record["create"]).text().startswith("Order(")
    assert registries(env) == record["after"]


PARTIAL: dict[str, Any] = json.loads((OFFICIAL / "delivery_partial_write.json").read_text())


@needs_vitabench
def test_a_failed_write_keeps_what_it_changed_as_upstream(vita_data: Path) -> None:
    """`delivery_partial_write.json` (official code): a create_delivery_order whose note
    is a list fails on the Order model after registering its product (count 4, attributes
    加辣) and address; later look-ups see them, and no order was added."""
    task = delivery_tasks("zh")[PARTIAL["task_id"]]
    env = DeliveryEnvironment.from_environment(task["environment"], "zh")
    got = [(env.call(c["name"], c["arguments"]).text(), c["name"]) for c in PARTIAL["calls"]]
    assert got == [(c["content"], c["name"]) for c in PARTIAL["calls"]]
    assert "quantity=4" in got[1][0]


@needs_vitabench
def test_snapshot_restores_to_the_same_world(vita_data: Path) -> None:
    task = delivery_tasks("en")[REGISTRIES[3]["task_id"]]
    env = DeliveryEnvironment.from_environment(task["environment"], "en")
    other = DeliveryEnvironment(env.snapshot(), "en")
    assert other.snapshot() == env.snapshot()
    assert registries(other) == registries(env)


def test_tool_messages_render_as_upstreams_to_json_str() -> None:
    """Upstream stringifies numbers before json.dumps: a float reads '"12.0"' and a
    coordinate pair '["1.5", "2.0"]'; strings pass unchanged."""
    assert vita_text("plain") == "plain"
    assert vita_text(12.0) == '"12.0"'
    assert vita_text([1.5, 2.0]) == '["1.5", "2.0"]'
    assert vita_text({"a": [1, None, "中"]}) == '{"a": ["1", null, "中"]}'


def test_refusals_answer_and_errors_fail(vita_data: Path) -> None:
    env = DeliveryEnvironment({"stores": {}, "orders": {}, "user_id": "U1",
                               "time": "2025-06-21 11:20:00"}, "en")
    refusal = env.call("search_delivery_orders", {"user_id": "U2"})
    assert (refusal.ok, refusal.text()) == (True, "User ID does not match")
    missing = env.call("get_delivery_store_info", {"store_id": "S1"})
    assert (missing.ok, missing.text()) == (False, "Error: Store S1 not found")
    unknown = env.call("get_store", {})
    assert unknown.text() == "Error: Tool 'get_store' not found."
    unbound = env.call("get_nearby", {"longitude": 1})
    assert unbound.text() == ("Error: ToolKitBase.get_nearby() missing 2 required positional "
                              "arguments: 'latitude' and 'range'")


@pytest.mark.parametrize(("language", "year", "name", "answer"), [
    ("zh", "2025", "中秋节", "2025-10-06"),
    ("en", "2025", "Mid-Autumn Festival", "2025-10-06"),
    ("en", "2024", "Dragon Boat", "2024-06-10"),
    ("zh", "2026", "国庆节", "Holiday data for year 2026 not found"),
    ("en", "2025", "中秋节", "Holiday named '中秋节' not found in year 2025"),
])
def test_holiday_dates_by_language(vita_data: Path, language: Language, year: str, name: str,
                                   answer: str) -> None:
    """Hand-checked: Mid-Autumn 2025 fell on 6 October, the Dragon Boat Festival 2024 on
    10 June; each language matches only its own names."""
    env = DeliveryEnvironment({"stores": {}, "orders": {}}, language)
    assert env.call("get_holiday_date", {"year": year, "holiday_name": name}).text() == answer


@pytest.mark.parametrize("locale", ["C.UTF-8", "zh_CN.UTF-8"])
@pytest.mark.parametrize("language", ["zh", "en"])
def test_holiday_info_is_the_chinese_calendar_named_as_under_a_c_locale(
        vita_data: Path, monkeypatch: pytest.MonkeyPatch, language: Language,
        locale: str) -> None:
    """Hand-checked: 1 October is National Day, 2025-05-31 the Dragon Boat Festival,
    2025-06-21 an ordinary Saturday. Upstream's names follow the process locale (gettext);
    ours are pinned to what it says under C/en (as recorded), whatever the locale."""
    for variable in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.setenv(variable, locale)
    env = DeliveryEnvironment({"stores": {}, "orders": {}}, language)
    answers = [env.call("get_date_holiday_info", {"date": d}).text()
               for d in ("2025-10-01", "2025-05-31", "2025-06-21")]
    assert answers == ["National Day", "Dragon Boat Festival",
                       "Date 2025-06-21 is not a holiday"]
