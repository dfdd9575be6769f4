"""The data models every VitaBench domain shares (upstream `vita/data_model/tasks.py`,
`vita/environment/db.py`), with upstream's exact text formats.

Tools answer in plain text built from these models' `str()`/`repr()`, so the formats are
part of what a model reads and are reproduced exactly; the databases load leniently, as
upstream's Pydantic models load them (ints into float fields become floats, ...).

Upstream keeps class-level, per-thread registries of every `Location`, store and product
ever constructed (`Location.get_all()`, `get_all_products()`): tools search them, and a
tool that constructs a model (an order's products, its address) adds to them. Here one
`Registry` per episode replaces them: built from the episode's database in upstream's
construction order, and added to by the tools where upstream constructs models.
"""

from __future__ import annotations

import calendar
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, SerializeAsAny

from envs.hashing import text_sha256

__all__ = ["OrderStatus", "OrderType", "Location", "Weather", "ProductBase", "StoreBase",
           "Order", "VitaDB", "Registry", "get_hash"]

OrderStatus = Literal["unpaid", "paid", "unconsumed", "consumed", "processed",
                      "in-progress", "delivered", "cancelled"]
OrderType = Literal["delivery", "instore", "hotel", "attraction", "flight", "train"]


def get_hash(text: str) -> str:
    """sha256 hex digest (upstream `get_hash` of a string)."""
    return text_sha256(text)


class Location(BaseModel):
    """A named place with coordinates; registered by address."""

    address: str
    longitude: float
    latitude: float

    def __repr__(self) -> str:
        return f"{self.address} longitude:{self.longitude},latitude:{self.latitude}"


class Weather(BaseModel):
    city: str
    category: str
    datetime: str
    temperature: tuple[float, float]
    humidity: float

    def __repr__(self) -> str:
        return (f"city: {self.city}, weather: {self.category}, datetime: {self.datetime}, "
                f"temperature: {self.temperature[0]}~{self.temperature[1]}, "
                f"humidity: {self.humidity}")


class ProductBase(BaseModel):
    """Upstream `ProductBaseModel`: every product of every domain, registered by id."""

    product_id: str = ""
    price: float = 0.0
    quantity: int | None = 0


class StoreBase(BaseModel):
    """Upstream `StoreBaseModel`: every store-like provider, registered by `store_id`."""

    store_id: str | None = ""


#: an order's product as upstream holds it (`List[Any]`): the dicts of a loaded database
#: stay dicts (JSON first), the models a tool put there stay those models
OrderProduct = Annotated[JsonValue | SerializeAsAny[ProductBase],
                         Field(union_mode="left_to_right")]


class Order(BaseModel):
    """An order of any domain (upstream `Order`); `store_id` holds the provider's id."""

    order_id: str
    order_type: OrderType
    user_id: str
    store_id: str
    note: str | None = ""
    location: Location | None = None
    dispatch_time: str | None = ""
    shipping_time: float | None = 0.0
    delivery_time: str | None = ""
    total_price: float = 0.0
    create_time: str = ""
    update_time: str = ""
    status: OrderStatus = "unpaid"
    products: list[OrderProduct] = []

    id_str: ClassVar[dict[str, str]] = {
        "delivery": "store_id", "instore": "shop_id", "hotel": "hotel_id",
        "attraction": "attraction_id", "flight": "flight_id", "train": "train_id"}

    def model_post_init(self, context: Any) -> None:
        # upstream's __init__: an order without an update time was updated at creation
        if not self.update_time and self.create_time:
            self.update_time = self.create_time

    def __str__(self) -> str:
        # (sic: upstream's str() ends with ", " and no closing parenthesis)
        return (f"Order(order_id:{self.order_id}, order_type:{self.order_type}, "
                f"user_id:{self.user_id}, {self.id_str[self.order_type]}:{self.store_id}, "
                f"total_price:{self.total_price}, create_time:{self.create_time}, "
                f"update_time:{self.update_time}, status:{self.status}, ")

    def __repr__(self) -> str:
        head = (f"Order(order_id:{self.order_id}, order_type:{self.order_type}, "
                f"user_id:{self.user_id}, {self.id_str[self.order_type]}:{self.store_id}, ")
        if self.order_type == "delivery":
            head += (f"dispatch_time:{self.dispatch_time}, shipping_time:{self.shipping_time}, "
                     f"delivery_time:{self.delivery_time}, ")
        head += (f"total_price:{self.total_price}, create_time:{self.create_time}, "
                 f"update_time:{self.update_time}, ")
        if self.order_type == "delivery":
            head += f"note:{self.note}, "
        return head + f"status:{self.status}, products:{self.products})"


