"""VitaBench's in-store domain (upstream `vita/domains/instore/tools.py`, `environment.py`):
shops and their packages, orders for packages, table bookings and reservations.

Each tool keeps upstream's name, argument semantics (arguments unconverted), plain-text
answer and refusal texts, including what upstream's code does that a careful design would
not, since that is what the benchmark's agents were measured against:

- Searches rank *all* shops or packages with `partial_ratio` against the keywords joined
  with no separator, and return the top 1000 (not the 100 of the other domains).
- Packages are found through the product registry, keyed by `product_id` only: when two
  shops of a task reuse an id, only the last shop's package is searchable and an order for
  the other shop's package gets the last shop's package (and its price).
- An order holds the registry's product itself, and ordering sets that product's
  `quantity` (its stock) to the quantity ordered: later searches show that number as the
  stock, and every earlier order of the same package shows it as its quantity.
- Stock is never checked; a reservation is allowed at a shop that does not take them; a
  reservation starts "unconsumed" and no tool pays it; a modification without
  `customer_count` sets it to 0; cancelling works in any status but "cancelled".
- A shop whose `shop_id` differs from its key in the database breaks every shop search
  ("Shop … does not exist").
- A write that fails keeps what it changed before failing (upstream has no rollback).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from envs.base import tool
from envs.vitabench.base import VitaEnvironment, check_time_format, require
from envs.vitabench.instore_models import BookInfo, InStoreDB, ReservationInfo, Shop, ShopProduct
from envs.vitabench.models import Order
from envs.vitabench.search import rerank

__all__ = ["SEARCH_TOP_K", "STRICT", "InStoreEnvironment", "StatusReading", "record_id",
           "record_kind", "recreate_required"]

#: how many shops or packages a search returns (upstream's `top_k` in these two tools)
SEARCH_TOP_K = 1000


class InStoreEnvironment(VitaEnvironment):
    """The in-store toolkit (upstream `InStoreTools`) over one task's `InStoreDB`."""

    name = "vitabench_instore"
    description = "VitaBench in-store consumption: shops, packages, bookings, reservations"
    State = InStoreDB
    tool_set: ClassVar[str] = "instore"
    upstream_class: ClassVar[str] = "InStoreTools"
    description_domain: ClassVar[str] = "instore"

    @classmethod
    def database_fields(cls, environment: Mapping[str, Any]) -> dict[str, Any]:
        """Upstream `get_environment`: the database's own keys, and empty tables for
        absent shops, books, reservations and orders (a present null stays null)."""
        fields = super().database_fields(environment)
        for table in ("shops", "books", "reservations", "orders"):
            fields.setdefault(table, {})
        return fields

    @property
    def db(self) -> InStoreDB:
        """The live database (for tools)."""
        return self._state  # type: ignore[no-any-return]

    def _needs_checkpoint(self, tool: Any) -> bool:
        """Never: upstream keeps what a failing tool changed before it failed (an order
        whose total overflows has already set the package's quantity), so a failed
        write is not undone here either."""
        return False

    # -- helpers (upstream's private methods) -------------------------------------

    def _check_user(self, user_id: Any) -> bool:
        return bool(user_id == self.db.user_id)

    def _shop(self, shop_id: Any) -> Shop:
        if shop_id not in self.db.shops:
            raise ValueError(f"Shop {shop_id} does not exist")
        return self.db.shops[shop_id]

    def _shop_product(self, product_id: Any) -> ShopProduct:
        products = self.registry.products
        if product_id not in products:
            raise ValueError(f"Product {product_id} does not exist")
        product = products[product_id]
        if not isinstance(product, ShopProduct):
            raise ValueError(f"Product {product_id} is not an instore scenario product")
        return product

    def _instore_order(self, order_id: Any) -> Order:
        if order_id not in self.db.orders:  # type: ignore[operator]
            raise ValueError(f"Order {order_id} not found")
        order: Order = self.db.orders[order_id]  # type: ignore[index]
        if order.order_type != "instore":
            raise ValueError(f"Order {order_id} is not an instore order")
        return order

    def _book(self, book_id: Any) -> BookInfo:
        if book_id not in self.db.books:
            raise ValueError(f"BookInfo {book_id} not found")
        return self.db.books[book_id]

    def _reservation(self, reservation_id: Any) -> ReservationInfo:
        if reservation_id not in self.db.reservations:
            raise ValueError(f"ReservationInfo {reservation_id} not found")
        return self.db.reservations[reservation_id]

    def _new_id(self, scenario: str, user_id: str) -> str:
        """Upstream `assign_order_id` on the episode clock; the serial is how many orders,
        bookings and reservations the database holds (each creation adds one)."""
        serial = len(self.db.orders or {}) + len(self.db.books) + len(self.db.reservations)
        return self.db.assign_order_id(scenario, user_id, serial)

    def _user_books(self, user_id: str) -> list[BookInfo]:
        return [b for b in self.db.books.values() if b.customer_id == user_id]

    def _user_reservations(self, user_id: str) -> list[ReservationInfo]:
        return [r for r in self.db.reservations.values() if r.customer_id == user_id]

    # -- read: search -----------------------------------------------------------------

    @tool
    def instore_shop_search_recommend(self, keywords: list[str]) -> str:
        docs = {shop.shop_id: shop.shop_name + "," + ",".join(shop.tags)
                for shop in self.db.shops.values()}
        ranked = rerank("".join(keywords), docs)[:SEARCH_TOP_K]
        return "\n".join(str(self._shop(shop_id)) for shop_id in ranked)

    @tool
    def instore_product_search_recommend(self, keywords: list[str]) -> str:
        docs = {pid: p.name + "," + ",".join(p.tags)
                for pid, p in self.registry.products.items() if isinstance(p, ShopProduct)}
        ranked = rerank("".join(keywords), docs)[:SEARCH_TOP_K]
        return "\n".join(repr(self._shop_product(pid)) for pid in ranked)

    # -- write: orders ------------------------------------------------------------------

    @tool(write=True)
    def create_instore_product_order(self, user_id: str, shop_id: str, product_id: str,
                                     quantity: int = 1) -> str:
        require(user_id, "User ID cannot be empty")
        require(self._check_user(user_id), "User ID does not match")
        require(shop_id in self.db.shops, "Shop does not exist")
        require(product_id in [p.product_id for p in self._shop(shop_id).products],
                "Product does not exist")
        require(quantity > 0, "Quantity must be greater than 0")
        product = self._shop_product(product_id)
        product.quantity = quantity  # (sic) the registry's product: its stock, every order's
        now = self.get_now()
        order = Order(order_id=self._new_id("instore", user_id), order_type="instore",
                      user_id=user_id, store_id=shop_id, total_price=quantity * product.price,
                      create_time=now, update_time=now, status="unpaid", products=[product])
        if order.order_id in self.db.orders:  # type: ignore[operator]  # (a null table raises)
            return "Order already exists"
        self.db.orders[order.order_id] = order  # type: ignore[index]
        return repr(order)

    @tool(write=True)
    def pay_instore_order(self, order_id: str) -> str:
        require(order_id, "Order ID cannot be empty")
        order = self._instore_order(order_id)
        if order.status != "unpaid":
            return f"Order {order_id} is not in `unpaid` status."
        order.status = "paid"
        order.update_time = self.get_now()
        return "Payment successful"

    @tool(write=True)
    def instore_cancel_order(self, order_id: str) -> str:
        require(order_id, "Order ID cannot be empty")
        order = self._instore_order(order_id)
        if order.status == "cancelled":
            return f"Order {order.order_id} is already cancelled."
        order.status = "cancelled"
        order.update_time = self.get_now()
        return f"Order {order.order_id} is cancelled."

    # -- write: table bookings --------------------------------------------------------

    @tool(write=True)
    def instore_book(self, user_id: str, shop_id: str, time: str,
                     customer_count: int = 1) -> str:
        require(user_id, "User ID cannot be empty")
        require(self._check_user(user_id), "User ID does not match")
        require(shop_id in self.db.shops, "Shop does not exist")
        require(customer_count > 0,
                "Number of customers for table booking must be greater than 0")
        require(time, "Table booking time cannot be empty")
        require(check_time_format(time), "Table booking time format is incorrect, "
                "correct format is %Y-%m-%d %H:%M:%S")
        shop = self.db.shops[shop_id]
        require(shop.enable_book, "Shop does not support table booking")
        book = BookInfo(book_id=self._new_id("instore_book", user_id), shop_id=shop_id,
                        book_time=time, customer_count=customer_count,
                        book_price=shop.book_price, customer_id=user_id,
                        status="unpaid" if shop.book_price > 0 else "paid",
                        update_time=self.get_now())
        if book.book_id in self.db.books:
            return "BookInfo already exists"
        self.db.books[book.book_id] = book
        return repr(book)

    @tool(write=True)
    def pay_instore_book(self, book_id: str) -> str:
        require(book_id, "Booking ID cannot be empty")
        book = self._book(book_id)
        if book.status != "unpaid":
            return f"BookInfo {book.book_id} is not in `unpaid` status."
        book.status = "paid"
        book.update_time = self.get_now()
        return "Payment successful"

    @tool(write=True)
    def instore_cancel_book(self, book_id: str) -> str:
        require(book_id, "Booking ID cannot be empty")
        book = self._book(book_id)
        if book.status == "cancelled":
            return f"BookInfo {book.book_id} is already cancelled."
        book.status = "cancelled"
        book.update_time = self.get_now()
        return f"BookInfo {book.book_id} is cancelled."

    # -- write: reservations ----------------------------------------------------------

    @tool(write=True)
    def instore_reservation(self, user_id: str, shop_id: str, time: str,
                            customer_count: int = 1) -> str:
        require(user_id, "User ID cannot be empty")
        require(self._check_user(user_id), "User ID does not match")
        require(shop_id in self.db.shops, "Shop does not exist")
        require(check_time_format(time), "Reservation time format is incorrect, "
                "correct format is %Y-%m-%d %H:%M:%S")
        require(customer_count > 0,
                "Number of customers for reservation must be greater than 0")
        reservation = ReservationInfo(
            reservation_id=self._new_id("instore_reservation", user_id), shop_id=shop_id,
            reservation_time=time, customer_id=user_id, customer_count=customer_count,
            status="unconsumed", update_time=self.get_now())
        if reservation.reservation_id in self.db.reservations:
            return "ReservationInfo already exists"
        self.db.reservations[reservation.reservation_id] = reservation
        return repr(reservation)

    @tool(write=True)
    def instore_modify_reservation(self, reservation_id: str, time: str,
                                   customer_count: int = 0) -> str:
        require(reservation_id, "Reservation ID cannot be empty")
        reservation = self._reservation(reservation_id)
        if reservation.status in ("consumed", "cancelled"):
            return (f"ReservationInfo {reservation.reservation_id} is already "
                    f"{reservation.status}.")
        require(customer_count >= 0, "Number of customers for reservation must be "
                "greater than or equal to 0")
        require(time, "Reservation time cannot be empty")
        require(check_time_format(time), "Reservation time format is incorrect, "
                "correct format is %Y-%m-%d %H:%M:%S")
        reservation.reservation_time = time
        reservation.customer_count = customer_count
        reservation.update_time = self.get_now()
        return repr(reservation)

    @tool(write=True)
    def instore_cancel_reservation(self, reservation_id: str) -> str:
        require(reservation_id, "Reservation ID cannot be empty")
        reservation = self._reservation(reservation_id)
        if reservation.status == "cancelled":
            return f"ReservationInfo {reservation.reservation_id} is already cancelled."
        reservation.status = "cancelled"
        reservation.update_time = self.get_now()
        return f"ReservationInfo {reservation.reservation_id} is cancelled."

    # -- read: the user's records -----------------------------------------------------

    @tool
    def get_instore_orders(self, user_id: str) -> str:
        require(user_id, "User ID cannot be empty")
        require(self._check_user(user_id), "User ID does not match")
        orders = [o for o in self.db.orders.values()  # type: ignore[union-attr]
                  if o.order_type == "instore" and o.user_id == user_id]
        if not orders:
            return f"User {user_id} has no order information."
        return "\n".join(repr(o) for o in orders)

    @tool
    def get_instore_reservations(self, user_id: str) -> str:
        require(user_id, "User ID cannot be empty")
        require(self._check_user(user_id), "User ID does not match")
        reservations = self._user_reservations(user_id)
        if not reservations:
            return f"User {user_id} has no reservation information."
        return "\n".join(repr(r) for r in reservations)

    @tool
    def get_instore_books(self, user_id: str) -> str:
        require(user_id, "User ID cannot be empty")
        require(self._check_user(user_id), "User ID does not match")
        books = self._user_books(user_id)
        if not books:
            return f"User {user_id} has no book information."
        return "\n".join(repr(b) for b in books)

    @tool
    def search_instore_book(self, user_id: str, book_id: str | None = None) -> str:
        require(user_id, "User ID cannot be empty")
        require(self._check_user(user_id), "User ID does not match")
        if book_id is None:
            books = self._user_books(user_id)
            if not books:
                return f"User {user_id} has no book information."
            return "\n".join(repr(b) for b in books)
        book = self._book(book_id)
        if book.customer_id != user_id:
            return f"BookInfo {book_id} is not belong to user {user_id}."
        return repr(book)

    @tool
    def search_instore_reservation(self, user_id: str,
                                   reservation_id: str | None = None) -> str:
        require(user_id, "User ID cannot be empty")
        require(self._check_user(user_id), "User ID does not match")
        if reservation_id is None:
            reservations = self._user_reservations(user_id)
            if not reservations:
                return f"User {user_id} has no reservation information."
            return "\n".join(repr(r) for r in reservations)
        reservation = self._reservation(reservation_id)
        if reservation.customer_id != user_id:
            return f"ReservationInfo {reservation_id} is not belong to user {user_id}."
        return repr(reservation)


