"""τ² airline: the release DB round-trips, every gold action replays, and the tools
compute what upstream v0.2.0 computes (figures below are worked out by hand from the
release db.json)."""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from envs.tau2 import data
from envs.tau2.airline import Airline
from envs.tau2.base import tau2_text
from envs.tau2.data import gc_paused
from envs.tau2.tasks import Task

WRITE_TOOLS = {"book_reservation", "cancel_reservation", "send_certificate",
               "update_reservation_baggages", "update_reservation_flights",
               "update_reservation_passengers"}
READ_TOOLS = {"get_reservation_details", "get_user_details", "list_all_airports",
              "search_direct_flight", "search_onestop_flight", "get_flight_status",
              "calculate", "transfer_to_human_agents"}


@pytest.fixture(autouse=True)
def _no_cyclic_gc() -> Iterator[None]:
    """Speed only: each instance (and each write's undo record) allocates ~10^5 objects,
    and rescanning them, with the cached release files, doubles the run time. Nothing
    here is cyclic garbage, so behaviour is unchanged."""
    with gc_paused():
        yield


@pytest.fixture(scope="module")
def raw_db() -> dict[str, Any]:
    return data.load_db("airline")


@pytest.fixture
def env() -> Airline:
    """A fresh instance, for tests that write."""
    return Airline()


@pytest.fixture(scope="module")
def reader() -> Airline:
    """One instance shared by the tests that only read."""
    return Airline()


def ok(env: Airline, name: str, **arguments: Any) -> Any:
    result = env.call(name, arguments)
    assert result.ok, result.error
    return result.content


def error(env: Airline, name: str, **arguments: Any) -> str:
    result = env.call(name, arguments)
    assert not result.ok
    return tau2_text(result)


# -- contract and data ------------------------------------------------------------------


def test_tools_and_write_flags() -> None:
    specs = {spec.name: spec.write for spec in Airline.tool_specs()}
    assert set(specs) == WRITE_TOOLS | READ_TOOLS
    assert {name for name, write in specs.items() if write} == WRITE_TOOLS


def test_db_round_trips_exactly(reader: Airline, raw_db: dict[str, Any]) -> None:
    """Every value keeps its JSON type (amounts are floats in the file too); the only
    addition of a full dump is each reservation's defaulted `status: None`, which
    upstream's dump — and so its DB hash — contains as well."""
    assert json.dumps(reader.state.model_dump(exclude_unset=True), sort_keys=True) == \
        json.dumps(raw_db, sort_keys=True)
    with_defaults = {**raw_db, "reservations": {
        rid: {"status": None, **r} for rid, r in raw_db["reservations"].items()}}
    assert reader.state.model_dump() == with_defaults
    expected = json.dumps(with_defaults, sort_keys=True, default=str)
    assert reader.db_hash() == hashlib.sha256(expected.encode()).hexdigest()


# -- gold actions -----------------------------------------------------------------------

#: (task id, action id) -> upstream's error for gold actions that fail: none in airline
EXPECTED_GOLD_FAILURES: dict[tuple[str, str], str] = {}


@cache
def _tasks() -> list[Task]:
    return [Task.model_validate(t) for t in data.load_tasks("airline")]


@pytest.mark.parametrize("task_id", [str(i) for i in range(50)])
def test_gold_actions_replay(task_id: str) -> None:
    task = next(t for t in _tasks() if t.id == task_id)
    env = Airline()
    failures = {}
    for action in task.evaluation_criteria.actions or []:
        assert action.requestor == "assistant"
        result = env.call(action.name, action.arguments)
        if not result.ok:
            failures[(task.id, action.action_id)] = result.error
    assert failures == {k: v for k, v in EXPECTED_GOLD_FAILURES.items() if k[0] == task_id}


def test_gold_bookings_take_successive_ids(env: Airline) -> None:
    """Task 23 books three reservations; a fourth finds no id left."""
    task = next(t for t in _tasks() if t.id == "23")
    bookings = [a for a in task.evaluation_criteria.actions or []
                if a.name == "book_reservation"]
    ids = [ok(env, "book_reservation", **a.arguments)["reservation_id"] for a in bookings]
    assert ids == ["HATHAT", "HATHAU", "HATHAV"]
    assert env.state.users["mohamed_silva_9265"].reservations[-3:] == ids
    assert error(env, "book_reservation", **bookings[0].arguments) == \
        "Error: Too many reservations"


