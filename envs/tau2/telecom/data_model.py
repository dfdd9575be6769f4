"""τ²-bench telecom data model, the agent's side (upstream
`tau2/domains/telecom/data_model.py`): the carrier's `TelecomDB`, and the shapes of the
tools' dict results.

The models mirror upstream's `TelecomDB` (v0.2.0, so no later `phone_number_aliases`)
field for field, since the reward hashes `model_dump()`.
"""

from __future__ import annotations

import datetime as dt
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Address(_Record):
    street: str
    city: str
    state: str
    zip_code: str


class Plan(_Record):
    plan_id: str
    name: str
    data_limit_gb: float
    price_per_month: float
    data_refueling_price_per_gb: float


class DeviceType(StrEnum):
    PHONE = "phone"
    ROUTER = "router"
    TABLET = "tablet"
    WATCH = "watch"
    OTHER = "other"


class Device(_Record):
    device_id: str
    device_type: DeviceType
    model: str
    imei: str | None = None
    is_esim_capable: bool
    activated: bool = False
    activation_date: dt.datetime | None = None
    last_esim_transfer_date: dt.datetime | None = None


class LineStatus(StrEnum):
    ACTIVE = "Active"
    SUSPENDED = "Suspended"
    PENDING_ACTIVATION = "Pending Activation"
    CLOSED = "Closed"


class Line(_Record):
    line_id: str
    phone_number: str
    status: LineStatus = LineStatus.PENDING_ACTIVATION
    plan_id: str
    device_id: str | None = None
    data_used_gb: float = 0.0
    data_refueling_gb: float = 0.0
    roaming_enabled: bool = False
    contract_end_date: dt.date | None = None
    last_plan_change_date: dt.date | None = None
    last_sim_replacement_date: dt.date | None = None
    suspension_start_date: dt.date | None = None


class LineItem(_Record):
    description: str
    amount: float = Field(description="Positive for charges, negative for credits")
    date: dt.date
    item_type: str


class BillStatus(StrEnum):
    DRAFT = "Draft"
    ISSUED = "Issued"
    AWAITING_PAYMENT = "Awaiting Payment"
    PAID = "Paid"
    OVERDUE = "Overdue"
    DISPUTED = "Disputed"


class Bill(_Record):
    bill_id: str
    customer_id: str
    period_start: dt.date
    period_end: dt.date
    issue_date: dt.date
    total_due: float
    due_date: dt.date
    line_items: list[LineItem] = Field(default_factory=list)
    status: BillStatus = BillStatus.DRAFT


class AccountStatus(StrEnum):
    ACTIVE = "Active"
    SUSPENDED = "Suspended"
    PENDING_VERIFICATION = "Pending Verification"
    CLOSED = "Closed"


class PaymentMethodType(StrEnum):
    CREDIT_CARD = "Credit Card"
    DEBIT_CARD = "Debit Card"
    PAYPAL = "PayPal"


class PaymentMethod(_Record):
    method_type: PaymentMethodType
    account_number_last_4: str
    expiration_date: str = Field(description="MM/YYYY")


class Customer(_Record):
    customer_id: str
    full_name: str
    date_of_birth: str = Field(description="YYYY-MM-DD")
    email: str
    phone_number: str
    address: Address
    account_status: AccountStatus = AccountStatus.PENDING_VERIFICATION
    payment_methods: list[PaymentMethod] = Field(default_factory=list)
    line_ids: list[str] = Field(default_factory=list)
    bill_ids: list[str] = Field(default_factory=list)
    created_at: dt.datetime = dt.datetime(2025, 1, 1)
    last_extension_date: dt.date | None = None
    goodwill_credit_used_this_year: float = 0.0


class TelecomDB(_Record):
    """The carrier's whole database (upstream `TelecomDB`)."""

    plans: list[Plan] = Field(default_factory=list)
    customers: list[Customer] = Field(default_factory=list)
    lines: list[Line] = Field(default_factory=list)
    bills: list[Bill] = Field(default_factory=list)
    devices: list[Device] = Field(default_factory=list)


class LineChange(BaseModel):
    """What `suspend_line` and `resume_line` return."""

    message: str = Field(description="What was done, in upstream's words")
    line: Line = Field(description="The line as it is after the change")


class DataUsage(BaseModel):
    """What `get_data_usage` returns; upstream prints every number (and the date) as a
    string here, since they sit directly in the dict it walks."""

    line_id: str = Field(description="The line asked about")
    data_used_gb: str = Field(description="Mobile data used this billing cycle, in GB")
    data_limit_gb: str = Field(description="The line plan's monthly data allowance, in GB")
    data_refueling_gb: str = Field(description="Extra data added this cycle, in GB")
    cycle_end_date: str = Field(description="Last day of the billing cycle, YYYY-MM-DD")


class DataRefuel(BaseModel):
    """What `refuel_data` returns (numbers as strings, as upstream prints them)."""

    message: str = Field(description="What was added and what it cost")
    new_data_refueling_gb: str = Field(description="The line's extra data this cycle "
                                                   "after the refuel, in GB")
    charge: str = Field(description="The amount charged to the customer's next bill, "
                                    "in USD")