# -- feasibility: re-creating a task's required records with the tools --------------------

RecordKind = Literal["order", "book", "reservation", "unknown"]


def record_kind(record: Mapping[str, Any]) -> RecordKind:
    """What a required record of an in-store task is. The task data mixes the id keys
    (a booking under `reservation_id`, a reservation under `book_id`), so the time field
    decides: `book_time` is a table booking, `reservation_time` a reservation."""
    if "order_id" in record:
        return "order"
    if "book_time" in record:
        return "book"
    if "reservation_time" in record:
        return "reservation"
    return "unknown"


def record_id(record: Mapping[str, Any]) -> str:
    """The id of a required record, whichever of the three keys it uses."""
    return str(record.get("order_id") or record.get("book_id")
               or record.get("reservation_id"))


@dataclass(frozen=True)
class StatusReading:
    """How an expected status is read: `paying` are the statuses reached by paying what
    was created; `agent_terms` counts any two of them as the same (the agent cannot tell
    a paid package from an unconsumed one: the rest is the merchant's)."""

    paying: frozenset[str]
    agent_terms: bool = False

    def same(self, got: str, want: str) -> bool:
        return got == want or (self.agent_terms and got in self.paying and want in self.paying)


#: statuses compared as they are (the official run's reading)
STRICT = StatusReading(frozenset({"paid"}))


