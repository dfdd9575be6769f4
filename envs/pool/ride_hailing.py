"""Ride hailing: riders, drivers and their vehicles, ride requests, fares and ratings.

The rider-side app of a city ride service. Fares are computed from a simple distance and
time model on a km grid of named places (with per-zone surge), a request is matched to
the nearest available driver of the chosen vehicle class, and the usual rules apply: one
active ride per rider, no expired cards, cancelling after the free window costs a fee, a
ride in progress cannot be cancelled, and only completed rides can be rated once.
"""

from __future__ import annotations

import math
import random
import re
from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from envs.base import Environment, ToolError, tool
from envs.timestamps import Timestamp, current_moment, stamp

VehicleClass = Literal["economy", "comfort", "xl", "green"]
RideStatus = Literal["accepted", "in_progress", "completed", "cancelled"]
CardBrand = Literal["visa", "mastercard", "amex"]

ACTIVE_STATUSES = ("accepted", "in_progress")
#: Straight-line distance times this factor approximates the road distance.
ROAD_FACTOR = 1.3
#: Average city speed, km per minute (27 km/h).
CITY_SPEED_KM_PER_MIN = 0.45
FREE_CANCEL_MINUTES = 2
CANCELLATION_FEE = 5.0
MAX_PAYMENT_METHODS = 5
LOST_ITEM_WINDOW_HOURS = 72


class Rate(BaseModel):
    base: float
    per_km: float
    per_min: float
    minimum: float


RATES: dict[str, Rate] = {
    "economy": Rate(base=2.5, per_km=1.1, per_min=0.25, minimum=7.0),
    "comfort": Rate(base=3.5, per_km=1.45, per_min=0.32, minimum=9.0),
    "xl": Rate(base=4.0, per_km=1.8, per_min=0.38, minimum=11.0),
    "green": Rate(base=2.8, per_km=1.2, per_min=0.26, minimum=7.5),
}


class Place(BaseModel):
    id: str
    name: str
    address: str
    zone: str
    x_km: float
    y_km: float


class PaymentMethod(BaseModel):
    id: str
    rider_id: str
    kind: Literal["card", "wallet"]
    label: str
    brand: CardBrand | None = None
    last4: str | None = None
    expires: str | None = Field(default=None, description="cards: YYYY-MM")
    balance: float | None = Field(default=None, description="wallets: USD available")


class Rider(BaseModel):
    id: str
    name: str
    phone: str
    email: str
    rating: float
    home_place_id: str
    default_payment_method_id: str


class Vehicle(BaseModel):
    id: str
    make: str
    model: str
    color: str
    plate: str
    vehicle_class: VehicleClass
    seats: int


class Driver(BaseModel):
    id: str
    name: str
    phone: str
    rating: float
    rating_count: int
    status: Literal["available", "on_trip", "offline"]
    vehicle_id: str
    place_id: str = Field(description="where the driver is now")


class Ride(BaseModel):
    id: str
    rider_id: str
    driver_id: str
    pickup_place_id: str
    dropoff_place_id: str
    vehicle_class: VehicleClass
    status: RideStatus
    requested_at: Timestamp
    completed_at: Timestamp | None = None
    distance_km: float
    fare_estimate: float
    final_fare: float | None = None
    payment_method_id: str
    cancellation_fee: float = 0.0
    stars: int | None = None
    comment: str = ""
    tip: float = 0.0


class LostItemReport(BaseModel):
    id: str
    ride_id: str
    driver_id: str
    description: str
    status: Literal["open", "returned"]
    created_at: str


# -- what the tools return ---------------------------------------------------------------


class Fare(TypedDict):
    distance_km: float
    duration_min: Annotated[int, Field(description="Expected trip time in minutes")]
    surge: Annotated[float, Field(description="Surge multiplier at the pickup zone")]
    fare: Annotated[float, Field(description="Estimated fare in USD")]


class FareEstimate(Fare):
    vehicle_class: VehicleClass


class DriverBrief(TypedDict):
    id: str
    name: str
    rating: float


class VehicleBrief(TypedDict):
    make: str
    model: str
    color: str
    plate: str


class RideView(Ride):
    """A ride with place names, driver and vehicle."""

    pickup: str = Field(description="Pickup place name")
    dropoff: str = Field(description="Dropoff place name")
    driver: DriverBrief
    vehicle: VehicleBrief


