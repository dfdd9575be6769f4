"""VitaBench's OTA domain (upstream `vita/domains/ota/tools.py`, `environment.py`): hotels,
attractions, flights and trains, and their orders; thirty tools of its own plus the shared
toolkit.

Each tool keeps upstream's name (`hotel_search_recommand` included), argument semantics
(arguments unconverted), plain-text answer and refusal texts, and what upstream's code does
that a careful design would not, since that is what the benchmark's agents were measured
against:

- City and route filters are `partial_ratio >= 40` against the address or city, so a
  search for one city also lists providers of similar-looking others ("Guangzhou" to
  "Kunming" finds Hangzhou to Beijing).
- Hotel search ranks "name" + ",".join(tags) (no separator after the name); attraction
  search ranks "name,description,address"; both return the top 100. Flight search is not
  ranked; train search lists a train once per product on the date.
- Booking a room id the hotel does not have creates an empty order priced 0.
- `pay_*_order` pays an order of any type; `cancel_*` checks the type but not the owner,
  never restores stock, and refunds nothing for an unpaid order.
- Changing a paid flight or train to a dearer date makes the order unpaid at the new
  total, so cancelling it then refunds nothing.
- Order searches by date never match an order of the task data: its products are plain
  dicts, and upstream tests `hasattr(product, "date")`.
- Hotel order search fails ("User does not exist or has no order records") when the user
  has no hotel order at all; the other three answer with an empty text.
- A tool that fails keeps what it changed first (1.5 tickets leave the stock, then the
  ticket model refuses the count), as every VitaBench tool does (`VitaEnvironment`).

`RECREATORS` re-create a task's required OTA orders with these tools for the feasibility
runner (`envs.vitabench.feasibility`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from envs.base import tool
from envs.vitabench.base import Refusal, VitaEnvironment, check_time_format, require
from envs.vitabench.models import Order, ProductBase
from envs.vitabench.ota_models import (
    OTA_ORDER_TYPES,
    OTADB,
    Attraction,
    AttractionProduct,
    Flight,
    FlightProduct,
    Hotel,
    HotelProduct,
    OTAOrderStatus,
    Train,
    TrainProduct,
)
from envs.vitabench.recreation import AGENT_PAID, Outcome
from envs.vitabench.search import TOP_K, fuzzy_match, rerank

__all__ = ["RECREATORS", "OTAEnvironment"]

DATE_FORMAT = "%Y-%m-%d"
_DATE_REFUSAL = "Date format is incorrect, correct format is %Y-%m-%d"


def _field(product: Any, name: str) -> Any:
    """A field of an order's product: a dict of the task data or a model a tool made."""
    return product.get(name) if isinstance(product, dict) else getattr(product, name)


_NO_DATE = object()


def _has_date(order: Order, date: str) -> bool:
    # (sic) upstream tests hasattr(product, "date"): a loaded product (a dict) never has it
    return any(getattr(p, "date", _NO_DATE) == date for p in order.products)


