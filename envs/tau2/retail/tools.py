"""τ²-bench retail tools (upstream `tau2/domains/retail/tools.py`, `RetailTools`): the agent's
toolkit over the `RetailDB` of `data_model`.

The 15 tools are those of release v0.2.0 (no `get_item_details`, added in v1.0) and keep
upstream's behaviour, quirks included:
- only an order whose status is exactly "pending" can be cancelled or have its items
  modified; address and payment changes accept any status containing "pending";
- cancelling refunds every payment-history line (refund lines included) and credits gift
  cards at once; credit cards and PayPal are only recorded;
- exchanges and returns only record the request (no payment line, no balance change);
- item modifications record the unrounded price difference as one payment or refund
  line and settle gift cards immediately (balance rounded to cents).
Error messages are upstream's verbatim; they reach the model as "Error: <message>".
"""

from __future__ import annotations

import json

from envs.base import ToolError, tool
from envs.tau2 import data
from envs.tau2.base import Tau2Environment
from envs.tau2.calculator import calculate_expression
from envs.tau2.data import gc_paused
from envs.tau2.retail.data_model import (
    GiftCard,
    Order,
    OrderPayment,
    PaymentMethod,
    Product,
    RetailDB,
    User,
    UserAddress,
    Variant,
)

CANCEL_REASONS = ("no longer needed", "ordered by mistake")


