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
  stock, and every order the episode made of that package shows it as its quantity.
- Stock is never checked; a reservation is allowed at a shop that does not take them; a
  reservation starts "unconsumed" and no tool pays it; a modification without
  `customer_count` sets it to 0; cancelling works in any status but "cancelled".
- A shop whose `shop_id` differs from its key in the database breaks every shop search
  ("Shop … does not exist").
- A write that fails keeps what it changed before failing (upstream has no rollback; see
  `VitaEnvironment`): an order whose total overflows has already set the quantity.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, cast

from envs.base import tool
from envs.vitabench.base import VitaEnvironment, check_time_format, require
from envs.vitabench.instore_models import BookInfo, InStoreDB, ReservationInfo, Shop, ShopProduct
from envs.vitabench.models import Order
from envs.vitabench.recreation import AGENT_PAID, Outcome, Recreator
from envs.vitabench.search import rerank

__all__ = ["AGENT_TERMS", "RECREATORS", "SEARCH_TOP_K", "STRICT", "STRICT_RECREATORS",
           "InStoreEnvironment", "StatusReading", "record_kind", "recreate"]

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
        absent shops, books, reservations and orders (a null `orders` stays null, and
        then ordering fails as upstream's does)."""
        fields = super().database_fields(environment)
        for table in ("shops", "books", "reservations", "orders"):
            fields.setdefault(table, {})
        return fields

    @property
    def db(self) -> InStoreDB:
        """The live database (for tools)."""
        return self._state  # type: ignore[no-any-return]

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


@dataclass(frozen=True)
class StatusReading:
    """How an expected status is read. `paying`: the expected statuses a recreator
    reaches by paying what it made. `agent_terms`: any two of those count as the same
    (the agent cannot tell a paid package from an unconsumed one: the rest is the
    merchant's), and a reservation, which no tool pays, is reached by making it unless
    it is expected cancelled."""

    paying: frozenset[str]
    agent_terms: bool = False

    def same(self, kind: RecordKind, got: str, want: str) -> bool:
        if got == want or not self.agent_terms:
            return got == want
        if kind == "reservation":
            return got == "unconsumed" and want != "cancelled"
        return got in self.paying and want in self.paying


#: statuses compared as they are (the reading of the official-code run in the tests)
STRICT = StatusReading(frozenset({"paid"}))
#: the feasibility runner's reading (`envs.vitabench.recreation.AGENT_PAID`)
AGENT_TERMS = StatusReading(AGENT_PAID, agent_terms=True)


def recreate(env: VitaEnvironment, record: Mapping[str, Any],
             statuses: StatusReading = AGENT_TERMS) -> Outcome:
    """Bring `env` to one required record of an in-store task with the tools, as an
    agent would (see `envs.vitabench.feasibility`): an order, booking or reservation
    already in the world is found; a new one is made from the record's shop, package
    and quantity, or time and party size; then it is paid, modified or cancelled as its
    status says. Problems: a call refused, or a field the agent chooses (shop, package,
    quantity, time, party, customer, status) differs. Computed: prices (the package's
    unit price, the total, the shop's booking price) differ from the task's. Ids and
    update times are never compared (upstream's ids hash the wall clock, its times are
    the task's clock; the records hold invented ones)."""
    instore = cast(InStoreEnvironment, env)
    kind = record_kind(record)
    if kind == "order":
        return _recreate_order(instore, record, statuses)
    if kind == "book":
        return _recreate_book(instore, record, statuses)
    if kind == "reservation":
        return _recreate_reservation(instore, record, statuses)
    return Outcome(problems=[f"unknown record kind {sorted(record)}"])


def _created_id(env: InStoreEnvironment, name: str, arguments: dict[str, Any],
                key: str) -> tuple[str | None, str]:
    result = env.call(name, arguments)
    text = result.text()
    marker = f"{key}:" if key == "order_id" else f"{key}="
    if not result.ok or marker not in text:
        return None, text
    return text.split(marker, 1)[1].split(",", 1)[0], text


def _recreate_order(env: InStoreEnvironment, record: Mapping[str, Any],
                    statuses: StatusReading) -> Outcome:
    db = env.db
    if record["order_id"] in (db.orders or {}):
        order_id = record["order_id"]
    else:
        if len(record["products"]) != 1:
            return Outcome(problems=[f"{len(record['products'])} products in one order "
                                     "(the tool takes one product_id)"])
        product = record["products"][0]
        created, text = _created_id(env, "create_instore_product_order", {
            "user_id": db.user_id, "shop_id": record["store_id"],
            "product_id": product["product_id"], "quantity": product.get("quantity", 1)},
            "order_id")
        if created is None:
            return Outcome(problems=[f"create_instore_product_order: {text[:160]}"])
        order_id = created
    order = env.db.orders[order_id]  # type: ignore[index]
    if record["status"] in statuses.paying and order.status == "unpaid":
        env.call("pay_instore_order", {"order_id": order_id})
    elif record["status"] == "cancelled" and order.status != "cancelled":
        env.call("instore_cancel_order", {"order_id": order_id})
    problems, computed = [], []
    if order.store_id != record["store_id"]:
        problems.append(f"store_id {order.store_id} (expected {record['store_id']})")
    if not statuses.same("order", order.status, record["status"]):
        problems.append(f"status {order.status} (expected {record['status']})")
    made = [_product_fields(p) for p in order.products]
    wanted = [(p["product_id"], p.get("quantity"), float(p["price"]))
              for p in record["products"]]
    if [m[:2] for m in made] != [w[:2] for w in wanted]:
        problems.append(f"products {[m[:2] for m in made]} "
                        f"(expected {[w[:2] for w in wanted]})")
    elif [m[2] for m in made] != [w[2] for w in wanted]:
        computed.append(f"unit prices {[m[2] for m in made]} (task: {[w[2] for w in wanted]})")
    if float(order.total_price) != float(record["total_price"]):
        computed.append(f"total_price {order.total_price} (task: {record['total_price']})")
    return Outcome(problems=problems, computed=computed)


def _product_fields(product: Any) -> tuple[Any, Any, float]:
    if isinstance(product, ShopProduct):
        return product.product_id, product.quantity, float(product.price)
    return product["product_id"], product.get("quantity"), float(product.get("price", 0))


def _field_problems(kind: RecordKind, model: Any, record: Mapping[str, Any],
                    fields: tuple[str, ...], statuses: StatusReading) -> list[str]:
    problems = [f"{f} {getattr(model, f)!r} (expected {record[f]!r})"
                for f in fields if getattr(model, f) != record[f]]
    if not statuses.same(kind, model.status, record["status"]):
        problems.append(f"status {model.status} (expected {record['status']})")
    return problems


def _recreate_book(env: InStoreEnvironment, record: Mapping[str, Any],
                   statuses: StatusReading) -> Outcome:
    db = env.db
    book_id = record.get("book_id") or record.get("reservation_id")
    if book_id not in db.books:
        created, text = _created_id(env, "instore_book", {
            "user_id": db.user_id, "shop_id": record["shop_id"], "time": record["book_time"],
            "customer_count": record["customer_count"]}, "book_id")
        if created is None:
            return Outcome(problems=[f"instore_book: {text[:160]}"])
        book_id = created
    book = env.db.books[book_id]
    if record["status"] in statuses.paying and book.status == "unpaid":
        env.call("pay_instore_book", {"book_id": book_id})
    elif record["status"] == "cancelled" and book.status != "cancelled":
        env.call("instore_cancel_book", {"book_id": book_id})
    problems = _field_problems("book", book, record, ("shop_id", "book_time",
                                                      "customer_count", "customer_id"),
                               statuses)
    computed = []
    if float(book.book_price) != float(record["book_price"]):
        computed.append(f"book_price {book.book_price} (task: {record['book_price']})")
    return Outcome(problems=problems, computed=computed)


def _recreate_reservation(env: InStoreEnvironment, record: Mapping[str, Any],
                          statuses: StatusReading) -> Outcome:
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
            return Outcome(problems=[f"instore_reservation: {text[:160]}"])
        reservation_id = created
    if (record["status"] == "cancelled"
            and env.db.reservations[reservation_id].status != "cancelled"):
        env.call("instore_cancel_reservation", {"reservation_id": reservation_id})
    reservation = env.db.reservations[reservation_id]
    return Outcome(problems=_field_problems(
        "reservation", reservation, record,
        ("shop_id", "reservation_time", "customer_count", "customer_id"), statuses))


def _recreator(statuses: StatusReading) -> Recreator:
    return lambda env, record: recreate(env, record, statuses)


#: what `envs.vitabench.feasibility` uses to re-create this domain's records, by
#: `feasibility.record_type`: orders ("instore"), bookings and reservations
RECREATORS: dict[str, Recreator] = {"instore": recreate, "book": recreate,
                                    "reservation": recreate}
#: the same with statuses compared as they are (the official-code run's reading)
STRICT_RECREATORS: dict[str, Recreator] = dict.fromkeys(RECREATORS, _recreator(STRICT))