class RequestedRide(RideView):
    pickup_eta_min: int = Field(description="Minutes until the driver arrives")


class RiderContact(TypedDict):
    id: str
    name: str
    email: str
    phone: str


class RiderRecord(Rider):
    home: str = Field(description="Home place name")
    payment_methods: list[PaymentMethod]
    active_ride_id: str | None = Field(description="The ride under way, if any")


class RideSummary(TypedDict):
    id: str
    status: RideStatus
    requested_at: Timestamp
    pickup: Annotated[str, Field(description="Pickup place name")]
    dropoff: Annotated[str, Field(description="Dropoff place name")]
    fare: Annotated[float, Field(description="Final fare, or the estimate if not final")]
    stars: Annotated[int | None, Field(description="Rider's rating of the ride, if rated")]


class CancelledRide(TypedDict):
    ride_id: str
    status: RideStatus
    cancellation_fee: float


class RatingReceipt(TypedDict):
    ride_id: str
    stars: int
    comment: str
    tip: float
    driver: Annotated[str, Field(description="Driver's name")]
    driver_rating: Annotated[float, Field(description="Driver's rating after this one")]


class RideHailingState(BaseModel):
    seed: int = 0
    now: Timestamp = "2026-03-16T08:30:00"
    surge: dict[str, float] = Field(default_factory=dict, description="zone -> multiplier")
    places: dict[str, Place] = Field(default_factory=dict)
    riders: dict[str, Rider] = Field(default_factory=dict)
    payment_methods: dict[str, PaymentMethod] = Field(default_factory=dict)
    vehicles: dict[str, Vehicle] = Field(default_factory=dict)
    drivers: dict[str, Driver] = Field(default_factory=dict)
    rides: dict[str, Ride] = Field(default_factory=dict)
    lost_items: dict[str, LostItemReport] = Field(default_factory=dict)
    next_payment_method_id: int = 1
    next_ride_id: int = 1
    next_lost_item_id: int = 1


# -- seed data ----------------------------------------------------------------------

PLACES = [
    ("Central Station", "1 Station Plaza", "downtown", 0.0, 0.0),
    ("Harborview Tower", "200 Pier Avenue", "waterfront", 2.1, -1.4),
    ("Riverside Medical Center", "45 Riverside Drive", "midtown", -1.8, 2.6),
    ("Northgate Mall", "900 Northgate Boulevard", "north", 0.6, 7.9),
    ("City Airport - Terminal 1", "Airport Road, Departures Level", "airport", 11.5, -6.0),
    ("City Airport - Terminal 2", "Airport Road, Arrivals Hall", "airport", 12.2, -6.4),
    ("Old Town Square", "Market Street & 3rd", "downtown", -0.7, -0.9),
    ("University Campus - Main Gate", "1200 College Avenue", "university", -4.9, 4.2),
    ("Lakeside Park", "Lakeshore Drive, North Entrance", "north", -3.2, 8.8),
    ("Convention Center", "500 Expo Way", "downtown", 1.4, 0.8),
    ("Grand Arena", "77 Arena Loop", "east", 5.6, 1.9),
    ("Maple Street Apartments", "318 Maple Street", "midtown", -2.6, 1.1),
    ("Westfield Business Park", "10 Enterprise Drive", "west", -8.4, -2.2),
    ("Museum of Modern Art", "22 Gallery Row", "downtown", 0.9, -0.3),
    ("Union Market", "150 Union Street", "midtown", -1.1, 3.4),
    ("Bayside Ferry Terminal", "Pier 9", "waterfront", 3.8, -2.7),
    ("Elm Hill Residences", "64 Elm Hill Road", "west", -6.1, 0.5),
    ("Tech Quarter Innovation Hub", "88 Circuit Lane", "east", 4.2, 3.6),
    ("St. Anne's Hospital", "2 Hospital Way", "north", 1.9, 6.1),
    ("Sunset Beach Promenade", "Ocean Boulevard", "waterfront", 6.7, -4.8),
    ("Greenway Stadium", "1 Stadium Drive", "east", 7.9, 0.4),
    ("Cedar Heights", "12 Cedar Crescent", "north", -1.5, 10.7),
]
SURGE = {"downtown": 1.4, "waterfront": 1.0, "midtown": 1.0, "north": 1.0, "airport": 1.2,
         "university": 1.0, "east": 1.25, "west": 1.0}