# -- bookings ---------------------------------------------------------------------------

BOOKING = {
    "user_id": "mohamed_silva_9265", "origin": "JFK", "destination": "SFO",
    "flight_type": "one_way", "cabin": "business",
    "flights": [{"flight_number": "HAT023", "date": "2024-05-26"}],
    "passengers": [{"first_name": "Mohamed", "last_name": "Silva", "dob": "1960-11-26"},
                   {"first_name": "Raj", "last_name": "Sanchez", "dob": "1986-09-12"}],
    "total_baggages": 3, "nonfree_baggages": 1, "insurance": "yes",
}
#: HAT023 on 2024-05-26 costs 364 in business: 2 x 364 + 2 x 30 insurance + 1 x 50 bag
BOOKING_TOTAL = 838
BOOKING_PAYMENTS = [{"payment_id": "certificate_3765853", "amount": 500},
                    {"payment_id": "gift_card_8020792", "amount": 198},
                    {"payment_id": "credit_card_2198526", "amount": 140}]


def test_booking_charges_fare_insurance_and_bags(env: Airline) -> None:
    user = env.state.users["mohamed_silva_9265"]
    assert user.payment_methods["gift_card_8020792"].amount == 198.0
    seats = env.state.flights["HAT023"].dates["2024-05-26"].available_seats
    assert seats == {"basic_economy": 8, "economy": 14, "business": 6}

    result = env.call("book_reservation", {**BOOKING, "payment_methods": BOOKING_PAYMENTS})
    assert result.ok
    reservation = env.state.reservations["HATHAT"]
    assert sum(p.amount for p in reservation.payment_history) == BOOKING_TOTAL
    assert reservation.created_at == "2024-05-15T15:00:00"
    assert [f.model_dump() for f in reservation.flights] == [{
        "flight_number": "HAT023", "origin": "JFK", "destination": "SFO",
        "date": "2024-05-26", "price": 364}]
    assert reservation.status is None
    # the certificate is spent whole (500 of 500 here), the gift card debited to zero
    assert "certificate_3765853" not in user.payment_methods
    assert user.payment_methods["gift_card_8020792"].amount == 0.0
    assert user.reservations == ["K1NW8N", "HATHAT"]
    assert env.state.flights["HAT023"].dates["2024-05-26"].available_seats == {
        "basic_economy": 8, "economy": 14, "business": 4}
    assert tau2_text(result) == json.dumps(reservation.model_dump())


def test_booking_errors(env: Airline) -> None:
    def book(**changes: Any) -> str:
        return error(env, "book_reservation",
                     **{**BOOKING, "payment_methods": BOOKING_PAYMENTS, **changes})

    short = [*BOOKING_PAYMENTS[:2], {"payment_id": "credit_card_2198526", "amount": 139}]
    assert book(payment_methods=short) == \
        "Error: Payment amount does not add up, total price is 838, but paid 837"
    over = [{"payment_id": "gift_card_8020792", "amount": 838}]
    assert book(payment_methods=over) == \
        "Error: Not enough balance in payment method gift_card_8020792"
    assert book(payment_methods=[{"payment_id": "credit_card_1", "amount": 838}]) == \
        "Error: Payment method credit_card_1 not found"
    # a certificate listed twice passes the checks, then is gone at its second line:
    # upstream raises KeyError there; here the whole booking is rolled back
    twice = [{"payment_id": "certificate_3765853", "amount": 419}] * 2
    assert book(payment_methods=twice) == "Error: 'certificate_3765853'"
    assert "certificate_3765853" in env.state.users["mohamed_silva_9265"].payment_methods
    assert "HATHAT" not in env.state.reservations
    assert book(user_id="nobody_1") == "Error: User nobody_1 not found"
    assert book(flights=[{"flight_number": "HAT999", "date": "2024-05-26"}]) == \
        "Error: Flight HAT999 not found"
    assert book(flights=[{"flight_number": "HAT023", "date": "2024-06-26"}]) == \
        "Error: Flight HAT023 not found on date 2024-06-26"
    assert book(flights=[{"flight_number": "HAT001", "date": "2024-05-01"}]) == \
        "Error: Flight HAT001 not available on date 2024-05-01"
    assert book(cabin="economy", flights=[{"flight_number": "HAT002", "date": "2024-05-24"}]) \
        == "Error: Not enough seats on flight HAT002"