def recreate_required(env: InStoreEnvironment, record: Mapping[str, Any],
                      statuses: StatusReading = STRICT) -> tuple[bool, str]:
    """Re-create one required record of a task in `env` with the tools, as an agent
    would (create it, or find it among the initial records; then pay, modify or cancel it
    to reach the expected status), and compare it with `record` on the fields the tools
    set. Returns (equal, what differs or why it could not be made). Ids and update times
    are not compared: upstream's ids hash the wall clock, its times are the task's clock,
    while the expected records hold invented ones."""
    kind = record_kind(record)
    if kind == "order":
        return _recreate_order(env, record, statuses)
    if kind == "book":
        return _recreate_book(env, record, statuses)
    if kind == "reservation":
        return _recreate_reservation(env, record, statuses)
    return False, f"unknown record kind {sorted(record)}"


def _created_id(env: InStoreEnvironment, name: str, arguments: dict[str, Any],
                key: str) -> tuple[str | None, str]:
    result = env.call(name, arguments)
    text = result.text()
    marker = f"{key}:" if key == "order_id" else f"{key}="
    if not result.ok or marker not in text:
        return None, text
    return text.split(marker, 1)[1].split(",", 1)[0], text


def _recreate_order(env: InStoreEnvironment, record: Mapping[str, Any],
                    statuses: StatusReading) -> tuple[bool, str]:
    db = env.db
    orders = db.orders or {}
    if record["order_id"] in orders:
        order_id = record["order_id"]
    else:
        if len(record["products"]) != 1:
            return False, (f"{len(record['products'])} products in one order "
                           "(the tool takes one product_id)")
        product = record["products"][0]
        created, text = _created_id(env, "create_instore_product_order", {
            "user_id": db.user_id, "shop_id": record["store_id"],
            "product_id": product["product_id"], "quantity": product.get("quantity", 1)},
            "order_id")
        if created is None:
            return False, f"create failed: {text[:120]}"
        order_id = created
    order = env.db.orders[order_id]  # type: ignore[index]
    if record["status"] in statuses.paying and order.status == "unpaid":
        env.call("pay_instore_order", {"order_id": order_id})
    elif record["status"] == "cancelled" and order.status != "cancelled":
        env.call("instore_cancel_order", {"order_id": order_id})
    order = env.db.orders[order_id]  # type: ignore[index]
    diffs = []
    if order.store_id != record["store_id"]:
        diffs.append("store_id")
    if float(order.total_price) != float(record["total_price"]):
        diffs.append(f"total_price {order.total_price} != {record['total_price']}")
    if not statuses.same(order.status, record["status"]):
        diffs.append(f"status {order.status} != {record['status']}")
    got = [_product_key(p) for p in order.products]
    want = [(p["product_id"], p.get("quantity")) for p in record["products"]]
    if got != want:
        diffs.append(f"products {got} != {want}")
    return not diffs, "; ".join(diffs)