FIRST = ["Sofia", "James", "Aisha", "Mark", "Lena", "Diego", "Mei", "Kwame", "Ines", "Peter",
         "Hana", "Rafael", "Zoe", "Ibrahim", "Clara", "Owen", "Nora", "Tariq", "Julia", "Ben",
         "Priya", "Luis", "Eva", "Chen", "Marta", "Ravi"]
LAST = ["Marques", "Whitfield", "Bello", "Jansen", "Costa", "Ferreira", "Lin", "Mensah",
        "Duarte", "Holm", "Kaur", "Ito", "Alvarez", "Quinn", "Raman", "Osei", "Weber", "Silva"]
VEHICLES: list[tuple[str, str, VehicleClass, int]] = [
    ("Toyota", "Corolla", "economy", 4), ("Honda", "Civic", "economy", 4),
    ("Hyundai", "Elantra", "economy", 4), ("Kia", "Forte", "economy", 4),
    ("Toyota", "Camry", "comfort", 4), ("Honda", "Accord", "comfort", 4),
    ("Volkswagen", "Passat", "comfort", 4), ("Chevrolet", "Suburban", "xl", 6),
    ("Honda", "Odyssey", "xl", 6), ("Toyota", "Sienna", "xl", 6),
    ("Tesla", "Model 3", "green", 4), ("Toyota", "Prius", "green", 4),
    ("Hyundai", "Ioniq 5", "green", 4), ("Nissan", "Leaf", "green", 4),
]
COLORS = ["white", "black", "silver", "gray", "blue", "red"]
BRANDS: list[CardBrand] = ["visa", "mastercard", "amex"]
#: The account holder the pool's tasks speak as (also a CRM rep, chat user and patient).
PERSONA = "Priya Raman"


def _card_label(brand: str, last4: str) -> str:
    return f"{brand.capitalize() if brand != 'amex' else 'Amex'} ending {last4}"


def _trip(a: Place, b: Place) -> tuple[float, int]:
    """(road distance in km, duration in minutes) between two places."""
    km = round(math.dist((a.x_km, a.y_km), (b.x_km, b.y_km)) * ROAD_FACTOR, 1)
    return km, round(km / CITY_SPEED_KM_PER_MIN) + 3


def _fare(state: RideHailingState, pickup: Place, dropoff: Place,
          vehicle_class: str) -> Fare:
    km, minutes = _trip(pickup, dropoff)
    rate = RATES[vehicle_class]
    surge = state.surge.get(pickup.zone, 1.0)
    raw = (rate.base + rate.per_km * km + rate.per_min * minutes) * surge
    return {"distance_km": km, "duration_min": minutes, "surge": surge,
            "fare": round(max(rate.minimum, raw), 2)}


def _phone(rng: random.Random) -> str:
    return f"+1-555-{rng.randrange(100, 999)}-{rng.randrange(1000, 9999)}"


def _seed_card(state: RideHailingState, rng: random.Random, rider_id: str, valid: bool) -> str:
    """Add a seeded card; `valid=False` lets it be one that has already expired."""
    pid = f"PM-{state.next_payment_method_id:03d}"
    state.next_payment_method_id += 1
    brand = rng.choice(BRANDS)
    last4 = f"{rng.randrange(10000):04d}"
    year = rng.choice([2027, 2028, 2029] if valid else [2025, 2025, 2027, 2028])
    state.payment_methods[pid] = PaymentMethod(
        id=pid, rider_id=rider_id, kind="card", label=_card_label(brand, last4), brand=brand,
        last4=last4, expires=f"{year}-{rng.randrange(1, 13):02d}")
    return pid


