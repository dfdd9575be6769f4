"""Calendar: a company's shared calendars, meetings, recurring series and room bookings.

The agent acts as one signed-in user (`current_user_id`). What that user may see and change
follows calendar sharing (owner, write, read); rooms cannot be double-booked, while
attendee conflicts are reported rather than refused, as real calendar tools do.
Times are naive local office times; each event starts and ends on the same day.
"""

from __future__ import annotations

import random
from datetime import date, datetime, time, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from envs.base import Environment, ToolError, tool
from envs.timestamps import Timestamp, current_day, current_moment, stamp

__all__ = ["Calendar", "CalendarState"]

Access = Literal["read", "write"]
Repeat = Literal["none", "daily", "weekdays", "weekly"]
Response = Literal["needs_action", "accepted", "declined", "tentative"]

MAX_SPAN_DAYS = 31
DEFAULT_SPAN_DAYS = 13
MAX_OCCURRENCES = 52


class User(BaseModel):
    id: str
    name: str
    email: str
    title: str
    team: str


class CalendarInfo(BaseModel):
    id: str
    name: str
    owner_id: str
    #: user id -> access granted by the owner (the owner always has write access)
    shared_with: dict[str, Access] = Field(default_factory=dict)


class Room(BaseModel):
    id: str
    name: str
    floor: int
    capacity: int
    features: list[str] = Field(default_factory=list)


class Attendee(BaseModel):
    user_id: str
    response: Response = "needs_action"


class Recurrence(BaseModel):
    freq: Literal["daily", "weekdays", "weekly"]
    #: number of occurrences in the series, skipped ones included
    count: int
    #: dates (YYYY-MM-DD) of single occurrences that were cancelled
    skip_dates: list[str] = Field(default_factory=list)


class Event(BaseModel):
    id: str
    calendar_id: str
    title: str
    #: first occurrence, "YYYY-MM-DDTHH:MM"
    start: Timestamp
    end: Timestamp
    organizer_id: str
    attendees: list[Attendee] = Field(default_factory=list)
    room_id: str | None = None
    recurrence: Recurrence | None = None
    status: Literal["confirmed", "cancelled"] = "confirmed"
    description: str = ""


class CalendarState(BaseModel):
    seed: int = 0
    now: Timestamp = "2026-03-09T09:00"
    current_user_id: str = "u01"
    users: dict[str, User] = Field(default_factory=dict)
    calendars: dict[str, CalendarInfo] = Field(default_factory=dict)
    rooms: dict[str, Room] = Field(default_factory=dict)
    events: dict[str, Event] = Field(default_factory=dict)
    next_event_id: int = 1


# -- seed data ---------------------------------------------------------------------------

_PEOPLE = [
    ("Priya Nair", "Engineering Manager", "Platform"),
    ("Marcus Chen", "Senior Engineer", "Platform"),
    ("Sofia Alvarez", "Software Engineer", "Platform"),
    ("Daniel Okafor", "Software Engineer", "Platform"),
    ("Hannah Kim", "Site Reliability Engineer", "Platform"),
    ("Tomasz Nowak", "Software Engineer", "Platform"),
    ("Grace Liu", "Product Manager", "Product"),
    ("Omar Haddad", "Product Designer", "Product"),
    ("Elena Rossi", "Head of Marketing", "Marketing"),
    ("James Whitaker", "Marketing Lead", "Marketing"),
    ("Aisha Bello", "Data Scientist", "Data"),
    ("Lucas Meyer", "Data Engineer", "Data"),
    ("Nina Petrova", "QA Lead", "Quality"),
    ("Ben Carter", "Sales Director", "Sales"),
    ("Chloe Dubois", "Account Executive", "Sales"),
    ("Raj Patel", "CTO", "Leadership"),
    ("Emily Walsh", "CEO", "Leadership"),
    ("Victor Santos", "Security Engineer", "Security"),
    ("Mei Tanaka", "Frontend Engineer", "Web"),
    ("Samuel Greene", "Frontend Engineer", "Web"),
    ("Laura Fischer", "HR Partner", "People"),
    ("Kevin Brooks", "Finance Manager", "Finance"),
    ("Isabel Moreno", "Support Lead", "Support"),
    ("Noah Schmidt", "Developer Advocate", "DevRel"),
]