def _product_key(product: Any) -> tuple[Any, Any]:
    if isinstance(product, ShopProduct):
        return product.product_id, product.quantity
    return product["product_id"], product.get("quantity")


def _field_diffs(model: Any, record: Mapping[str, Any], fields: tuple[str, ...],
                 statuses: StatusReading) -> list[str]:
    diffs = [f"{f} {getattr(model, f)!r} != {record[f]!r}"
             for f in fields if getattr(model, f) != record[f]]
    if not statuses.same(model.status, record["status"]):
        diffs.append(f"status {model.status!r} != {record['status']!r}")
    return diffs


def _recreate_book(env: InStoreEnvironment, record: Mapping[str, Any],
                   statuses: StatusReading) -> tuple[bool, str]:
    db = env.db
    book_id = record.get("book_id") or record.get("reservation_id")
    if book_id not in db.books:
        created, text = _created_id(env, "instore_book", {
            "user_id": db.user_id, "shop_id": record["shop_id"], "time": record["book_time"],
            "customer_count": record["customer_count"]}, "book_id")
        if created is None:
            return False, f"book failed: {text[:120]}"
        book_id = created
    book = env.db.books[book_id]
    if record["status"] in statuses.paying and book.status == "unpaid":
        env.call("pay_instore_book", {"book_id": book_id})
    elif record["status"] == "cancelled" and book.status != "cancelled":
        env.call("instore_cancel_book", {"book_id": book_id})
    book = env.db.books[book_id]
    diffs = _field_diffs(book, record, ("shop_id", "book_time", "customer_count",
                                        "customer_id"), statuses)
    if float(book.book_price) != float(record["book_price"]):
        diffs.append(f"book_price {book.book_price} != {record['book_price']}")
    return not diffs, "; ".join(diffs)