def _build_state(seed: int) -> RideHailingState:
    """A deterministic city: 22 places, 24 riders, 24 drivers with vehicles, 30 rides."""
    rng = random.Random(seed)
    state = RideHailingState(seed=seed, surge=dict(SURGE))
    now = datetime.fromisoformat(state.now)
    for i, (name, address, zone, x, y) in enumerate(PLACES, start=1):
        state.places[f"PL-{i:02d}"] = Place(id=f"PL-{i:02d}", name=name, address=address,
                                            zone=zone, x_km=x, y_km=y)
    place_ids = list(state.places)
    pool = [f"{f} {last}" for f in FIRST for last in LAST if f"{f} {last}" != PERSONA]
    names = [PERSONA, *rng.sample(pool, 47)]

    for i, name in enumerate(names[:24], start=1):
        rid = f"RD-{i:03d}"
        # the first card is always valid; a second card may have lapsed, or be a wallet
        methods = [_seed_card(state, rng, rid, valid=True)]
        if rng.random() < 0.6:
            if rng.random() < 0.4:
                pid = f"PM-{state.next_payment_method_id:03d}"
                state.next_payment_method_id += 1
                state.payment_methods[pid] = PaymentMethod(
                    id=pid, rider_id=rid, kind="wallet", label="RideCash wallet",
                    balance=float(rng.choice([0, 4, 12, 25, 60])))
                methods.append(pid)
            else:
                methods.append(_seed_card(state, rng, rid, valid=False))
        first, last = name.split(" ")
        state.riders[rid] = Rider(
            id=rid, name=name, phone=_phone(rng),
            email=f"{first.lower()}.{last.lower()}@mailbox.example",
            rating=round(rng.uniform(4.5, 5.0), 2), home_place_id=rng.choice(place_ids),
            default_payment_method_id=methods[0])

    letters = "ABCDEFGHJKLMNPRSTUVWXYZ"
    for i, name in enumerate(names[24:], start=1):
        make, model, vclass, seats = VEHICLES[(i - 1) % len(VEHICLES)]
        vid = f"VH-{i:03d}"
        plate = "".join(rng.choice(letters) for _ in range(3)) + f"-{rng.randrange(1000, 9999)}"
        state.vehicles[vid] = Vehicle(id=vid, make=make, model=model, color=rng.choice(COLORS),
                                      plate=plate, vehicle_class=vclass, seats=seats)
        did = f"DR-{i:03d}"
        state.drivers[did] = Driver(
            id=did, name=name, phone=_phone(rng),
            rating=round(rng.uniform(4.6, 4.99), 2), rating_count=rng.randrange(80, 2400),
            status=rng.choice(["available", "available", "available", "offline"]),
            vehicle_id=vid, place_id=rng.choice(place_ids))

    riders, drivers = list(state.riders.values()), list(state.drivers.values())
    for n in range(30):
        rider = riders[n % len(riders)] if n < 24 else rng.choice(riders)
        driver = rng.choice(drivers)
        vclass = state.vehicles[driver.vehicle_id].vehicle_class
        pickup, dropoff = (state.places[p] for p in rng.sample(place_ids, 2))
        estimate = _fare(state, pickup, dropoff, vclass)
        requested = now - timedelta(days=rng.randrange(1, 20), hours=rng.randrange(0, 12))
        status: RideStatus = "cancelled" if n % 9 == 4 else "completed"
        if n % 12 == 0:  # recent enough for a lost-item report
            requested = now - timedelta(hours=rng.randrange(5, 30))
        ride = Ride(
            id=f"RIDE-{state.next_ride_id:04d}", rider_id=rider.id, driver_id=driver.id,
            pickup_place_id=pickup.id, dropoff_place_id=dropoff.id, vehicle_class=vclass,
            status=status, requested_at=stamp(requested), distance_km=estimate["distance_km"],
            fare_estimate=estimate["fare"], payment_method_id=rider.default_payment_method_id)
        state.next_ride_id += 1
        if status == "completed":
            ride.completed_at = stamp(requested + timedelta(minutes=estimate["duration_min"] + 6))
            ride.final_fare = round(estimate["fare"] * rng.choice([0.95, 1.0, 1.0, 1.08]), 2)
            if rng.random() < 0.5:
                ride.stars = rng.choice([3, 4, 5, 5, 5])
                ride.tip = float(rng.choice([0, 0, 2, 3, 5]))
        state.rides[ride.id] = ride

    # Two rides happening right now: one driver on the way, one trip under way.
    for rider, status, minutes_ago in ((riders[4], "accepted", 6), (riders[9], "in_progress", 14)):
        driver = next(d for d in drivers if d.status == "available")
        driver.status = "on_trip"
        pickup = state.places[rider.home_place_id]
        dropoff = state.places[rng.choice([p for p in place_ids if p != pickup.id])]
        vclass = state.vehicles[driver.vehicle_id].vehicle_class
        estimate = _fare(state, pickup, dropoff, vclass)
        ride = Ride(
            id=f"RIDE-{state.next_ride_id:04d}", rider_id=rider.id, driver_id=driver.id,
            pickup_place_id=pickup.id, dropoff_place_id=dropoff.id, vehicle_class=vclass,
            status=status, requested_at=stamp(now - timedelta(minutes=minutes_ago)),
            distance_km=estimate["distance_km"], fare_estimate=estimate["fare"],
            payment_method_id=rider.default_payment_method_id)
        state.next_ride_id += 1
        state.rides[ride.id] = ride
    return state


