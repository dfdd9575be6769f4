"""Calls go to τ² tools as upstream's `environment.get_response` sends them: arguments
unconverted, framework errors in upstream's words, any exception as `Error: {e}`.

Expected values are read off upstream's v0.2.0 code (`environment/toolkit.py`
`use_tool`, `environment/environment.py` `get_response`, the domains' `tools.py`) and
were checked by running the same calls on upstream's toolkits in a throwaway venv;
binding errors are compared with what CPython itself raises for the same signature.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from envs.tau2.airline import Airline
from envs.tau2.base import tau2_text
from envs.tau2.data import gc_paused
from envs.tau2.retail import Retail
from envs.tau2.tool_objects import official_tools
from envs.tau2.world import Tau2World

BOOKING: dict[str, Any] = {
    "user_id": "mohamed_silva_9265", "origin": "JFK", "destination": "SFO",
    "flight_type": "one_way", "cabin": "business",
    "flights": [{"flight_number": "HAT023", "date": "2024-05-26"}],
    "passengers": [{"first_name": "Mohamed", "last_name": "Silva", "dob": "1960-11-26"},
                   {"first_name": "Raj", "last_name": "Sanchez", "dob": "1986-09-12"}],
    # 2 x 364 business + 2 x 30 insurance + 1 x 50 bag
    "payment_methods": [{"payment_id": "credit_card_2198526", "amount": 838}],
    "total_baggages": 3, "nonfree_baggages": 1, "insurance": "yes",
}


@pytest.fixture(autouse=True)
def _no_cyclic_gc() -> Iterator[None]:
    with gc_paused():
        yield


def text(world: Tau2World, name: str, requestor: str = "assistant", **arguments: Any) -> str:
    return tau2_text(world.execute(requestor, name, arguments))


@pytest.fixture
def airline() -> Tau2World:
    return Tau2World("airline")


# -- framework errors --------------------------------------------------------------------


def test_unknown_tools_read_as_upstream(airline: Tau2World) -> None:
    assert text(airline, "book_flight") == "Error: Tool 'book_flight' not found."
    # the airline user has no toolkit: upstream's use_user_tool
    assert text(airline, "check_status_bar", "user") == "Error: User tools not available"
    telecom = Tau2World("telecom")
    assert text(telecom, "toggle_data", "assistant") == "Error: Tool 'toggle_data' not found."
    assert text(telecom, "get_customer_by_id", "user", customer_id="C1001") == \
        "Error: Tool 'get_customer_by_id' not found."


class AirlineTools:
    """Signatures as upstream's (parameter names, order, defaults), bodies irrelevant:
    CPython's own TypeError for `method(**arguments)` is the expected text."""

    def book_reservation(self, user_id, origin, destination, flight_type, cabin,  # type: ignore[no-untyped-def]
                         flights, passengers, payment_methods, total_baggages,
                         nonfree_baggages, insurance):
        raise AssertionError("binds")

    def get_user_details(self, user_id):  # type: ignore[no-untyped-def]
        raise AssertionError("binds")


class TelecomTools:
    def get_bills_for_customer(self, customer_id, limit=12):  # type: ignore[no-untyped-def]
        raise AssertionError("binds")


def python_error(owner: object, name: str, arguments: dict[str, Any]) -> str:
    with pytest.raises(TypeError) as raised:
        getattr(owner, name)(**arguments)
    return f"Error: {raised.value}"


@pytest.mark.parametrize(("name", "arguments"), [
    ("book_reservation", {k: v for k, v in BOOKING.items() if k != "insurance"}),
    ("book_reservation", {k: v for k, v in BOOKING.items()
                          if k not in ("insurance", "origin")}),
    ("book_reservation", {"user_id": "x"}),
    ("book_reservation", {**BOOKING, "seat": "1A"}),
    ("get_user_details", {}),
    ("get_user_details", {"userId": "x", "user_id": "y"}),
    ("get_user_details", {"user_id": "x", "kwargs": 1}),
])
def test_calls_that_do_not_bind_fail_with_pythons_error(
        airline: Tau2World, name: str, arguments: dict[str, Any]) -> None:
    assert text(airline, name, **arguments) == python_error(AirlineTools(), name, arguments)


