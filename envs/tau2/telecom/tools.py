"""τ²-bench telecom tools, the agent's side (upstream `tau2/domains/telecom/tools.py`,
`TelecomTools`): the carrier's account lookups and line/billing actions over
`TelecomDB`, and `sync_tools`, which carries facts between the account and the phone.

Telecom is the one τ² domain where both parties act: the agent changes the carrier's
records with these tools, the user changes the phone (`user_tools`), and
`TelecomAgent.sync_tools` runs after every step to carry facts across — line active,
roaming allowed, data limit used up, payment request sent, bill paid. Tasks break the
phone and/or the account with initialisation functions and are graded by assertion
functions on the final state; both are plain methods here, run by name.

Behaviour follows upstream, quirks included:
- "today" is fixed at 2025-02-25;
- phone numbers match exactly as written (v0.2.0 did not normalise them), names
  case-insensitively;
- refuelling data is allowed on a suspended line and is charged to the customer's first
  Draft bill, or a new Draft bill for next month;
- tool results read as upstream's tool messages: models dumped whole, but numbers
  directly inside a returned dict become strings (`"charge": "10.0"`), and datetimes
  print as `2025-01-20 14:30:00`.
One deliberate difference: upstream names a newly created Draft bill `B` + 8 random hex
digits; here the 8 hex digits are derived from the state, so replays agree.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any

from pydantic import BaseModel

from envs.base import ToolError, tool
from envs.tau2 import data
from envs.tau2.base import Tau2Environment
from envs.tau2.telecom.data_model import (
    Bill,
    BillStatus,
    Customer,
    DataRefuel,
    DataUsage,
    Device,
    Line,
    LineChange,
    LineItem,
    LineStatus,
    Plan,
    TelecomDB,
)
from envs.tau2.telecom.user_data_model import PaymentRequest
from envs.tau2.telecom.user_tools import TelecomUser

TODAY = dt.date(2025, 2, 25)


def upstream_result(value: dict[str, Any] | list[Any] | BaseModel) -> Any:
    """A tool's return value as upstream's tool message carries it, parsed back.

    Upstream dumps a model whole (Python mode), but walks dicts and lists itself and
    turns each number or bool it meets there into a string; the result is then JSON
    encoded with `default=str`, so datetimes inside models print with a space.
    The tools' return annotations name the shape this JSON has (the model dumped, or
    `LineChange`/`DataUsage`/`DataRefuel` for the dicts), for their output schemas.
    """

    def walk(item: Any) -> Any:
        if isinstance(item, BaseModel):
            return item.model_dump()
        if isinstance(item, bool | int | float):
            return str(item)
        if isinstance(item, list):
            return [walk(x) for x in item]
        if isinstance(item, dict):
            return {key: walk(x) for key, x in item.items()}
        if isinstance(item, dt.date):
            return item.isoformat()
        return item

    return json.loads(json.dumps(walk(value), default=str))


def _first_of_next_month(day: dt.date) -> dt.date:
    return (day.replace(day=1) + dt.timedelta(days=32)).replace(day=1)


class TelecomAgent(Tau2Environment):
    """The carrier's customer-service agent: account lookups and line/billing actions."""

    toolkit = "telecom"
    toolkit_class = "TelecomTools"
    name = "tau2/telecom"
    description = ("Mobile carrier customer service: look up customers, lines, plans, "
                   "devices and bills; suspend or resume lines, toggle roaming, add data, "
                   "and request bill payments.")
    State = TelecomDB
    state: TelecomDB

    @classmethod
    def default_state(cls) -> TelecomDB:
        return TelecomDB.model_validate(data.load_db("telecom"))

    # -- lookups (upstream's messages) --------------------------------------------------

    def _customer(self, customer_id: str) -> Customer:
        for customer in self.state.customers:
            if customer.customer_id == customer_id:
                return customer
        raise ToolError(f"Customer with ID {customer_id} not found")

    def _customer_by_phone(self, phone_number: str) -> Customer:
        for customer in self.state.customers:
            if customer.phone_number == phone_number or any(
                    self._line(line_id).phone_number == phone_number
                    for line_id in customer.line_ids):
                return customer
        raise ToolError(f"Customer with phone number {phone_number} not found")

    def _line(self, line_id: str) -> Line:
        for line in self.state.lines:
            if line.line_id == line_id:
                return line
        raise ToolError(f"Line with ID {line_id} not found")

    def _line_by_phone(self, phone_number: str) -> Line:
        for line in self.state.lines:
            if line.phone_number == phone_number:
                return line
        raise ToolError(f"Line with phone number {phone_number} not found")

    def _plan(self, plan_id: str) -> Plan:
        for plan in self.state.plans:
            if plan.plan_id == plan_id:
                return plan
        raise ToolError(f"Plan with ID {plan_id} not found")

    def _device(self, device_id: str) -> Device:
        for device in self.state.devices:
            if device.device_id == device_id:
                return device
        raise ToolError(f"Device with ID {device_id} not found")

    def _bill(self, bill_id: str) -> Bill:
        for bill in self.state.bills:
            if bill.bill_id == bill_id:
                return bill
        raise ToolError(f"Bill with ID {bill_id} not found")

    def _customer_line(self, customer_id: str, line_id: str) -> Line:
        """A line, only if the customer owns it."""
        if line_id not in self._customer(customer_id).line_ids:
            raise ToolError(f"Line {line_id} not found for customer {customer_id}")
        return self._line(line_id)

    def _bills_with_status(self, customer: Customer, status: BillStatus) -> list[Bill]:
        """The customer's bills in that status, in the order of `customer.bill_ids`."""
        bills = (self._bill(bill_id) for bill_id in customer.bill_ids)
        return [bill for bill in bills if bill.status == status]

    def _charge_next_bill(self, customer_id: str, amount: float, description: str) -> None:
        """Add a line item to the customer's first Draft bill, opening a Draft bill for
        next month when there is none."""
        customer = self._customer(customer_id)
        drafts = self._bills_with_status(customer, BillStatus.DRAFT)
        if drafts:
            bill = drafts[0]
        else:
            start = _first_of_next_month(TODAY)
            bill = Bill(
                bill_id=self._new_bill_id(customer_id),
                customer_id=customer_id,
                period_start=start,
                period_end=_first_of_next_month(start) - dt.timedelta(days=1),
                issue_date=start,
                total_due=0,
                due_date=start + dt.timedelta(days=14),
                status=BillStatus.DRAFT,
            )
            self.state.bills.append(bill)
            customer.bill_ids.append(bill.bill_id)
        bill.line_items.append(LineItem(description=description, amount=amount, date=TODAY,
                                        item_type="Credit" if amount < 0 else "Charge"))
        bill.total_due += amount

    def _new_bill_id(self, customer_id: str) -> str:
        """`B` + 8 hex digits like upstream's uuid-based ids, but a function of the state."""
        taken = {bill.bill_id for bill in self.state.bills}
        attempt = 0
        while True:
            seed = f"{customer_id}:{len(taken)}:{attempt}"
            bill_id = "B" + hashlib.sha256(seed.encode()).hexdigest()[:8]
            if bill_id not in taken:
                return bill_id
            attempt += 1

    # -- customer lookup ---------------------------------------------------------------

    @tool
    def get_customer_by_phone(self, phone_number: str) -> Customer:
        """Find the customer whose contact number, or one of whose lines, has this phone
        number. Returns the customer's profile, line ids and bill ids.

        Args:
            phone_number: The phone number exactly as stored, e.g. '555-123-2002'.
        """
        return upstream_result(self._customer_by_phone(phone_number))

    @tool
    def get_customer_by_id(self, customer_id: str) -> Customer:
        """Get a customer's profile (contact details, account status, payment methods,
        line ids, bill ids) by customer id.

        Args:
            customer_id: The customer's id, e.g. 'C1001'.
        """
        return upstream_result(self._customer(customer_id))

    @tool
    def get_customer_by_name(self, full_name: str, dob: str) -> list[Customer]:
        """Find customers by full name (any letter case) and date of birth. Returns every
        match, possibly none.

        Args:
            full_name: The customer's full name, e.g. 'John Smith'.
            dob: Date of birth as YYYY-MM-DD.
        """
        matches = [customer for customer in self.state.customers
                   if customer.full_name.lower() == full_name.lower()
                   and customer.date_of_birth == dob]
        return upstream_result(matches)

    @tool
    def get_details_by_id(self, id: str) -> Line | Device | Bill | Customer | Plan:
        """Get the full record behind an id: a line (L...), device (D...), bill (B...),
        customer (C...) or plan (P...).

        Args:
            id: The id, e.g. 'L1002', 'D1001', 'B1002', 'C1001' or 'P1002'.
        """
        lookups = {"L": self._line, "D": self._device, "B": self._bill,
                   "C": self._customer, "P": self._plan}
        lookup = lookups.get(id[:1])
        if lookup is None:
            raise ToolError(f"Unknown ID format or type: {id}")
        return upstream_result(lookup(id))

    # -- lines -------------------------------------------------------------------------

    @tool(write=True)
    def suspend_line(self, customer_id: str, line_id: str, reason: str) -> LineChange:
        """Suspend an active line (for at most 6 months; a $5/month holding fee applies).
        Returns the updated line.

        Args:
            customer_id: Id of the customer who owns the line, e.g. 'C1001'.
            line_id: Id of the line to suspend, e.g. 'L1002'.
            reason: Why the line is being suspended.
        """
        line = self._customer_line(customer_id, line_id)
        if line.status != LineStatus.ACTIVE:
            raise ToolError("Line must be active to suspend")
        line.status = LineStatus.SUSPENDED
        line.suspension_start_date = TODAY
        return upstream_result({
            "message": "Line suspended successfully. $5/month holding fee will apply.",
            "line": line,
        })

    @tool(write=True)
    def resume_line(self, customer_id: str, line_id: str) -> LineChange:
        """Reactivate a suspended line (or one pending activation). Returns the updated
        line.

        Args:
            customer_id: Id of the customer who owns the line, e.g. 'C1001'.
            line_id: Id of the line to resume, e.g. 'L1002'.
        """
        line = self._customer_line(customer_id, line_id)
        if line.status not in (LineStatus.SUSPENDED, LineStatus.PENDING_ACTIVATION):
            raise ToolError("Line must be suspended to resume")
        line.status = LineStatus.ACTIVE
        line.suspension_start_date = None
        return upstream_result({"message": "Line resumed successfully", "line": line})

    @tool
    def get_data_usage(self, customer_id: str, line_id: str) -> DataUsage:
        """Get a line's mobile data this billing cycle: data used, the plan's limit, extra
        data refuelled, and the cycle's end date.

        Args:
            customer_id: Id of the customer who owns the line, e.g. 'C1001'.
            line_id: Id of the line, e.g. 'L1002'.
        """
        line = self._customer_line(customer_id, line_id)
        plan = self._plan(line.plan_id)
        return upstream_result({
            "line_id": line_id,
            "data_used_gb": line.data_used_gb,
            "data_limit_gb": plan.data_limit_gb,
            "data_refueling_gb": line.data_refueling_gb,
            "cycle_end_date": _first_of_next_month(TODAY) - dt.timedelta(days=1),
        })

    @tool(write=True)
    def enable_roaming(self, customer_id: str, line_id: str) -> str:
        """Turn on international roaming for a line.

        Args:
            customer_id: Id of the customer who owns the line, e.g. 'C1001'.
            line_id: Id of the line, e.g. 'L1002'.
        """
        line = self._customer_line(customer_id, line_id)
        if line.roaming_enabled:
            return "Roaming was already enabled"
        line.roaming_enabled = True
        return "Roaming enabled successfully"

    @tool(write=True)
    def disable_roaming(self, customer_id: str, line_id: str) -> str:
        """Turn off international roaming for a line.

        Args:
            customer_id: Id of the customer who owns the line, e.g. 'C1001'.
            line_id: Id of the line, e.g. 'L1002'.
        """
        line = self._customer_line(customer_id, line_id)
        if not line.roaming_enabled:
            return "Roaming was already disabled"
        line.roaming_enabled = False
        return "Roaming disabled successfully"

    @tool(write=True)
    def refuel_data(self, customer_id: str, line_id: str, gb_amount: float) -> DataRefuel:
        """Add extra data to a line for this billing cycle. The plan's price per GB is
        charged to the customer's next bill.

        Args:
            customer_id: Id of the customer who owns the line, e.g. 'C1001'.
            line_id: Id of the line, e.g. 'L1002'.
            gb_amount: Gigabytes of data to add (positive), e.g. 2.0.
        """
        line = self._customer_line(customer_id, line_id)
        if gb_amount <= 0:
            raise ToolError("Refuel amount must be positive")
        plan = self._plan(line.plan_id)
        price = plan.data_refueling_price_per_gb
        charge = gb_amount * price
        line.data_refueling_gb += gb_amount
        self._charge_next_bill(customer_id, charge,
                               f"Data refueling: {gb_amount} GB at ${price}/GB")
        return upstream_result({
            "message": f"Successfully added {gb_amount} GB of data for line {line_id} "
                       f"for ${charge:.2f}",
            "new_data_refueling_gb": line.data_refueling_gb,
            "charge": charge,
        })

    # -- billing -----------------------------------------------------------------------

    @tool
    def get_bills_for_customer(self, customer_id: str, limit: int = 12) -> list[Bill]:
        """List a customer's bills with their line items and status, newest issue date
        first.

        Args:
            customer_id: The customer's id, e.g. 'C1001'.
            limit: At most this many bills.
        """
        customer = self._customer(customer_id)
        bills = [self._bill(bill_id) for bill_id in customer.bill_ids]
        bills.sort(key=lambda bill: bill.issue_date, reverse=True)
        return upstream_result(bills[:limit])

    @tool(write=True)
    def send_payment_request(self, customer_id: str, bill_id: str) -> str:
        """Ask the customer to pay one of their bills; it shows up on their phone, and the
        bill waits for payment. Only one bill per customer can await payment. The bill's
        status is not checked: make sure it is not already paid.

        Args:
            customer_id: Id of the customer who owns the bill, e.g. 'C1001'.
            bill_id: Id of the bill to be paid, e.g. 'B1002'.
        """
        customer = self._customer(customer_id)
        if self._bills_with_status(customer, BillStatus.AWAITING_PAYMENT):
            raise ToolError("A bill is already awaiting payment for this customer")
        if bill_id not in customer.bill_ids:
            raise ToolError(f"Bill {bill_id} not found for customer {customer_id}")
        self._bill(bill_id).status = BillStatus.AWAITING_PAYMENT
        return f"Payment request sent to the customer for bill {bill_id}"

    # -- generic -----------------------------------------------------------------------

    @tool
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the customer over to a human agent. Only when the customer explicitly asks
        for one, or when the issue cannot be solved with the policy and these tools.

        Args:
            summary: A short summary of the customer's issue for the human agent.
        """
        return "Transfer successful"

    # -- task functions: initialisation (upstream names, ValueError on failure) ---------

    def set_data_usage(self, customer_id: str, line_id: str, data_used_gb: float) -> str:
        self._customer_line(customer_id, line_id).data_used_gb = data_used_gb
        return f"Data usage set to {data_used_gb} GB for line {line_id}"

    def suspend_line_for_overdue_bill(self, customer_id: str, line_id: str, new_bill_id: str,
                                      contract_ended: bool) -> str:
        """Suspend an active line over last month's unpaid plan charge: a new Overdue bill
        `new_bill_id` for last month, and, when `contract_ended`, a contract that ended
        last month (so policy forbids resuming)."""
        line = self._line(line_id)
        if line.status != LineStatus.ACTIVE:
            raise ValueError("Line must be active to suspend for unpaid bill")
        amount = self._plan(line.plan_id).price_per_month
        if amount <= 0:
            raise ValueError("Amount must be positive for overdue bill")
        customer = self._customer(customer_id)
        if self._bills_with_status(customer, BillStatus.OVERDUE):
            raise ValueError("Customer already has an overdue bill")
        last_month_end = TODAY.replace(day=1) - dt.timedelta(days=1)
        last_month_start = last_month_end.replace(day=1)
        bill = Bill(
            bill_id=new_bill_id,
            customer_id=customer_id,
            period_start=last_month_start,
            period_end=last_month_end,
            issue_date=last_month_start,
            total_due=amount,
            due_date=last_month_start + dt.timedelta(days=14),
            line_items=[LineItem(description=f"Charge for line {line.line_id}", amount=amount,
                                 date=TODAY, item_type="Charge")],
            status=BillStatus.OVERDUE,
        )
        self.state.bills.append(bill)
        customer.bill_ids.append(new_bill_id)
        line.status = LineStatus.SUSPENDED
        line.suspension_start_date = TODAY
        if contract_ended:
            line.contract_end_date = last_month_end
        return (f"Line {line_id} suspended for unpaid bill {new_bill_id}. "
                f"Contract ended: {contract_ended}")

    # -- task functions: assertions ----------------------------------------------------

    def assert_data_refueling_amount(self, customer_id: str, line_id: str,
                                     expected_amount: float) -> bool:
        line = self._customer_line(customer_id, line_id)
        return abs(line.data_refueling_gb - expected_amount) < 1e-6

    def assert_line_status(self, customer_id: str, line_id: str, expected_status: str) -> bool:
        return self._customer_line(customer_id, line_id).status == expected_status

    def assert_overdue_bill_exists(self, customer_id: str, overdue_bill_id: str) -> bool:
        """True, or an error saying what is missing (upstream never returns False)."""
        customer = self._customer(customer_id)
        if overdue_bill_id not in customer.bill_ids:
            raise ValueError(f"Overdue bill {overdue_bill_id} not found")
        if self._bill(overdue_bill_id).status != BillStatus.OVERDUE:
            raise ValueError(f"Overdue bill {overdue_bill_id} is not overdue")
        return True

    def assert_no_overdue_bill(self, overdue_bill_id: str) -> bool:
        """The bill is gone or paid."""
        try:
            return self._bill(overdue_bill_id).status == BillStatus.PAID
        except ToolError:
            return True

    # -- coupling ----------------------------------------------------------------------

    def sync_tools(self, user: TelecomUser) -> None:
        """Carry account facts to the phone and payments back (upstream `sync_tools`).

        Nothing happens until the task has told the phone whose it is. Then the phone's
        line is looked up by its number: its status, roaming and data budget become the
        surroundings' `line_active`, `roaming_allowed` and `mobile_data_usage_exceeded`;
        a paid payment request marks its bill Paid and is cleared; and if no request is
        pending, the customer's first bill awaiting payment becomes one.
        """
        where = user.state.surroundings
        if where.phone_number is None:
            return
        line = self._line_by_phone(where.phone_number)
        where.line_active = line.status == LineStatus.ACTIVE
        where.roaming_allowed = line.roaming_enabled
        plan = self._plan(line.plan_id)
        where.mobile_data_usage_exceeded = (
            line.data_used_gb >= plan.data_limit_gb + line.data_refueling_gb)

        request = where.payment_request
        if request is not None and request.paid:
            self._bill(request.bill_id).status = BillStatus.PAID
            where.payment_request = None
        if where.payment_request is None:
            customer = self._customer_by_phone(where.phone_number)
            awaiting = self._bills_with_status(customer, BillStatus.AWAITING_PAYMENT)
            if awaiting:
                where.payment_request = PaymentRequest(bill_id=awaiting[0].bill_id,
                                                       amount_due=awaiting[0].total_due)
