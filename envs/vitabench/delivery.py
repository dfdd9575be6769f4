"""VitaBench's delivery domain (upstream `vita/domains/delivery`): stores, products,
delivery orders; twelve tools of its own plus the shared toolkit.

Order prices and times are upstream's: the order's coordinates are those of the best
fuzzy match of the given address among the episode's known locations, the distance to the
store is the haversine metres rounded, the shipping time `round(25 + int(d) * 0.00651)`
minutes after the dispatch time, and the total the sum of price x count. Creating an
order registers its products (with the ordered count and attributes) and its address,
exactly where upstream's model constructors do, so later look-ups see them as upstream's.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, ClassVar

from pydantic import Field, JsonValue, field_validator

from envs.base import tool
from envs.vitabench.base import TIME_FORMAT, VitaEnvironment, check_time_format, require
from envs.vitabench.models import (
    Location,
    Order,
    OrderStatus,
    ProductBase,
    StoreBase,
    VitaDB,
)
from envs.vitabench.recreation import AGENT_PAID, Outcome
from envs.vitabench.search import TOP_K, rerank

__all__ = ["RECREATORS", "DeliveryDB", "DeliveryEnvironment", "Store", "StoreProduct",
           "recreate_delivery_order"]


class StoreProduct(ProductBase):
    """A store's product (upstream `StoreProduct`); attributes given as a list are
    joined with ", "."""

    name: str
    store_id: str
    store_name: str
    attributes: str | list[JsonValue]
    tags: list[str]

    @field_validator("attributes")
    @classmethod
    def _join(cls, attributes: Any) -> Any:
        return ", ".join(attributes) if isinstance(attributes, list) else attributes

    def __repr__(self) -> str:
        return (f"StoreProduct(store_name={self.store_name}, store_id={self.store_id}, "
                f"product_name={self.name}, product_id={self.product_id}, "
                f"attributes={self.attributes}, quantity={self.quantity}, "
                f"price={self.price}, tags={self.tags})")


class Store(StoreBase):
    name: str
    score: float
    location: Location
    tags: list[str]
    products: list[StoreProduct]

    def __str__(self) -> str:
        return (f"Store(name={self.name}, store_id={self.store_id}, score={self.score}, "
                f"location={self.location!r}, tags={self.tags})")

    def __repr__(self) -> str:
        # (sic: upstream closes the parenthesis before the products)
        products = "\n".join(repr(p) for p in self.products)
        return f"{self}, products={products}"


class DeliveryDB(VitaDB):
    stores: dict[str, Store] = Field(description="stores by id")


class DeliveryEnvironment(VitaEnvironment):
    """Upstream `DeliveryTools` over one task's database."""

    name = "vitabench_delivery"
    description = "VitaBench delivery: food-delivery stores, products and orders."
    State = DeliveryDB
    tool_set = "delivery"
    upstream_class: ClassVar[str] = "DeliveryTools"
    description_domain: ClassVar[str] = "delivery"

    @classmethod
    def database_fields(cls, environment: Mapping[str, Any]) -> dict[str, Any]:
        """Upstream's delivery `get_environment`: its keys, with stores and orders
        defaulting to empty."""
        fields = super().database_fields(environment)
        fields.setdefault("stores", {})
        fields.setdefault("orders", {})
        return fields

    # -- look-ups (upstream's private helpers) ---------------------------------------

    def _get_store(self, store_id: str) -> Store:
        if store_id not in self.db.stores.keys():
            raise ValueError(f"Store {store_id} not found")
        store: Store = self.db.stores[store_id]
        return store

    def _get_store_product(self, product_id: str) -> StoreProduct:
        products = self.registry.products
        if product_id not in products:
            raise ValueError(f"{product_id} not found")
        product = products[product_id]
        if not isinstance(product, StoreProduct):
            raise ValueError(f"{product_id} is not a delivery product")
        return product

    def _get_delivery_order(self, order_id: str | None) -> Any:
        """The delivery order `order_id`; for None, as upstream, the list of all delivery
        orders (on which the calling tool then fails)."""
        if order_id is None:
            return [o for o in self.db.orders.values() if o.order_type == "delivery"]
        if order_id not in self.db.orders:
            raise ValueError(f"Order {order_id} not found")
        order: Order = self.db.orders[order_id]
        if order.order_type != "delivery":
            raise ValueError(f"Order {order_id} is not a delivery order")
        return order

    def _check_user(self, user_id: str) -> bool:
        return bool(user_id == self.db.user_id)

    # -- tools, in upstream's order -------------------------------------------------

    @tool
    def delivery_distance_to_time(self, distance: float) -> float:
        require(isinstance(distance, float | int),
                f"distance value type should be float or int, but get {type(distance)}")
        return round(25.00 + int(distance) * 0.006510, 0)

    @tool
    def get_delivery_store_info(self, store_id: str) -> str:
        return repr(self._get_store(store_id))

    @tool
    def get_delivery_product_info(self, product_id: str) -> str:
        return repr(self._get_store_product(product_id))

    @tool
    def delivery_store_search_recommand(self, keywords: list[str]) -> str:
        # (sic: the name runs into the tags with no separator)
        docs = {s.store_id: s.name + ",".join(s.tags) for s in self.db.stores.values()}
        ranked = rerank("".join(keywords), docs)[:TOP_K]
        return "\n".join(str(self._get_store(store_id)) for store_id in ranked)

    @tool
    def delivery_product_search_recommand(self, keywords: list[str]) -> str:
        docs = {p.product_id: f"{p.store_name} {p.name} {p.tags}"
                for p in self.registry.products.values() if isinstance(p, StoreProduct)}
        ranked = rerank("".join(keywords), docs)[:TOP_K]
        return "\n".join(repr(self._get_store_product(pid)) for pid in ranked)

    @tool(write=True)
    def create_delivery_order(self, user_id: str, store_id: str, product_ids: list[str],
                              product_cnts: list[int], address: str, dispatch_time: str,
                              attributes: list[str] | None = None,
                              note: str | None = "") -> str:
        require(user_id, "User ID cannot be empty")
        require(self._check_user(user_id), "User ID does not match")
        require(store_id in self.db.stores, f"Store {store_id} not found")
        # (a missing product raises from the look-up: an error, not a refusal)
        require(all([self._get_store_product(p) is not None for p in product_ids]),
                f"products {product_ids} not found")
        require(address != "", f"Location {address} is empty")
        require(len(product_ids) == len(product_cnts) and all([c > 0 for c in product_cnts]),
                f"product_cnts {product_cnts} list is invalid")
        require(dispatch_time and check_time_format(dispatch_time),
                f"dispatch_time {dispatch_time} time format is invalid, "
                "yyyy-mm-dd HH:MM:SS required")
        require(datetime.strptime(dispatch_time, TIME_FORMAT)
                >= datetime.strptime(self.get_now(), TIME_FORMAT),
                f"dispatch_time {dispatch_time} must be in the future")
        products = [self._get_store_product(p) for p in product_ids]
        store = self._get_store(store_id)
        longitude, latitude = self.address_to_longitude_latitude(address)
        distance = self.longitude_latitude_to_distance(longitude, latitude,
                                                       store.location.longitude,
                                                       store.location.latitude)
        shipping_time = self.delivery_distance_to_time(distance)
        delivery_time = (datetime.strptime(dispatch_time, TIME_FORMAT)
                         + timedelta(minutes=shipping_time)).strftime(TIME_FORMAT)
        total = sum([product.price * count
                     for product, count in zip(products, product_cnts, strict=True)])
        chosen = [""] * len(products)
        for i, attribute in enumerate((attributes if attributes is not None else [])
                                      [:len(products)]):
            if attribute:
                chosen[i] = attribute
        ordered: list[Any] = []
        for product, count, attribute in zip(products, product_cnts, chosen, strict=True):
            item = StoreProduct(product_id=product.product_id, name=product.name,
                                store_id=product.store_id, store_name=product.store_name,
                                price=product.price, quantity=count, attributes=attribute,
                                tags=product.tags)
            self.registry.register(item)
            ordered.append(item)
        order_id = self.db.assign_order_id("delivery", user_id, serial=len(self.db.orders))
        place = Location(address=address, longitude=longitude, latitude=latitude)
        self.registry.register(place)
        now = self.get_now()
        order = Order(order_id=order_id, order_type="delivery", user_id=user_id,
                      store_id=store_id, location=place, dispatch_time=dispatch_time,
                      shipping_time=shipping_time, delivery_time=delivery_time,
                      total_price=total, create_time=now, update_time=now, note=note,
                      products=ordered, status="unpaid")
        if order.order_id in self.db.orders:
            return "Order already exists"
        self.db.orders[order.order_id] = order
        return repr(order)

    @tool(write=True)
    def pay_delivery_order(self, order_id: str) -> str:
        order = self._get_delivery_order(order_id)
        if order.status != "unpaid":
            return "Order is not in `unpaid` status."
        order.status = "paid"
        return "Payment successful"

    @tool
    def get_delivery_order_status(self, order_id: str) -> str:
        return str(self._get_delivery_order(order_id).status)

    @tool(write=True)
    def cancel_delivery_order(self, order_id: str) -> str:
        order = self._get_delivery_order(order_id)
        require(order.status not in ["cancelled"], f"Order {order_id} is already cancelled")
        order.status = "cancelled"
        return f"Order {order.order_id} has been cancelled."

    @tool(write=True)
    def modify_delivery_order(self, order_id: str, note: str) -> str:
        order = self._get_delivery_order(order_id)
        order.note = note
        return f"Order {order.order_id} has been modified."

    @tool
    def search_delivery_orders(self, user_id: str, status: OrderStatus | None = "unpaid") -> str:
        require(user_id, "User ID cannot be empty")
        require(self._check_user(user_id), "User ID does not match")
        found = [o for o in self.db.orders.values() if o.order_type == "delivery"
                 and o.status == status and o.user_id == user_id]
        if not found:
            return "No delivery orders available"
        return "\n".join(str(order) for order in found)

    @tool
    def get_delivery_order_detail(self, order_id: str) -> str:
        require(order_id, "Order ID cannot be empty")
        return repr(self._get_delivery_order(order_id))


