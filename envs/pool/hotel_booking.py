"""A hotel group's reservation desk: hotels, room availability, bookings and loyalty.

Availability is counted per night from the reservations holding rooms, prices depend on
the night (weekends cost more), the rate plan and the guest's loyalty tier, and what a
cancellation costs depends on the rate plan and how close the arrival is. Loyalty points
can pay for flexible stays and are earned on card-paid stays at check-out.
"""

from __future__ import annotations

import math
import random
from datetime import date, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, Field

from envs.base import Environment, ToolError, tool
from envs.timestamps import Day, Timestamp, current_day, current_moment

__all__ = ["HotelBooking", "HotelBookingState"]

Tier = Literal["member", "silver", "gold", "platinum"]
RatePlan = Literal["flexible", "non_refundable"]
ResStatus = Literal["confirmed", "checked_in", "checked_out", "cancelled"]

MAX_NIGHTS = 14
#: flexible stays cancel free until this many hours before the 15:00 check-in time
FREE_CANCEL_HOURS = 48
CHECK_IN_HOUR = 15
WEEKEND_UPLIFT = 1.2  # Friday and Saturday nights
NON_REFUNDABLE_DISCOUNT = 0.10
TIER_DISCOUNT: dict[str, float] = {"member": 0.0, "silver": 0.05, "gold": 0.10, "platinum": 0.15}
#: points earned per dollar paid by card, by tier
TIER_EARN: dict[str, float] = {"member": 10, "silver": 11, "gold": 12.5, "platinum": 15}
POINTS_PER_DOLLAR_REDEEMED = 100


class RoomType(BaseModel):
    code: str
    name: str
    beds: str
    max_occupancy: int
    inventory: int
    nightly_rate: float


class Hotel(BaseModel):
    id: str
    name: str
    city: str
    address: str
    stars: int
    amenities: list[str]
    room_types: dict[str, RoomType]


class Guest(BaseModel):
    id: str
    name: str
    email: str
    phone: str
    tier: Tier = "member"
    points: int = 0


class Reservation(BaseModel):
    id: str
    guest_id: str
    hotel_id: str
    room_type: str
    check_in: Day
    check_out: Day
    guests: int
    rate_plan: RatePlan
    nightly_prices: list[float]
    total: float
    payment: Literal["card", "points"]
    points_used: int = 0
    status: ResStatus = "confirmed"
    room_number: str | None = None
    special_requests: str = ""
    cancellation_fee: float | None = None
    points_earned: int = 0
    created_at: Timestamp


# -- what the tools return ---------------------------------------------------------------


class ReservationView(Reservation):
    """A reservation with hotel and guest names and its cancellation terms."""

    hotel_name: str
    city: str
    guest_name: str
    cancellation_policy: str = Field(description="What cancelling would cost, in words")


class CancelledReservation(ReservationView):
    points_refunded: int = Field(description="Loyalty points given back")


class CheckedOutReservation(ReservationView):
    points_balance: int = Field(description="Guest's points after this stay's points")


class RoomOffer(BaseModel):
    room_type: str = Field(description="Room type code")
    name: str
    rooms_left: int
    max_occupancy: int
    nightly_rate: float = Field(description="Standard nightly rate")
    total: float = Field(description="Flexible-rate total for the stay, before discounts")


class HotelOffer(BaseModel):
    """A hotel with room types available for the stay."""

    hotel_id: str
    name: str
    stars: int
    address: str
    rooms: list[RoomOffer]


class StayQuote(BaseModel):
    """The price of a stay."""

    hotel: str = Field(description="Hotel name")
    room_type: str = Field(description="Room type code")
    nights: int
    nightly_prices: list[float]
    total: float
    points_cost: int | None = Field(description="Points to pay instead (flexible rate only)")
    rooms_left: int
    cancellation_policy: str = Field(description="What cancelling would cost, in words")


