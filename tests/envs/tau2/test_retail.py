"""τ² retail: the release DB round-trips, every gold action replays (known failures
listed with upstream's reason), and the tools compute what upstream v0.2.0 computes
(figures below are worked out by hand from the release db.json)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from envs.tau2 import data
from envs.tau2.base import tau2_text
from envs.tau2.data import gc_paused
from envs.tau2.retail import Retail
from envs.tau2.tasks import Task

WRITE_TOOLS = {"cancel_pending_order", "exchange_delivered_order_items",
               "modify_pending_order_address", "modify_pending_order_items",
               "modify_pending_order_payment", "modify_user_address",
               "return_delivered_order_items"}
READ_TOOLS = {"find_user_id_by_name_zip", "find_user_id_by_email", "get_order_details",
              "get_product_details", "get_user_details", "list_all_product_types",
              "calculate", "transfer_to_human_agents"}
ORDER_DEFAULTS = {"cancel_reason": None, "exchange_items": None, "exchange_new_items": None,
                  "exchange_payment_method_id": None, "exchange_price_difference": None,
                  "return_items": None, "return_payment_method_id": None}


@pytest.fixture(autouse=True)
def _no_cyclic_gc() -> Iterator[None]:
    """Speed only: each instance (and each write's undo record) allocates ~10^5 objects,
    and rescanning them, with the cached release files, doubles the run time. Nothing
    here is cyclic garbage, so behaviour is unchanged."""
    with gc_paused():
        yield


@pytest.fixture(scope="module")
def raw_db() -> dict[str, Any]:
    return data.load_db("retail")


@pytest.fixture
def env() -> Retail:
    """A fresh instance, for tests that write."""
    return Retail()


@pytest.fixture(scope="module")
def reader() -> Retail:
    """One instance shared by the tests that only read."""
    return Retail()


def ok(env: Retail, name: str, **arguments: Any) -> Any:
    result = env.call(name, arguments)
    assert result.ok, result.error
    return result.content


def error(env: Retail, name: str, **arguments: Any) -> str:
    result = env.call(name, arguments)
    assert not result.ok
    return tau2_text(result)


# -- contract and data ------------------------------------------------------------------


def test_tools_and_write_flags() -> None:
    """v0.2.0's 15 tools: `get_item_details` only arrived in v1.0."""
    specs = {spec.name: spec.write for spec in Retail.tool_specs()}
    assert set(specs) == WRITE_TOOLS | READ_TOOLS
    assert {name for name, write in specs.items() if write} == WRITE_TOOLS


def test_db_round_trips_exactly(reader: Retail, raw_db: dict[str, Any]) -> None:
    """Every value keeps its JSON type; a full dump only adds the orders' optional
    fields as None, as upstream's dump (and so its DB hash) does."""
    assert json.dumps(reader.state.model_dump(exclude_unset=True), sort_keys=True) == \
        json.dumps(raw_db, sort_keys=True)
    with_defaults = {**raw_db, "orders": {
        oid: {**o, **ORDER_DEFAULTS} for oid, o in raw_db["orders"].items()}}
    assert reader.state.model_dump() == with_defaults
    expected = json.dumps(with_defaults, sort_keys=True, default=str)
    assert reader.db_hash() == hashlib.sha256(expected.encode()).hexdigest()


# -- gold actions -----------------------------------------------------------------------

PRODUCT_NOT_FOUND = "Product not found"
USER_NOT_FOUND = "User not found"
ORDER_NOT_FOUND = "Order not found"

#: (task id, action id) -> upstream's error for the gold actions that fail. Most are
#: scripted: the simulated user first gives a wrong email, zip or order id, and the gold
#: trajectory records the failed lookup. The others are task-data quirks.
EXPECTED_GOLD_FAILURES: dict[tuple[str, str], str] = {
    # the product id of the tool docstrings' example, not in the DB (harmless read)
    ("2", "2_1"): PRODUCT_NOT_FOUND,
    ("3", "3_1"): PRODUCT_NOT_FOUND,
    ("4", "4_1"): PRODUCT_NOT_FOUND,
    # refund to PayPal refused (the order was paid by credit card); the user then asks
    # for a human agent
    ("12", "12_4"): "Payment method should be the original payment method",
    ("13", "13_4"): "Payment method should be the original payment method",
    # item ids looked up as product ids (v1.0 added get_item_details for this task)
    ("21", "21_5"): PRODUCT_NOT_FOUND,
    ("21", "21_6"): PRODUCT_NOT_FOUND,
    ("21", "21_8"): PRODUCT_NOT_FOUND,
    # scripted wrong emails
    ("35", "35_0"): USER_NOT_FOUND,
    ("37", "37_0"): USER_NOT_FOUND,
    ("38", "38_0"): USER_NOT_FOUND,
    ("54", "54_0"): USER_NOT_FOUND,
    ("55", "55_0"): USER_NOT_FOUND,
    # scripted wrong zip codes (old address, "common mistake")
    ("39", "39_0"): USER_NOT_FOUND,
    ("67", "67_0"): USER_NOT_FOUND,
    ("67", "67_1"): USER_NOT_FOUND,
    ("68", "68_0"): USER_NOT_FOUND,
    # scripted order ids without the "#W" prefix
    ("46", "46_1"): ORDER_NOT_FOUND,
    ("46", "46_2"): ORDER_NOT_FOUND,
    ("47", "47_1"): ORDER_NOT_FOUND,
    ("47", "47_2"): ORDER_NOT_FOUND,
    # exchange attempted on a pending order; the gold then modifies it instead
    ("64", "64_6"): "Non-delivered order cannot be exchanged",
    # the only action: 2 x 94.8 kettles -> 101.12 + 109.58 costs 21.10 more than the
    # 17.0 gift card holds, so the expected DB is the unchanged one
    ("105", "106_0"): "Insufficient gift card balance to pay for the price difference",
}


@cache
def _tasks() -> dict[str, Task]:
    return {t["id"]: Task.model_validate(t) for t in data.load_tasks("retail")}


@pytest.mark.parametrize("task_id", [str(i) for i in range(114)])
def test_gold_actions_replay(task_id: str) -> None:
    task = _tasks()[task_id]
    env = Retail()
    failures = {}
    for action in task.evaluation_criteria.actions or []:
        assert action.requestor == "assistant"
        result = env.call(action.name, action.arguments)
        if not result.ok:
            failures[(task.id, action.action_id)] = result.error
    assert failures == {k: v for k, v in EXPECTED_GOLD_FAILURES.items() if k[0] == task_id}


# -- delivered orders: exchanges and returns --------------------------------------------


def test_exchange_records_the_price_difference_for_the_chosen_method(env: Retail) -> None:
    """Task 0: #W2378156 swaps 1151293680 (272.33 -> 269.16) and 4983901480
    (262.47 -> 249.01): -3.17 - 13.46 = -16.63, to be refunded to the credit card."""
    result = env.call("exchange_delivered_order_items", {
        "order_id": "#W2378156", "item_ids": ["4983901480", "1151293680"],
        "new_item_ids": ["7747408585", "7706410293"], "payment_method_id": "credit_card_9513926"})
    order = env.state.orders["#W2378156"]
    assert order.status == "exchange requested"
    assert order.exchange_price_difference == -16.63
    assert order.exchange_items == ["1151293680", "4983901480"]  # sorted, like upstream
    assert order.exchange_new_items == ["7706410293", "7747408585"]
    assert order.exchange_payment_method_id == "credit_card_9513926"
    # only requested: no payment line, items unchanged until the exchange happens
    assert len(order.payment_history) == 1
    assert [i.item_id for i in order.items][2:4] == ["1151293680", "4983901480"]
    assert tau2_text(result) == json.dumps(order.model_dump())
    assert error(env, "exchange_delivered_order_items", order_id="#W2378156",
                 item_ids=["4602305039"], new_item_ids=["4602305039"],
                 payment_method_id="credit_card_9513926") == \
        "Error: Non-delivered order cannot be exchanged"


def test_exchange_paid_by_gift_card_needs_the_balance_but_does_not_spend_it(
        env: Retail) -> None:
    """Task 58: +42.05 + 0.50 = 42.55 against an 85.0 gift card, which stays at 85.0."""
    ok(env, "exchange_delivered_order_items", order_id="#W5838674",
       item_ids=["7441167885", "3478699712"], new_item_ids=["3815173328", "6017636844"],
       payment_method_id="gift_card_9368765")
    assert env.state.orders["#W5838674"].exchange_price_difference == 42.55
    user = env.state.users[env.state.orders["#W5838674"].user_id]
    assert user.payment_methods["gift_card_9368765"].balance == 85.0


def test_exchange_errors(env: Retail) -> None:
    exchange = {"order_id": "#W2378156", "payment_method_id": "credit_card_9513926"}
    assert error(env, "exchange_delivered_order_items", **exchange,
                 item_ids=["4602305039", "4602305039"], new_item_ids=["1", "2"]) == \
        "Error: Number of 4602305039 not found."
    assert error(env, "exchange_delivered_order_items", **exchange,
                 item_ids=["4602305039"], new_item_ids=[]) == \
        "Error: The number of items to be exchanged should match."
    assert error(env, "exchange_delivered_order_items", **exchange,
                 item_ids=["4602305039"], new_item_ids=["9999999999"]) == \
        "Error: Variant not found"
    assert error(env, "exchange_delivered_order_items", order_id="#W2378156",
                 item_ids=["1151293680"], new_item_ids=["7706410293"],
                 payment_method_id="paypal_1") == "Error: Payment method not found"
    assert error(env, "exchange_delivered_order_items", order_id="#W0000000",
                 item_ids=[], new_item_ids=[], payment_method_id="x") == \
        "Error: Order not found"


def test_return_refunds_to_the_original_method(env: Retail) -> None:
    """Task 5: #W6390527 was paid with PayPal; the 45.13 bottle goes back there."""
    ok(env, "return_delivered_order_items", order_id="#W6390527", item_ids=["8538875209"],
       payment_method_id="paypal_7644869")
    order = env.state.orders["#W6390527"]
    assert (order.status, order.return_items, order.return_payment_method_id) == (
        "return requested", ["8538875209"], "paypal_7644869")
    assert len(order.payment_history) == 1  # the refund happens after the items arrive


def test_return_may_refund_to_any_gift_card_of_the_user(env: Retail) -> None:
    """#W4250821 was paid by credit card; its owner's gift card is also accepted, but
    not her other credit card or PayPal."""
    order = {"order_id": "#W4250821", "item_ids": ["9970989750", "5222576926"]}
    for method in ("credit_card_6547060", "paypal_7425862"):
        assert error(env, "return_delivered_order_items", **order,
                     payment_method_id=method) == \
            "Error: Payment method should be the original payment method"
    ok(env, "return_delivered_order_items", **order, payment_method_id="gift_card_6052478")
    assert env.state.orders["#W4250821"].return_items == ["5222576926", "9970989750"]
    user = env.state.users["sophia_jackson_6355"]
    assert user.payment_methods["gift_card_6052478"].balance == 10.0
    assert error(env, "return_delivered_order_items", **order,
                 payment_method_id="gift_card_6052478") == \
        "Error: Non-delivered order cannot be returned"


def test_return_of_missing_items(env: Retail) -> None:
    assert error(env, "return_delivered_order_items", order_id="#W6390527",
                 item_ids=["8538875209", "8538875209"], payment_method_id="paypal_7644869") \
        == "Error: Some item not found"


# -- pending orders ---------------------------------------------------------------------


def test_cancel_refunds_a_gift_card_at_once(env: Retail) -> None:
    """Task 30: #W9373487 (109.27 on a 44.0 gift card) -> balance 153.27."""
    result = env.call("cancel_pending_order",
                      {"order_id": "#W9373487", "reason": "no longer needed"})
    order = env.state.orders["#W9373487"]
    assert (order.status, order.cancel_reason) == ("cancelled", "no longer needed")
    assert [p.model_dump() for p in order.payment_history] == [
        {"transaction_type": "payment", "amount": 109.27,
         "payment_method_id": "gift_card_7711863"},
        {"transaction_type": "refund", "amount": 109.27,
         "payment_method_id": "gift_card_7711863"}]
    assert env.state.users["olivia_lopez_3865"].payment_methods["gift_card_7711863"].balance \
        == 153.27
    assert tau2_text(result) == json.dumps(order.model_dump())


def test_cancel_errors(env: Retail) -> None:
    assert error(env, "cancel_pending_order", order_id="#W9373487", reason="too expensive") \
        == "Error: Invalid reason"
    assert error(env, "cancel_pending_order", order_id="#W2378156",
                 reason="no longer needed") == "Error: Non-pending order cannot be cancelled"
    # a modified order is no longer exactly "pending": it cannot be cancelled any more
    ok(env, "modify_pending_order_items", order_id="#W9300146", item_ids=["9190635437"],
       new_item_ids=["5320792178"], payment_method_id="gift_card_7245904")
    assert error(env, "cancel_pending_order", order_id="#W9300146",
                 reason="ordered by mistake") == "Error: Non-pending order cannot be cancelled"


def test_modify_items_charges_a_gift_card(env: Retail) -> None:
    """Task 20: four swaps on #W9911714 cost 0.81 + 37.20 + 8.28 + 25.67 = 71.96 more,
    paid from an 86.0 gift card (14.04 left); the line keeps float noise, the balance
    is rounded. Every modified item then takes the price and options of the last new
    variant (upstream's loop reuses the `variant` its checking loop left behind)."""
    ok(env, "modify_pending_order_items", order_id="#W9911714",
       item_ids=["2366567022", "1340995114", "9791469541", "1763705424"],
       new_item_ids=["4579334072", "1151293680", "4107812777", "2882812427"],
       payment_method_id="gift_card_4332117")
    order = env.state.orders["#W9911714"]
    line = order.payment_history[-1]
    assert (line.transaction_type, line.payment_method_id) == ("payment", "gift_card_4332117")
    assert line.amount == pytest.approx(71.96) and line.amount != 71.96
    assert env.state.users[order.user_id].payment_methods["gift_card_4332117"].balance == 14.04
    assert order.status == "pending (item modified)"
    assert [(i.item_id, i.price) for i in order.items] == [
        ("4579334072", 261.11), ("1151293680", 261.11), ("4107812777", 261.11),
        ("2882812427", 261.11)]
    last = env.state.products[order.items[3].product_id].variants["2882812427"]
    assert all(item.options == last.options for item in order.items)
    assert error(env, "modify_pending_order_items", order_id="#W9911714",
                 item_ids=["4579334072"], new_item_ids=["2366567022"],
                 payment_method_id="gift_card_4332117") == \
        "Error: Non-pending order cannot be modified"


def test_modify_items_refunds_a_gift_card(env: Retail) -> None:
    """Task 44: desk lamp 153.23 -> 135.24 refunds 17.99 to the 17.0 gift card."""
    ok(env, "modify_pending_order_items", order_id="#W9300146", item_ids=["9190635437"],
       new_item_ids=["5320792178"], payment_method_id="gift_card_7245904")
    line = env.state.orders["#W9300146"].payment_history[-1]
    assert (line.transaction_type, round(line.amount, 2)) == ("refund", 17.99)
    assert env.state.users["aarav_anderson_8794"].payment_methods["gift_card_7245904"].balance \
        == 34.99


def test_modify_items_errors(env: Retail) -> None:
    lamp = {"order_id": "#W9300146", "payment_method_id": "gift_card_7245904"}
    assert error(env, "modify_pending_order_items", **lamp, item_ids=["9190635437"],
                 new_item_ids=["9190635437"]) == \
        "Error: The new item id should be different from the old item id"
    assert error(env, "modify_pending_order_items", **lamp, item_ids=["9190635437"],
                 new_item_ids=["4385534692"]) == \
        "Error: New item 4385534692 not found or available"
    # dumbbells 457.81 -> 534.84 cost 77.03 more than the 49.0 gift card holds
    assert error(env, "modify_pending_order_items", order_id="#W6779827",
                 item_ids=["7896397433"], new_item_ids=["2444431651"],
                 payment_method_id="gift_card_7219486") == \
        "Error: Insufficient gift card balance to pay for the new item"
    assert error(env, "modify_pending_order_items", **lamp, item_ids=["1"],
                 new_item_ids=["2"]) == "Error: 1 not found"
    assert error(env, "modify_pending_order_items", **lamp, item_ids=["9190635437"],
                 new_item_ids=[]) == "Error: The number of items to be exchanged should match"


def test_modify_payment_swaps_methods(env: Retail) -> None:
    """#W6779827 (4079.45 on a 49.0 gift card) moves to a credit card: the card is
    charged, the gift card refunded at once (4128.45)."""
    ok(env, "modify_pending_order_payment", order_id="#W6779827",
       payment_method_id="credit_card_9789590")
    order = env.state.orders["#W6779827"]
    assert [(p.transaction_type, p.amount, p.payment_method_id)
            for p in order.payment_history] == [
        ("payment", 4079.45, "gift_card_7219486"),
        ("payment", 4079.45, "credit_card_9789590"),
        ("refund", 4079.45, "gift_card_7219486")]
    assert env.state.users["ethan_lopez_6291"].payment_methods["gift_card_7219486"].balance \
        == 4128.45
    assert error(env, "modify_pending_order_payment", order_id="#W6779827",
                 payment_method_id="gift_card_7219486") == \
        "Error: There should be exactly one payment for a pending order"


def test_modify_payment_errors(env: Retail) -> None:
    assert error(env, "modify_pending_order_payment", order_id="#W4923227",
                 payment_method_id="credit_card_8554680") == \
        "Error: The new payment method should be different from the current one"
    assert error(env, "modify_pending_order_payment", order_id="#W4923227",
                 payment_method_id="gift_card_8245350") == \
        "Error: Insufficient gift card balance to pay for the order"
    assert error(env, "modify_pending_order_payment", order_id="#W2611340",
                 payment_method_id="x") == "Error: Non-pending order cannot be modified"


def test_address_changes(env: Retail) -> None:
    address = {"address1": "1 Main St", "address2": "", "city": "Phoenix", "state": "AZ",
               "country": "USA", "zip": "85033"}
    # "pending (item modified)" still counts as pending for an address change
    ok(env, "modify_pending_order_items", order_id="#W9300146", item_ids=["9190635437"],
       new_item_ids=["5320792178"], payment_method_id="gift_card_7245904")
    ok(env, "modify_pending_order_address", order_id="#W9300146", **address)
    assert env.state.orders["#W9300146"].address.model_dump() == {
        "address1": "1 Main St", "address2": "", "city": "Phoenix", "country": "USA",
        "state": "AZ", "zip": "85033"}
    assert error(env, "modify_pending_order_address", order_id="#W2611340", **address) == \
        "Error: Non-pending order cannot be modified"
    result = env.call("modify_user_address", {"user_id": "olivia_lopez_3865", **address})
    user = env.state.users["olivia_lopez_3865"]
    assert user.address.zip == "85033"
    assert tau2_text(result) == json.dumps(user.model_dump())
    assert error(env, "modify_user_address", user_id="olivia", **address) == \
        "Error: User not found"


# -- reads ------------------------------------------------------------------------------


def test_user_lookups_ignore_case(reader: Retail) -> None:
    assert tau2_text(reader.call("find_user_id_by_email",
                                 {"email": "Olivia.Lopez4535@EXAMPLE.com"})) == \
        "olivia_lopez_3865"
    assert ok(reader, "find_user_id_by_name_zip", first_name="OLIVIA", last_name="lopez",
              zip="76171") == "olivia_lopez_3865"
    assert error(reader, "find_user_id_by_name_zip", first_name="Olivia", last_name="Lopez",
                 zip="76172") == "Error: User not found"
    assert error(reader, "find_user_id_by_email", email="nobody@example.com") == \
        "Error: User not found"


def test_reads_serialise_as_upstream(reader: Retail) -> None:
    text = tau2_text(reader.call("list_all_product_types", {}))
    products = json.loads(text)
    assert len(products) == 50 and list(products) == sorted(products)
    assert text == json.dumps(products, sort_keys=True)
    assert products["T-Shirt"] == "9523456873"
    result = reader.call("get_product_details", {"product_id": "9523456873"})
    assert tau2_text(result) == json.dumps(reader.state.products["9523456873"].model_dump())
    result = reader.call("get_order_details", {"order_id": "#W2611340"})
    assert tau2_text(result) == json.dumps(reader.state.orders["#W2611340"].model_dump())
    assert tau2_text(result).endswith('"return_items": null, "return_payment_method_id": null}')
    result = reader.call("get_user_details", {"user_id": "noah_brown_6181"})
    assert tau2_text(result) == json.dumps(reader.state.users["noah_brown_6181"].model_dump())
    assert error(reader, "get_product_details", product_id="6086499569") == \
        "Error: Product not found"
    assert ok(reader, "calculate", expression="(269.16 - 272.33) + (249.01 - 262.47)") == \
        "-16.63"
    assert ok(reader, "transfer_to_human_agents", summary="x") == "Transfer successful"