class OTAEnvironment(VitaEnvironment):
    """Upstream `OTATools` over one task's `OTADB`."""

    name = "vitabench_ota"
    description = "VitaBench OTA: hotels, attractions, flights, trains and their orders."
    State = OTADB
    tool_set: ClassVar[str] = "ota"
    upstream_class: ClassVar[str] = "OTATools"
    description_domain: ClassVar[str] = "ota"

    @classmethod
    def database_fields(cls, environment: Mapping[str, Any]) -> dict[str, Any]:
        """Upstream's OTA `get_environment`: its keys, with the four provider tables and
        the orders defaulting to empty."""
        fields = super().database_fields(environment)
        for table in ("hotels", "attractions", "flights", "trains", "orders"):
            fields.setdefault(table, {})
        return fields

    @property
    def db(self) -> OTADB:
        """The live database (for tools)."""
        return self._state  # type: ignore[no-any-return]

    # -- helpers (upstream's private methods, same names) ---------------------------

    def _check_user(self, user_id: Any) -> bool:
        return bool(user_id == self.db.user_id)

    def _get_ota_order(self, order_id: Any = None, scene: str | None = None) -> Any:
        orders: Any = self.db.orders  # (a task's null orders fail here, as upstream's)
        if scene:
            return [o for o in orders.values() if o.order_type == scene]
        if order_id:
            if order_id not in orders:
                raise ValueError(f"Order {order_id} not found")
            return orders[order_id]
        return [o for o in orders.values() if o.order_type in OTA_ORDER_TYPES]

    def _get_hotel_tags(self, hotel_id: str) -> str:
        # (sic) no separator between the name and the tags; a provider whose id is not
        # its key in the table fails with a KeyError, as upstream's
        hotel = self.db.hotels[hotel_id]
        return hotel.hotel_name + ",".join(hotel.tags)

    def _get_attraction_tags(self, attraction_id: str) -> str:
        a = self.db.attractions[attraction_id]
        return f"{a.attraction_name},{a.description},{a.location.address}"

    def _get_hotel(self, hotel_id: Any) -> Hotel:
        if hotel_id not in self.db.hotels:
            raise ValueError(f"hotel {hotel_id} not found")
        return self.db.hotels[hotel_id]

    def _get_attraction(self, attraction_id: Any) -> Attraction:
        if attraction_id not in self.db.attractions:
            raise ValueError(f"attraction {attraction_id} not found")
        return self.db.attractions[attraction_id]

    def _get_flight(self, flight_id: Any) -> Flight:
        if flight_id not in self.db.flights:
            raise ValueError(f"flight {flight_id} not found")
        return self.db.flights[flight_id]

    def _get_train(self, train_id: Any) -> Train:
        if train_id not in self.db.trains:
            raise ValueError(f"train {train_id} not found")
        return self.db.trains[train_id]

    def _add_ota_order(self, scenario: str, user_id: str, store_id: str,
                       products: list[Any], total: float, **id_params: Any) -> str:
        """Upstream's order creation: an unpaid order of the products, its id on the
        episode clock (serial = how many orders the database holds)."""
        orders: Any = self.db.orders
        order_id = self.db.assign_order_id(scenario, user_id, serial=len(orders or {}),
                                           **id_params)
        now = self.get_now()
        order = Order(order_id=order_id, order_type=scenario, user_id=user_id,  # type: ignore[arg-type]
                      store_id=store_id, total_price=total, update_time=now, create_time=now,
                      status="unpaid", products=products)
        if order.order_id in orders:
            return "Order already exists"
        orders[order.order_id] = order
        return repr(order)

    def _pay(self, order_id: Any) -> str:
        require(order_id, "Order ID cannot be empty")
        order = self._get_ota_order(order_id)  # (sic) any order type
        if order.status != "unpaid":
            return "Order status must be unpaid"
        order.status = "paid"
        order.update_time = self.get_now()
        return "Payment successful"

    def _search_orders(self, scene: str, user_id: Any, date: Any, status: Any) -> str:
        selected = []
        for order in self._get_ota_order(scene=scene):
            if order.user_id != user_id or (status and order.status != status):
                continue
            if date and not _has_date(order, date):
                continue
            selected.append(order)
        return "\n".join(str(order) for order in selected)

    def _order_detail(self, order_id: Any, scene: str, refusal: str) -> str:
        require(order_id, "Order ID cannot be empty")
        order = self._get_ota_order(order_id=order_id)
        require(order.order_type == scene, refusal)
        return repr(order)

    def _change_date(self, order: Order, trips: Mapping[str, Flight | Train],
                     new_date: str, product_type: type[FlightProduct | TrainProduct]) -> str:
        """Upstream's modify_{train,flight}_order after its checks: move the seats of a
        one-product order to the same seat type on `new_date`, settle the difference."""
        old = order.products[0]
        seat_type = _field(old, "seat_type")
        quantity = _field(old, "quantity")
        trip = trips[order.store_id]
        new = next((p for p in trip.products
                    if p.date == new_date and p.seat_type == seat_type), None)
        if new is None:
            raise Refusal(f"New date {new_date} does not have {seat_type} type seats")
        require(new.quantity >= quantity,
                f"Insufficient {seat_type} seat inventory for new date {new_date}")
        for product in trip.products:
            if product.date == _field(old, "date") and product.seat_type == seat_type:
                product.quantity += quantity
                break
        new.quantity -= quantity
        new_total = new.price * quantity
        diff = new_total - _field(old, "price") * quantity
        if diff > 0:
            order.status = "unpaid"
        item = product_type(product_id=new.product_id, price=new.price, date=new_date,
                            seat_type=seat_type, quantity=quantity)
        self.registry.register(item)
        order.products = [item]
        order.total_price = new_total
        order.update_time = self.get_now()
        if diff > 0:
            return (f"Modification successful, need to pay additional amount: {diff}, "
                    "please pay as soon as possible")
        return f"Modification successful, price difference: {diff}, refunded"

    def _cancel(self, order_id: Any, user_id: Any, scene: str, refusal: str) -> str:
        require(order_id, "Order ID cannot be empty")
        require(user_id, "User ID cannot be empty")
        require(self._check_user(user_id), "User ID does not match")
        order = self._get_ota_order(order_id=order_id)
        require(order.order_type == scene, refusal)
        require(order.status not in ["cancelled"], "Order is already in cancelled status")
        refund: float = 0
        if order.status == "paid":
            refund = order.total_price
        order.status = "cancelled"
        order.update_time = self.get_now()
        return f"Cancellation successful, refund amount: {refund}"

    # -- tools, in upstream's order ---------------------------------------------------

    @tool
    def get_ota_hotel_info(self, hotel_id: str) -> str:
        require(hotel_id, "Hotel ID cannot be empty")
        try:
            return f"Hotel Info:\n{self._get_hotel(hotel_id)!r}"
        except ValueError as e:
            return f"Error: {e}"

    @tool
    def get_ota_attraction_info(self, attraction_id: str) -> str:
        require(attraction_id, "Attraction ID cannot be empty")
        try:
            return f"Attraction Info:\n{self._get_attraction(attraction_id)!r}"
        except ValueError as e:
            return f"Error: {e}"

    @tool
    def get_ota_flight_info(self, flight_id: str) -> str:
        require(flight_id, "Flight ID cannot be empty")
        try:
            return f"Flight Info:\n{self._get_flight(flight_id)!r}"
        except ValueError as e:
            return f"Error: {e}"

    @tool
    def get_ota_train_info(self, train_id: str) -> str:
        require(train_id, "Train ID cannot be empty")
        try:
            return f"Train Info:\n{self._get_train(train_id)!r}"
        except ValueError as e:
            return f"Error: {e}"

    @tool
    def hotel_search_recommand(self, city_name: str, key_words: list[str] | None = None) -> str:
        hotels = [h for h in self.db.hotels.values() if fuzzy_match(city_name, h.location.address)]
        if not hotels:
            return ("No hotels found matching the criteria. "
                    "Please check if the city name is correct and try again.")
        docs = {h.hotel_id: self._get_hotel_tags(h.hotel_id) for h in hotels}
        ranked = rerank("".join(key_words or []), docs)[:TOP_K]
        return "\n".join(str(self._get_hotel(hotel_id)) for hotel_id in ranked)

    @tool
    def attractions_search_recommend(self, city_name: str, key_words: list[str]) -> str:
        found = [a for a in self.db.attractions.values()
                 if fuzzy_match(city_name, a.location.address)]
        if not found:
            return ("No attractions found matching the criteria. "
                    "Please check if the city name is correct and try again.")
        docs = {a.attraction_id: self._get_attraction_tags(a.attraction_id) for a in found}
        ranked = rerank("".join(key_words), docs)[:TOP_K]
        return "\n".join(str(self._get_attraction(aid)) for aid in ranked)

    @tool
    def flight_search_recommend(self, departure: str, destination: str) -> str:
        require(departure, "Departure city cannot be empty")
        require(destination, "Destination city cannot be empty")
        found = [f for f in self.db.flights.values()
                 if fuzzy_match(departure, f.departure_city)
                 and fuzzy_match(destination, f.arrival_city)]
        if not found:
            return "No flights found matching the criteria"
        return "\n".join(str(flight) for flight in found)

    @tool
    def train_ticket_search(self, departure: str, destination: str, date: str) -> str:
        require(departure, "Departure city cannot be empty")
        require(destination, "Destination city cannot be empty")
        require(date, "Departure date cannot be empty")
        require(check_time_format(date, DATE_FORMAT), _DATE_REFUSAL)
        found = []
        for train in self.db.trains.values():
            for product in train.products:  # (sic) once per product on that date
                if (product.date == date and fuzzy_match(departure, train.departure_city)
                        and fuzzy_match(destination, train.arrival_city)):
                    found.append(train)
        if not found:
            return "No trains found matching the criteria"
        return "\n".join(str(train) for train in found)

    @tool(write=True)
    def create_hotel_order(self, hotel_id: str, room_id: str, user_id: str) -> str:
        require(hotel_id, "Hotel ID cannot be empty")
        require(user_id, "User ID cannot be empty")
        require(self._check_user(user_id), "User ID does not match")
        hotel = self._get_hotel(hotel_id)
        rooms: list[ProductBase] = []
        for product in hotel.products:
            if product.product_id == room_id:
                if product.quantity <= 0:  # type: ignore[operator]
                    return "No available rooms at the moment"
                product.quantity = product.quantity - 1  # type: ignore[operator]
                room = HotelProduct(product_id=product.product_id, price=product.price,
                                    date=product.date, quantity=1, room_type=product.room_type)
                self.registry.register(room)
                rooms.append(room)
                break
        # (sic) an unknown room id still makes an order: no products, priced 0
        return self._add_ota_order("hotel", user_id, hotel_id, rooms,
                                   sum([room.price for room in rooms]),
                                   hotel_id=hotel_id, product_id=room_id)

    @tool(write=True)
    def create_attraction_order(self, attraction_id: str, ticket_id: str, user_id: str,
                                date: str, quantity: int) -> str:
        return self._book_dated("attraction", "ticket", self._get_attraction, attraction_id,
                                ticket_id, user_id, date, quantity,
                                lambda t: AttractionProduct(
                                    product_id=t.product_id, price=t.price, date=date,
                                    quantity=quantity, ticket_type=t.ticket_type))

    @tool(write=True)
    def create_flight_order(self, flight_id: str, seat_id: str, user_id: str, date: str,
                            quantity: int) -> str:
        return self._book_dated("flight", "seat", self._get_flight, flight_id, seat_id,
                                user_id, date, quantity,
                                lambda t: FlightProduct(
                                    product_id=t.product_id, price=t.price, date=date,
                                    quantity=quantity, seat_type=t.seat_type))

    @tool(write=True)
    def create_train_order(self, train_id: str, seat_id: str, user_id: str, date: str,
                           quantity: int) -> str:
        return self._book_dated("train", "seat", self._get_train, train_id, seat_id,
                                user_id, date, quantity,
                                lambda t: TrainProduct(
                                    product_id=t.product_id, price=t.price, date=date,
                                    quantity=quantity, seat_type=t.seat_type))

    def _book_dated(self, scene: str, item: str, provider: Callable[[str], Any],
                    provider_id: str, product_id: str, user_id: str, date: str,
                    quantity: int, booked: Callable[[Any], Any]) -> str:
        """Upstream's attraction, flight and train booking (one shape, three copies
        upstream): checks in its order and wording, the stock taken from the provider's
        product of that id and date, and the order of one booked product."""
        require(provider_id, f"{scene.capitalize()} ID cannot be empty")
        require(product_id, f"{item.capitalize()} ID cannot be empty")
        require(user_id, "User ID cannot be empty")
        require(quantity > 0, "Booking quantity must be greater than 0")
        require(self._check_user(user_id), "User ID does not match")
        target = next((p for p in provider(provider_id).products
                       if p.date == date and p.product_id == product_id), None)
        if target is None:
            return f"The {scene} does not have the specified {item} on the specified date"
        if target.quantity < quantity:
            return f"Insufficient {item} inventory for the specified date"
        target.quantity = target.quantity - quantity
        product = booked(target)
        self.registry.register(product)
        return self._add_ota_order(scene, user_id, provider_id, [product],
                                   product.price * product.quantity)

    @tool(write=True)
    def pay_hotel_order(self, order_id: str) -> str:
        return self._pay(order_id)

    @tool(write=True)
    def pay_attraction_order(self, order_id: str) -> str:
        return self._pay(order_id)

    @tool(write=True)
    def pay_flight_order(self, order_id: str) -> str:
        return self._pay(order_id)

    @tool(write=True)
    def pay_train_order(self, order_id: str) -> str:
        return self._pay(order_id)

    @tool
    def search_hotel_order(self, user_id: str, date: str | None = None,
                           status: OTAOrderStatus | None = "paid") -> str:
        require(user_id, "User ID cannot be empty")
        require(self._check_user(user_id), "User ID does not match")
        if not any(o.user_id == user_id for o in self._get_ota_order(scene="hotel")):
            raise ValueError("User does not exist or has no order records")
        if date:
            require(check_time_format(date, DATE_FORMAT), _DATE_REFUSAL)
        return self._search_orders("hotel", user_id, date, status)

    @tool
    def search_attraction_order(self, user_id: str, date: str | None = None,
                                status: OTAOrderStatus | None = "paid") -> str:
        require(user_id, "User ID cannot be empty")
        require(self._check_user(user_id), "User ID does not match")
        if date:
            require(check_time_format(date, DATE_FORMAT), _DATE_REFUSAL)
        return self._search_orders("attraction", user_id, date, status)

    @tool
    def search_flight_order(self, user_id: str, date: str | None = None,
                            status: OTAOrderStatus | None = "paid") -> str:
        require(user_id, "User ID cannot be empty")
        require(self._check_user(user_id), "User ID does not match")
        if date:
            require(check_time_format(date, DATE_FORMAT), _DATE_REFUSAL)
        return self._search_orders("flight", user_id, date, status)

    @tool
    def search_train_order(self, user_id: str, date: str | None = None,
                           status: OTAOrderStatus | None = "paid") -> str:
        require(user_id, "User ID cannot be empty")
        require(self._check_user(user_id), "User ID does not match")
        if date:
            require(check_time_format(date, DATE_FORMAT), _DATE_REFUSAL)
        return self._search_orders("train", user_id, date, status)

    @tool
    def get_hotel_order_detail(self, order_id: str) -> str:
        return self._order_detail(order_id, "hotel", "Order type is not a hotel order")

    @tool
    def get_attraction_order_detail(self, order_id: str) -> str:
        return self._order_detail(order_id, "attraction",
                                  "Order type is not an attraction order")

    @tool
    def get_flight_order_detail(self, order_id: str) -> str:
        return self._order_detail(order_id, "flight", "Order type is not a flight order")

    @tool
    def get_train_order_detail(self, order_id: str) -> str:
        return self._order_detail(order_id, "train", "Order type is not a train order")

    @tool(write=True)
    def modify_train_order(self, order_id: str, user_id: str, new_date: str) -> str:
        require(order_id, "Order ID cannot be empty")
        require(user_id, "User ID cannot be empty")
        require(new_date, "New departure date cannot be empty")
        require(self._check_user(user_id), "User ID does not match")
        require(check_time_format(new_date, DATE_FORMAT), _DATE_REFUSAL)
        require(self._get_ota_order(order_id=order_id), "Order does not exist")
        order = self._get_ota_order(order_id=order_id)
        require(order.order_type == "train", "Order type is not a train order")
        require(order.user_id == user_id, f"Order {order_id} does not belong to user {user_id}")
        require(order.status == "paid",
                f"Only paid orders can be modified, current status: {order.status}")
        require(len(order.products) == 1,
                "Only single train ticket order modification is supported")
        return self._change_date(order, self.db.trains, new_date, TrainProduct)

    @tool(write=True)
    def modify_flight_order(self, order_id: str, user_id: str, new_date: str) -> str:
        require(order_id, "Order ID cannot be empty")
        require(user_id, "User ID cannot be empty")
        require(new_date, "New departure date cannot be empty")
        require(check_time_format(new_date, DATE_FORMAT), _DATE_REFUSAL)
        require(self._check_user(user_id), "User ID does not match")
        order = self._get_ota_order(order_id=order_id)
        require(order.order_type == "flight", "Order type is not a flight order")
        require(order.user_id == user_id,
                f"User {user_id} does not have permission to modify this order")
        require(order.status == "paid", "Only paid orders can be modified")
        require(len(order.products) == 1,
                "Only single flight ticket order modification is supported")
        return self._change_date(order, self.db.flights, new_date, FlightProduct)

    @tool(write=True)
    def cancel_hotel_order(self, order_id: str, user_id: str) -> str:
        return self._cancel(order_id, user_id, "hotel", "Order type is not a hotel order")

    @tool(write=True)
    def cancel_attraction_order(self, order_id: str, user_id: str) -> str:
        return self._cancel(order_id, user_id, "attraction",
                            "Order type is not an attraction order")

    @tool(write=True)
    def cancel_flight_order(self, order_id: str, user_id: str) -> str:
        return self._cancel(order_id, user_id, "flight", "Order type is not a flight order")

    @tool(write=True)
    def cancel_train_order(self, order_id: str, user_id: str) -> str:
        return self._cancel(order_id, user_id, "train", "Order type is not a train order")


