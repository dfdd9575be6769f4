"""The in-store domain's data models (upstream `vita/domains/instore/data_model.py`), with
upstream's exact text formats.

Tools answer with these models' `repr()`/`str()`, so the formats are reproduced exactly,
their oddities included: `BookInfo`/`ReservationInfo` reprs have no space after the first
comma and no closing parenthesis, `Shop.__repr__` (with its products) differs from
`Shop.__str__` (without), and the update time is never shown.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from envs.vitabench.models import Location, ProductBase, StoreBase, VitaDB

__all__ = ["BookInfo", "InStoreDB", "InstoreOrderStatus", "ReservationInfo", "Shop",
           "ShopProduct"]

InstoreOrderStatus = Literal["unpaid", "paid", "unconsumed", "consumed", "cancelled"]


class ShopProduct(ProductBase):
    """A shop's package (a voucher, a set meal); `quantity` is its stock until an order
    sets it (see `InStoreEnvironment.create_instore_product_order`)."""

    name: str
    shop_id: str
    tags: list[str]

    def __repr__(self) -> str:
        return (f"ShopProduct(shop_id={self.shop_id}, product_id={self.product_id}, "
                f"name={self.name}, price={self.price}, quantity={self.quantity}, "
                f"tags={self.tags})")


class Shop(StoreBase):
    """A shop; upstream sets `store_id` to `shop_id` once it is built."""

    shop_id: str
    shop_name: str
    score: float
    location: Location
    tags: list[str]
    enable_book: bool
    book_price: float
    enable_reservation: bool
    products: list[ShopProduct]

    def model_post_init(self, context: Any) -> None:
        self.store_id = self.shop_id

    def _head(self) -> str:
        return (f"Shop(shop_name={self.shop_name}, shop_id={self.shop_id}, "
                f"score={self.score}, location={self.location!r}, tags={self.tags}, "
                f"enable_book={self.enable_book}, book_price={self.book_price}, "
                f"enable_reservation={self.enable_reservation}")

    def __repr__(self) -> str:
        products = "\n".join(repr(p) for p in self.products)
        return f"{self._head()}, products={products})"

    def __str__(self) -> str:
        return f"{self._head()})"


class BookInfo(BaseModel):
    """A table booking (may carry a price, paid separately)."""

    book_id: str
    shop_id: str
    book_time: str
    update_time: str
    customer_id: str
    customer_count: int
    book_price: float
    status: InstoreOrderStatus

    def __repr__(self) -> str:
        # (sic: no space after the first comma, no closing parenthesis)
        return (f"BookInfo(book_id={self.book_id},shop_id={self.shop_id}, "
                f"book_time={self.book_time}, customer_id={self.customer_id}, "
                f"customer_count={self.customer_count}, book_price={self.book_price}, "
                f"status={self.status}")


class ReservationInfo(BaseModel):
    """A reservation (an appointment for a bought package; never paid)."""

    reservation_id: str
    shop_id: str
    reservation_time: str
    update_time: str
    customer_id: str
    customer_count: int
    status: InstoreOrderStatus

    def __repr__(self) -> str:
        # (sic: as BookInfo)
        return (f"ReservationInfo(reservation_id={self.reservation_id},"
                f"shop_id={self.shop_id}, reservation_time={self.reservation_time}, "
                f"customer_id={self.customer_id}, customer_count={self.customer_count}, "
                f"status={self.status}")


class InStoreDB(VitaDB):
    """The in-store database of one task (upstream `InStoreDB`)."""

    shops: dict[str, Shop] = Field(default_factory=dict)
    books: dict[str, BookInfo] = Field(default_factory=dict)
    reservations: dict[str, ReservationInfo] = Field(default_factory=dict)
