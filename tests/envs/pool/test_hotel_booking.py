"""The hotel_booking environment: every tool's success path and business-rule failures."""

from __future__ import annotations

import json

import pytest

from envs.pool import pool_classes
from envs.pool.hotel_booking import HotelBooking
from tests.envs.pool.helpers import fails, ok


@pytest.fixture
def env() -> HotelBooking:
    return HotelBooking()




STAY = {"check_in": "2026-07-10", "check_out": "2026-07-12"}


def test_registered_with_metadata() -> None:
    assert pool_classes()["hotel_booking"] is HotelBooking
    assert HotelBooking.domain == "travel" and HotelBooking.description
    writes = {s.name for s in HotelBooking.tool_specs() if s.write}
    assert writes == {"register_guest", "create_reservation", "modify_reservation",
                      "cancel_reservation", "check_in", "check_out", "set_special_requests"}
    assert 6 <= len(HotelBooking.tool_specs()) <= 15


def test_default_state_is_deterministic_and_sized() -> None:
    a, b = HotelBooking.default_state(), HotelBooking.default_state()
    assert a == b and a.seed == 0
    assert min(len(a.hotels), len(a.guests), len(a.reservations)) >= 20
    for res in a.reservations.values():
        assert res.guest_id in a.guests and res.room_type in a.hotels[res.hotel_id].room_types
        assert round(sum(res.nightly_prices), 2) == res.total
    # nobody is booked into two places on the same night
    held = [r for r in a.reservations.values() if r.status != "cancelled"]
    assert not [(x.id, y.id) for x in held for y in held if x.id < y.id
                and x.guest_id == y.guest_id and x.check_in < y.check_out
                and y.check_in < x.check_out]


def test_snapshot_round_trip(env: HotelBooking) -> None:
    ok(env, "create_reservation", guest_id="G-1001", hotel_id="H-01", room_type="KING", **STAY)
    snap = env.snapshot()
    restored = HotelBooking()
    restored.restore(json.loads(json.dumps(snap)))
    assert restored.snapshot() == snap and restored.state == env.state
    call = {"reservation_id": "RES-70032"}
    assert restored.call("cancel_reservation", call) == env.call("cancel_reservation", call)


def test_search_hotels(env: HotelBooking) -> None:
    found = ok(env, "search_hotels", city="chicago", check_in="2026-06-15",
               check_out="2026-06-18", guests=4)
    rooms = {h["hotel_id"]: [r["room_type"] for r in h["rooms"]] for h in found}
    # the Wabash's only suite is booked (RES-70007) on those nights
    assert rooms["H-05"] == ["QQ"] and rooms["H-04"] == ["QQ", "STE"]
    cheap = ok(env, "search_hotels", city="Chicago", check_in="2026-06-15",
               check_out="2026-06-18", max_nightly_rate=160)
    assert [(h["hotel_id"], [r["room_type"] for r in h["rooms"]]) for h in cheap] == [
        ("H-05", ["KING"])]
    assert ok(env, "search_hotels", city="Paris", **STAY) == []
    fails(env, "search_hotels", "Check-in date 2026-06-01 is in the past.", city="Chicago",
          check_in="2026-06-01", check_out="2026-06-03")
    fails(env, "search_hotels", "A stay must be between 1 and 14 nights", city="Chicago",
          check_in="2026-07-10", check_out="2026-07-30")
    fails(env, "search_hotels", "Dates must be YYYY-MM-DD.", city="Chicago",
          check_in="July 10", check_out="2026-07-12")


def test_get_hotel_and_quote(env: HotelBooking) -> None:
    hotel = ok(env, "get_hotel", hotel_id="H-05")
    assert hotel["name"] == "The Wabash" and set(hotel["room_types"]) == {"KING", "QQ", "STE"}
    fails(env, "get_hotel", "Hotel 'H-99' not found.", hotel_id="H-99")
    # Friday and Saturday nights carry the weekend uplift; gold members get 10% off
    quote = ok(env, "quote_stay", hotel_id="H-05", room_type="KING", check_in="2026-06-18",
               check_out="2026-06-21", guest_id="G-1004")
    assert quote["nightly_prices"] == [143.1, 171.72, 171.72] and quote["total"] == 486.54
    assert quote["points_cost"] == 48700
    assert quote["cancellation_policy"] == ("Free cancellation until 2026-06-16T15:00:00; "
                                            "after that the first night is charged.")
    nonref = ok(env, "quote_stay", hotel_id="H-05", room_type="KING", rate_plan="non_refundable",
                **STAY)
    assert nonref["points_cost"] is None and nonref["total"] == 343.44
    fails(env, "quote_stay", "The Wabash has no room type 'PENT'; available: KING, QQ, STE.",
          hotel_id="H-05", room_type="PENT", **STAY)
    fails(env, "quote_stay", "Guest 'G-1' not found.", hotel_id="H-05", room_type="KING",
          guest_id="G-1", **STAY)