class StaySummary(BaseModel):
    """One of a guest's reservations, as listed."""

    id: str
    hotel_id: str
    room_type: str
    check_in: Day
    check_out: Day
    status: ResStatus
    total: float
    payment: Literal["card", "points"]
    hotel_name: str


class GuestRecord(Guest):
    reservations: list[StaySummary]


class HotelBookingState(BaseModel):
    seed: int = 0
    now: Timestamp = "2026-06-12T16:00:00"
    hotels: dict[str, Hotel] = Field(default_factory=dict)
    guests: dict[str, Guest] = Field(default_factory=dict)
    reservations: dict[str, Reservation] = Field(default_factory=dict)
    next_guest_id: int = 1001
    next_reservation_id: int = 70001


# -- seed data ------------------------------------------------------------------------

# name, city, address, stars, base rate for a standard king
_HOTELS = [
    ("Harborview Hotel", "Seattle", "1200 Alaskan Way", 4, 229.0),
    ("Pike Street Inn", "Seattle", "88 Pike St", 3, 169.0),
    ("Cascade Grand", "Seattle", "500 Pine St", 5, 349.0),
    ("Lakeshore Tower", "Chicago", "401 N Lake Shore Dr", 4, 219.0),
    ("The Wabash", "Chicago", "25 S Wabash Ave", 3, 159.0),
    ("Magnificent Mile Suites", "Chicago", "660 N Michigan Ave", 4, 249.0),
    ("Congress Avenue Hotel", "Austin", "701 Congress Ave", 4, 199.0),
    ("South Lamar Lodge", "Austin", "1601 S Lamar Blvd", 3, 139.0),
    ("Rainey Street House", "Austin", "90 Rainey St", 4, 209.0),
    ("Back Bay Hotel", "Boston", "350 Stuart St", 4, 279.0),
    ("Harbor Point Inn", "Boston", "12 Seaport Blvd", 3, 189.0),
    ("Beacon Hill Residence", "Boston", "45 Charles St", 5, 379.0),
    ("Larimer Square Hotel", "Denver", "1400 Larimer St", 4, 189.0),
    ("Union Station Lodge", "Denver", "1701 Wynkoop St", 3, 149.0),
    ("Gaslamp Quarter Hotel", "San Diego", "600 F St", 4, 239.0),
    ("Mission Bay Resort", "San Diego", "1775 E Mission Bay Dr", 4, 259.0),
    ("Alfama Boutique Hotel", "Lisbon", "Rua de São Miguel 12", 4, 179.0),
    ("Tagus View Hotel", "Lisbon", "Avenida 24 de Julho 48", 3, 129.0),
    ("Eixample Grand", "Barcelona", "Passeig de Gràcia 75", 5, 299.0),
    ("Barceloneta Beach Hotel", "Barcelona", "Passeig Marítim 32", 4, 209.0),
]
_AMENITIES = ["free wifi", "fitness center", "pool", "spa", "parking", "airport shuttle",
              "restaurant", "rooftop bar", "pet friendly", "business center"]
# code, name, beds, max occupancy, rate multiplier, inventory range
_ROOM_TYPES = [("KING", "Standard King", "1 king", 2, 1.0, (3, 6)),
               ("QQ", "Double Queen", "2 queens", 4, 1.15, (2, 5)),
               ("STE", "One-Bedroom Suite", "1 king + sofa bed", 4, 1.9, (1, 1))]
_GUESTS = ["Olivia Carter", "Mateo Silva", "Hiroshi Tanaka", "Amelia Brooks", "Noah Jensen",
           "Isabella Rossi", "Liam O'Connor", "Zara Ahmed", "Lucas Meyer", "Chloe Martin",
           "Ethan Wright", "Sofia Marquez", "Benjamin Lee", "Ava Thompson", "Elijah Scott",
           "Mia Kowalski", "James Okoro", "Harper Nguyen", "Daniel Weiss", "Emma Laurent",
           "Samuel Park", "Grace Mensah", "Henry Adams", "Lily Chen"]
