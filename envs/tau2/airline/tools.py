"""τ²-bench airline tools (upstream `tau2/domains/airline/tools.py`, `AirlineTools`): the agent's
toolkit over the `FlightDB` of `data_model`.

The tools reproduce upstream's v0.2.0 behaviour, quirks included, since the user
simulator reads the results and the reward replays the gold actions:
- "now" is fixed at 2024-05-15T15:00:00; new reservations take the ids HATHAT, HATHAU,
  HATHAV, new certificates certificate_3221322, …_3221323, …_3221324;
- cancelling appends a negated copy of every payment and does not release seats;
  changing flights does not touch seat counts either, only booking does;
- update payments are checked even when nothing is owed (a certificate is refused then
  too), and a negative difference is a refund recorded as a negative payment;
- the one-stop search builds the next day as `2024-05-<day + 1>` (no zero padding).
Error messages are upstream's verbatim; they reach the model as "Error: <message>".
"""

from __future__ import annotations

import copy

from envs.base import ToolError, tool
from envs.tau2 import data
from envs.tau2.airline.data_model import (
    AirportCode,
    CabinClass,
    Certificate,
    CreditCard,
    DirectFlight,
    Flight,
    FlightDateStatus,
    FlightDateStatusAvailable,
    FlightDB,
    FlightInfo,
    FlightType,
    GiftCard,
    Insurance,
    Passenger,
    Payment,
    Reservation,
    ReservationFlight,
    User,
)
from envs.tau2.base import Tau2Environment, as_models
from envs.tau2.calculator import calculate_expression
from envs.tau2.data import gc_paused

NOW = "2024-05-15T15:00:00"
NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
NEW_PAYMENT_NUMBERS = (3221322, 3221323, 3221324)
INSURANCE_PER_PASSENGER = 30
FEE_PER_NONFREE_BAG = 50

#: upstream's fixed airport list, in its order
AIRPORTS = (
    ("SFO", "San Francisco"), ("JFK", "New York"), ("LAX", "Los Angeles"),
    ("ORD", "Chicago"), ("DFW", "Dallas"), ("DEN", "Denver"), ("SEA", "Seattle"),
    ("ATL", "Atlanta"), ("MIA", "Miami"), ("BOS", "Boston"), ("PHX", "Phoenix"),
    ("IAH", "Houston"), ("LAS", "Las Vegas"), ("MCO", "Orlando"), ("EWR", "Newark"),
    ("CLT", "Charlotte"), ("MSP", "Minneapolis"), ("DTW", "Detroit"),
    ("PHL", "Philadelphia"), ("LGA", "LaGuardia"),
)