_ROOMS = [
    ("Aspen", 1, 4, ["whiteboard"]), ("Birch", 1, 6, ["tv", "video"]),
    ("Cedar", 1, 8, ["projector", "video"]), ("Dogwood", 1, 12, ["projector", "video"]),
    ("Elm", 1, 2, []), ("Fir", 2, 4, ["video"]), ("Ginkgo", 2, 6, ["whiteboard"]),
    ("Hazel", 2, 8, ["projector", "whiteboard"]), ("Ivy", 2, 10, ["video", "whiteboard"]),
    ("Juniper", 2, 3, []), ("Kauri", 3, 4, ["tv"]), ("Larch", 3, 6, ["video"]),
    ("Maple", 3, 14, ["projector", "video"]), ("Nutmeg", 3, 5, ["whiteboard"]),
    ("Oak", 3, 30, ["projector", "video", "stage"]), ("Pine", 4, 4, ["video"]),
    ("Quince", 4, 6, ["tv", "whiteboard"]), ("Rowan", 4, 8, ["video"]),
    ("Spruce", 4, 16, ["projector", "video"]), ("Teak", 4, 2, []),
]

_MEETING_TITLES = [
    "Design review", "Sprint planning", "Customer call", "Budget sync", "Hiring debrief",
    "Incident retro", "Roadmap check-in", "Pairing session", "Interview loop",
    "Vendor demo", "Quarterly business review", "Analytics deep dive", "Launch readiness",
    "Security review", "Content planning", "Pipeline review", "Architecture forum",
]

# Fixed anchor events on Priya's calendars (the signed-in user), so tasks have landmarks.
# (calendar, title, start, end, attendees, room, recurrence, description)
_ANCHORS: list[tuple[str, str, str, str, list[str], str | None, Recurrence | None, str]] = [
    ("cal-platform", "Platform standup", "2026-03-09T09:30", "2026-03-09T09:45",
     ["u02", "u03", "u04", "u05", "u06"], None, Recurrence(freq="weekdays", count=15),
     "Daily check-in for the platform team."),
    ("cal-u01", "1:1 Priya / Marcus", "2026-03-10T11:00", "2026-03-10T11:30",
     ["u02"], "rm-105", Recurrence(freq="weekly", count=6), "Weekly one-on-one."),
    ("cal-u01", "Q2 roadmap review", "2026-03-11T15:00", "2026-03-11T16:00",
     ["u07", "u16", "u02"], "rm-103", None, "Walk through the Q2 platform roadmap."),
    ("cal-platform", "Platform sprint planning", "2026-03-16T10:00", "2026-03-16T11:30",
     ["u02", "u03", "u04", "u05", "u06", "u07"], "rm-104", Recurrence(freq="weekly", count=3),
     "Plan the next sprint."),
    ("cal-u01", "Dentist", "2026-03-13T16:00", "2026-03-13T17:00", [], None, None,
     "Personal appointment."),
    ("cal-product", "Checkout redesign kickoff", "2026-03-12T14:00", "2026-03-12T15:00",
     ["u01", "u08", "u19"], "rm-202", None, "Kickoff for the checkout redesign."),
    ("cal-company", "All hands", "2026-03-20T16:00", "2026-03-20T17:00",
     [f"u{i:02d}" for i in range(1, 25) if i != 17], "rm-305", None, "Monthly all hands."),
]


def _seeded_state(seed: int) -> CalendarState:
    rng = random.Random(seed)
    state = CalendarState(seed=seed)
    for i, (name, title, team) in enumerate(_PEOPLE, 1):
        uid = f"u{i:02d}"
        first, last = name.lower().split(" ", 1)
        state.users[uid] = User(id=uid, name=name, email=f"{first}.{last}@northwind.io",
                                title=title, team=team)
        state.calendars[f"cal-{uid}"] = CalendarInfo(id=f"cal-{uid}", name=name, owner_id=uid)
    for cid, name, owner in [("cal-platform", "Platform Team", "u01"),
                             ("cal-product", "Product", "u07"),
                             ("cal-marketing", "Marketing", "u09"),
                             ("cal-company", "Company Events", "u17")]:
        state.calendars[cid] = CalendarInfo(id=cid, name=name, owner_id=owner)
    state.calendars["cal-platform"].shared_with = {"u02": "write", "u07": "read"}
    state.calendars["cal-product"].shared_with = {"u01": "write", "u08": "write"}
    state.calendars["cal-company"].shared_with = {f"u{i:02d}": "read" for i in range(1, 25)
                                                  if i != 17}
    state.calendars["cal-u02"].shared_with = {"u01": "read"}
    state.calendars["cal-u16"].shared_with = {"u01": "read"}
    state.calendars["cal-u01"].shared_with = {"u02": "read"}
    for name, floor, capacity, features in _ROOMS:
        rid = f"rm-{floor}{len([r for r in state.rooms.values() if r.floor == floor]) + 1:02d}"
        state.rooms[rid] = Room(id=rid, name=name, floor=floor, capacity=capacity,
                                features=list(features))

    env = Calendar(state)
    for cal, title, start, end, attendees, room, rec, desc in _ANCHORS:
        owner = state.calendars[cal].owner_id
        env._add_seed_event(cal, title, start, end, owner, attendees, room, rec, desc)
    weekdays = [date(2026, 3, 9) + timedelta(days=d) for d in range(19)
                if (date(2026, 3, 9) + timedelta(days=d)).weekday() < 5]
    for n in range(36):
        organizer = f"u{rng.randint(2, 24):02d}"
        others = [u for u in state.users if u not in (organizer, "u01")]
        attendees = rng.sample(others, rng.randint(1, 4))
        day = rng.choice(weekdays)
        begins = datetime.combine(day, time(rng.randint(9, 16), rng.choice([0, 30])))
        ends = begins + timedelta(minutes=rng.choice([30, 60, 60, 90]))
        title = rng.choice(_MEETING_TITLES)
        rooms = [r for r in sorted(state.rooms) if state.rooms[r].capacity > len(attendees)]
        room = rng.choice(rooms) if n % 3 else None
        if room and env._room_conflict(room, [(begins, ends)], None):
            room = None
        env._add_seed_event(f"cal-{organizer}", title, stamp(begins, "minutes"),
                            stamp(ends, "minutes"), organizer, attendees, room, None, "")
    return env.state