def test_arguments_named_like_the_dispatchers_parameters_fail_there(
        airline: Tau2World) -> None:
    """Upstream's `make_tool_call(tool_name, requestor=..., **arguments)` raises before
    the tool (or its absence) matters; texts as upstream's environment returned them."""
    dispatch = "Error: Environment.make_tool_call() got multiple values for argument"
    assert text(airline, "get_user_details", user_id="x", self=1) == f"{dispatch} 'self'"
    assert text(airline, "nope", self=1) == f"{dispatch} 'self'"
    assert text(airline, "get_user_details", tool_name="a", user_id="x") == \
        f"{dispatch} 'tool_name'"
    assert tau2_text(airline.execute("assistant", "get_user_details",
                                     {"requestor": "user", "self": 1})) == (
        "Error: tau2.environment.environment.Environment.make_tool_call() got multiple "
        "values for keyword argument 'requestor'")
    # on the toolkit itself, `self` is Python's binding error for the tool's method
    assert tau2_text(airline.agent.call("get_user_details", {"user_id": "x", "self": 1})) \
        == python_error(AirlineTools(), "get_user_details", {"user_id": "x", "self": 1})


def test_binding_error_wording(airline: Tau2World) -> None:
    missing = {k: v for k, v in BOOKING.items() if k != "insurance"}
    assert text(airline, "book_reservation", **missing) == (
        "Error: AirlineTools.book_reservation() missing 1 required positional argument: "
        "'insurance'")
    telecom = Tau2World("telecom")
    assert text(telecom, "get_bills_for_customer") == python_error(
        TelecomTools(), "get_bills_for_customer", {})
    assert text(telecom, "get_bills_for_customer", customer_id="C1001", max=2) == (
        "Error: TelecomTools.get_bills_for_customer() got an unexpected keyword argument "
        "'max'")


@pytest.mark.parametrize("toolkit", ["airline", "retail", "telecom", "telecom_user"])
def test_signatures_match_the_official_objects(toolkit: str) -> None:
    """Binding errors name our parameters: they must be upstream's, in upstream's order,
    with the same ones required."""
    import inspect

    world = Tau2World(toolkit.removesuffix("_user"))
    env = world.user if toolkit.endswith("_user") else world.agent
    assert env is not None
    for official in official_tools(toolkit):
        function = official["function"]
        params = list(inspect.signature(getattr(type(env), function["name"])).parameters
                      .values())[1:]
        assert [p.name for p in params] == list(function["parameters"]["properties"])
        assert [p.name for p in params if p.default is p.empty] == \
            function["parameters"].get("required", [])


# -- unconverted arguments ---------------------------------------------------------------


def test_ints_sent_as_floats_book_as_upstream(airline: Tau2World) -> None:
    """Upstream prices with the floats (838.0 == 838) and stores them through the
    validated `Reservation` and `Payment` models, so the booking is the same."""
    floats = {**BOOKING, "total_baggages": 3.0, "nonfree_baggages": 1.0,
              "payment_methods": [{"payment_id": "credit_card_2198526", "amount": 838.0}]}
    assert airline.execute("assistant", "book_reservation", floats).ok
    reservation = airline.agent.state.reservations["HATHAT"]
    assert (reservation.total_baggages, reservation.nonfree_baggages) == (3, 1)
    assert type(reservation.total_baggages) is int
    assert [p.model_dump() for p in reservation.payment_history] == [
        {"payment_id": "credit_card_2198526", "amount": 838}]


def test_numbers_as_strings_fail_where_upstream_fails(airline: Tau2World) -> None:
    # `total_price += 50 * nonfree_baggages`: 50 * "1" is a string
    assert text(airline, "book_reservation", **{**BOOKING, "nonfree_baggages": "1"}) == \
        "Error: unsupported operand type(s) for +=: 'int' and 'str'"
    # ... but a string the validated Reservation coerces is fine where it is only stored
    assert airline.execute("assistant", "book_reservation",
                           {**BOOKING, "total_baggages": "3"}).ok
    assert airline.agent.state.reservations["HATHAT"].total_baggages == 3
    # a certificate of "100" is coerced by the Certificate model, the message is not
    assert text(airline, "send_certificate", user_id="mohamed_silva_9265", amount="100") == (
        "Certificate certificate_3221322 added to user mohamed_silva_9265 with amount 100.")
    assert airline.agent.state.users["mohamed_silva_9265"].payment_methods[
        "certificate_3221322"].amount == 100.0
    telecom = Tau2World("telecom")
    assert text(telecom, "get_bills_for_customer", customer_id="C1001", limit=2.0) == (
        "Error: slice indices must be integers or None or have an __index__ method")
    assert text(telecom, "refuel_data", customer_id="C1001", line_id="L1002",
                gb_amount="2") == "Error: '<=' not supported between instances of 'str' and 'int'"


