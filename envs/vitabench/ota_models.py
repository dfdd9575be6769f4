"""The OTA domain's data models (upstream `vita/domains/ota/data_model.py`).

Hotels, attractions, flights and trains are providers (`StoreBase`); their rooms, tickets
and seats are products (`ProductBase`). The text formats are upstream's exactly, quirks
included: `str()` of a provider leaves out its products, `repr()` joins them with newlines
and no brackets, a location prints as Pydantic's default `str()` (``address='…' longitude=…
latitude=…``), and an attraction's `str()` ends in ``", "`` with no closing parenthesis.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from envs.vitabench.models import Location, ProductBase, StoreBase, VitaDB

__all__ = ["OTA_ORDER_TYPES", "Attraction", "AttractionProduct", "Flight", "FlightProduct",
           "Hotel", "HotelProduct", "OTADB", "OTAOrderStatus", "Train", "TrainProduct"]

OTAOrderStatus = Literal["unpaid", "paid", "cancelled"]
#: the order types the OTA tools own (upstream `_get_ota_order` without a scene)
OTA_ORDER_TYPES = ("hotel", "attraction", "flight", "train")


class HotelProduct(ProductBase):
    date: str
    room_type: str

    def __repr__(self) -> str:
        return (f"HotelProduct(room_type={self.room_type}, date={self.date}, "
                f"price={self.price}, quantity={self.quantity}, room_id={self.product_id})")


class AttractionProduct(ProductBase):
    date: str
    ticket_type: str

    def __repr__(self) -> str:
        return (f"AttractionProduct(ticket_type={self.ticket_type}, date={self.date}, "
                f"price={self.price}, quantity={self.quantity}, "
                f"attraction_id={self.product_id})")


class FlightProduct(ProductBase):
    date: str
    seat_type: str

    def __repr__(self) -> str:
        return (f"FlightProduct(seat_type={self.seat_type}, date={self.date}, "
                f"price={self.price}, quantity={self.quantity}, seat_id={self.product_id})")


class TrainProduct(ProductBase):
    date: str
    seat_type: str

    def __repr__(self) -> str:
        return (f"TrainProduct(seat_type={self.seat_type}, date={self.date}, "
                f"price={self.price}, quantity={self.quantity}, seat_id={self.product_id})")


def _lines(products: list[Any]) -> str:
    return "\n".join(map(repr, products))


class Hotel(StoreBase):
    hotel_id: str
    hotel_name: str
    score: float
    star_rating: int
    location: Location
    tags: list[str]
    products: list[HotelProduct]

    def model_post_init(self, context: Any) -> None:
        self.store_id = self.hotel_id

    def __str__(self) -> str:
        return (f"Hotel(hotel_id={self.hotel_id}, hotel_name={self.hotel_name}, "
                f"score={self.score}, star_rating={self.star_rating}, "
                f"location={self.location}, tags={self.tags})")

    def __repr__(self) -> str:
        return str(self)[:-1] + f", products={_lines(self.products)})"


class Attraction(StoreBase):
    attraction_id: str
    attraction_name: str
    location: Location
    description: str
    score: float
    opening_hours: str
    ticket_price: float
    products: list[AttractionProduct]

    def model_post_init(self, context: Any) -> None:
        self.store_id = self.attraction_id

    def __str__(self) -> str:
        # (sic) upstream stops after opening_hours, leaving ", " and no parenthesis
        return (f"Attraction(attraction_id={self.attraction_id}, "
                f"attraction_name={self.attraction_name}, location={self.location}, "
                f"description={self.description}, score={self.score}, "
                f"opening_hours={self.opening_hours}, ")

    def __repr__(self) -> str:
        return (str(self) + f"ticket_price={self.ticket_price}, "
                f"products={_lines(self.products)})")


class Flight(StoreBase):
    flight_id: str
    flight_number: str
    departure_city: str
    arrival_city: str
    departure_airport_location: Location
    arrival_airport_location: Location
    departure_time: str
    arrival_time: str
    tags: list[str]
    products: list[FlightProduct]

    def model_post_init(self, context: Any) -> None:
        self.store_id = self.flight_id

    def __str__(self) -> str:
        return (f"Flight(flight_id={self.flight_id}, flight_number={self.flight_number}, "
                f"departure_city={self.departure_city}, arrival_city={self.arrival_city}, "
                f"departure_airport_location={self.departure_airport_location}, "
                f"arrival_airport_location={self.arrival_airport_location}, "
                f"departure_time={self.departure_time}, arrival_time={self.arrival_time}, "
                f"tags={self.tags})")

    def __repr__(self) -> str:
        return str(self)[:-1] + f", products={_lines(self.products)})"


class Train(StoreBase):
    train_id: str
    train_number: str
    departure_city: str
    arrival_city: str
    departure_station_location: Location
    arrival_station_location: Location
    departure_time: str
    arrival_time: str
    tags: list[str]
    products: list[TrainProduct]

    def model_post_init(self, context: Any) -> None:
        self.store_id = self.train_id

    def __str__(self) -> str:
        return (f"Train(train_id={self.train_id}, train_number={self.train_number}, "
                f"departure_city={self.departure_city}, arrival_city={self.arrival_city}, "
                f"departure_station_location={self.departure_station_location}, "
                f"arrival_station_location={self.arrival_station_location}, "
                f"departure_time={self.departure_time}, arrival_time={self.arrival_time}, "
                f"tags={self.tags})")

    def __repr__(self) -> str:
        return str(self)[:-1] + f", products={_lines(self.products)})"


class OTADB(VitaDB):
    """Upstream `OTADB`: the shared fields plus the four kinds of provider, by id."""

    hotels: dict[str, Hotel] = Field(default_factory=dict)
    attractions: dict[str, Attraction] = Field(default_factory=dict)
    flights: dict[str, Flight] = Field(default_factory=dict)
    trains: dict[str, Train] = Field(default_factory=dict)