class VitaDB(BaseModel):
    """Upstream `DB`: the fields every domain's database has (no unknown fields)."""

    model_config = ConfigDict(extra="forbid")

    time: str | None = None
    user_id: str | None = None
    weather: list[Weather] | None = None
    location: list[Location] | None = None
    user_historical_behaviors: dict[str, JsonValue] | None = {}
    orders: dict[str, Order] | None = None

    #: upstream `assign_order_id`: scenario -> (hash prefix, id prefix, hashed params)
    ORDER_IDS: ClassVar[dict[str, tuple[str, str, tuple[str, ...]]]] = {
        "delivery": ("#DELIVERY#", "OT", ("user_id",)),
        "hotel": ("#HOTEL#", "OO", ("hotel_id", "product_id", "user_id")),
        "attraction": ("#ATTRACTION#", "OO", ("user_id",)),
        "flight": ("#FLIGHT#", "OO", ("user_id",)),
        "train": ("#TRAIN#", "OO", ("user_id",)),
        "instore": ("#INSTORE#", "OI", ()),
        "instore_book": ("#INSTORE_BOOK#", "OI", ()),
        "instore_reservation": ("#INSTORE_RESV#", "OI", ()),
    }

    def assign_order_id(self, scenario: str, user_id: str, serial: int,
                        **params: Any) -> str:
        """Upstream's order id: id prefix + sha256(prefix + params + timestamp)[:10].

        Upstream's timestamp is the wall clock at the call (`datetime.now().timestamp()`),
        so its ids are not reproducible. Ours is the episode's clock (the database's
        `time`, as a UTC epoch) plus `serial` seconds (the caller's count of orders made
        so far), so a replayed episode gets the same ids and no two orders share one."""
        if scenario not in self.ORDER_IDS:
            raise ValueError(f"Unsupported scenario type: {scenario}")
        prefix, id_prefix, names = self.ORDER_IDS[scenario]
        text = prefix
        for name in names:
            if name == "user_id":
                text += user_id
            elif name in params:
                text += str(params[name])
            else:
                raise ValueError(f"Missing required parameter: {name}")
        return id_prefix + get_hash(text + str(self._episode_timestamp() + serial))[:10]

    def _episode_timestamp(self) -> float:
        try:
            moment = datetime.strptime(self.time or "", "%Y-%m-%d %H:%M:%S")
        except ValueError:
            return 0.0
        return float(calendar.timegm(moment.timetuple()))


class Registry:
    """One episode's registries (upstream's per-thread class registries): locations by
    address, stores by `store_id`, products by `product_id`, each in first-registration
    order with the latest model registered under a key (as upstream's dicts)."""

    def __init__(self) -> None:
        self.locations: dict[str, Location] = {}
        self.stores: dict[str, StoreBase] = {}
        self.products: dict[str, ProductBase] = {}

    def register(self, model: BaseModel) -> None:
        if isinstance(model, Location):
            self.locations[model.address] = model
        elif isinstance(model, ProductBase):
            self.products[model.product_id] = model
        elif isinstance(model, StoreBase):
            self.stores[model.store_id or ""] = model

    @classmethod
    def of(cls, db: BaseModel) -> Registry:
        """The registries after upstream loads `db`: Pydantic constructs nested models
        depth first in field order, and each registers when its own construction ends."""
        registry = cls()
        _register_post_order(db, registry)
        return registry


#: values that never hold a model: skipped without a call (a large database holds tens of
#: thousands of them, and `isinstance` against Pydantic's ABC metaclass is slow)
_LEAVES = frozenset({str, int, float, bool, type(None)})


def _register_post_order(value: Any, registry: Registry) -> None:
    """Register every model under `value` (itself last), children in field order."""
    if isinstance(value, BaseModel):
        for name in type(value).__pydantic_fields__:
            item = getattr(value, name)
            if type(item) not in _LEAVES:
                _register_post_order(item, registry)
        registry.register(value)
    elif isinstance(value, dict | list | tuple):
        for item in value.values() if isinstance(value, dict) else value:
            if type(item) not in _LEAVES:
                _register_post_order(item, registry)