def test_unconverted_values_flow_through_as_upstream(airline: Tau2World) -> None:
    # the date is looked up only for flights between the two airports (none here)
    assert text(airline, "search_direct_flight", origin="JFK", destination="MCO",
                date=["2024-05-22"]) == "[]"
    telecom = Tau2World("telecom")
    assert text(telecom, "set_network_mode_preference", "user", mode=123) == \
        "Error: 'int' object has no attribute 'value'"
    # None is stored and searched with (falling back to 4G), then reported as a failure
    failed = text(telecom, "set_network_mode_preference", "user", mode=None)
    assert failed.startswith("Failed to set network mode: 'None' is not a valid option. "
                             "Please use one of: 4g_5g_preferred, 4g_only, 3g_only, 2g_only"
                             "\nStatus Bar:")
    assert telecom.user is not None
    assert telecom.user.device.network_technology_connected == "4G"


def test_calculate_takes_what_its_whitelist_lets_through(airline: Tau2World) -> None:
    assert text(airline, "calculate", expression=5) == "Error: 'int' object is not iterable"
    assert text(airline, "calculate", expression=["1", "+", "1"]) == \
        "Error: eval() arg 1 must be a string, bytes or code object"


def test_ill_typed_ids_are_looked_up_as_given(airline: Tau2World) -> None:
    assert text(airline, "get_user_details", user_id=9265) == "Error: User 9265 not found"
    assert text(airline, "get_user_details", user_id=["mohamed_silva_9265"]) == \
        "Error: unhashable type: 'list'"


def test_nested_objects_convert_only_when_all_are_dicts(airline: Tau2World) -> None:
    assert text(airline, "book_reservation", **{**BOOKING, "flights": ["HAT023"]}) == \
        "Error: 'str' object has no attribute 'flight_number'"
    missing_date = text(airline, "book_reservation",
                        **{**BOOKING, "flights": [{"flight_number": "HAT023"}]})
    assert missing_date.startswith("Error: 1 validation error for FlightInfo\ndate\n"
                                   "  Field required [type=missing,")
    telecom = Tau2World("telecom")
    assert text(telecom, "set_apn_settings", "user",
                apn_settings={"apn_name": "internet", "mms_port": 80}).startswith(
        "APN settings set to: internet\nStatus Bar:")
    assert text(telecom, "set_apn_settings", "user",
                apn_settings={"name": "internet"}).startswith(
        "Error: 1 validation error for APNSettings\nname\n  Extra inputs are not permitted")
    assert text(telecom, "set_apn_settings", "user", apn_settings="internet") == \
        "Error: 'str' object has no attribute 'apn_name'"


# -- retail pricing ---------------------------------------------------------------------


def test_modified_items_take_the_last_new_variants_price_and_options() -> None:
    """Hand-checked on #W5918442: a perfume (289.66 -> variant 9007697085 at 318.96) and a
    skateboard (195.15 -> 6843647669 at 180.10). The difference is charged per pair,
    29.30 - 15.05 = 14.25, but upstream's modify loop then gives BOTH items the last new
    variant's price (180.10) and options (the skateboard's)."""
    retail = Retail()
    result = retail.call("modify_pending_order_items", {
        "order_id": "#W5918442", "item_ids": ["1725100896", "5312063289"],
        "new_item_ids": ["9007697085", "6843647669"],
        "payment_method_id": "credit_card_5051208"})
    assert result.ok, result.error
    order = retail.state.orders["#W5918442"]
    payment = order.payment_history[-1]
    assert (payment.transaction_type, payment.payment_method_id) == (
        "payment", "credit_card_5051208")
    assert payment.amount == pytest.approx(14.25)
    skateboard = {"deck material": "bamboo", "length": "28 inch", "design": "graphic"}
    assert [(i.item_id, i.price, i.options) for i in order.items[:2]] == [
        ("9007697085", 180.1, skateboard), ("6843647669", 180.1, skateboard)]
    assert order.status == "pending (item modified)"


def test_the_airline_env_is_still_atomic(airline: Tau2World) -> None:
    """A failing call changes nothing (our contract; upstream's errors come before its
    writes in these tools)."""
    before = airline.agent.db_hash()
    text(airline, "book_reservation", **{**BOOKING, "nonfree_baggages": "1"})
    assert airline.agent.db_hash() == before
    assert isinstance(airline.agent, Airline)
