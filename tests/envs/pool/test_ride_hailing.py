"""The ride_hailing environment: every tool's success path and each business-rule failure."""

from __future__ import annotations

import json

import pytest

from envs.pool import pool_classes
from envs.pool.ride_hailing import RideHailing
from tests.envs.pool.helpers import fails_exactly as fails
from tests.envs.pool.helpers import ok


@pytest.fixture
def env() -> RideHailing:
    return RideHailing()




TRIP = {"rider_id": "RD-001", "pickup_place_id": "PL-22", "dropoff_place_id": "PL-02"}


def test_registered_with_metadata() -> None:
    assert pool_classes()["ride_hailing"] is RideHailing
    assert RideHailing.domain == "travel" and RideHailing.description
    writes = {s.name for s in RideHailing.tool_specs() if s.write}
    assert writes == {"request_ride", "cancel_ride", "change_destination", "rate_ride",
                      "report_lost_item", "add_card", "set_default_payment_method"}
    assert 6 <= len(RideHailing.tool_specs()) <= 15


def test_default_state_is_deterministic_and_sized() -> None:
    a, b = RideHailing.default_state(), RideHailing.default_state()
    assert a == b and a.seed == 0
    assert min(len(a.places), len(a.riders), len(a.drivers), len(a.vehicles), len(a.rides),
               len(a.payment_methods)) >= 20
    for ride in a.rides.values():
        assert ride.rider_id in a.riders and ride.driver_id in a.drivers
        assert a.payment_methods[ride.payment_method_id].rider_id == ride.rider_id
    busy = {r.driver_id for r in a.rides.values() if r.status in ("accepted", "in_progress")}
    assert busy == {d.id for d in a.drivers.values() if d.status == "on_trip"}
    for rider in a.riders.values():  # every default card is usable today
        method = a.payment_methods[rider.default_payment_method_id]
        assert method.rider_id == rider.id and (method.expires or "9") >= a.now[:7]


def test_snapshot_round_trip(env: RideHailing) -> None:
    ok(env, "request_ride", **TRIP)
    snap = env.snapshot()
    restored = RideHailing()
    restored.restore(json.loads(json.dumps(snap)))
    assert restored.snapshot() == snap and restored.state == env.state
    call = {"ride_id": "RIDE-0033", "dropoff_place_id": "PL-01"}
    assert restored.call("change_destination", call) == env.call("change_destination", call)
    assert restored.snapshot() == env.snapshot()


def test_search_places(env: RideHailing) -> None:
    assert [p["id"] for p in ok(env, "search_places", query="airport")] == ["PL-05", "PL-06"]
    assert [p["name"] for p in ok(env, "search_places", query="PIER")] == [
        "Harborview Tower", "Bayside Ferry Terminal"]
    assert ok(env, "search_places", query="moon base") == []


def test_find_rider(env: RideHailing) -> None:
    assert [r["id"] for r in ok(env, "find_rider", query="Raman")] == ["RD-001", "RD-010"]
    assert [r["id"] for r in ok(env, "find_rider", query="975-4584")] == ["RD-010"]
    assert [r["id"] for r in ok(env, "find_rider", query="priya.raman@")] == ["RD-001"]
    fails(env, "find_rider", "query must not be empty", query="  ")


def test_get_rider(env: RideHailing) -> None:
    rider = ok(env, "get_rider", rider_id="RD-001")
    assert rider["name"] == "Priya Raman" and rider["home"] == "Cedar Heights"
    assert [m["id"] for m in rider["payment_methods"]] == ["PM-001", "PM-002"]
    assert rider["active_ride_id"] is None
    assert ok(env, "get_rider", rider_id="RD-005")["active_ride_id"] == "RIDE-0031"
    fails(env, "get_rider", "rider 'RD-999' not found", rider_id="RD-999")


def test_estimate_fare(env: RideHailing) -> None:
    assert ok(env, "estimate_fare", pickup_place_id="PL-22", dropoff_place_id="PL-02",
              vehicle_class="comfort") == {"vehicle_class": "comfort", "distance_km": 16.4,
                                           "duration_min": 39, "surge": 1.0, "fare": 39.76}
    downtown = ok(env, "estimate_fare", pickup_place_id="PL-01", dropoff_place_id="PL-05")
    assert downtown["surge"] == 1.4 and downtown["fare"] == 43.88
    fails(env, "estimate_fare", "place 'PL-99' not found; use search_places to find ids",
          pickup_place_id="PL-99", dropoff_place_id="PL-02")
    fails(env, "estimate_fare", "pickup and dropoff are the same place",
          pickup_place_id="PL-02", dropoff_place_id="PL-02")