def test_guests_and_reservations_lookup(env: HotelBooking) -> None:
    assert [g["id"] for g in ok(env, "find_guest", query="okoro")] == ["G-1017"]
    assert [g["id"] for g in ok(env, "find_guest", query="555-6608")] == ["G-1001"]
    guest = ok(env, "get_guest", guest_id="G-1002")
    assert [r["id"] for r in guest["reservations"]] == ["RES-70021", "RES-70024", "RES-70028"]
    fails(env, "get_guest", "Guest 'G-0' not found.", guest_id="G-0")
    res = ok(env, "get_reservation", reservation_id="RES-70021")
    assert res["hotel_name"] == "Magnificent Mile Suites" and res["rate_plan"] == "non_refundable"
    fails(env, "get_reservation", "Reservation 'RES-1' not found.", reservation_id="RES-1")


def test_register_guest(env: HotelBooking) -> None:
    guest = ok(env, "register_guest", name="Rosa Delgado", email="Rosa.Delgado@example.com")
    assert guest == {"id": "G-1025", "name": "Rosa Delgado", "email": "rosa.delgado@example.com",
                     "phone": "", "tier": "member", "points": 0}
    fails(env, "register_guest", "A loyalty member with email rosa.delgado@example.com already "
          "exists.", name="Rosa D", email="rosa.delgado@example.com")
    fails(env, "register_guest", "A name and a valid email address are required.",
          name="Rosa", email="rosa")


def test_create_reservation(env: HotelBooking) -> None:
    res = ok(env, "create_reservation", guest_id="G-1004", hotel_id="H-05", room_type="QQ",
             guests=3, rate_plan="non_refundable", special_requests="crib in room", **STAY)
    assert res["id"] == "RES-70032" and res["status"] == "confirmed"
    assert res["total"] == 355.76 and res["payment"] == "card"
    base = {"guest_id": "G-1004", "hotel_id": "H-05", "room_type": "STE",
            "check_in": "2026-06-15", "check_out": "2026-06-18"}
    fails(env, "create_reservation", "No One-Bedroom Suite available at The Wabash for "
          "2026-06-15 to 2026-06-18.", **base)
    fails(env, "create_reservation", "Standard King at The Wabash sleeps at most 2.",
          **{**base, "room_type": "KING", "guests": 3})
    fails(env, "create_reservation", "Guest 'G-5' not found.", **{**base, "guest_id": "G-5"})
    fails(env, "create_reservation", "Hotel 'H-0' not found.", **{**base, "hotel_id": "H-0"})


def test_create_reservation_with_points(env: HotelBooking) -> None:
    res = ok(env, "create_reservation", guest_id="G-1001", hotel_id="H-01", room_type="KING",
             pay_with_points=True, **STAY)
    assert res["payment"] == "points" and res["points_used"] == 55000
    assert env.state.guests["G-1001"].points == 80500
    fails(env, "create_reservation", "Points can only pay for flexible-rate stays.",
          guest_id="G-1001", hotel_id="H-01", room_type="KING", rate_plan="non_refundable",
          pay_with_points=True, **STAY)
    fails(env, "create_reservation", "Samuel Park has 9500 points; this stay needs 46800.",
          guest_id="G-1021", hotel_id="H-01", room_type="KING", pay_with_points=True, **STAY)