def _parse_date(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ToolError(f"Invalid date {value!r}: expected YYYY-MM-DD.") from None


def _parse_time(value: str) -> time:
    try:
        if len(value) != 5:
            raise ValueError
        return time.fromisoformat(value)
    except ValueError:
        raise ToolError(f"Invalid time {value!r}: expected HH:MM (24-hour).") from None


# -- what the tools return ---------------------------------------------------------------


class Person(TypedDict):
    id: str
    name: str


class AttendeeView(TypedDict):
    id: Annotated[str, Field(description="User id of the attendee")]
    name: str
    response: Response


class EventView(TypedDict):
    """One event (a whole series if recurring) with names resolved."""

    id: str
    title: str
    calendar_id: str
    start: Annotated[Timestamp, Field(description="Start of the (first) occurrence")]
    end: Annotated[Timestamp, Field(description="End of the (first) occurrence")]
    status: Literal["confirmed", "cancelled"]
    organizer: Person
    attendees: list[AttendeeView]
    room: Annotated[Person | None, Field(description="Booked room (id, name), if any")]
    recurrence: Annotated[Recurrence | None, Field(description="Repeat rule, if recurring")]
    description: str


class Conflict(TypedDict):
    """A busy block of one invitee overlapping the event."""

    user_id: str
    name: str
    start: Timestamp
    end: Timestamp


class EventWithConflicts(TypedDict):
    event: EventView
    attendee_conflicts: Annotated[list[Conflict], Field(
        description="Busy blocks of attendees overlapping the event's occurrences")]


class CalendarView(TypedDict):
    id: str
    name: str
    owner: Annotated[str, Field(description="Name of the calendar's owner")]
    access: Annotated[Literal["owner", "read", "write"], Field(
        description="Your access level on this calendar")]


class Occurrence(TypedDict):
    """One occurrence of an event in a date range."""

    event_id: str
    title: str
    start: Timestamp
    end: Timestamp
    calendar_id: str
    organizer: Annotated[str, Field(description="Organizer's name")]
    room: Annotated[str | None, Field(description="Room name, if booked")]
    attendee_count: int
    recurring: Annotated[bool, Field(description="True if part of a recurring series")]


class BusyBlock(TypedDict):
    start: Timestamp
    end: Timestamp


class Availability(TypedDict):
    """One user's availability in the asked window."""

    user_id: str
    name: str
    free: Annotated[bool, Field(description="True if nothing overlaps the window")]
    busy: Annotated[list[BusyBlock], Field(description="Overlapping busy blocks")]


class Calendar(Environment):
    """Shared calendars with meetings, recurring series, attendees and bookable rooms."""

    name = "calendar"
    description = ("A company calendar: find colleagues and rooms, check availability, "
                   "and schedule, reschedule or cancel meetings and recurring series.")
    domain = "office"
    State = CalendarState
    state: CalendarState

    @classmethod
    def default_state(cls, seed: int = 0) -> CalendarState:
        """24 colleagues, their calendars plus four team calendars, 20 rooms and ~40
        meetings over three weeks starting Monday 2026-03-09."""
        return _seeded_state(seed)

    # -- helpers ----------------------------------------------------------------------

    def _add_seed_event(self, calendar_id: str, title: str, start: str, end: str,
                        organizer: str, attendees: list[str], room: str | None,
                        recurrence: Recurrence | None, description: str) -> None:
        event_id = self._mint_id()
        self.state.events[event_id] = Event(
            id=event_id, calendar_id=calendar_id, title=title, start=start, end=end,
            organizer_id=organizer,
            attendees=[Attendee(user_id=u, response="accepted" if k % 3 else "needs_action")
                       for k, u in enumerate(attendees)],
            room_id=room, recurrence=recurrence.model_copy(deep=True) if recurrence else None,
            description=description)

    def _mint_id(self) -> str:
        event_id = f"ev-{self.state.next_event_id:04d}"
        self.state.next_event_id += 1
        return event_id

    def _me(self) -> str:
        return self.state.current_user_id

    def _user(self, user_id: str) -> User:
        if user_id not in self.state.users:
            raise ToolError(f"User {user_id!r} not found.")
        return self.state.users[user_id]

    def _calendar(self, calendar_id: str) -> CalendarInfo:
        if calendar_id not in self.state.calendars:
            raise ToolError(f"Calendar {calendar_id!r} not found.")
        return self.state.calendars[calendar_id]

    def _room(self, room_id: str) -> Room:
        if room_id not in self.state.rooms:
            raise ToolError(f"Room {room_id!r} not found.")
        return self.state.rooms[room_id]

    def _access(self, calendar: CalendarInfo) -> Literal["owner", "read", "write"] | None:
        if calendar.owner_id == self._me():
            return "owner"
        return calendar.shared_with.get(self._me())

    def _event(self, event_id: str) -> Event:
        """An event the current user may see (its calendar is shared with them or they
        take part), else a not-found/permission error."""
        event = self.state.events.get(event_id)
        if event is None:
            raise ToolError(f"Event {event_id!r} not found.")
        if self._access(self.state.calendars[event.calendar_id]) is None and \
                self._me() not in self._participants(event):
            raise ToolError(f"Permission denied: you cannot see event {event_id!r}.")
        return event

    def _writable_event(self, event_id: str) -> Event:
        event = self._event(event_id)
        calendar = self.state.calendars[event.calendar_id]
        if self._access(calendar) not in ("owner", "write"):
            raise ToolError(f"Permission denied: you cannot change events on calendar "
                            f"{calendar.name!r} (it belongs to "
                            f"{self.state.users[calendar.owner_id].name}).")
        if event.status == "cancelled":
            raise ToolError(f"Event {event.title!r} ({event.id}) is cancelled.")
        return event

    @staticmethod
    def _participants(event: Event) -> list[str]:
        return [event.organizer_id] + [a.user_id for a in event.attendees]

    @staticmethod
    def _occurrences(event: Event) -> list[tuple[datetime, datetime]]:
        start, end = datetime.fromisoformat(event.start), datetime.fromisoformat(event.end)
        rule = event.recurrence
        if rule is None:
            return [(start, end)]
        out, moment, made = [], start, 0
        step = timedelta(days=7 if rule.freq == "weekly" else 1)
        while made < rule.count:
            if rule.freq == "weekdays" and moment.weekday() >= 5:
                moment += step
                continue
            made += 1
            if moment.date().isoformat() not in rule.skip_dates:
                out.append((moment, moment + (end - start)))
            moment += step
        return out

    def _busy(self, user_id: str, windows: list[tuple[datetime, datetime]],
              exclude: str | None) -> list[tuple[datetime, datetime]]:
        """Occurrences of confirmed events the user takes part in (not declined) that
        overlap any of the windows."""
        hits = []
        for event in self.state.events.values():
            if event.status != "confirmed" or event.id == exclude:
                continue
            declined = {a.user_id for a in event.attendees if a.response == "declined"}
            if user_id not in self._participants(event) or user_id in declined:
                continue
            for s, e in self._occurrences(event):
                if any(s < we and ws < e for ws, we in windows):
                    hits.append((s, e))
        return sorted(hits)

    def _room_conflict(self, room_id: str, windows: list[tuple[datetime, datetime]],
                       exclude: str | None) -> tuple[datetime, datetime] | None:
        for event in self.state.events.values():
            if event.room_id != room_id or event.status != "confirmed" or event.id == exclude:
                continue
            for s, e in self._occurrences(event):
                if any(s < we and ws < e for ws, we in windows):
                    return s, e
        return None

    def _check_room(self, room_id: str, headcount: int,
                    windows: list[tuple[datetime, datetime]], exclude: str | None) -> None:
        room = self._room(room_id)
        if room.capacity < headcount:
            raise ToolError(f"Room {room.name!r} ({room.id}) holds {room.capacity} people; "
                            f"the meeting has {headcount}.")
        clash = self._room_conflict(room_id, windows, exclude)
        if clash:
            raise ToolError(f"Room {room.name!r} ({room.id}) is already booked on "
                            f"{clash[0]:%Y-%m-%d} {clash[0]:%H:%M}-{clash[1]:%H:%M}.")

    def _conflicts(self, user_ids: list[str], windows: list[tuple[datetime, datetime]],
                   exclude: str | None) -> list[Conflict]:
        return [{"user_id": u, "name": self.state.users[u].name, "start": stamp(s, "minutes"),
                 "end": stamp(e, "minutes")}
                for u in user_ids for s, e in self._busy(u, windows, exclude)]

    def _window(self, day: str, start_time: str, end_time: str) -> tuple[datetime, datetime]:
        d = _parse_date(day)
        start = datetime.combine(d, _parse_time(start_time))
        end = datetime.combine(d, _parse_time(end_time))
        if end <= start:
            raise ToolError(f"End time {end_time} must be after start time {start_time}.")
        return start, end

    def _view(self, event: Event) -> EventView:
        users = self.state.users
        room = self.state.rooms.get(event.room_id or "")
        return {
            "id": event.id, "title": event.title, "calendar_id": event.calendar_id,
            "start": event.start, "end": event.end, "status": event.status,
            "organizer": {"id": event.organizer_id, "name": users[event.organizer_id].name},
            "attendees": [{"id": a.user_id, "name": users[a.user_id].name,
                           "response": a.response} for a in event.attendees],
            "room": {"id": room.id, "name": room.name} if room else None,
            "recurrence": event.recurrence,
            "description": event.description,
        }

    # -- read tools -------------------------------------------------------------------

    @tool
    def find_users(self, query: str) -> list[User]:
        """Find colleagues whose name, email or team contains the query (case-insensitive).

        Args:
            query: Part of a name, email address or team name, e.g. "marcus" or "Platform".

        Returns:
            Matching users with id, name, email, title and team.
        """
        q = query.strip().lower()
        if not q:
            raise ToolError("Query must not be empty.")
        return [u for u in self.state.users.values()
                if q in u.name.lower() or q in u.email.lower() or q in u.team.lower()]

    @tool
    def list_calendars(self) -> list[CalendarView]:
        """List the calendars you can see, with your access level on each.

        Returns:
            Calendars with id, name, owner name and access ("owner", "write" or "read").
        """
        out: list[CalendarView] = []
        for cal in self.state.calendars.values():
            access = self._access(cal)
            if access:
                out.append({"id": cal.id, "name": cal.name,
                            "owner": self.state.users[cal.owner_id].name, "access": access})
        return out

    @tool
    def list_events(self, date_from: str | None = None, date_to: str | None = None,
                    calendar_id: str | None = None, query: str = "") -> list[Occurrence]:
        """List meeting occurrences between two dates (inclusive), recurring series expanded.

        Without a calendar, lists every event you can see or take part in.

        Args:
            date_from: First day, YYYY-MM-DD; defaults to today.
            date_to: Last day, YYYY-MM-DD, at most 31 days after date_from; defaults to
                two weeks from date_from (13 days later).
            calendar_id: Only events on this calendar (you need access to it).
            query: Only events whose title contains this text (case-insensitive).

        Returns:
            Occurrences sorted by start: event id, title, start, end, calendar id,
            organizer, room name, attendee count and whether the event recurs.
        """
        first = _parse_date(date_from) if date_from else current_day(self.state)
        last = _parse_date(date_to) if date_to else first + timedelta(days=DEFAULT_SPAN_DAYS)
        if last < first:
            raise ToolError("date_to must not be before date_from.")
        if (last - first).days > MAX_SPAN_DAYS:
            raise ToolError(f"Date range is limited to {MAX_SPAN_DAYS} days.")
        if calendar_id is not None and self._access(self._calendar(calendar_id)) is None:
            raise ToolError(f"Permission denied: calendar {calendar_id!r} is not shared "
                            "with you.")
        out: list[Occurrence] = []
        for event in self.state.events.values():
            if event.status != "confirmed" or query.lower() not in event.title.lower():
                continue
            if calendar_id is not None and event.calendar_id != calendar_id:
                continue
            visible = self._access(self.state.calendars[event.calendar_id]) is not None
            if not visible and self._me() not in self._participants(event):
                continue
            room = self.state.rooms.get(event.room_id or "")
            for s, e in self._occurrences(event):
                if first <= s.date() <= last:
                    out.append({"event_id": event.id, "title": event.title,
                                "start": stamp(s, "minutes"), "end": stamp(e, "minutes"),
                                "calendar_id": event.calendar_id,
                                "organizer": self.state.users[event.organizer_id].name,
                                "room": room.name if room else None,
                                "attendee_count": len(event.attendees),
                                "recurring": event.recurrence is not None})
        return sorted(out, key=lambda o: (o["start"], o["event_id"]))

    @tool
    def get_event(self, event_id: str) -> EventView:
        """Show one event in full: time, organizer, attendees with responses, room, series.

        Args:
            event_id: The event id, e.g. "ev-0003".

        Returns:
            The event; "start"/"end" are the first occurrence of a recurring series.
        """
        return self._view(self._event(event_id))

    @tool
    def check_availability(self, user_ids: list[str], date: str, start_time: str,
                           end_time: str) -> list[Availability]:
        """Check whether colleagues are free in a time window (free/busy only, no titles).

        Args:
            user_ids: The colleagues to check, by user id.
            date: The day, YYYY-MM-DD.
            start_time: Window start, HH:MM (24-hour).
            end_time: Window end, HH:MM (24-hour).

        Returns:
            For each user: id, name, free (true/false) and the busy blocks overlapping it.
        """
        window = self._window(date, start_time, end_time)
        if not user_ids:
            raise ToolError("Give at least one user id.")
        out: list[Availability] = []
        for uid in user_ids:
            user = self._user(uid)
            busy = self._busy(uid, [window], None)
            out.append({"user_id": uid, "name": user.name, "free": not busy,
                        "busy": [{"start": stamp(s, "minutes"), "end": stamp(e, "minutes")}
                                 for s, e in busy]})
        return out

    @tool
    def find_free_rooms(self, date: str, start_time: str, end_time: str,
                        min_capacity: int = 1, feature: str | None = None
                        ) -> list[Room]:
        """Find rooms that are free for a whole time window.

        Args:
            date: The day, YYYY-MM-DD.
            start_time: Window start, HH:MM (24-hour).
            end_time: Window end, HH:MM (24-hour).
            min_capacity: Smallest number of seats needed.
            feature: A feature the room must have: "projector", "video", "whiteboard",
                "tv" or "stage".

        Returns:
            Free rooms (id, name, floor, capacity, features), smallest first.
        """
        window = self._window(date, start_time, end_time)
        if min_capacity < 1:
            raise ToolError("min_capacity must be at least 1.")
        rooms = [r for r in self.state.rooms.values()
                 if r.capacity >= min_capacity and (feature is None or feature in r.features)
                 and self._room_conflict(r.id, [window], None) is None]
        return [r for r in sorted(rooms, key=lambda r: (r.capacity, r.id))]

    # -- write tools ------------------------------------------------------------------

    @tool(write=True)
    def create_event(self, calendar_id: str, title: str, date: str, start_time: str,
                     end_time: str, attendee_ids: list[str] | None = None,
                     room_id: str | None = None, description: str = "",
                     repeat: Repeat = "none", occurrences: int = 1) -> EventWithConflicts:
        """Schedule a meeting (optionally recurring) that you organize, inviting colleagues.

        A busy room is refused; attendees who are busy are invited anyway and reported.

        Args:
            calendar_id: Calendar to put it on (you need owner or write access).
            title: Meeting title.
            date: Day of the (first) meeting, YYYY-MM-DD, not in the past.
            start_time: Start, HH:MM (24-hour).
            end_time: End the same day, HH:MM (24-hour).
            attendee_ids: Colleagues to invite, by user id (not yourself).
            room_id: Room to book for every occurrence.
            description: Agenda or notes.
            repeat: "none", "daily", "weekdays" (Monday-Friday) or "weekly".
            occurrences: Number of meetings in the series (1 when repeat is "none", 2-52
                otherwise).

        Returns:
            The new event and "attendee_conflicts": busy blocks of invitees in that slot.
        """
        calendar = self._calendar(calendar_id)
        if self._access(calendar) not in ("owner", "write"):
            raise ToolError(f"Permission denied: you cannot add events to calendar "
                            f"{calendar.name!r}.")
        if not title.strip():
            raise ToolError("Title must not be empty.")
        start, end = self._window(date, start_time, end_time)
        if start < current_moment(self.state):
            raise ToolError(f"Cannot schedule in the past (it is now {self.state.now}).")
        recurrence = self._recurrence(repeat, occurrences, start)
        attendees = list(attendee_ids or [])
        self._check_attendees(attendees, [])
        event = Event(id="", calendar_id=calendar_id, title=title.strip(),
                      start=stamp(start, "minutes"), end=stamp(end, "minutes"),
                      organizer_id=self._me(),
                      attendees=[Attendee(user_id=u) for u in attendees],
                      recurrence=recurrence, description=description)
        windows = self._occurrences(event)
        if room_id is not None:
            self._check_room(room_id, len(attendees) + 1, windows, None)
            event.room_id = room_id
        event.id = self._mint_id()
        self.state.events[event.id] = event
        return {"event": self._view(event),
                "attendee_conflicts": self._conflicts(attendees, windows, event.id)}

    def _recurrence(self, repeat: str, occurrences: int, start: datetime) -> Recurrence | None:
        if repeat == "none":
            if occurrences != 1:
                raise ToolError("occurrences must be 1 for a one-off event; set repeat to "
                                "make a series.")
            return None
        if not 2 <= occurrences <= MAX_OCCURRENCES:
            raise ToolError(f"A recurring series needs 2-{MAX_OCCURRENCES} occurrences.")
        if repeat == "weekdays" and start.weekday() >= 5:
            raise ToolError("A weekday series must start on a weekday.")
        return Recurrence(freq=repeat, count=occurrences)  # type: ignore[arg-type]

    def _check_attendees(self, new: list[str], existing: list[str]) -> None:
        seen = set(existing)
        for uid in new:
            user = self._user(uid)
            if uid == self._me():
                raise ToolError(f"{user.name} ({uid}) is you, the organizer; organizers "
                                "attend automatically.")
            if uid in seen:
                raise ToolError(f"{user.name} ({uid}) is already invited.")
            seen.add(uid)

    @tool(write=True)
    def reschedule_event(self, event_id: str, date: str | None = None,
                         start_time: str | None = None, end_time: str | None = None
                         ) -> EventWithConflicts:
        """Move an event (a whole series moves with its first occurrence).

        Omitted fields keep their value; giving only a new start keeps the duration.
        Attendee responses are reset to needs_action because the time changed.

        Args:
            event_id: The event to move.
            date: New day, YYYY-MM-DD.
            start_time: New start, HH:MM (24-hour).
            end_time: New end, HH:MM (24-hour).

        Returns:
            The updated event and "attendee_conflicts" at the new time.
        """
        event = self._writable_event(event_id)
        if date is None and start_time is None and end_time is None:
            raise ToolError("Give a new date, start_time or end_time.")
        old_start = datetime.fromisoformat(event.start)
        old_end = datetime.fromisoformat(event.end)
        new_start_time = start_time or f"{old_start:%H:%M}"
        if end_time is None:
            shifted = datetime.combine(old_start.date(), _parse_time(new_start_time)) + (
                old_end - old_start)
            if shifted.date() != old_start.date():
                raise ToolError("The meeting would run past midnight; give an end_time.")
            end_time = f"{shifted:%H:%M}"
        start, end = self._window(date or f"{old_start:%Y-%m-%d}", new_start_time, end_time)
        if (start, end) == (old_start, old_end):
            raise ToolError(f"Event {event.title!r} is already at that time.")
        if start < current_moment(self.state):
            raise ToolError(f"Cannot move an event into the past (it is now {self.state.now}).")
        if event.recurrence and event.recurrence.freq == "weekdays" and start.weekday() >= 5:
            raise ToolError("A weekday series must start on a weekday.")
        if event.recurrence and start.date() != old_start.date():
            # skipped days belonged to the old dates of the series
            event.recurrence.skip_dates = []
        event.start, event.end = stamp(start, "minutes"), stamp(end, "minutes")
        windows = self._occurrences(event)
        if event.room_id:
            self._check_room(event.room_id, len(event.attendees) + 1, windows, event.id)
        for attendee in event.attendees:
            attendee.response = "needs_action"
        return {"event": self._view(event),
                "attendee_conflicts": self._conflicts(
                    [a.user_id for a in event.attendees], windows, event.id)}

    @tool(write=True)
    def cancel_event(self, event_id: str, occurrence_date: str | None = None) -> EventView:
        """Cancel an event, or just one occurrence of a recurring series.

        Cancelling frees the room for the cancelled time.

        Args:
            event_id: The event to cancel.
            occurrence_date: For a recurring series, the single day (YYYY-MM-DD) to cancel;
                omit to cancel the whole event or series.

        Returns:
            The updated event.
        """
        event = self._writable_event(event_id)
        if occurrence_date is None:
            event.status = "cancelled"
            return self._view(event)
        if event.recurrence is None:
            raise ToolError(f"Event {event.title!r} does not repeat; cancel it without an "
                            "occurrence_date.")
        day = _parse_date(occurrence_date)
        if day.isoformat() in event.recurrence.skip_dates:
            raise ToolError(f"The {day} occurrence of {event.title!r} is already cancelled.")
        if day not in {s.date() for s, _ in self._occurrences(event)}:
            raise ToolError(f"{event.title!r} has no occurrence on {day}.")
        event.recurrence.skip_dates.append(day.isoformat())
        return self._view(event)

    @tool(write=True)
    def add_attendees(self, event_id: str, user_ids: list[str]) -> EventWithConflicts:
        """Invite more colleagues to an event.

        Args:
            event_id: The event.
            user_ids: Colleagues to invite, by user id.

        Returns:
            The updated event and "attendee_conflicts" of the new invitees.
        """
        event = self._writable_event(event_id)
        if not user_ids:
            raise ToolError("Give at least one user id.")
        self._check_attendees(user_ids, self._participants(event))
        windows = self._occurrences(event)
        if event.room_id:
            self._check_room(event.room_id, len(event.attendees) + len(user_ids) + 1,
                             windows, event.id)
        event.attendees.extend(Attendee(user_id=u) for u in user_ids)
        return {"event": self._view(event),
                "attendee_conflicts": self._conflicts(user_ids, windows, event.id)}

    @tool(write=True)
    def remove_attendee(self, event_id: str, user_id: str) -> EventView:
        """Uninvite one colleague from an event.

        Args:
            event_id: The event.
            user_id: The attendee to remove.

        Returns:
            The updated event.
        """
        event = self._writable_event(event_id)
        user = self._user(user_id)
        if user_id == event.organizer_id:
            raise ToolError(f"{user.name} organizes {event.title!r} and cannot be removed.")
        if user_id not in self._participants(event):
            raise ToolError(f"{user.name} is not invited to {event.title!r}.")
        event.attendees = [a for a in event.attendees if a.user_id != user_id]
        return self._view(event)

    @tool(write=True)
    def respond_to_event(self, event_id: str,
                         response: Literal["accepted", "declined", "tentative"]
                         ) -> EventView:
        """Answer an invitation you received.

        Args:
            event_id: The event you are invited to.
            response: "accepted", "declined" or "tentative".

        Returns:
            The updated event.
        """
        event = self._event(event_id)
        if event.status == "cancelled":
            raise ToolError(f"Event {event.title!r} ({event.id}) is cancelled.")
        if event.organizer_id == self._me():
            raise ToolError(f"You organize {event.title!r}; organizers do not respond.")
        mine = next((a for a in event.attendees if a.user_id == self._me()), None)
        if mine is None:
            raise ToolError(f"You are not invited to {event.title!r}.")
        if mine.response == response:
            raise ToolError(f"You have already {response} {event.title!r}.")
        mine.response = response
        return self._view(event)

    @tool(write=True)
    def book_room(self, event_id: str, room_id: str) -> EventView:
        """Book a room for an event (every occurrence), replacing its current room.

        Args:
            event_id: The event.
            room_id: The room, e.g. "rm-103".

        Returns:
            The updated event.
        """
        event = self._writable_event(event_id)
        if event.room_id == room_id:
            raise ToolError(f"{event.title!r} is already in room {room_id}.")
        self._check_room(room_id, len(event.attendees) + 1, self._occurrences(event),
                         event.id)
        event.room_id = room_id
        return self._view(event)

    @tool(write=True)
    def share_calendar(self, calendar_id: str, user_id: str,
                       access: Literal["read", "write", "none"]) -> CalendarInfo:
        """Share a calendar you own with a colleague, change their access, or revoke it.

        Args:
            calendar_id: A calendar you own.
            user_id: The colleague.
            access: "read", "write", or "none" to stop sharing.

        Returns:
            The calendar with its sharing list (user id -> access).
        """
        calendar = self._calendar(calendar_id)
        user = self._user(user_id)
        if calendar.owner_id != self._me():
            raise ToolError(f"Permission denied: only the owner can share {calendar.name!r}.")
        if user_id == self._me():
            raise ToolError("You own this calendar already.")
        current = calendar.shared_with.get(user_id, "none")
        if current == access:
            raise ToolError(f"{user.name} already has {access} access to {calendar.name!r}.")
        if access == "none":
            del calendar.shared_with[user_id]
        else:
            calendar.shared_with[user_id] = access
        return calendar