def test_request_ride(env: RideHailing) -> None:
    ride = ok(env, "request_ride", **TRIP, vehicle_class="comfort")
    assert (ride["id"], ride["status"], ride["driver_id"], ride["payment_method_id"]) == (
        "RIDE-0033", "accepted", "DR-019", "PM-001")
    assert ride["fare_estimate"] == 39.76 and ride["pickup_eta_min"] == 2
    assert env.state.drivers["DR-019"].status == "on_trip"
    fails(env, "request_ride", "rider RD-001 already has an active ride RIDE-0033", **TRIP)
    fails(env, "request_ride", "rider 'RD-000' not found", **{**TRIP, "rider_id": "RD-000"})
    other = {"rider_id": "RD-002", "pickup_place_id": "PL-01", "dropoff_place_id": "PL-05"}
    fails(env, "request_ride", "place 'PL-77' not found; use search_places to find ids",
          **{**other, "dropoff_place_id": "PL-77"})
    fails(env, "request_ride", "pickup and dropoff are the same place",
          **{**other, "dropoff_place_id": "PL-01"})
    fails(env, "request_ride", "payment method 'PM-001' not found for rider RD-002 "
          "(Marta Whitfield)", **other, payment_method_id="PM-001")
    fails(env, "request_ride", "payment method PM-013 (Amex ending 5855) expired 2025-06",
          **{**other, "rider_id": "RD-008"}, payment_method_id="PM-013")
    fails(env, "request_ride", "wallet PM-010 balance $4.00 is below the fare estimate "
          "$43.88", **{**other, "rider_id": "RD-006"}, payment_method_id="PM-010")
    for driver in env.state.drivers.values():
        if env.state.vehicles[driver.vehicle_id].vehicle_class == "xl":
            driver.status = "offline"
    fails(env, "request_ride", "no xl drivers are available near Central Station right now",
          **other, vehicle_class="xl")


def test_list_rides(env: RideHailing) -> None:
    assert [r["id"] for r in ok(env, "list_rides", rider_id="RD-003")] == [
        "RIDE-0028", "RIDE-0003", "RIDE-0027"]
    assert [r["id"] for r in ok(env, "list_rides", rider_id="RD-010",
                                status="in_progress")] == ["RIDE-0032"]
    fails(env, "list_rides", "rider 'RD-404' not found", rider_id="RD-404")


def test_get_ride(env: RideHailing) -> None:
    ride = ok(env, "get_ride", ride_id="RIDE-0032")
    assert ride["pickup"] == "St. Anne's Hospital" and ride["driver"]["name"] == "Tariq Kaur"
    assert ride["vehicle"] == {"make": "Honda", "model": "Civic", "color": "white",
                               "plate": "EJA-1693"}
    fails(env, "get_ride", "ride 'RIDE-9999' not found", ride_id="RIDE-9999")


def test_cancel_ride(env: RideHailing) -> None:
    # requested 6 minutes ago: past the free window
    assert ok(env, "cancel_ride", ride_id="RIDE-0031") == {
        "ride_id": "RIDE-0031", "status": "cancelled", "cancellation_fee": 5.0}
    assert env.state.drivers["DR-001"].status == "available"
    ok(env, "request_ride", **TRIP)
    assert ok(env, "cancel_ride", ride_id="RIDE-0033")["cancellation_fee"] == 0.0
    fails(env, "cancel_ride", "ride RIDE-0032 is already in progress and cannot be cancelled",
          ride_id="RIDE-0032")
    fails(env, "cancel_ride", "ride RIDE-0001 is completed, not active", ride_id="RIDE-0001")
    fails(env, "cancel_ride", "ride 'RIDE-0404' not found", ride_id="RIDE-0404")


def test_change_destination(env: RideHailing) -> None:
    ride = ok(env, "change_destination", ride_id="RIDE-0031", dropoff_place_id="PL-05")
    assert ride["dropoff"] == "City Airport - Terminal 1" and ride["fare_estimate"] == 44.34
    fails(env, "change_destination", "ride RIDE-0031 is already going to City Airport - "
          "Terminal 1", ride_id="RIDE-0031", dropoff_place_id="PL-05")
    fails(env, "change_destination", "the new dropoff is the pickup place",
          ride_id="RIDE-0031", dropoff_place_id="PL-07")
    fails(env, "change_destination", "place 'PL-00' not found; use search_places to find ids",
          ride_id="RIDE-0031", dropoff_place_id="PL-00")
    fails(env, "change_destination", "ride RIDE-0005 is cancelled, not active",
          ride_id="RIDE-0005", dropoff_place_id="PL-01")