def _recreate_reservation(env: InStoreEnvironment, record: Mapping[str, Any],
                          statuses: StatusReading) -> tuple[bool, str]:
    db = env.db
    reservation_id = record.get("reservation_id") or record.get("book_id")
    if reservation_id in db.reservations:
        current = db.reservations[reservation_id]
        if ((current.reservation_time, current.customer_count)
                != (record["reservation_time"], record["customer_count"])
                and record["status"] != "cancelled"):
            env.call("instore_modify_reservation", {
                "reservation_id": reservation_id, "time": record["reservation_time"],
                "customer_count": record["customer_count"]})
    else:
        created, text = _created_id(env, "instore_reservation", {
            "user_id": db.user_id, "shop_id": record["shop_id"],
            "time": record["reservation_time"], "customer_count": record["customer_count"]},
            "reservation_id")
        if created is None:
            return False, f"reservation failed: {text[:120]}"
        reservation_id = created
    if (record["status"] == "cancelled"
            and env.db.reservations[reservation_id].status != "cancelled"):
        env.call("instore_cancel_reservation", {"reservation_id": reservation_id})
    reservation = env.db.reservations[reservation_id]
    diffs = _field_diffs(reservation, record, ("shop_id", "reservation_time",
                                               "customer_count", "customer_id"), statuses)
    return not diffs, "; ".join(diffs)