class RideHailing(Environment):
    """Rider app of a city ride service: places, fares, requests, trips and ratings."""

    name = "ride_hailing"
    domain = "travel"
    description = ("A city ride-hailing service where riders estimate fares, request and "
                   "manage rides, pay with cards or a wallet, and rate their drivers.")
    State = RideHailingState
    state: RideHailingState

    @classmethod
    def default_state(cls) -> RideHailingState:
        return _build_state(seed=0)

    # -- lookups --------------------------------------------------------------------

    def _place(self, place_id: str) -> Place:
        if place_id not in self.state.places:
            raise ToolError(f"place {place_id!r} not found; use search_places to find ids")
        return self.state.places[place_id]

    def _rider(self, rider_id: str) -> Rider:
        if rider_id not in self.state.riders:
            raise ToolError(f"rider {rider_id!r} not found")
        return self.state.riders[rider_id]

    def _ride(self, ride_id: str) -> Ride:
        if ride_id not in self.state.rides:
            raise ToolError(f"ride {ride_id!r} not found")
        return self.state.rides[ride_id]

    def _method_of(self, rider: Rider, payment_method_id: str) -> PaymentMethod:
        method = self.state.payment_methods.get(payment_method_id)
        if method is None or method.rider_id != rider.id:
            raise ToolError(f"payment method {payment_method_id!r} not found for rider "
                            f"{rider.id} ({rider.name})")
        if method.expires is not None and method.expires < self.state.now[:7]:
            raise ToolError(f"payment method {method.id} ({method.label}) expired "
                            f"{method.expires}")
        return method

    def _active_ride(self, ride_id: str) -> Ride:
        ride = self._ride(ride_id)
        if ride.status not in ACTIVE_STATUSES:
            raise ToolError(f"ride {ride_id} is {ride.status}, not active")
        return ride

    def _ride_view(self, ride: Ride) -> RideView:
        driver = self.state.drivers[ride.driver_id]
        vehicle = self.state.vehicles[driver.vehicle_id]
        return RideView(**ride.model_dump(),
                        pickup=self.state.places[ride.pickup_place_id].name,
                        dropoff=self.state.places[ride.dropoff_place_id].name,
                        driver={"id": driver.id, "name": driver.name, "rating": driver.rating},
                        vehicle={"make": vehicle.make, "model": vehicle.model,
                                 "color": vehicle.color, "plate": vehicle.plate})

    # -- tools ----------------------------------------------------------------------

    @tool
    def search_places(self, query: str) -> list[Place]:
        """Find named places (stations, venues, addresses) to ride from or to.

        Args:
            query: Case-insensitive part of the place's name or street address.

        Returns:
            The matching places with their ids and zones.
        """
        q = query.strip().lower()
        return [p for p in self.state.places.values()
                if q in p.name.lower() or q in p.address.lower()]

    @tool
    def find_rider(self, query: str) -> list[RiderContact]:
        """Look up rider accounts by name, email or phone number.

        Args:
            query: Case-insensitive part of the rider's name, email or phone.

        Returns:
            Matching riders (id, name, email, phone).
        """
        q = query.strip().lower()
        if not q:
            raise ToolError("query must not be empty")
        return [{"id": r.id, "name": r.name, "email": r.email, "phone": r.phone}
                for r in self.state.riders.values()
                if q in r.name.lower() or q in r.email.lower() or q in r.phone]

    @tool
    def get_rider(self, rider_id: str) -> RiderRecord:
        """Show a rider's profile, payment methods and current active ride, if any.

        Args:
            rider_id: The rider's id, e.g. "RD-007".

        Returns:
            The rider record plus `payment_methods`, `home` (place name) and
            `active_ride_id` (or null).
        """
        rider = self._rider(rider_id)
        active = next((r.id for r in self.state.rides.values()
                       if r.rider_id == rider_id and r.status in ACTIVE_STATUSES), None)
        return RiderRecord(**rider.model_dump(),
                           home=self.state.places[rider.home_place_id].name,
                           payment_methods=[m for m in self.state.payment_methods.values()
                                            if m.rider_id == rider_id],
                           active_ride_id=active)

    @tool
    def estimate_fare(self, pickup_place_id: str, dropoff_place_id: str,
                      vehicle_class: VehicleClass = "economy") -> FareEstimate:
        """Estimate distance, duration and fare of a trip for one vehicle class.

        Args:
            pickup_place_id: Where the trip starts.
            dropoff_place_id: Where the trip ends.
            vehicle_class: economy, comfort, xl (6 seats) or green (electric/hybrid).

        Returns:
            distance_km, duration_min, surge multiplier at the pickup and fare in USD.
        """
        pickup, dropoff = self._place(pickup_place_id), self._place(dropoff_place_id)
        if pickup.id == dropoff.id:
            raise ToolError("pickup and dropoff are the same place")
        return {"vehicle_class": vehicle_class, **_fare(self.state, pickup, dropoff,
                                                        vehicle_class)}

    @tool(write=True)
    def request_ride(self, rider_id: str, pickup_place_id: str, dropoff_place_id: str,
                     vehicle_class: VehicleClass = "economy",
                     payment_method_id: str | None = None) -> RequestedRide:
        """Request a ride now; the nearest available driver of that class is assigned.

        Args:
            rider_id: The rider requesting the ride.
            pickup_place_id: Where to be picked up.
            dropoff_place_id: Where to go.
            vehicle_class: economy, comfort, xl (6 seats) or green (electric/hybrid).
            payment_method_id: Card or wallet to charge; defaults to the rider's default.

        Returns:
            The accepted ride with driver, vehicle, fare estimate and pickup ETA in minutes.
        """
        rider = self._rider(rider_id)
        pickup, dropoff = self._place(pickup_place_id), self._place(dropoff_place_id)
        if pickup.id == dropoff.id:
            raise ToolError("pickup and dropoff are the same place")
        for ride in self.state.rides.values():
            if ride.rider_id == rider_id and ride.status in ACTIVE_STATUSES:
                raise ToolError(f"rider {rider_id} already has an active ride {ride.id}")
        method = self._method_of(rider, payment_method_id or rider.default_payment_method_id)
        estimate = _fare(self.state, pickup, dropoff, vehicle_class)
        if method.kind == "wallet" and (method.balance or 0.0) < estimate["fare"]:
            raise ToolError(f"wallet {method.id} balance ${method.balance:.2f} is below the "
                            f"fare estimate ${estimate['fare']:.2f}")
        candidates = [d for d in self.state.drivers.values() if d.status == "available"
                      and self.state.vehicles[d.vehicle_id].vehicle_class == vehicle_class]
        if not candidates:
            raise ToolError(f"no {vehicle_class} drivers are available near {pickup.name} "
                            "right now")
        def approach_km(d: Driver) -> float:
            return _trip(self.state.places[d.place_id], pickup)[0]

        driver = min(candidates, key=lambda d: (approach_km(d), d.id))
        driver.status = "on_trip"
        ride = Ride(id=f"RIDE-{self.state.next_ride_id:04d}", rider_id=rider_id,
                    driver_id=driver.id, pickup_place_id=pickup.id, dropoff_place_id=dropoff.id,
                    vehicle_class=vehicle_class, status="accepted", requested_at=self.state.now,
                    distance_km=estimate["distance_km"], fare_estimate=estimate["fare"],
                    payment_method_id=method.id)
        self.state.next_ride_id += 1
        self.state.rides[ride.id] = ride
        return RequestedRide(
            **self._ride_view(ride).model_dump(),
            pickup_eta_min=round(approach_km(driver) / CITY_SPEED_KM_PER_MIN) + 2)

    @tool
    def list_rides(self, rider_id: str, status: RideStatus | None = None) -> list[RideSummary]:
        """List a rider's rides, most recent first.

        Args:
            rider_id: The rider whose rides to list.
            status: Only rides in this status (accepted, in_progress, completed, cancelled).

        Returns:
            Ride summaries: id, status, requested_at, pickup, dropoff, fare, stars.
        """
        self._rider(rider_id)
        rides = [r for r in self.state.rides.values()
                 if r.rider_id == rider_id and (status is None or r.status == status)]
        rides.sort(key=lambda r: r.requested_at, reverse=True)
        return [{"id": r.id, "status": r.status, "requested_at": r.requested_at,
                 "pickup": self.state.places[r.pickup_place_id].name,
                 "dropoff": self.state.places[r.dropoff_place_id].name,
                 "fare": r.final_fare if r.final_fare is not None else r.fare_estimate,
                 "stars": r.stars} for r in rides]

    @tool
    def get_ride(self, ride_id: str) -> RideView:
        """Show one ride in full: places, driver, vehicle, fares, rating.

        Args:
            ride_id: The ride's id, e.g. "RIDE-0012".

        Returns:
            The ride record plus pickup/dropoff names, `driver` and `vehicle`.
        """
        return self._ride_view(self._ride(ride_id))

    @tool(write=True)
    def cancel_ride(self, ride_id: str) -> CancelledRide:
        """Cancel a ride whose driver is still on the way.

        Free within 2 minutes of the request; later a $5.00 fee is recorded on the ride and
        billed to its payment method. A ride already in progress cannot be cancelled.

        Args:
            ride_id: The ride to cancel.

        Returns:
            The ride id, its new status and the cancellation fee charged.
        """
        ride = self._active_ride(ride_id)
        if ride.status == "in_progress":
            raise ToolError(f"ride {ride_id} is already in progress and cannot be cancelled")
        waited = current_moment(self.state) - datetime.fromisoformat(ride.requested_at)
        ride.cancellation_fee = 0.0 if waited <= timedelta(minutes=FREE_CANCEL_MINUTES) \
            else CANCELLATION_FEE
        ride.status = "cancelled"
        self.state.drivers[ride.driver_id].status = "available"
        return {"ride_id": ride.id, "status": ride.status,
                "cancellation_fee": ride.cancellation_fee}

    @tool(write=True)
    def change_destination(self, ride_id: str, dropoff_place_id: str) -> RideView:
        """Send an active ride to a different dropoff; the fare estimate is recomputed.

        Args:
            ride_id: The active ride (accepted or in progress).
            dropoff_place_id: The new destination.

        Returns:
            The updated ride.
        """
        ride = self._active_ride(ride_id)
        dropoff = self._place(dropoff_place_id)
        if dropoff.id == ride.dropoff_place_id:
            raise ToolError(f"ride {ride_id} is already going to {dropoff.name}")
        if dropoff.id == ride.pickup_place_id:
            raise ToolError("the new dropoff is the pickup place")
        estimate = _fare(self.state, self.state.places[ride.pickup_place_id], dropoff,
                         ride.vehicle_class)
        ride.dropoff_place_id = dropoff.id
        ride.distance_km, ride.fare_estimate = estimate["distance_km"], estimate["fare"]
        return self._ride_view(ride)

    @tool(write=True)
    def rate_ride(self, ride_id: str, stars: int, comment: str = "",
                  tip: float = 0.0) -> RatingReceipt:
        """Rate the driver of a completed ride and optionally add a tip (once per ride).

        Args:
            ride_id: The completed ride.
            stars: 1 to 5.
            comment: Optional feedback for the driver.
            tip: Tip in USD (>= 0), charged to the ride's payment method.

        Returns:
            The ride's rating and tip and the driver's new average rating.
        """
        ride = self._ride(ride_id)
        if ride.status != "completed":
            raise ToolError(f"ride {ride_id} is {ride.status}; only completed rides can be rated")
        if ride.stars is not None:
            raise ToolError(f"ride {ride_id} was already rated {ride.stars} stars")
        if not 1 <= stars <= 5:
            raise ToolError(f"stars must be between 1 and 5, got {stars}")
        if tip < 0:
            raise ToolError(f"tip must not be negative, got {tip}")
        method = self.state.payment_methods[ride.payment_method_id]
        if tip > 0 and method.kind == "wallet":
            if (method.balance or 0.0) < tip:
                raise ToolError(f"wallet {method.id} balance ${method.balance:.2f} is below the "
                                f"${tip:.2f} tip")
            method.balance = round((method.balance or 0.0) - tip, 2)
        driver = self.state.drivers[ride.driver_id]
        driver.rating = round((driver.rating * driver.rating_count + stars)
                              / (driver.rating_count + 1), 2)
        driver.rating_count += 1
        ride.stars, ride.comment, ride.tip = stars, comment, round(tip, 2)
        return {"ride_id": ride.id, "stars": stars, "comment": comment, "tip": ride.tip,
                "driver": driver.name, "driver_rating": driver.rating}

    @tool(write=True)
    def report_lost_item(self, ride_id: str, description: str) -> LostItemReport:
        """Report an item left in the car; the driver is notified (within 72 hours).

        Args:
            ride_id: The completed ride the item was left in.
            description: What was lost, e.g. "black umbrella on the back seat".

        Returns:
            The open lost-item report.
        """
        ride = self._ride(ride_id)
        if ride.status != "completed" or ride.completed_at is None:
            raise ToolError(f"ride {ride_id} is {ride.status}; lost items can only be reported "
                            "for completed rides")
        if current_moment(self.state) - datetime.fromisoformat(ride.completed_at) > timedelta(
                hours=LOST_ITEM_WINDOW_HOURS):
            raise ToolError(f"ride {ride_id} ended more than {LOST_ITEM_WINDOW_HOURS} hours ago; "
                            "contact support instead")
        if not description.strip():
            raise ToolError("description must not be empty")
        for report in self.state.lost_items.values():
            if report.ride_id == ride_id and report.status == "open":
                raise ToolError(f"ride {ride_id} already has an open lost-item report "
                                f"{report.id}")
        report = LostItemReport(id=f"LI-{self.state.next_lost_item_id:03d}", ride_id=ride_id,
                                driver_id=ride.driver_id, description=description.strip(),
                                status="open", created_at=self.state.now)
        self.state.next_lost_item_id += 1
        self.state.lost_items[report.id] = report
        return report

    @tool(write=True)
    def add_card(self, rider_id: str, brand: CardBrand, last4: str, expires: str,
                 make_default: bool = False) -> PaymentMethod:
        """Add a payment card to a rider's account.

        Args:
            rider_id: The rider adding the card.
            brand: visa, mastercard or amex.
            last4: The card's last four digits.
            expires: Expiry month, YYYY-MM; must not be in the past.
            make_default: Also make it the rider's default payment method.

        Returns:
            The new payment method.
        """
        rider = self._rider(rider_id)
        if not re.fullmatch(r"\d{4}", last4):
            raise ToolError(f"last4 must be exactly four digits, got {last4!r}")
        if not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", expires):
            raise ToolError(f"expires must be YYYY-MM, got {expires!r}")
        if expires < self.state.now[:7]:
            raise ToolError(f"card expired {expires}; it cannot be added")
        owned = [m for m in self.state.payment_methods.values() if m.rider_id == rider_id]
        if any(m.brand == brand and m.last4 == last4 for m in owned):
            raise ToolError(f"{_card_label(brand, last4)} is already on rider {rider_id}'s "
                            "account")
        if len(owned) >= MAX_PAYMENT_METHODS:
            raise ToolError(f"rider {rider_id} already has {MAX_PAYMENT_METHODS} payment methods")
        method = PaymentMethod(id=f"PM-{self.state.next_payment_method_id:03d}",
                               rider_id=rider_id, kind="card", label=_card_label(brand, last4),
                               brand=brand, last4=last4, expires=expires)
        self.state.next_payment_method_id += 1
        self.state.payment_methods[method.id] = method
        if make_default:
            rider.default_payment_method_id = method.id
        return method

    @tool(write=True)
    def set_default_payment_method(self, rider_id: str, payment_method_id: str) -> Rider:
        """Choose which of a rider's cards or wallet new rides are charged to.

        Args:
            rider_id: The rider.
            payment_method_id: One of the rider's own, unexpired payment methods.

        Returns:
            The updated rider.
        """
        rider = self._rider(rider_id)
        method = self._method_of(rider, payment_method_id)
        if rider.default_payment_method_id == method.id:
            raise ToolError(f"{method.id} ({method.label}) is already the default")
        rider.default_payment_method_id = method.id
        return rider
