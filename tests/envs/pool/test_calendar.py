"""Calendar environment: every tool's success and failure paths, atomic failed writes,
snapshot round-trips and a deterministic seed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envs.pool.calendar import Calendar
from tests.envs.pool.helpers import fails, ok


@pytest.fixture
def env() -> Calendar:
    return Calendar()




def test_default_state_is_deterministic_and_rich() -> None:
    state = Calendar.default_state()
    assert state == Calendar.default_state()
    assert Calendar.default_state(seed=1) != state
    for entity in (state.users, state.calendars, state.rooms, state.events):
        assert len(entity) >= 20
    assert state.next_event_id == len(state.events) + 1
    for event in state.events.values():
        assert event.calendar_id in state.calendars and event.organizer_id in state.users
        assert all(a.user_id in state.users for a in event.attendees)
        assert event.room_id is None or event.room_id in state.rooms


def test_metadata() -> None:
    assert Calendar.name == "calendar" and Calendar.domain == "office"
    specs = {s.name: s for s in Calendar.tool_specs()}
    assert 6 <= len(specs) <= 15
    assert not specs["list_events"].write and specs["create_event"].write
    assert specs["create_event"].parameters["properties"]["repeat"]["enum"] == [
        "none", "daily", "weekdays", "weekly"]


def test_snapshot_round_trip(env: Calendar) -> None:
    ok(env, "cancel_event", event_id="ev-0001", occurrence_date="2026-03-10")
    assert Calendar().snapshot() != env.snapshot()  # episodes never share seed objects
    snap = env.snapshot()
    restored = Calendar()
    restored.restore(json.loads(json.dumps(snap)))
    assert restored.snapshot() == snap and restored.state == env.state
    call = {"event_id": "ev-0003", "start_time": "16:00"}
    assert restored.call("reschedule_event", call) == env.call("reschedule_event", call)


def test_find_users(env: Calendar) -> None:
    assert [u["id"] for u in ok(env, "find_users", query="marcus")] == ["u02"]
    assert len(ok(env, "find_users", query="platform")) == 6
    fails(env, "find_users", "Query must not be empty", query="  ")


def test_list_calendars(env: Calendar) -> None:
    access = {c["id"]: c["access"] for c in ok(env, "list_calendars")}
    assert access == {"cal-u01": "owner", "cal-platform": "owner", "cal-product": "write",
                      "cal-u02": "read", "cal-u16": "read", "cal-company": "read"}


def test_list_events(env: Calendar) -> None:
    week = ok(env, "list_events", date_from="2026-03-09", date_to="2026-03-13")
    standups = [o for o in week if o["title"] == "Platform standup"]
    assert [o["start"] for o in standups][:2] == ["2026-03-09T09:30", "2026-03-10T09:30"]
    assert len(standups) == 5
    upcoming = ok(env, "list_events", query="checkout")  # today and the next 13 days
    assert [o["event_id"] for o in upcoming] == ["ev-0006"]
    sprints = ok(env, "list_events", query="platform sprint")  # 2026-03-23 is beyond that
    assert [o["start"] for o in sprints] == ["2026-03-16T10:00"]
    only = ok(env, "list_events", date_from="2026-03-09", date_to="2026-03-27",
              calendar_id="cal-u01", query="1:1")
    assert len(only) == 3 and {o["event_id"] for o in only} == {"ev-0002"}
    assert all(o["calendar_id"] != "cal-u05" for o in
               ok(env, "list_events", date_from="2026-03-09", date_to="2026-03-27"))
    fails(env, "list_events", "Invalid date 'March 9'", date_from="March 9",
          date_to="2026-03-10")
    fails(env, "list_events", "date_to must not be before date_from",
          date_from="2026-03-10", date_to="2026-03-09")
    fails(env, "list_events", "limited to 31 days", date_from="2026-03-01",
          date_to="2026-04-15")
    fails(env, "list_events", "Calendar 'cal-nope' not found", date_from="2026-03-09",
          date_to="2026-03-10", calendar_id="cal-nope")
    fails(env, "list_events", "Permission denied: calendar 'cal-marketing' is not shared",
          date_from="2026-03-09", date_to="2026-03-10", calendar_id="cal-marketing")


def test_get_event(env: Calendar) -> None:
    event = ok(env, "get_event", event_id="ev-0003")
    assert event["title"] == "Q2 roadmap review" and event["room"] == {
        "id": "rm-103", "name": "Cedar"}
    assert ok(env, "get_event", event_id="ev-0006")["organizer"]["name"] == "Grace Liu"
    fails(env, "get_event", "Event 'ev-9999' not found", event_id="ev-9999")
    fails(env, "get_event", "Permission denied: you cannot see event 'ev-0035'",
          event_id="ev-0035")


def test_check_availability(env: Calendar) -> None:
    out = ok(env, "check_availability", user_ids=["u02", "u24"], date="2026-03-09",
             start_time="09:00", end_time="10:00")
    assert out[0]["free"] is False and out[0]["busy"] == [
        {"start": "2026-03-09T09:30", "end": "2026-03-09T09:45"}]
    assert out[1] == {"user_id": "u24", "name": "Noah Schmidt", "free": True, "busy": []}
    fails(env, "check_availability", "Give at least one user id", user_ids=[],
          date="2026-03-09", start_time="09:00", end_time="10:00")
    fails(env, "check_availability", "User 'u99' not found", user_ids=["u99"],
          date="2026-03-09", start_time="09:00", end_time="10:00")
    fails(env, "check_availability", "Invalid time '9am'", user_ids=["u02"],
          date="2026-03-09", start_time="9am", end_time="10:00")
    fails(env, "check_availability", "End time 09:00 must be after start time 10:00",
          user_ids=["u02"], date="2026-03-09", start_time="10:00", end_time="09:00")


def test_find_free_rooms(env: Calendar) -> None:
    rooms = ok(env, "find_free_rooms", date="2026-03-11", start_time="15:00",
               end_time="16:00", min_capacity=8, feature="projector")
    ids = [r["id"] for r in rooms]
    assert "rm-103" not in ids and "rm-203" in ids
    assert all(r["capacity"] >= 8 and "projector" in r["features"] for r in rooms)
    fails(env, "find_free_rooms", "min_capacity must be at least 1", date="2026-03-11",
          start_time="15:00", end_time="16:00", min_capacity=0)


def test_create_event(env: Calendar) -> None:
    out = ok(env, "create_event", calendar_id="cal-u01", title="Hiring sync",
             date="2026-03-09", start_time="09:30", end_time="10:00",
             attendee_ids=["u21", "u02"], room_id="rm-101")
    event = out["event"]
    assert event["id"] == "ev-0044" and env.state.next_event_id == 45
    assert event["organizer"]["id"] == "u01" and event["room"]["name"] == "Aspen"
    assert out["attendee_conflicts"] == [{"user_id": "u02", "name": "Marcus Chen",
                                          "start": "2026-03-09T09:30",
                                          "end": "2026-03-09T09:45"}]
    series = ok(env, "create_event", calendar_id="cal-platform", title="Ops review",
                date="2026-03-17", start_time="14:00", end_time="14:30", repeat="weekly",
                occurrences=3)["event"]
    assert series["recurrence"] == {"freq": "weekly", "count": 3, "skip_dates": []}
    assert len(ok(env, "list_events", date_from="2026-03-09", date_to="2026-04-08",
                  query="Ops review")) == 3


@pytest.mark.parametrize(("args", "message"), [
    ({"calendar_id": "cal-x"}, "Calendar 'cal-x' not found"),
    ({"calendar_id": "cal-company"},
     "Permission denied: you cannot add events to calendar 'Company Events'"),
    ({"title": " "}, "Title must not be empty"),
    ({"date": "2026-03-06"}, "Cannot schedule in the past (it is now 2026-03-09T09:00)"),
    ({"occurrences": 2}, "occurrences must be 1 for a one-off event"),
    ({"repeat": "daily"}, "A recurring series needs 2-52 occurrences"),
    ({"repeat": "weekdays", "occurrences": 5, "date": "2026-03-14"},
     "A weekday series must start on a weekday"),
    ({"attendee_ids": ["u77"]}, "User 'u77' not found"),
    ({"attendee_ids": ["u01"]}, "Priya Nair (u01) is you, the organizer"),
    ({"attendee_ids": ["u03", "u03"]}, "Sofia Alvarez (u03) is already invited"),
    ({"room_id": "rm-999"}, "Room 'rm-999' not found"),
    ({"room_id": "rm-105", "attendee_ids": ["u03", "u04"]},
     "Room 'Elm' (rm-105) holds 2 people; the meeting has 3"),
    ({"room_id": "rm-103", "date": "2026-03-11"},
     "Room 'Cedar' (rm-103) is already booked on 2026-03-11 15:00-16:00"),
])
def test_create_event_failures(env: Calendar, args: dict[str, Any], message: str) -> None:
    base = {"calendar_id": "cal-u01", "title": "Sync", "date": "2026-03-18",
            "start_time": "15:00", "end_time": "16:00"}
    fails(env, "create_event", message, **{**base, **args})


def test_reschedule_event(env: Calendar) -> None:
    out = ok(env, "reschedule_event", event_id="ev-0003", start_time="16:00")
    assert (out["event"]["start"], out["event"]["end"]) == ("2026-03-11T16:00",
                                                            "2026-03-11T17:00")
    assert {a["response"] for a in out["event"]["attendees"]} == {"needs_action"}
    moved = ok(env, "reschedule_event", event_id="ev-0002", date="2026-03-12",
               start_time="10:00", end_time="10:45")["event"]
    assert moved["start"] == "2026-03-12T10:00" and moved["end"] == "2026-03-12T10:45"
    fails(env, "reschedule_event", "Event 'ev-0999' not found", event_id="ev-0999")
    fails(env, "reschedule_event", "Give a new date, start_time or end_time",
          event_id="ev-0003")
    fails(env, "reschedule_event", "already at that time", event_id="ev-0003",
          start_time="16:00")
    fails(env, "reschedule_event", "Cannot move an event into the past", event_id="ev-0003",
          date="2026-03-02")
    fails(env, "reschedule_event", "would run past midnight", event_id="ev-0003",
          start_time="23:30")
    fails(env, "reschedule_event", "Room 'Cedar' (rm-103) is already booked on 2026-03-12",
          event_id="ev-0003", date="2026-03-12", start_time="12:00")
    fails(env, "reschedule_event", "Permission denied: you cannot change events on calendar "
          "'Marcus Chen'", event_id="ev-0036", start_time="15:00")
    ok(env, "cancel_event", event_id="ev-0005")
    fails(env, "reschedule_event", "Event 'Dentist' (ev-0005) is cancelled",
          event_id="ev-0005", start_time="15:00")


def test_cancel_event(env: Calendar) -> None:
    one = ok(env, "cancel_event", event_id="ev-0001", occurrence_date="2026-03-11")
    assert one["recurrence"]["skip_dates"] == ["2026-03-11"] and one["status"] == "confirmed"
    days = [o["start"][:10] for o in ok(env, "list_events", date_from="2026-03-09",
                                        date_to="2026-03-13", query="standup")]
    assert "2026-03-11" not in days and len(days) == 4
    fails(env, "cancel_event", "already cancelled", event_id="ev-0001",
          occurrence_date="2026-03-11")
    fails(env, "cancel_event", "'Platform standup' has no occurrence on 2026-03-14",
          event_id="ev-0001", occurrence_date="2026-03-14")
    fails(env, "cancel_event", "'Dentist' does not repeat", event_id="ev-0005",
          occurrence_date="2026-03-13")
    assert ok(env, "cancel_event", event_id="ev-0003")["status"] == "cancelled"
    # the freed room can be booked again
    ok(env, "create_event", calendar_id="cal-u01", title="Reuse", date="2026-03-11",
       start_time="15:00", end_time="16:00", room_id="rm-103")
    fails(env, "cancel_event", "Event 'Q2 roadmap review' (ev-0003) is cancelled",
          event_id="ev-0003")
    fails(env, "cancel_event", "Permission denied: you cannot change events on calendar "
          "'Company Events'", event_id="ev-0007")


def test_add_attendees(env: Calendar) -> None:
    out = ok(env, "add_attendees", event_id="ev-0003", user_ids=["u08", "u13"])
    assert [a["id"] for a in out["event"]["attendees"]][-2:] == ["u08", "u13"]
    assert out["attendee_conflicts"] == []
    fails(env, "add_attendees", "Give at least one user id", event_id="ev-0003", user_ids=[])
    fails(env, "add_attendees", "Grace Liu (u07) is already invited", event_id="ev-0003",
          user_ids=["u07"])
    fails(env, "add_attendees", "Room 'Elm' (rm-105) holds 2 people; the meeting has 3",
          event_id="ev-0002", user_ids=["u03"])


def test_remove_attendee(env: Calendar) -> None:
    out = ok(env, "remove_attendee", event_id="ev-0003", user_id="u16")
    assert "u16" not in [a["id"] for a in out["attendees"]]
    fails(env, "remove_attendee", "Raj Patel is not invited to 'Q2 roadmap review'",
          event_id="ev-0003", user_id="u16")
    fails(env, "remove_attendee", "Priya Nair organizes 'Q2 roadmap review'",
          event_id="ev-0003", user_id="u01")
    fails(env, "remove_attendee", "User 'u42' not found", event_id="ev-0003", user_id="u42")


def test_respond_to_event(env: Calendar) -> None:
    out = ok(env, "respond_to_event", event_id="ev-0006", response="accepted")
    assert out["attendees"][0] == {"id": "u01", "name": "Priya Nair", "response": "accepted"}
    fails(env, "respond_to_event", "You have already accepted 'Checkout redesign kickoff'",
          event_id="ev-0006", response="accepted")
    fails(env, "respond_to_event", "You organize 'Dentist'", event_id="ev-0005",
          response="declined")
    fails(env, "respond_to_event", "You are not invited to 'Sprint planning'",
          event_id="ev-0036", response="accepted")
    fails(env, "respond_to_event", "argument 'response'", event_id="ev-0006", response="maybe")


def test_declining_frees_you(env: Calendar) -> None:
    slot = {"user_ids": ["u01"], "date": "2026-03-12", "start_time": "14:00",
            "end_time": "15:00"}
    assert ok(env, "check_availability", **slot)[0]["free"] is False
    ok(env, "respond_to_event", event_id="ev-0006", response="declined")
    assert ok(env, "check_availability", **slot)[0]["free"] is True


def test_book_room(env: Calendar) -> None:
    assert ok(env, "book_room", event_id="ev-0005", room_id="rm-101")["room"]["id"] == "rm-101"
    fails(env, "book_room", "'Dentist' is already in room rm-101", event_id="ev-0005",
          room_id="rm-101")
    fails(env, "book_room", "Room 'Juniper' (rm-205) holds 3 people; the meeting has 4",
          event_id="ev-0003", room_id="rm-205")
    fails(env, "book_room", "Room 'Ivy' (rm-204) is already booked on 2026-03-12 09:00-10:30",
          event_id="ev-0001", room_id="rm-204")
    fails(env, "book_room", "Permission denied", event_id="ev-0007", room_id="rm-304")


def test_share_calendar(env: Calendar) -> None:
    out = ok(env, "share_calendar", calendar_id="cal-u01", user_id="u07", access="write")
    assert out["shared_with"] == {"u02": "read", "u07": "write"}
    assert ok(env, "share_calendar", calendar_id="cal-u01", user_id="u02",
              access="none")["shared_with"] == {"u07": "write"}
    fails(env, "share_calendar", "Grace Liu already has write access", calendar_id="cal-u01",
          user_id="u07", access="write")
    fails(env, "share_calendar", "only the owner can share 'Product'",
          calendar_id="cal-product", user_id="u09", access="read")
    fails(env, "share_calendar", "You own this calendar already", calendar_id="cal-u01",
          user_id="u01", access="read")
    fails(env, "share_calendar", "User 'u00' not found", calendar_id="cal-u01",
          user_id="u00", access="read")
