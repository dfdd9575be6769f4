"""The cross-domain merge answers as upstream's `get_cross_environment("delivery,instore,ota")`.

Ground truth, recorded with the official release (commit 96f3b85) through upstream's
`Environment.get_response` on its merged environment:

- `cross_calls_en.json` on `cross_environment.json`: the hand-made OTA environment plus one
  delivery store (task G0721005) and two in-store shops (task 10826029) of the shared
  snapshot, owned by one user; 22 calls routed to each domain, on one shared order table
  (a train order seen by delivery's tools, a delivery order by OTA's), `get_nearby` over
  every table, the shared toolkit; the database dump after the last call; the merged
  toolkit's 66 tool names in upstream's order.
- `cross_relocated_calls_en.json` on `cross_relocated_environment.json`: one address with
  other coordinates in the task's `location` list than in the store (or hotel) it
  belongs to, which pins the order of upstream's three registry loads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envs.vitabench.cross import RECREATORS, CrossEnvironment
from envs.vitabench.delivery import DeliveryEnvironment
from envs.vitabench.factory import environment_class, environment_for
from envs.vitabench.feasibility import check_tasks
from envs.vitabench.instore import InStoreEnvironment
from envs.vitabench.ota import OTAEnvironment
from tests.envs.vitabench.conftest import OFFICIAL

RECORDED = json.loads((OFFICIAL / "cross_calls_en.json").read_text())
RELOCATED = json.loads((OFFICIAL / "cross_relocated_calls_en.json").read_text())


def load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((OFFICIAL / name).read_text())
    return loaded


def cross(name: str = "cross_environment.json") -> CrossEnvironment:
    env = environment_for({"domain": "delivery,instore,ota", "environment": load(name)}, "en")
    assert isinstance(env, CrossEnvironment)
    return env


def mismatches(env: CrossEnvironment, calls: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    found = []
    for i, call in enumerate(calls):
        result = env.call(call["name"], call["arguments"])
        if result.text() != call["content"] or result.ok == call["error"]:
            found.append((i, call["name"], call["content"][:300], result.text()[:300]))
    return found


def test_every_call_matches_the_official_tool_message(vita_data: Path) -> None:
    env = cross()
    assert mismatches(env, RECORDED["calls"]) == []
    assert env.snapshot() == RECORDED["final_db"]


def test_the_registry_is_left_as_upstreams_three_loads_leave_it(vita_data: Path) -> None:
    """The store's address reads with the `location` list's coordinates (instore's and
    OTA's loads register that list after delivery's load registered the store); the
    hotel's with the hotel's (OTA's load registers its hotels after the list)."""
    env = cross("cross_relocated_environment.json")
    assert mismatches(env, RELOCATED["calls"]) == []
    env.restore(env.snapshot())  # a restored state is registered the same way
    assert mismatches(env, RELOCATED["calls"]) == []
    assert [c["content"] for c in RELOCATED["calls"]] == ['["104.0", "30.0"]',
                                                        '["120.149953", "30.262631"]']


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_merged_toolkit_in_upstreams_order(vita_data: Path, language: str) -> None:
    """66 tools: the 8 shared ones first, then delivery's 12, instore's 16, OTA's 30."""
    env = cross()
    env.language = language  # type: ignore[assignment]
    names = [s.name for s in env.tools()]
    assert names == RECORDED["tool_names"] == CrossEnvironment.tool_order()
    own = [[n for n in cls.tool_order() if n not in names[:8]]
           for cls in (DeliveryEnvironment, InStoreEnvironment, OTAEnvironment)]
    assert [len(o) for o in own] == [12, 16, 30]
    assert names == names[:8] + own[0] + own[1] + own[2]
    assert sum(s.write for s in env.tools()) == 27
    assert env.tool_objects() == json.loads((OFFICIAL / "tools" / f"cross_{language}.json")
                                            .read_text())


def test_each_domain_answers_on_one_order_table(vita_data: Path) -> None:
    env = cross()
    assert env.call("delivery_store_search_recommand", {"keywords": ["hotpot"]}).text() \
        .startswith("Store(name=Jude Hotpot (Shudu Center Branch), ")
    assert env.call("instore_shop_search_recommend", {"keywords": ["swimming"]}).text() \
        .startswith("Shop(shop_name=Anhui Province Sports Center Indoor Swimming Pool, ")
    assert env.call("hotel_search_recommand", {"city_name": "Hangzhou",
                                               "key_words": ["lake view"]}).text() \
        .startswith("Hotel(hotel_id=H330106001, ")
    created = env.call("create_train_order", {"train_id": "T0003", "seat_id": "T0003_S002",
                                              "user_id": "U200317", "date": "2025-07-20",
                                              "quantity": 1}).text()
    order_id = created.split(",")[0].removeprefix("Order(order_id:")
    wrong = env.call("get_delivery_order_detail", {"order_id": order_id})
    assert wrong.text() == f"Error: Order {order_id} is not a delivery order"
    # (sic) an OTA pay tool pays an order of any domain
    assert env.call("pay_train_order", {"order_id": "G0721005O01"}).text() == \
        "Payment successful"
    everything = env.call("get_user_all_orders", {}).text().splitlines()
    assert [line.split(",")[0] for line in everything][0] == "Order(order_id:G0721005O01"
    assert any(line.startswith(f"Order(order_id:{order_id},") for line in everything)
    nearby = env.call("get_nearby", {"longitude": 117.22, "latitude": 31.84, "range": 3000})
    assert nearby.text().startswith("Shop(")


@pytest.mark.parametrize(("domain", "cls"), [
    ("delivery", DeliveryEnvironment), ("instore", InStoreEnvironment),
    ("in-store consumption", InStoreEnvironment), ("in-store", InStoreEnvironment),
    ("ota", OTAEnvironment), ("delivery,instore,ota", CrossEnvironment)])
def test_the_factory_dispatches_on_the_tasks_domain(domain: str, cls: type) -> None:
    assert environment_class(domain) is cls
    env = environment_for({"domain": domain, "environment": load("cross_environment.json")},
                          "zh")
    assert type(env) is cls and env.language == "zh"


def test_an_unknown_domain_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown VitaBench domain 'hotel'"):
        environment_class("hotel")


def test_required_records_of_each_domain_are_recreated(vita_data: Path) -> None:
    """Hand-made required records on the cross fixture, one per domain: the task's unpaid
    delivery order paid, a new in-store package order (138 a package, paid), a new paid
    train seat (Beijing-Hangzhou second class on 07-20: 626 + 5 = 631.0)."""
    delivery = {**load("cross_environment.json")["orders"]["G0721005O01"], "status": "paid"}
    package = {"order_id": "new-package", "order_type": "instore", "user_id": "U200317",
               "store_id": "S17564423645199589_I00001", "total_price": 138.0,
               "status": "paid", "products": [{"product_id": "S17564423645199589_P00001",
                                               "price": 138.0, "quantity": 1}]}
    seat = {"order_id": "new-seat", "order_type": "train", "user_id": "U200317",
            "store_id": "T0003", "total_price": 631.0, "status": "paid",
            "products": [{"product_id": "T0003_S002", "price": 631.0, "quantity": 1,
                          "date": "2025-07-20", "seat_type": "second class"}]}
    task = {"id": "cross-fixture", "domain": "delivery,instore,ota",
            "environment": load("cross_environment.json"),
            "evaluation_criteria": {"expected_states": [
                {"required_orders": [delivery, package, seat]}]}}
    report = check_tasks([task], "en", environment_for, RECREATORS)
    assert [(c.order_id, c.problems, c.computed) for c in report.tasks[0].orders] == [
        ("G0721005O01", [], []), ("new-package", [], []), ("new-seat", [], [])]
    assert report.exact == report.feasible == report.total == 1