_REQUESTS = ["", "", "", "high floor", "late arrival after 10pm", "extra pillows",
             "crib in room", "quiet room away from elevator"]


def _seeded_state(seed: int) -> HotelBookingState:
    rng = random.Random(seed)
    state = HotelBookingState(seed=seed)
    for i, (name, city, address, stars, base) in enumerate(_HOTELS, start=1):
        rooms = {code: RoomType(code=code, name=rname, beds=beds, max_occupancy=occ,
                                inventory=rng.randint(*inv), nightly_rate=round(base * mult))
                 for code, rname, beds, occ, mult, inv in _ROOM_TYPES}
        hotel_id = f"H-{i:02d}"
        state.hotels[hotel_id] = Hotel(
            id=hotel_id, name=name, city=city, address=address, stars=stars,
            amenities=sorted(rng.sample(_AMENITIES, rng.randint(3, 6))), room_types=rooms)
    for name in _GUESTS:
        guest_id = f"G-{state.next_guest_id}"
        state.next_guest_id += 1
        first, last = name.lower().replace("'", "").split()
        tier: Tier = rng.choice(["member", "member", "silver", "gold", "platinum"])
        state.guests[guest_id] = Guest(
            id=guest_id, name=name, email=f"{first}.{last}@example.com",
            phone=f"+1-206-555-{rng.randint(1000, 9999)}", tier=tier,
            points=rng.randrange(0, 150_000, 500))
    today = date.fromisoformat(state.now[:10])
    guest_ids = list(state.guests)
    for _ in range(32):
        _seed_reservation(state, rng, rng.choice(guest_ids), today)
    return state


def _seed_reservation(
    state: HotelBookingState, rng: random.Random, guest_id: str, today: date
) -> None:
    """A past, current or future stay, only where the room type still has a room free."""
    hotel = rng.choice(list(state.hotels.values()))
    room = rng.choice(list(hotel.room_types.values()))
    start = today + timedelta(days=rng.choice([-20, -9, -4, -2, -1, 0, 0, 1, 2, 3, 5, 8, 14,
                                               21, 30, 45]))
    end = start + timedelta(days=rng.randint(1, 5))
    if start >= today and _free_rooms(state, hotel.id, room, start, end, exclude=None) < 1:
        return
    guest = _guest_free_for(state, guest_id, start, end)
    plan: RatePlan = "non_refundable" if rng.random() < 0.25 else "flexible"
    prices = _nightly_prices(room, start, end, plan, guest.tier)
    total = round(sum(prices), 2)
    by_points = plan == "flexible" and guest.points >= _points_cost(total) and rng.random() < 0.2
    status: ResStatus
    if end <= today:
        status = "checked_out" if rng.random() < 0.8 else "cancelled"
    elif start < today or (start == today and rng.random() < 0.4):
        status = "checked_in"
    else:
        status = "cancelled" if rng.random() < 0.1 else "confirmed"
    res_id = f"RES-{state.next_reservation_id}"
    state.next_reservation_id += 1
    res = Reservation(
        id=res_id, guest_id=guest.id, hotel_id=hotel.id, room_type=room.code,
        check_in=start.isoformat(), check_out=end.isoformat(),
        guests=rng.randint(1, room.max_occupancy), rate_plan=plan, nightly_prices=prices,
        total=total, payment="points" if by_points else "card",
        points_used=_points_cost(total) if by_points else 0, status=status,
        special_requests=rng.choice(_REQUESTS),
        created_at=f"{(start - timedelta(days=rng.randint(3, 60))).isoformat()}T10:30:00")
    if status in ("checked_in", "checked_out"):
        res.room_number = _free_room_number(state, res)
    if status == "checked_out" and not by_points:
        res.points_earned = int(total * TIER_EARN[guest.tier])
    if status == "cancelled":
        res.cancellation_fee = total if plan == "non_refundable" else 0.0
    elif by_points:
        guest.points -= res.points_used
    state.reservations[res_id] = res