# -- cancellations and changes ----------------------------------------------------------


def test_cancellation_refunds_every_payment_to_its_method(env: Airline) -> None:
    ok(env, "book_reservation", **{**BOOKING, "payment_methods": BOOKING_PAYMENTS})
    result = env.call("cancel_reservation", {"reservation_id": "HATHAT"})
    reservation = env.state.reservations["HATHAT"]
    assert reservation.status == "cancelled"
    assert [p.model_dump() for p in reservation.payment_history] == [
        *BOOKING_PAYMENTS, *({**p, "amount": -p["amount"]} for p in BOOKING_PAYMENTS)]
    # refunds are only recorded: balances, certificates and seats stay as they were
    user = env.state.users["mohamed_silva_9265"]
    assert user.payment_methods["gift_card_8020792"].amount == 0.0
    assert "certificate_3765853" not in user.payment_methods
    assert env.state.flights["HAT023"].dates["2024-05-26"].available_seats["business"] == 4
    assert tau2_text(result) == json.dumps(reservation.model_dump())
    assert error(env, "cancel_reservation", reservation_id="NOPE00") == \
        "Error: Reservation NOPE00 not found"


def test_downgrade_refunds_the_difference_to_a_gift_card(env: Airline) -> None:
    """GV1N64, 3 passengers: business 561 + 1339 paid; basic economy now 53 + 99, so
    3 x (152 - 1900) = -5244 goes back to the gift card (128 + 5244)."""
    flights = [{"flight_number": "HAT003", "date": "2024-05-19"},
               {"flight_number": "HAT290", "date": "2024-05-20"}]
    ok(env, "update_reservation_flights", reservation_id="GV1N64", cabin="basic_economy",
       flights=flights, payment_id="gift_card_1642017")
    reservation = env.state.reservations["GV1N64"]
    assert reservation.cabin == "basic_economy"
    assert [f.price for f in reservation.flights] == [53, 99]
    assert reservation.payment_history[-1].model_dump() == {
        "payment_id": "gift_card_1642017", "amount": -5244}
    assert env.state.users["james_patel_9828"].payment_methods["gift_card_1642017"].amount \
        == 5372.0


def test_upgrade_charges_the_difference(env: Airline) -> None:
    """M20IZO, 2 passengers: economy 136 + 109 paid; business now 430 + 412."""
    flights = [{"flight_number": "HAT268", "date": "2024-05-22"},
               {"flight_number": "HAT010", "date": "2024-05-22"}]
    ok(env, "update_reservation_flights", reservation_id="M20IZO", cabin="business",
       flights=flights, payment_id="credit_card_9074831")
    assert env.state.reservations["M20IZO"].payment_history[-1].model_dump() == {
        "payment_id": "credit_card_9074831", "amount": 2 * (842 - 245)}


def test_kept_segment_keeps_its_price(env: Airline) -> None:
    """1N99U6 (economy, 2 passengers) swaps its outbound for HAT266 (146) and keeps
    HAT112 at the 184 paid, although it sells for 149 now: 2 x (330 - 537) = -414."""
    flights = [{"flight_number": "HAT266", "date": "2024-05-19"},
               {"flight_number": "HAT112", "date": "2024-05-27"}]
    ok(env, "update_reservation_flights", reservation_id="1N99U6", cabin="economy",
       flights=flights, payment_id="gift_card_5634230")
    reservation = env.state.reservations["1N99U6"]
    assert [(f.flight_number, f.price) for f in reservation.flights] == [
        ("HAT266", 146), ("HAT112", 184)]
    assert reservation.payment_history[-1].amount == -414
    assert env.state.users["james_taylor_7043"].payment_methods["gift_card_5634230"].amount \
        == 481.0