class Retail(Tau2Environment):
    """The retail customer-service agent's toolkit over the release database."""

    toolkit = "retail"
    toolkit_class = "RetailTools"
    name = "tau2/retail"
    description = ("Online store customer service: identify users, look up orders and "
                   "products; cancel or modify pending orders, return or exchange delivered "
                   "items, update addresses.")
    State = RetailDB
    state: RetailDB

    @classmethod
    def default_state(cls) -> RetailDB:
        with gc_paused():
            return RetailDB.model_validate(data.load_db("retail"))

    # -- lookups (upstream's messages) ------------------------------------------------

    def _order(self, order_id: str) -> Order:
        if order_id not in self.state.orders:
            raise ToolError("Order not found")
        return self.state.orders[order_id]

    def _user(self, user_id: str) -> User:
        if user_id not in self.state.users:
            raise ToolError("User not found")
        return self.state.users[user_id]

    def _product(self, product_id: str) -> Product:
        if product_id not in self.state.products:
            raise ToolError("Product not found")
        return self.state.products[product_id]

    def _variant(self, product_id: str, item_id: str) -> Variant:
        product = self._product(product_id)
        if item_id not in product.variants:
            raise ToolError("Variant not found")
        return product.variants[item_id]

    def _payment_method(self, user_id: str, payment_method_id: str) -> PaymentMethod:
        user = self._user(user_id)
        if payment_method_id not in user.payment_methods:
            raise ToolError("Payment method not found")
        return user.payment_methods[payment_method_id]

    @staticmethod
    def _check_items_in_order(order: Order, item_ids: list[str], message: str) -> None:
        """Each id must occur in the order at least as often as in `item_ids`."""
        in_order = [item.item_id for item in order.items]
        for item_id in item_ids:
            if item_ids.count(item_id) > in_order.count(item_id):
                raise ToolError(message.format(item_id=item_id))

    def _price_difference(self, order: Order, item_ids: list[str], new_item_ids: list[str],
                          *, forbid_same: bool = False) -> tuple[float, Variant | None]:
        """Sum of new minus old prices, pair by pair (new items must be available variants
        of the same product), and the last new variant checked. Starts from int 0 like
        upstream, so no pairs give 0."""
        difference: float = 0
        variant = None
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
            if forbid_same and item_id == new_item_id:
                raise ToolError("The new item id should be different from the old item id")
            item = next((i for i in order.items if i.item_id == item_id), None)
            if item is None:
                raise ToolError(f"Item {item_id} not found")
            variant = self._variant(item.product_id, new_item_id)
            if not variant.available:
                raise ToolError(f"New item {new_item_id} not found or available")
            difference += variant.price - item.price
        return difference, variant

    # -- reads ------------------------------------------------------------------------

    @tool
    def find_user_id_by_email(self, email: str) -> str:
        """Find a user's id from their email address (case-insensitive). Try this first to
        identify a customer.

        Args:
            email: The customer's email, e.g. 'jane.doe@example.com'.
        """
        for user_id, user in self.state.users.items():
            if user.email.lower() == email.lower():
                return user_id
        raise ToolError("User not found")

    @tool
    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        """Find a user's id from their first name, last name (case-insensitive) and zip
        code. Use it when the customer cannot be found by email or does not remember it.

        Args:
            first_name: The customer's first name, e.g. 'John'.
            last_name: The customer's last name, e.g. 'Doe'.
            zip: The zip code of the customer's address, e.g. '12345'.
        """
        for user_id, user in self.state.users.items():
            if (user.name.first_name.lower() == first_name.lower()
                    and user.name.last_name.lower() == last_name.lower()
                    and user.address.zip == zip):
                return user_id
        raise ToolError("User not found")

    @tool
    def get_user_details(self, user_id: str) -> User:
        """Look up a user: name, address, email, payment methods (gift card balances
        included) and order ids.

        Args:
            user_id: The user's id, e.g. 'sara_doe_496'.
        """
        return self._user(user_id)

    @tool
    def get_order_details(self, order_id: str) -> Order:
        """Look up an order: status, items with prices and options, shipping address,
        fulfillments and payment history.

        Args:
            order_id: The order id, starting with '#', e.g. '#W0000000'.
        """
        return self._order(order_id)

    @tool
    def get_product_details(self, product_id: str) -> Product:
        """Look up a product type and all its items (variants): options, availability and
        price of each item id.

        Args:
            product_id: The product id, e.g. '6086499569' (not an item id).
        """
        return self._product(product_id)

    @tool
    def list_all_product_types(self) -> str:
        """List the store's 50 product types as a JSON object from product name to product
        id, sorted by name. Each product type has several items (variants)."""
        names = {product.name: product.product_id for product in self.state.products.values()}
        return json.dumps(names, sort_keys=True)

    # -- writes -----------------------------------------------------------------------

    @tool(write=True)
    def cancel_pending_order(self, order_id: str, reason: str) -> Order:
        """Cancel an order that is still pending. Every payment is refunded: at once to a
        gift card, in 5-7 business days to other methods. Confirm with the user first.

        Args:
            order_id: The order id, starting with '#', e.g. '#W0000000'.
            reason: Either 'no longer needed' or 'ordered by mistake'.
        """
        order = self._order(order_id)
        if order.status != "pending":
            raise ToolError("Non-pending order cannot be cancelled")
        if reason not in CANCEL_REASONS:
            raise ToolError("Invalid reason")
        refunds = []
        for payment in order.payment_history:
            refunds.append(OrderPayment(transaction_type="refund", amount=payment.amount,
                                        payment_method_id=payment.payment_method_id))
            method = self._payment_method(order.user_id, payment.payment_method_id)
            if isinstance(method, GiftCard):
                method.balance = round(method.balance + payment.amount, 2)
        order.status = "cancelled"
        order.cancel_reason = reason  # type: ignore[assignment]  # checked above
        order.payment_history.extend(refunds)
        return order

    @tool(write=True)
    def exchange_delivered_order_items(self, order_id: str, item_ids: list[str],
                                       new_item_ids: list[str],
                                       payment_method_id: str) -> Order:
        """Request an exchange of delivered items for other items of the same product. Only
        one return or exchange is possible per delivered order. The price difference will
        be settled with the given payment method (a gift card must cover it). Confirm with
        the user first.

        Args:
            order_id: The order id, starting with '#', e.g. '#W0000000'.
            item_ids: Item ids to exchange; repeat an id to exchange several units.
            new_item_ids: The replacement item ids, position by position, each a variant of
                the same product as the item it replaces.
            payment_method_id: Payment method id for the price difference, e.g.
                'gift_card_0000000' or 'credit_card_0000000'.
        """
        order = self._order(order_id)
        if order.status != "delivered":
            raise ToolError("Non-delivered order cannot be exchanged")
        self._check_items_in_order(order, item_ids, "Number of {item_id} not found.")
        if len(item_ids) != len(new_item_ids):
            raise ToolError("The number of items to be exchanged should match.")
        difference = round(self._price_difference(order, item_ids, new_item_ids)[0], 2)
        method = self._payment_method(order.user_id, payment_method_id)
        if isinstance(method, GiftCard) and method.balance < difference:
            raise ToolError("Insufficient gift card balance to pay for the price difference")
        order.status = "exchange requested"
        order.exchange_items = sorted(item_ids)
        order.exchange_new_items = sorted(new_item_ids)
        order.exchange_payment_method_id = payment_method_id
        order.exchange_price_difference = difference
        return order

    @tool(write=True)
    def modify_pending_order_address(self, order_id: str, address1: str, address2: str,
                                     city: str, state: str, country: str, zip: str) -> Order:
        """Change the shipping address of a pending order. Confirm with the user first.

        Args:
            order_id: The order id, starting with '#', e.g. '#W0000000'.
            address1: First address line, e.g. '123 Main St'.
            address2: Second address line, e.g. 'Apt 1', or ''.
            city: City, e.g. 'San Francisco'.
            state: State, e.g. 'CA'.
            country: Country, e.g. 'USA'.
            zip: Zip code, e.g. '12345'.
        """
        order = self._order(order_id)
        if "pending" not in order.status:
            raise ToolError("Non-pending order cannot be modified")
        order.address = UserAddress(address1=address1, address2=address2, city=city,
                                    state=state, country=country, zip=zip)
        return order

    @tool(write=True)
    def modify_pending_order_items(self, order_id: str, item_ids: list[str],
                                   new_item_ids: list[str], payment_method_id: str) -> Order:
        """Swap items of a pending order for other items of the same product. Possible once
        per order. The price difference is charged to, or refunded to, the given payment
        method (a gift card must cover it). Confirm with the user first.

        Args:
            order_id: The order id, starting with '#', e.g. '#W0000000'.
            item_ids: Item ids to replace; repeat an id to replace several units.
            new_item_ids: The new item ids, position by position, each a different variant
                of the same product as the item it replaces.
            payment_method_id: Payment method id for the price difference, e.g.
                'gift_card_0000000' or 'credit_card_0000000'.
        """
        order = self._order(order_id)
        if order.status != "pending":
            raise ToolError("Non-pending order cannot be modified")
        self._check_items_in_order(order, item_ids, "{item_id} not found")
        if len(item_ids) != len(new_item_ids):
            raise ToolError("The number of items to be exchanged should match")
        difference, last_variant = self._price_difference(order, item_ids, new_item_ids,
                                                          forbid_same=True)
        method = self._payment_method(order.user_id, payment_method_id)
        if isinstance(method, GiftCard) and method.balance < difference:
            raise ToolError("Insufficient gift card balance to pay for the new item")

        order.payment_history.append(OrderPayment(
            transaction_type="payment" if difference > 0 else "refund",
            amount=abs(difference), payment_method_id=payment_method_id))
        if isinstance(method, GiftCard):
            method.balance = round(method.balance - difference, 2)
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
            # looked up afresh each time, as upstream: a just-changed item can match again
            item = next(i for i in order.items if i.item_id == item_id)
            assert last_variant is not None  # there is at least this pair
            # upstream's quirk, kept because its reward is computed on it: every modified
            # item takes the price and options of the LAST new variant checked above
            item.item_id = new_item_id
            item.price = last_variant.price
            item.options = last_variant.options
        order.status = "pending (item modified)"
        return order

    @tool(write=True)
    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> Order:
        """Pay a pending order with a different payment method: the new method is charged
        the full amount and the original one refunded (gift cards at once). Confirm with
        the user first.

        Args:
            order_id: The order id, starting with '#', e.g. '#W0000000'.
            payment_method_id: The new payment method id, e.g. 'gift_card_0000000' or
                'credit_card_0000000'.
        """
        order = self._order(order_id)
        if "pending" not in order.status:
            raise ToolError("Non-pending order cannot be modified")
        method = self._payment_method(order.user_id, payment_method_id)
        history = order.payment_history
        if len(history) != 1 or history[0].transaction_type != "payment":
            raise ToolError("There should be exactly one payment for a pending order")
        original_id = history[0].payment_method_id
        if original_id == payment_method_id:
            raise ToolError("The new payment method should be different from the current one")
        amount = history[0].amount
        if isinstance(method, GiftCard) and method.balance < amount:
            raise ToolError("Insufficient gift card balance to pay for the order")
        history.extend([
            OrderPayment(transaction_type="payment", amount=amount,
                         payment_method_id=payment_method_id),
            OrderPayment(transaction_type="refund", amount=amount,
                         payment_method_id=original_id),
        ])
        if isinstance(method, GiftCard):
            method.balance = round(method.balance - amount, 2)
        original = self._payment_method(order.user_id, original_id)
        if isinstance(original, GiftCard):
            original.balance = round(original.balance + amount, 2)
        return order

    @tool(write=True)
    def modify_user_address(self, user_id: str, address1: str, address2: str, city: str,
                            state: str, country: str, zip: str) -> User:
        """Change a user's default address (existing orders keep theirs). Confirm with the
        user first.

        Args:
            user_id: The user's id, e.g. 'sara_doe_496'.
            address1: First address line, e.g. '123 Main St'.
            address2: Second address line, e.g. 'Apt 1', or ''.
            city: City, e.g. 'San Francisco'.
            state: State, e.g. 'CA'.
            country: Country, e.g. 'USA'.
            zip: Zip code, e.g. '12345'.
        """
        user = self._user(user_id)
        user.address = UserAddress(address1=address1, address2=address2, city=city,
                                   state=state, country=country, zip=zip)
        return user

    @tool(write=True)
    def return_delivered_order_items(self, order_id: str, item_ids: list[str],
                                     payment_method_id: str) -> Order:
        """Request the return of items of a delivered order; the user gets an email on how to
        send them back. The refund goes to the original payment method or to a gift card.
        Only one return or exchange is possible per delivered order. Confirm with the user
        first.

        Args:
            order_id: The order id, starting with '#', e.g. '#W0000000'.
            item_ids: Item ids to return; repeat an id to return several units.
            payment_method_id: Where the refund goes: the order's original payment method
                or one of the user's gift cards, e.g. 'gift_card_0000000'.
        """
        order = self._order(order_id)
        if order.status != "delivered":
            raise ToolError("Non-delivered order cannot be returned")
        method = self._payment_method(order.user_id, payment_method_id)
        if (not isinstance(method, GiftCard)
                and payment_method_id != order.payment_history[0].payment_method_id):
            raise ToolError("Payment method should be the original payment method")
        self._check_items_in_order(order, item_ids, "Some item not found")
        order.status = "return requested"
        order.return_items = sorted(item_ids)
        order.return_payment_method_id = payment_method_id
        return order

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