def _guest_free_for(
    state: HotelBookingState, guest_id: str, start: date, end: date
) -> Guest:
    """`guest_id`, or the next guest in order, with no other stay overlapping these dates."""
    ids = list(state.guests)
    first = ids.index(guest_id)
    for guest_id in ids[first:] + ids[:first]:
        if not any(r.guest_id == guest_id and r.status != "cancelled"
                   and r.check_in < end.isoformat() and start.isoformat() < r.check_out
                   for r in state.reservations.values()):
            break
    return state.guests[guest_id]


def _free_room_number(state: HotelBookingState, res: Reservation) -> str:
    """The lowest room number of the booked type not occupied by a checked-in guest.

    Each room type has its own floor band (2xx, 5xx, 8xx, ...) so numbers never clash.
    """
    floor = 2 + 3 * list(state.hotels[res.hotel_id].room_types).index(res.room_type)
    taken = {r.room_number for r in state.reservations.values()
             if r.hotel_id == res.hotel_id and r.status == "checked_in"}
    n = 1
    while f"{floor}{n:02d}" in taken:
        n += 1
    return f"{floor}{n:02d}"


def _nights(check_in: date, check_out: date) -> list[date]:
    return [check_in + timedelta(days=n) for n in range((check_out - check_in).days)]


def _nightly_prices(
    room: RoomType, check_in: date, check_out: date, plan: RatePlan, tier: Tier | None
) -> list[float]:
    """The price of each night: weekend uplift, rate-plan and loyalty-tier discounts."""
    factor = (1 - (NON_REFUNDABLE_DISCOUNT if plan == "non_refundable" else 0)) * (
        1 - TIER_DISCOUNT[tier or "member"])
    return [round(room.nightly_rate * (WEEKEND_UPLIFT if night.weekday() in (4, 5) else 1)
                  * factor, 2) for night in _nights(check_in, check_out)]


def _points_cost(total: float) -> int:
    return math.ceil(total) * POINTS_PER_DOLLAR_REDEEMED


def _free_rooms(
    state: HotelBookingState, hotel_id: str, room: RoomType, check_in: date, check_out: date,
    exclude: str | None
) -> int:
    """Rooms of this type free on every night of the stay (`exclude`: a booking to ignore)."""
    free = room.inventory
    for night in _nights(check_in, check_out):
        taken = sum(1 for r in state.reservations.values()
                    if r.hotel_id == hotel_id and r.room_type == room.code and r.id != exclude
                    and r.status in ("confirmed", "checked_in")
                    and r.check_in <= night.isoformat() < r.check_out)
        free = min(free, room.inventory - taken)
    return free