# -- feasibility: re-creating a required order with the tools ---------------------------

_KIND_FIELD = {"hotel": "room_type", "attraction": "ticket_type", "flight": "seat_type",
               "train": "seat_type"}
_PROVIDER = {"hotel": "hotel_id", "attraction": "attraction_id", "flight": "flight_id",
             "train": "train_id"}


def _product_key(product: Any, scene: str) -> tuple[Any, ...]:
    return (_field(product, "product_id"), _field(product, "quantity"),
            _field(product, "date"), _field(product, _KIND_FIELD[scene]))


def _recreate_ota_order(env: VitaEnvironment, expected: Mapping[str, Any]) -> Outcome:
    """Bring `env` to a required OTA order with the OTA tools (see
    `envs.vitabench.feasibility`). A new order is created from its provider, its one
    product (id, date, count) and the user, then paid or cancelled as its status says; an
    order already in the world has a flight or train moved to the expected date (paying
    first, as upstream allows changes to paid orders only) and is then paid or cancelled.
    Hotel orders hold one room: a required hotel order of more rooms is not reachable."""
    scene = str(expected["order_type"])
    orders: Any = env.db.orders
    order_id = str(expected["order_id"])
    target = str(expected["status"])
    user_id = expected.get("user_id")
    products = expected.get("products") or []
    if len(products) != 1 or not isinstance(products[0], dict):
        return Outcome(problems=[f"the order holds {len(products)} products; "
                                 "the OTA tools make orders of one product"])
    wanted = products[0]
    steps: list[tuple[str, dict[str, Any]]] = []
    if order_id not in orders:
        if scene == "hotel":
            if wanted.get("quantity") != 1:
                return Outcome(problems=[f"a hotel order holds one room, not "
                                         f"{wanted.get('quantity')}"])
            arguments: dict[str, Any] = {"hotel_id": expected["store_id"],
                                         "room_id": wanted["product_id"], "user_id": user_id}
        else:
            product_arg = "ticket_id" if scene == "attraction" else "seat_id"
            arguments = {_PROVIDER[scene]: expected["store_id"],
                         product_arg: wanted["product_id"], "user_id": user_id,
                         "date": wanted.get("date"), "quantity": wanted.get("quantity")}
        created = env.call(f"create_{scene}_order", arguments)
        text = created.text()
        if not created.ok or not text.startswith("Order(order_id:"):
            return Outcome(problems=[f"create_{scene}_order: {text}"])
        order_id = text.removeprefix("Order(order_id:").split(",", 1)[0]
    elif scene in ("flight", "train") and _field(orders[order_id].products[0], "date") != \
            wanted.get("date"):
        if orders[order_id].status == "unpaid":
            steps.append((f"pay_{scene}_order", {"order_id": order_id}))
        steps.append((f"modify_{scene}_order", {"order_id": order_id, "user_id": user_id,
                                                 "new_date": wanted.get("date")}))
    for name, arguments in steps:
        result = env.call(name, arguments)
        if not result.ok or not result.text().startswith(("Payment successful",
                                                          "Modification successful")):
            return Outcome(problems=[f"{name}: {result.text()}"])
    order = orders[order_id]
    if target == "cancelled" and order.status != "cancelled":
        result = env.call(f"cancel_{scene}_order", {"order_id": order_id, "user_id": user_id})
        if not result.text().startswith("Cancellation successful"):
            return Outcome(problems=[f"cancel_{scene}_order: {result.text()}"])
    elif target in AGENT_PAID and order.status == "unpaid":
        result = env.call(f"pay_{scene}_order", {"order_id": order_id})
        if result.text() != "Payment successful":
            return Outcome(problems=[f"pay_{scene}_order: {result.text()}"])
    problems = []
    agent_target = "paid" if target in AGENT_PAID else target
    if order.status != agent_target:
        problems.append(f"status {order.status} (expected {target})")
    made = [_product_key(p, scene) for p in order.products]
    if order.store_id != expected["store_id"] or made != [_product_key(wanted, scene)]:
        problems.append(f"provider/products {order.store_id} {made} (expected "
                        f"{expected['store_id']} {[_product_key(wanted, scene)]})")
    computed = []
    if problems == [] and order.products:
        price = float(_field(order.products[0], "price"))
        if price != float(wanted.get("price", price)):
            computed.append(f"unit price {price} (task: {wanted.get('price')})")
        if round(order.total_price, 2) != round(float(expected.get("total_price", 0)), 2):
            computed.append(f"total_price {order.total_price} "
                            f"(task: {expected.get('total_price')})")
    return Outcome(problems=problems, computed=computed)


#: what `envs.vitabench.feasibility` uses to re-create this domain's orders
RECREATORS = {scene: _recreate_ota_order for scene in OTA_ORDER_TYPES}