def test_flight_change_errors(env: Airline) -> None:
    flights = [{"flight_number": "HAT268", "date": "2024-05-22"},
               {"flight_number": "HAT010", "date": "2024-05-22"}]
    change = {"reservation_id": "M20IZO", "cabin": "business", "flights": flights}
    assert error(env, "update_reservation_flights", **change,
                 payment_id="certificate_9645872") == \
        "Error: Certificate cannot be used to update reservation"
    assert error(env, "update_reservation_flights", **change, payment_id="gift_card_1") == \
        "Error: Payment method not found"
    # FQ8APE to business costs 320 + 473 - (71 + 60) = 662: more than the 127.0 card
    upgrade = {"reservation_id": "FQ8APE", "cabin": "business", "payment_id": "gift_card_6490722",
               "flights": [{"flight_number": "HAT056", "date": "2024-05-25"},
                           {"flight_number": "HAT138", "date": "2024-05-25"}]}
    assert error(env, "update_reservation_flights", **upgrade) == \
        "Error: Gift card balance is not enough"
    assert error(env, "update_reservation_flights", **{**upgrade, "flights": [
        {"flight_number": "HAT278", "date": "2024-05-22"}], "cabin": "basic_economy"}) == \
        "Error: Not enough seats on flight HAT278"


def test_baggage_fees(env: Airline) -> None:
    """HXDUBJ: 0 -> 2 non-free bags costs 100, taken from the 152.0 gift card."""
    ok(env, "update_reservation_baggages", reservation_id="HXDUBJ", total_baggages=2,
       nonfree_baggages=2, payment_id="gift_card_6941833")
    reservation = env.state.reservations["HXDUBJ"]
    assert (reservation.total_baggages, reservation.nonfree_baggages) == (2, 2)
    assert reservation.payment_history[-1].model_dump() == {
        "payment_id": "gift_card_6941833", "amount": 100}
    assert env.state.users[reservation.user_id].payment_methods["gift_card_6941833"].amount \
        == 52.0
    # fewer bags refund nothing and record no payment line
    ok(env, "update_reservation_baggages", reservation_id="HXDUBJ", total_baggages=1,
       nonfree_baggages=1, payment_id="gift_card_6941833")
    assert len(reservation.payment_history) == 2
    # the method is checked even when nothing is owed
    assert error(env, "update_reservation_baggages", reservation_id="HXDUBJ",
                 total_baggages=1, nonfree_baggages=1, payment_id="certificate_2345996") == \
        "Error: Certificate cannot be used to update reservation"


def test_passenger_update(env: Airline) -> None:
    omar = {"first_name": "Omar", "last_name": "Rossi", "dob": "1970-06-06"}
    ok(env, "update_reservation_passengers", reservation_id="FQ8APE", passengers=[omar])
    assert [p.model_dump() for p in env.state.reservations["FQ8APE"].passengers] == [omar]
    assert error(env, "update_reservation_passengers", reservation_id="FQ8APE",
                 passengers=[omar, omar]) == "Error: Number of passengers does not match"


def test_certificates_take_successive_ids(env: Airline) -> None:
    texts = [tau2_text(env.call("send_certificate", {"user_id": "noah_muller_9847",
                                                      "amount": 50})) for _ in range(3)]
    assert texts == [f"Certificate certificate_{n} added to user noah_muller_9847 with "
                     "amount 50." for n in (3221322, 3221323, 3221324)]
    certificate = env.state.users["noah_muller_9847"].payment_methods["certificate_3221322"]
    assert certificate.model_dump() == {"source": "certificate", "id": "certificate_3221322",
                                        "amount": 50.0}
    assert error(env, "send_certificate", user_id="noah_muller_9847", amount=50) == \
        "Error: Too many certificates"
    assert error(env, "send_certificate", user_id="noah", amount=50) == \
        "Error: User noah not found"


# -- reads ------------------------------------------------------------------------------


def test_flight_status(reader: Airline) -> None:
    statuses = {(n, d): tau2_text(reader.call("get_flight_status",
                                           {"flight_number": n, "date": d}))
                for n, d in [("HAT001", "2024-05-01"), ("HAT001", "2024-05-03"),
                             ("HAT001", "2024-05-16"), ("HAT002", "2024-05-15"),
                             ("HAT004", "2024-05-15"), ("HAT009", "2024-05-15")]}
    assert list(statuses.values()) == ["landed", "cancelled", "available", "delayed",
                                       "flying", "on time"]
    assert error(reader, "get_flight_status", flight_number="HAT001", date="2024-06-01") == \
        "Error: Flight HAT001 not found on date 2024-06-01"