class HotelBooking(Environment):
    """The reservation desk of a hotel group with a loyalty program."""

    name = "hotel_booking"
    description = ("A hotel group's reservation system for searching availability, quoting, "
                   "booking, changing and cancelling stays, check-in/out and loyalty points.")
    domain = "travel"
    State = HotelBookingState
    state: HotelBookingState

    @classmethod
    def default_state(cls) -> HotelBookingState:
        return _seeded_state(0)

    # -- helpers ------------------------------------------------------------------------

    def _hotel(self, hotel_id: str) -> Hotel:
        if hotel_id not in self.state.hotels:
            raise ToolError(f"Hotel {hotel_id!r} not found.")
        return self.state.hotels[hotel_id]

    def _room(self, hotel: Hotel, room_type: str) -> RoomType:
        if room_type not in hotel.room_types:
            raise ToolError(f"{hotel.name} has no room type {room_type!r}; available: "
                            f"{', '.join(hotel.room_types)}.")
        return hotel.room_types[room_type]

    def _guest(self, guest_id: str) -> Guest:
        if guest_id not in self.state.guests:
            raise ToolError(f"Guest {guest_id!r} not found.")
        return self.state.guests[guest_id]

    def _reservation(self, reservation_id: str) -> Reservation:
        if reservation_id not in self.state.reservations:
            raise ToolError(f"Reservation {reservation_id!r} not found.")
        return self.state.reservations[reservation_id]

    def _stay(self, check_in: str, check_out: str) -> tuple[date, date]:
        """Parse and validate stay dates: future arrival, 1 to MAX_NIGHTS nights."""
        try:
            start, end = date.fromisoformat(check_in), date.fromisoformat(check_out)
        except ValueError:
            raise ToolError("Dates must be YYYY-MM-DD.") from None
        if start < current_day(self.state):
            raise ToolError(f"Check-in date {check_in} is in the past.")
        if not 1 <= (end - start).days <= MAX_NIGHTS:
            raise ToolError(f"A stay must be between 1 and {MAX_NIGHTS} nights "
                            "(check-out after check-in).")
        return start, end

    def _free_cancel_deadline(self, res: Reservation) -> datetime:
        arrival = datetime.fromisoformat(f"{res.check_in}T{CHECK_IN_HOUR:02d}:00:00")
        return arrival - timedelta(hours=FREE_CANCEL_HOURS)

    def _policy(self, plan: RatePlan, check_in: date) -> str:
        if plan == "non_refundable":
            return "Non-refundable: the full stay is charged if cancelled."
        arrival = datetime.combine(check_in, datetime.min.time()) + timedelta(
            hours=CHECK_IN_HOUR)
        deadline = arrival - timedelta(hours=FREE_CANCEL_HOURS)
        return (f"Free cancellation until {deadline.isoformat()}; after that the first "
                "night is charged.")

    def _res_view(self, res: Reservation) -> ReservationView:
        hotel = self.state.hotels[res.hotel_id]
        return ReservationView(
            **res.model_dump(), hotel_name=hotel.name, city=hotel.city,
            guest_name=self.state.guests[res.guest_id].name,
            cancellation_policy=self._policy(res.rate_plan, date.fromisoformat(res.check_in)))

    def _open(self, reservation_id: str, action: str) -> Reservation:
        res = self._reservation(reservation_id)
        if res.status != "confirmed":
            raise ToolError(f"Reservation {reservation_id} is {res.status.replace('_', ' ')} "
                            f"and cannot be {action}.")
        return res

    # -- read tools ---------------------------------------------------------------------

    @tool
    def search_hotels(
        self,
        city: str,
        check_in: str,
        check_out: str,
        guests: int = 1,
        max_nightly_rate: float | None = None,
    ) -> list[HotelOffer]:
        """Find hotels in a city with a room type free for the whole stay.

        Args:
            city: City name, e.g. "Chicago".
            check_in: Arrival date, YYYY-MM-DD.
            check_out: Departure date, YYYY-MM-DD.
            guests: Number of guests the room must sleep.
            max_nightly_rate: Only room types whose standard nightly rate is at most this (USD).

        Returns:
            Hotels with their available room types, standard nightly rate and flexible-rate
            total for the stay (before loyalty discounts).
        """
        start, end = self._stay(check_in, check_out)
        out: list[HotelOffer] = []
        for hotel in self.state.hotels.values():
            if hotel.city.lower() != city.strip().lower():
                continue
            rooms: list[RoomOffer] = []
            for r in hotel.room_types.values():
                left = _free_rooms(self.state, hotel.id, r, start, end, exclude=None)
                if left < 1 or r.max_occupancy < guests or (
                        max_nightly_rate is not None and r.nightly_rate > max_nightly_rate):
                    continue
                total = round(sum(_nightly_prices(r, start, end, "flexible", None)), 2)
                rooms.append(RoomOffer(room_type=r.code, name=r.name, rooms_left=left,
                                       max_occupancy=r.max_occupancy,
                                       nightly_rate=r.nightly_rate, total=total))
            if rooms:
                out.append(HotelOffer(hotel_id=hotel.id, name=hotel.name, stars=hotel.stars,
                                      address=hotel.address, rooms=rooms))
        return out

    @tool
    def get_hotel(self, hotel_id: str) -> Hotel:
        """Get a hotel's details: address, stars, amenities and room types.

        Args:
            hotel_id: The hotel id, e.g. "H-04".

        Returns:
            The hotel record.
        """
        return self._hotel(hotel_id)

    @tool
    def quote_stay(
        self,
        hotel_id: str,
        room_type: str,
        check_in: str,
        check_out: str,
        rate_plan: RatePlan = "flexible",
        guest_id: str | None = None,
    ) -> StayQuote:
        """Price a stay night by night, with the guest's loyalty discount if given.

        Args:
            hotel_id: The hotel id.
            room_type: Room type code, e.g. "KING", "QQ" or "STE".
            check_in: Arrival date, YYYY-MM-DD.
            check_out: Departure date, YYYY-MM-DD.
            rate_plan: "flexible" (free cancellation until 48 h before arrival) or
                "non_refundable" (10% cheaper).
            guest_id: Loyalty member to price for (tier discount and points balance).

        Returns:
            Nightly prices, total, points needed to pay with points, rooms left and the
            cancellation policy.
        """
        hotel = self._hotel(hotel_id)
        room = self._room(hotel, room_type)
        start, end = self._stay(check_in, check_out)
        guest = self._guest(guest_id) if guest_id is not None else None
        prices = _nightly_prices(room, start, end, rate_plan, guest.tier if guest else None)
        total = round(sum(prices), 2)
        return StayQuote(
            hotel=hotel.name, room_type=room.code, nights=len(prices),
            nightly_prices=prices, total=total,
            points_cost=_points_cost(total) if rate_plan == "flexible" else None,
            rooms_left=_free_rooms(self.state, hotel.id, room, start, end, None),
            cancellation_policy=self._policy(rate_plan, start))

    @tool
    def find_guest(self, query: str) -> list[Guest]:
        """Find loyalty members by (part of) name, email or phone number.

        Args:
            query: Text to match, case-insensitive.

        Returns:
            Matching guests with tier and points balance.
        """
        q = query.lower().strip()
        return [g for g in self.state.guests.values()
                if q in g.name.lower() or q in g.email or q in g.phone]

    @tool
    def get_guest(self, guest_id: str) -> GuestRecord:
        """Get a guest's profile with all their reservations.

        Args:
            guest_id: The guest id, e.g. "G-1004".

        Returns:
            The guest, and `reservations` summaries (id, hotel, dates, status, total).
        """
        guest = self._guest(guest_id)
        fields = set(StaySummary.model_fields) - {"hotel_name"}
        stays = [StaySummary(**r.model_dump(include=fields),
                             hotel_name=self.state.hotels[r.hotel_id].name)
                 for r in self.state.reservations.values() if r.guest_id == guest_id]
        return GuestRecord(**guest.model_dump(), reservations=stays)

    @tool
    def get_reservation(self, reservation_id: str) -> ReservationView:
        """Get a reservation with its nightly prices and cancellation policy.

        Args:
            reservation_id: The reservation id, e.g. "RES-70012".

        Returns:
            The reservation with hotel, guest name and cancellation policy.
        """
        return self._res_view(self._reservation(reservation_id))

    # -- write tools --------------------------------------------------------------------

    @tool(write=True)
    def register_guest(self, name: str, email: str, phone: str = "") -> Guest:
        """Enroll a new guest in the loyalty program (tier "member", no points).

        Args:
            name: Full name.
            email: Email address; must not belong to another member.
            phone: Phone number.

        Returns:
            The new guest record with its id.
        """
        email = email.strip().lower()
        if not name.strip() or "@" not in email:
            raise ToolError("A name and a valid email address are required.")
        if any(g.email == email for g in self.state.guests.values()):
            raise ToolError(f"A loyalty member with email {email} already exists.")
        guest = Guest(id=f"G-{self.state.next_guest_id}", name=name.strip(), email=email,
                      phone=phone)
        self.state.next_guest_id += 1
        self.state.guests[guest.id] = guest
        return guest

    @tool(write=True)
    def create_reservation(
        self,
        guest_id: str,
        hotel_id: str,
        room_type: str,
        check_in: str,
        check_out: str,
        guests: int = 1,
        rate_plan: RatePlan = "flexible",
        pay_with_points: bool = False,
        special_requests: str = "",
    ) -> ReservationView:
        """Book a room for a loyalty member.

        Args:
            guest_id: The guest the stay is for.
            hotel_id: The hotel id.
            room_type: Room type code, e.g. "KING".
            check_in: Arrival date, YYYY-MM-DD (today or later).
            check_out: Departure date, YYYY-MM-DD (1 to 14 nights).
            guests: Number of guests (up to the room type's maximum occupancy).
            rate_plan: "flexible" or "non_refundable".
            pay_with_points: Pay entirely with loyalty points (flexible rate only).
            special_requests: Requests for the hotel, e.g. "high floor".

        Returns:
            The confirmed reservation with total, points used and cancellation policy.
        """
        guest = self._guest(guest_id)
        hotel = self._hotel(hotel_id)
        room = self._room(hotel, room_type)
        start, end = self._stay(check_in, check_out)
        if not 1 <= guests <= room.max_occupancy:
            raise ToolError(f"{room.name} at {hotel.name} sleeps at most {room.max_occupancy}.")
        if _free_rooms(self.state, hotel.id, room, start, end, exclude=None) < 1:
            raise ToolError(f"No {room.name} available at {hotel.name} for "
                            f"{check_in} to {check_out}.")
        prices = _nightly_prices(room, start, end, rate_plan, guest.tier)
        total = round(sum(prices), 2)
        points = 0
        if pay_with_points:
            if rate_plan != "flexible":
                raise ToolError("Points can only pay for flexible-rate stays.")
            points = _points_cost(total)
            if guest.points < points:
                raise ToolError(f"{guest.name} has {guest.points} points; this stay needs "
                                f"{points}.")
            guest.points -= points
        res = Reservation(
            id=f"RES-{self.state.next_reservation_id}", guest_id=guest.id, hotel_id=hotel.id,
            room_type=room.code, check_in=start.isoformat(), check_out=end.isoformat(),
            guests=guests, rate_plan=rate_plan, nightly_prices=prices, total=total,
            payment="points" if pay_with_points else "card", points_used=points,
            special_requests=special_requests, created_at=self.state.now)
        self.state.next_reservation_id += 1
        self.state.reservations[res.id] = res
        return self._res_view(res)

    @tool(write=True)
    def modify_reservation(
        self,
        reservation_id: str,
        check_in: str | None = None,
        check_out: str | None = None,
        room_type: str | None = None,
        guests: int | None = None,
    ) -> ReservationView:
        """Change the dates, room type or guest count of a confirmed flexible-rate stay.

        The stay is repriced at today's rates; for points bookings the difference in
        points is charged or refunded.

        Args:
            reservation_id: The reservation id.
            check_in: New arrival date, YYYY-MM-DD.
            check_out: New departure date, YYYY-MM-DD.
            room_type: New room type code.
            guests: New number of guests.

        Returns:
            The updated reservation.
        """
        res = self._open(reservation_id, "modified")
        if res.rate_plan == "non_refundable":
            raise ToolError(f"Reservation {reservation_id} is non-refundable and cannot be "
                            "changed.")
        if check_in is None and check_out is None and room_type is None and guests is None:
            raise ToolError("Nothing to change: give new dates, a room type or a guest count.")
        hotel, guest = self.state.hotels[res.hotel_id], self.state.guests[res.guest_id]
        room = self._room(hotel, room_type or res.room_type)
        start, end = self._stay(check_in or res.check_in, check_out or res.check_out)
        party = res.guests if guests is None else guests
        if not 1 <= party <= room.max_occupancy:
            raise ToolError(f"{room.name} at {hotel.name} sleeps at most {room.max_occupancy}.")
        if _free_rooms(self.state, hotel.id, room, start, end, exclude=res.id) < 1:
            raise ToolError(f"No {room.name} available at {hotel.name} for "
                            f"{start.isoformat()} to {end.isoformat()}.")
        prices = _nightly_prices(room, start, end, res.rate_plan, guest.tier)
        total = round(sum(prices), 2)
        if res.payment == "points":
            extra = _points_cost(total) - res.points_used
            if extra > guest.points:
                raise ToolError(f"{guest.name} has {guest.points} points; the change needs "
                                f"{extra} more.")
            guest.points -= extra
            res.points_used += extra
        res.room_type, res.check_in, res.check_out = room.code, start.isoformat(), end.isoformat()
        res.guests, res.nightly_prices, res.total = party, prices, total
        return self._res_view(res)

    @tool(write=True)
    def cancel_reservation(self, reservation_id: str) -> CancelledReservation:
        """Cancel a confirmed stay, applying the cancellation policy.

        Flexible: free until 48 hours before the 15:00 arrival, then the first night is
        charged (for points stays, its points are kept). Non-refundable: the full stay is
        charged.

        Args:
            reservation_id: The reservation id.

        Returns:
            The cancelled reservation with `cancellation_fee` and `points_refunded`.
        """
        res = self._open(reservation_id, "cancelled")
        guest = self.state.guests[res.guest_id]
        if res.rate_plan == "non_refundable":
            fee = res.total
        elif current_moment(self.state) <= self._free_cancel_deadline(res):
            fee = 0.0
        else:
            fee = res.nightly_prices[0]
        refund = 0
        if res.payment == "points":
            refund = res.points_used - (_points_cost(fee) if fee else 0)
            guest.points += refund
        res.status, res.cancellation_fee = "cancelled", fee
        return CancelledReservation(**self._res_view(res).model_dump(), points_refunded=refund)

    @tool(write=True)
    def check_in(self, reservation_id: str) -> ReservationView:
        """Check a guest in on their arrival day and assign a room number.

        Args:
            reservation_id: The reservation id.

        Returns:
            The reservation with status "checked_in" and its `room_number`.
        """
        res = self._open(reservation_id, "checked in")
        today = current_day(self.state).isoformat()
        if res.check_in != today:
            raise ToolError(f"Reservation {reservation_id} arrives on {res.check_in}; "
                            f"check-in is only possible on that day (today is {today}).")
        res.status, res.room_number = "checked_in", _free_room_number(self.state, res)
        return self._res_view(res)

    @tool(write=True)
    def check_out(self, reservation_id: str) -> CheckedOutReservation:
        """Check a guest out (early departures are charged the booked stay) and award points.

        Card-paid stays earn points per dollar by tier (member 10, silver 11, gold 12.5,
        platinum 15); points-paid stays earn none.

        Args:
            reservation_id: The reservation id.

        Returns:
            The reservation with status "checked_out", `points_earned` and the guest's
            new `points_balance`.
        """
        res = self._reservation(reservation_id)
        if res.status != "checked_in":
            raise ToolError(f"Reservation {reservation_id} is {res.status.replace('_', ' ')}, "
                            "not checked in.")
        guest = self.state.guests[res.guest_id]
        earned = int(res.total * TIER_EARN[guest.tier]) if res.payment == "card" else 0
        guest.points += earned
        res.status, res.points_earned = "checked_out", earned
        return CheckedOutReservation(**self._res_view(res).model_dump(),
                                     points_balance=guest.points)

    @tool(write=True)
    def set_special_requests(self, reservation_id: str, requests: str) -> ReservationView:
        """Replace the special requests passed to the hotel for a confirmed stay.

        Args:
            reservation_id: The reservation id.
            requests: The full text of the requests, e.g. "high floor, extra pillows";
                empty to clear them.

        Returns:
            The updated reservation.
        """
        res = self._open(reservation_id, "changed")
        if res.special_requests == requests:
            raise ToolError(f"Reservation {reservation_id} already has those requests.")
        res.special_requests = requests
        return self._res_view(res)