def test_rate_ride(env: RideHailing) -> None:
    rated = ok(env, "rate_ride", ride_id="RIDE-0001", stars=5, comment="Great music", tip=3)
    assert rated == {"ride_id": "RIDE-0001", "stars": 5, "comment": "Great music", "tip": 3.0,
                     "driver": "Kwame Bello", "driver_rating": 4.73}
    assert env.state.drivers["DR-004"].rating_count == RideHailing.default_state().drivers[
        "DR-004"].rating_count + 1
    fails(env, "rate_ride", "ride RIDE-0001 was already rated 5 stars", ride_id="RIDE-0001",
          stars=4)
    fails(env, "rate_ride", "ride RIDE-0005 is cancelled; only completed rides can be rated",
          ride_id="RIDE-0005", stars=4)
    fails(env, "rate_ride", "stars must be between 1 and 5, got 6", ride_id="RIDE-0002",
          stars=6)
    fails(env, "rate_ride", "tip must not be negative, got -1.0", ride_id="RIDE-0002", stars=4,
          tip=-1)
    # a ride paid from a wallet: the tip comes out of its balance
    env.state.rides["RIDE-0019"].payment_method_id = "PM-031"
    fails(env, "rate_ride", "wallet PM-031 balance $4.00 is below the $10.00 tip",
          ride_id="RIDE-0019", stars=5, tip=10)
    ok(env, "rate_ride", ride_id="RIDE-0019", stars=4, tip=2.5)
    assert env.state.payment_methods["PM-031"].balance == 1.5


def test_report_lost_item(env: RideHailing) -> None:
    report = ok(env, "report_lost_item", ride_id="RIDE-0001",
                description="black umbrella on the back seat")
    assert report == {"id": "LI-001", "ride_id": "RIDE-0001", "driver_id": "DR-004",
                      "description": "black umbrella on the back seat", "status": "open",
                      "created_at": "2026-03-16T08:30:00"}
    fails(env, "report_lost_item", "ride RIDE-0001 already has an open lost-item report "
          "LI-001", ride_id="RIDE-0001", description="a scarf")
    fails(env, "report_lost_item", "ride RIDE-0031 is accepted; lost items can only be "
          "reported for completed rides", ride_id="RIDE-0031", description="a scarf")
    fails(env, "report_lost_item", "ride RIDE-0006 ended more than 72 hours ago; contact "
          "support instead", ride_id="RIDE-0006", description="a scarf")
    fails(env, "report_lost_item", "description must not be empty", ride_id="RIDE-0013",
          description=" ")


def test_add_card(env: RideHailing) -> None:
    card = ok(env, "add_card", rider_id="RD-001", brand="visa", last4="4242",
              expires="2028-09", make_default=True)
    assert card["id"] == "PM-039" and card["label"] == "Visa ending 4242"
    assert env.state.riders["RD-001"].default_payment_method_id == "PM-039"
    fails(env, "add_card", "last4 must be exactly four digits, got '42'", rider_id="RD-001",
          brand="visa", last4="42", expires="2028-09")
    fails(env, "add_card", "expires must be YYYY-MM, got '09/28'", rider_id="RD-001",
          brand="visa", last4="1111", expires="09/28")
    fails(env, "add_card", "card expired 2026-02; it cannot be added", rider_id="RD-001",
          brand="visa", last4="1111", expires="2026-02")
    fails(env, "add_card", "Visa ending 4242 is already on rider RD-001's account",
          rider_id="RD-001", brand="visa", last4="4242", expires="2029-01")
    fails(env, "add_card", "rider 'RD-100' not found", rider_id="RD-100", brand="amex",
          last4="1111", expires="2029-01")
    for last4 in ("1111", "2222"):
        ok(env, "add_card", rider_id="RD-001", brand="amex", last4=last4, expires="2029-01")
    fails(env, "add_card", "rider RD-001 already has 5 payment methods", rider_id="RD-001",
          brand="amex", last4="3333", expires="2029-01")


def test_set_default_payment_method(env: RideHailing) -> None:
    rider = ok(env, "set_default_payment_method", rider_id="RD-012",
               payment_method_id="PM-019")
    assert rider["default_payment_method_id"] == "PM-019"
    fails(env, "set_default_payment_method", "PM-019 (Amex ending 2029) is already the default",
          rider_id="RD-012", payment_method_id="PM-019")
    fails(env, "set_default_payment_method", "payment method PM-002 (Visa ending 8989) "
          "expired 2025-02", rider_id="RD-001", payment_method_id="PM-002")
    fails(env, "set_default_payment_method", "payment method 'PM-001' not found for rider "
          "RD-012 (Eva Lin)", rider_id="RD-012", payment_method_id="PM-001")
    fails(env, "set_default_payment_method", "rider 'RD-000' not found", rider_id="RD-000",
          payment_method_id="PM-001")