class Airline(Tau2Environment):
    """The airline customer-service agent's toolkit over the release database."""

    toolkit = "airline"
    toolkit_class = "AirlineTools"
    name = "tau2/airline"
    description = ("Airline customer service: look up users, reservations and flights; book, "
                   "change, and cancel reservations; issue travel certificates.")
    State = FlightDB
    state: FlightDB

    @classmethod
    def default_state(cls) -> FlightDB:
        with gc_paused():
            return FlightDB.model_validate(data.load_db("airline"))

    # -- lookups (upstream's messages) ------------------------------------------------

    def _user(self, user_id: str) -> User:
        if user_id not in self.state.users:
            raise ToolError(f"User {user_id} not found")
        return self.state.users[user_id]

    def _reservation(self, reservation_id: str) -> Reservation:
        if reservation_id not in self.state.reservations:
            raise ToolError(f"Reservation {reservation_id} not found")
        return self.state.reservations[reservation_id]

    def _flight(self, flight_number: str) -> Flight:
        if flight_number not in self.state.flights:
            raise ToolError(f"Flight {flight_number} not found")
        return self.state.flights[flight_number]

    def _flight_on(self, flight_number: str, date: str) -> FlightDateStatus:
        flight = self._flight(flight_number)
        if date not in flight.dates:
            raise ToolError(f"Flight {flight_number} not found on date {date}")
        return flight.dates[date]

    def _bookable(self, flight_number: str, date: str, cabin: CabinClass,
                  seats: int) -> FlightDateStatusAvailable:
        """The flight-date if it can take `seats` more passengers in `cabin`."""
        instance = self._flight_on(flight_number, date)
        if not isinstance(instance, FlightDateStatusAvailable):
            raise ToolError(f"Flight {flight_number} not available on date {date}")
        if instance.available_seats[cabin] < seats:
            raise ToolError(f"Not enough seats on flight {flight_number}")
        return instance

    def _direct_flights(self, date: str, origin: str | None, destination: str | None,
                        leave_after: str | None = None) -> list[DirectFlight]:
        """Available flights on `date`; times are compared as strings, like upstream."""
        found = []
        for flight in self.state.flights.values():
            # upstream's order: the date is looked up only for matching airports
            if (
                (origin is None or flight.origin == origin)
                and (destination is None or flight.destination == destination)
                and date in flight.dates
                and isinstance(instance := flight.dates[date], FlightDateStatusAvailable)
                and (leave_after is None or flight.scheduled_departure_time_est >= leave_after)
            ):
                found.append(DirectFlight(
                    flight_number=flight.flight_number,
                    origin=flight.origin,
                    destination=flight.destination,
                    status="available",
                    scheduled_departure_time_est=flight.scheduled_departure_time_est,
                    scheduled_arrival_time_est=flight.scheduled_arrival_time_est,
                    available_seats=instance.available_seats,
                    prices=instance.prices,
                ))
        return found

    def _charge_update(self, user: User, payment_id: str, amount: int) -> Payment | None:
        """Pay (or, when negative, refund) a change with one stored method.

        The method is validated even when `amount` is 0; certificates are never accepted
        here. Gift cards are debited (credited for refunds) at once. Returns the payment
        line to record, or None when nothing is owed.
        """
        if payment_id not in user.payment_methods:
            raise ToolError("Payment method not found")
        method = user.payment_methods[payment_id]
        if isinstance(method, Certificate):
            raise ToolError("Certificate cannot be used to update reservation")
        if isinstance(method, GiftCard):
            if method.amount < amount:
                raise ToolError("Gift card balance is not enough")
            method.amount -= amount
        return Payment(payment_id=payment_id, amount=amount) if amount != 0 else None

    # -- reads ------------------------------------------------------------------------

    @tool
    def get_user_details(self, user_id: str) -> User:
        """Look up a user's profile: name, address, membership, saved passengers, payment
        methods (with gift card and certificate balances) and reservation ids.

        Args:
            user_id: The user's id, e.g. 'sara_doe_496'.
        """
        return self._user(user_id)

    @tool
    def get_reservation_details(self, reservation_id: str) -> Reservation:
        """Look up a reservation: flights with prices, passengers, cabin, baggage, insurance,
        payment history and creation time.

        Args:
            reservation_id: The six-character reservation code, e.g. '8JX2WO'.
        """
        return self._reservation(reservation_id)

    @tool
    def list_all_airports(self) -> list[AirportCode]:
        """List the airports the airline serves, as IATA code and city."""
        return [AirportCode(iata=code, city=city) for code, city in AIRPORTS]

    @tool
    def search_direct_flight(self, origin: str, destination: str,
                             date: str) -> list[DirectFlight]:
        """Find nonstop flights between two airports that can still be booked on a date,
        with scheduled times, seats left and the price of each cabin.

        Args:
            origin: Departure airport IATA code, e.g. 'JFK'.
            destination: Arrival airport IATA code, e.g. 'LAX'.
            date: Travel date as YYYY-MM-DD, e.g. '2024-05-20'.
        """
        return self._direct_flights(date, origin, destination)

    @tool
    def search_onestop_flight(self, origin: str, destination: str,
                              date: str) -> list[list[DirectFlight]]:
        """Find connections with one stop between two airports starting on a date. Each
        result is a pair [first leg, second leg], each leg with its date, scheduled times,
        seats left and cabin prices; the second leg departs after the first one lands.

        Args:
            origin: Departure airport IATA code, e.g. 'JFK'.
            destination: Final arrival airport IATA code, e.g. 'LAX'.
            date: Date of the first leg as YYYY-MM-DD, e.g. '2024-05-20'.
        """
        pairs = []
        for first in self._direct_flights(date, origin, None):
            first.date = date
            # upstream's day arithmetic: no zero padding, May only
            second_date = (f"2024-05-{int(date[-2:]) + 1}"
                           if "+1" in first.scheduled_arrival_time_est else date)
            for second in self._direct_flights(second_date, first.destination, destination,
                                               leave_after=first.scheduled_arrival_time_est):
                second.date = second_date
                pairs.append([first, second])
        return pairs

    @tool
    def get_flight_status(self, flight_number: str, date: str) -> str:
        """Get a flight's status on a date: available, on time, delayed, flying, landed or
        cancelled.

        Args:
            flight_number: The flight number, e.g. 'HAT001'.
            date: The date as YYYY-MM-DD.
        """
        return self._flight_on(flight_number, date).status

    # -- writes -----------------------------------------------------------------------

    @tool(write=True)
    def book_reservation(
        self,
        user_id: str,
        origin: str,
        destination: str,
        flight_type: FlightType,
        cabin: CabinClass,
        flights: list[FlightInfo],
        passengers: list[Passenger],
        payment_methods: list[Payment],
        total_baggages: int,
        nonfree_baggages: int,
        insurance: Insurance,
    ) -> Reservation:
        """Book a new reservation for a user. The payments must add up exactly to the total:
        each flight's cabin price per passenger, plus 30 per passenger with insurance, plus
        50 per non-free bag. Gift cards are debited and used certificates are removed.

        Args:
            user_id: The id of the user booking, e.g. 'sara_doe_496'.
            origin: IATA code of the trip's origin, e.g. 'SFO'.
            destination: IATA code of the trip's destination, e.g. 'JFK'.
            flight_type: 'one_way' or 'round_trip'.
            cabin: 'basic_economy', 'economy' or 'business' (the same for every flight).
            flights: Every flight segment of the trip, each with its number and date.
            passengers: Every traveller, each with first name, last name and date of birth.
            payment_methods: How the total is split: payment method ids from the user's
                profile with the amount charged to each.
            total_baggages: Number of checked bags in total.
            nonfree_baggages: Number of those bags that are paid for.
            insurance: 'yes' to buy travel insurance, otherwise 'no'.
        """
        # upstream's order: convert, look up, build the (validated) reservation, then
        # price and check, so that an ill-typed argument fails where upstream's does
        flights = as_models(flights, FlightInfo)
        passengers = as_models(passengers, Passenger)
        payment_methods = as_models(payment_methods, Payment)
        user = self._user(user_id)
        reservation_id = next(
            (rid for rid in NEW_RESERVATION_IDS if rid not in self.state.reservations), None)
        if reservation_id is None:
            raise ToolError("Too many reservations")
        reservation = Reservation(
            reservation_id=reservation_id,
            user_id=user_id,
            origin=origin,
            destination=destination,
            flight_type=flight_type,
            cabin=cabin,
            flights=[],
            passengers=copy.deepcopy(passengers),
            payment_history=copy.deepcopy(payment_methods),
            created_at=NOW,
            total_baggages=total_baggages,
            nonfree_baggages=nonfree_baggages,
            insurance=insurance,
        )
        seats = len(passengers)
        instances, total_price = self._add_flights(reservation, flights, cabin, seats)
        if insurance == "yes":
            total_price += INSURANCE_PER_PASSENGER * seats
        total_price += FEE_PER_NONFREE_BAG * nonfree_baggages
        self._check_booking_payments(user, payment_methods, total_price)
        self._debit(user, payment_methods)
        for instance in instances:
            instance.available_seats[cabin] -= seats
        self.state.reservations[reservation_id] = reservation
        user.reservations.append(reservation_id)
        return reservation

    # book_reservation's steps, in upstream's order (one function there)

    def _add_flights(self, reservation: Reservation, flights: list[FlightInfo],
                     cabin: CabinClass, seats: int
                     ) -> tuple[list[FlightDateStatusAvailable], int]:
        """Each segment checked bookable and added to `reservation` at its cabin price;
        the flight-dates (seats taken only once everything is paid) and the fare total."""
        instances = []
        total_price = 0
        for info in flights:
            flight = self._flight(info.flight_number)
            instance = self._bookable(info.flight_number, info.date, cabin, seats)
            price = instance.prices[cabin]
            reservation.flights.append(ReservationFlight(
                origin=flight.origin, destination=flight.destination,
                flight_number=info.flight_number, date=info.date, price=price))
            instances.append(instance)
            total_price += price * seats
        return instances, total_price

    @staticmethod
    def _check_booking_payments(user: User, payment_methods: list[Payment],
                                total_price: int) -> None:
        """Every method the user's, gift cards and certificates covering their line, and
        the lines adding up to the total exactly."""
        for payment in payment_methods:
            method = user.payment_methods.get(payment.payment_id)
            if method is None:
                raise ToolError(f"Payment method {payment.payment_id} not found")
            if not isinstance(method, CreditCard) and method.amount < payment.amount:
                raise ToolError(f"Not enough balance in payment method {payment.payment_id}")
        paid = sum(payment.amount for payment in payment_methods)
        if paid != total_price:
            raise ToolError(f"Payment amount does not add up, total price is {total_price}, "
                            f"but paid {paid}")

    @staticmethod
    def _debit(user: User, payment_methods: list[Payment]) -> None:
        """Gift cards debited, certificates spent whole (credit cards are only recorded)."""
        for payment in payment_methods:
            method = user.payment_methods.get(payment.payment_id)
            if method is None:
                # a certificate listed twice is gone by its second line: upstream's KeyError
                raise ToolError(repr(payment.payment_id))
            if isinstance(method, GiftCard):
                method.amount -= payment.amount
            elif isinstance(method, Certificate):
                del user.payment_methods[payment.payment_id]  # spent whole

    @tool(write=True)
    def cancel_reservation(self, reservation_id: str) -> Reservation:
        """Cancel a whole reservation: every payment is refunded to the method it came from
        (recorded as negative payments) and the reservation is marked cancelled.

        Args:
            reservation_id: The reservation code, e.g. 'ZFA04Y'.
        """
        reservation = self._reservation(reservation_id)
        refunds = [Payment(payment_id=p.payment_id, amount=-p.amount)
                   for p in reservation.payment_history]
        reservation.payment_history.extend(refunds)
        reservation.status = "cancelled"
        return reservation

    @tool(write=True)
    def update_reservation_flights(self, reservation_id: str, cabin: CabinClass,
                                   flights: list[FlightInfo], payment_id: str) -> Reservation:
        """Replace the flights and/or cabin of a reservation. The fare difference for all
        passengers is charged to, or refunded to, the given payment method (certificates
        cannot be used). Segments kept in the same cabin keep their original price.

        Args:
            reservation_id: The reservation code, e.g. 'ZFA04Y'.
            cabin: The cabin for the whole reservation after the change.
            flights: ALL flight segments of the updated reservation, including unchanged
                ones, each with its number and date.
            payment_id: Payment method id from the user's profile, e.g.
                'credit_card_7815826' or 'gift_card_7815826'.
        """
        flights = as_models(flights, FlightInfo)
        reservation = self._reservation(reservation_id)
        user = self._user(reservation.user_id)
        seats = len(reservation.passengers)
        new_flights: list[ReservationFlight] = []
        total_price = 0
        for info in flights:
            kept = next((f for f in reservation.flights
                         if f.flight_number == info.flight_number and f.date == info.date
                         and cabin == reservation.cabin), None)
            if kept is not None:
                total_price += kept.price * seats
                new_flights.append(kept)
                continue
            flight = self._flight(info.flight_number)
            instance = self._bookable(info.flight_number, info.date, cabin, seats)
            segment = ReservationFlight(
                flight_number=info.flight_number, date=info.date,
                price=instance.prices[cabin], origin=flight.origin,
                destination=flight.destination)
            total_price += segment.price * seats
            new_flights.append(segment)
        total_price -= sum(f.price for f in reservation.flights) * seats

        payment = self._charge_update(user, payment_id, total_price)
        if payment is not None:
            reservation.payment_history.append(payment)
        reservation.flights = new_flights
        reservation.cabin = cabin
        return reservation

    @tool(write=True)
    def update_reservation_baggages(self, reservation_id: str, total_baggages: int,
                                    nonfree_baggages: int, payment_id: str) -> Reservation:
        """Change a reservation's checked bags. Each non-free bag added costs 50, paid with
        the given method (certificates cannot be used); removing bags refunds nothing.

        Args:
            reservation_id: The reservation code, e.g. 'ZFA04Y'.
            total_baggages: The new total number of checked bags.
            nonfree_baggages: The new number of paid bags.
            payment_id: Payment method id from the user's profile, e.g.
                'credit_card_7815826' or 'gift_card_7815826'.
        """
        reservation = self._reservation(reservation_id)
        user = self._user(reservation.user_id)
        fee = FEE_PER_NONFREE_BAG * max(0, nonfree_baggages - reservation.nonfree_baggages)
        payment = self._charge_update(user, payment_id, fee)
        if payment is not None:
            reservation.payment_history.append(payment)
        reservation.total_baggages = total_baggages
        reservation.nonfree_baggages = nonfree_baggages
        return reservation

    @tool(write=True)
    def update_reservation_passengers(self, reservation_id: str,
                                      passengers: list[Passenger]) -> Reservation:
        """Replace the passenger details of a reservation; the number of passengers must
        stay the same.

        Args:
            reservation_id: The reservation code, e.g. 'ZFA04Y'.
            passengers: Every passenger after the change, each with first name, last name
                and date of birth.
        """
        passengers = as_models(passengers, Passenger)
        reservation = self._reservation(reservation_id)
        if len(passengers) != len(reservation.passengers):
            raise ToolError("Number of passengers does not match")
        reservation.passengers = copy.deepcopy(passengers)
        return reservation

    @tool(write=True)
    def send_certificate(self, user_id: str, amount: int) -> str:
        """Add a travel certificate of the given value to a user's payment methods (used as
        compensation; only when the policy allows it).

        Args:
            user_id: The user's id, e.g. 'sara_doe_496'.
            amount: The certificate's value in dollars.
        """
        user = self._user(user_id)
        for number in NEW_PAYMENT_NUMBERS:
            payment_id = f"certificate_{number}"
            if payment_id not in user.payment_methods:
                user.payment_methods[payment_id] = Certificate(
                    id=payment_id, amount=amount, source="certificate")
                return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
        raise ToolError("Too many certificates")

    # -- generic ----------------------------------------------------------------------

    @tool
    def calculate(self, expression: str) -> str:
        """Evaluate an arithmetic expression and return the result rounded to 2 decimals.

        Args:
            expression: Numbers, + - * /, parentheses and spaces only, e.g. '(120 + 80) * 2'.
        """
        return calculate_expression(expression)

    @tool
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the conversation to a human agent. Only when the user explicitly asks for
        one, or when the request cannot be handled with the policy and these tools.

        Args:
            summary: A short summary of the user's issue for the human agent.
        """
        return "Transfer successful"