def _agent_status(status: str) -> str:
    return "paid" if status in AGENT_PAID else status


def recreate_delivery_order(env: VitaEnvironment, expected: Mapping[str, Any]) -> Outcome:
    """Bring `env` to a required delivery order with the delivery tools (see
    `envs.vitabench.feasibility`). An order already in the world is modified, paid or
    cancelled as needed; a new one is created from the order's store, products, counts,
    attributes, address and note, dispatched at its dispatch time (stripped of stray
    whitespace) or else now, then paid or cancelled as its status says."""
    orders = env.db.orders
    order_id = str(expected["order_id"])
    target = str(expected["status"])
    steps: list[tuple[str, dict[str, Any]]] = []
    if order_id not in orders:
        products = expected["products"]
        if not all(isinstance(p, dict) and "product_id" in p for p in products):
            return Outcome(problems=["the order's products hold an entry that is no product"])
        created = env.call("create_delivery_order", {
            "user_id": expected["user_id"], "store_id": expected["store_id"],
            "product_ids": [p["product_id"] for p in products],
            "product_cnts": [p["quantity"] for p in products],
            "address": expected["location"]["address"],
            "dispatch_time": str(expected.get("dispatch_time") or env.get_now()).strip(),
            "attributes": [p.get("attributes") or "" for p in products],
            "note": expected.get("note") or ""})
        text = created.text()
        if not created.ok or not text.startswith("Order(order_id:"):
            return Outcome(problems=[f"create_delivery_order: {text}"])
        order_id = text.removeprefix("Order(order_id:").split(",", 1)[0]
    elif (expected.get("note") or "") != (orders[order_id].note or ""):
        steps.append(("modify_delivery_order", {"order_id": order_id,
                                                "note": expected.get("note") or ""}))
    current = orders[order_id].status
    if target == "cancelled" and current != "cancelled":
        steps.append(("cancel_delivery_order", {"order_id": order_id}))
    elif target in AGENT_PAID and current == "unpaid":
        steps.append(("pay_delivery_order", {"order_id": order_id}))
    for name, arguments in steps:
        result = env.call(name, arguments)
        if not result.ok:
            return Outcome(problems=[f"{name}: {result.text()}"])
    order = orders[order_id]
    problems = []
    if _agent_status(order.status) != _agent_status(target):
        problems.append(f"status {order.status} (expected {target})")
    if (order.note or "") != (expected.get("note") or ""):
        problems.append(f"note {order.note!r} (expected {expected.get('note')!r})")
    if order_id == expected["order_id"]:  # an existing order: nothing was computed
        return Outcome(problems=problems)
    made = [(p.product_id, p.quantity, p.attributes or "")
            for p in order.products if isinstance(p, StoreProduct)]
    wanted = [(p["product_id"], p["quantity"], p.get("attributes") or "")
              for p in expected["products"]]
    if order.store_id != expected["store_id"] or made != wanted:
        problems.append(f"store/products {order.store_id} {made} (expected "
                        f"{expected['store_id']} {wanted})")
    return Outcome(problems=problems, computed=_computed_differences(order, expected))


def _computed_differences(order: Order, expected: Mapping[str, Any]) -> list[str]:
    found = []
    prices = [float(p.price) for p in order.products if isinstance(p, StoreProduct)]
    wanted = [float(p["price"]) for p in expected["products"]]
    if prices != wanted:
        found.append(f"unit prices {prices} (task: {wanted})")
    if round(order.total_price, 2) != round(float(expected["total_price"]), 2):
        found.append(f"total_price {order.total_price} (task: {expected['total_price']})")
    place, where = order.location, expected["location"]
    if place is None or (place.longitude, place.latitude) != (
            float(where["longitude"]), float(where["latitude"])):
        coordinates = None if place is None else (place.longitude, place.latitude)
        found.append(f"coordinates {coordinates} (task: {where['longitude']}, "
                     f"{where['latitude']})")
    for field in ("shipping_time", "delivery_time"):
        if expected.get(field) not in (None, "") and getattr(order, field) != expected[field]:
            found.append(f"{field} {getattr(order, field)} (task: {expected[field]})")
    return found


#: what `envs.vitabench.feasibility` uses to re-create this domain's orders
RECREATORS = {"delivery": recreate_delivery_order}