def test_modify_reservation(env: HotelBooking) -> None:
    res = ok(env, "modify_reservation", reservation_id="RES-70006", check_out="2026-06-21",
             room_type="KING")
    assert res["room_type"] == "KING" and res["check_out"] == "2026-06-21"
    assert res["nightly_prices"] == [151.05, 151.05, 181.26, 181.26]
    fails(env, "modify_reservation", "Reservation RES-70021 is non-refundable and cannot be "
          "changed.", reservation_id="RES-70021", guests=2)
    fails(env, "modify_reservation", "Nothing to change", reservation_id="RES-70006")
    fails(env, "modify_reservation", "Reservation RES-70010 is checked in and cannot be "
          "modified.", reservation_id="RES-70010", guests=2)
    fails(env, "modify_reservation", "No One-Bedroom Suite available at The Wabash for "
          "2026-06-17 to 2026-06-21.", reservation_id="RES-70006", room_type="STE")
    fails(env, "modify_reservation", "Double Queen at The Wabash sleeps at most 4.",
          reservation_id="RES-70006", room_type="QQ", guests=5)


def test_modify_points_reservation_charges_the_difference(env: HotelBooking) -> None:
    ok(env, "modify_reservation", reservation_id="RES-70011", check_out="2026-06-15")
    res = env.state.reservations["RES-70011"]
    assert res.total == 831.6 and res.points_used == 83200
    assert env.state.guests["G-1003"].points == 75100 - (83200 - 45400)
    fails(env, "modify_reservation", "Hiroshi Tanaka has 37300 points; the change needs",
          reservation_id="RES-70011", check_out="2026-06-20")


def test_cancel_reservation_policies(env: HotelBooking) -> None:
    free = ok(env, "cancel_reservation", reservation_id="RES-70006")
    assert free["status"] == "cancelled" and free["cancellation_fee"] == 0.0
    late = ok(env, "cancel_reservation", reservation_id="RES-70003")  # arrives in 2 days
    assert late["cancellation_fee"] == 239.0
    nonref = ok(env, "cancel_reservation", reservation_id="RES-70009")
    assert nonref["cancellation_fee"] == nonref["total"] == 858.24
    # a points stay cancelled after the deadline keeps the first night's points
    points = ok(env, "cancel_reservation", reservation_id="RES-70011")
    assert points["points_refunded"] == 0 and points["cancellation_fee"] == 453.6
    fails(env, "cancel_reservation", "Reservation RES-70006 is cancelled and cannot be "
          "cancelled.", reservation_id="RES-70006")
    fails(env, "cancel_reservation", "Reservation 'RES-2' not found.", reservation_id="RES-2")


def test_cancel_points_stay_in_time_refunds_all_points(env: HotelBooking) -> None:
    res = ok(env, "create_reservation", guest_id="G-1001", hotel_id="H-01", room_type="KING",
             pay_with_points=True, **STAY)
    cancelled = ok(env, "cancel_reservation", reservation_id=res["id"])
    assert cancelled["points_refunded"] == 55000 and env.state.guests["G-1001"].points == 135500


def test_check_in(env: HotelBooking) -> None:
    res = ok(env, "check_in", reservation_id="RES-70004")
    assert res["status"] == "checked_in" and res["room_number"] == "202"  # 201 is occupied
    fails(env, "check_in", "Reservation RES-70006 arrives on 2026-06-17; check-in is only "
          "possible on that day (today is 2026-06-12).", reservation_id="RES-70006")
    fails(env, "check_in", "Reservation RES-70004 is checked in and cannot be checked in.",
          reservation_id="RES-70004")


def test_check_out_awards_points(env: HotelBooking) -> None:
    res = ok(env, "check_out", reservation_id="RES-70010")  # platinum: 15 points per dollar
    assert res["points_earned"] == 10069 and res["points_balance"] == 91500 + 10069
    fails(env, "check_out", "Reservation RES-70010 is checked out, not checked in.",
          reservation_id="RES-70010")
    fails(env, "check_out", "Reservation RES-70006 is confirmed, not checked in.",
          reservation_id="RES-70006")


def test_set_special_requests(env: HotelBooking) -> None:
    res = ok(env, "set_special_requests", reservation_id="RES-70006",
             requests="late arrival after 11pm")
    assert res["special_requests"] == "late arrival after 11pm"
    fails(env, "set_special_requests", "Reservation RES-70006 already has those requests.",
          reservation_id="RES-70006", requests="late arrival after 11pm")
    fails(env, "set_special_requests", "Reservation RES-70008 is checked out and cannot be "
          "changed.", reservation_id="RES-70008", requests="x")