def test_lookups_serialise_as_upstream(reader: Airline) -> None:
    result = reader.call("get_user_details", {"user_id": "mia_li_3668"})
    assert tau2_text(result) == json.dumps(reader.state.users["mia_li_3668"].model_dump())
    result = reader.call("get_reservation_details", {"reservation_id": "4WQ150"})
    text = tau2_text(result)
    assert text == json.dumps(reader.state.reservations["4WQ150"].model_dump())
    assert text.startswith('{"reservation_id": "4WQ150", "user_id": "chen_jackson_3290"')
    assert text.endswith('"insurance": "no", "status": null}')
    assert error(reader, "get_user_details", user_id="mia") == "Error: User mia not found"
    airports = ok(reader, "list_all_airports")
    assert len(airports) == 20
    assert airports[0] == {"iata": "SFO", "city": "San Francisco"}
    assert ok(reader, "transfer_to_human_agents", summary="x") == "Transfer successful"


def test_direct_search_lists_only_bookable_flights(reader: Airline) -> None:
    result = reader.call("search_direct_flight",
                      {"origin": "JFK", "destination": "SFO", "date": "2024-05-26"})
    flights = result.content
    assert flights and all(f["status"] == "available" and f["date"] is None for f in flights)
    assert {(f["origin"], f["destination"]) for f in flights} == {("JFK", "SFO")}
    hat023 = next(f for f in flights if f["flight_number"] == "HAT023")
    assert hat023["prices"] == {"basic_economy": 69, "economy": 162, "business": 364}
    assert list(hat023) == ["flight_number", "origin", "destination", "status",
                            "scheduled_departure_time_est", "scheduled_arrival_time_est",
                            "date", "available_seats", "prices"]
    assert tau2_text(result) == json.dumps(flights)
    assert ok(reader, "search_direct_flight", origin="JFK", destination="SFO",
              date="2024-05-01") == []


def test_onestop_search_chains_legs_and_rolls_the_date(reader: Airline) -> None:
    """HAT002 (LGA 21:00 -> PHX 01:30+1) connects with flights leaving PHX the next day
    after 01:30 (times are compared as strings, as upstream does)."""
    pairs = ok(reader, "search_onestop_flight", origin="LGA", destination="IAH",
               date="2024-05-20")
    assert [(f["flight_number"], f["destination"], f["scheduled_arrival_time_est"],
             s["flight_number"], s["date"], s["scheduled_departure_time_est"])
            for f, s in pairs] == [
        ("HAT002", "PHX", "01:30:00+1", "HAT152", "2024-05-21", "15:00:00"),
        ("HAT114", "PHX", "01:30:00+1", "HAT152", "2024-05-21", "15:00:00"),
        ("HAT201", "PHX", "07:30:00", "HAT152", "2024-05-20", "15:00:00"),
        ("HAT245", "PHX", "04:30:00", "HAT152", "2024-05-20", "15:00:00"),
    ]
    assert all(f["date"] == "2024-05-20" and f["origin"] == "LGA" for f, _ in pairs)


def upstream_calculate(expression: str) -> str:
    """Upstream's implementation, as the reference the port must agree with."""
    if not all(char in "0123456789+-*/(). " for char in expression):
        return "Error: Invalid characters in expression"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)  # "(1)(2)" warns at compile time
            return str(round(float(eval(expression, {"__builtins__": None}, {})), 2))  # noqa: S307
    except Exception as e:  # noqa: BLE001
        return f"Error: {e}"


@pytest.mark.parametrize("expression", [
    "2 + 2", "(1234 - 56) * 3 / 7", "10/3", " 7*-3", "2**-1", "0.1+0.2", "7 // 2", "1.",
    "1/0", "1.0/0", "1//0", "(-8)**0.5", "()", "...", "(1)(2)", "", "1 2", "(", "0777",
    "(*())", "2 + x", "__import__('os')", "1e3",
])
def test_calculate_matches_upstream(reader: Airline, expression: str) -> None:
    assert tau2_text(reader.call("calculate", {"expression": expression})) == \
        upstream_calculate(expression)


def test_calculate_refuses_runaway_powers(reader: Airline) -> None:
    assert tau2_text(reader.call("calculate", {"expression": "9**9**9"})) == \
        "Error: Exponent too large"
