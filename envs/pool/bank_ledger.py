"""Bank ledger: a credit union's back-office console for customers, accounts and payments.

Money moves only through transfers, and every completed transfer posts matching ledger
transactions, so balances can always be explained line by line (statements rebuild them).
The rules are a teller's: accounts must be active, a debit may not exceed the balance
plus the overdraft limit, outgoing money is capped per day, bill payments leave from
checking to the customer's own payees, and only scheduled payments can be cancelled.
Amounts are stored in integer cents and shown in dollars.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from datetime import date, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from envs.base import Environment, ToolError, tool
from envs.timestamps import Day, Timestamp, current_day

__all__ = ["BankLedger", "BankLedgerState"]

#: most money (cents) that may leave one account per day through transfers and payments
DAILY_OUTGOING_LIMIT = 1_000_000
MAX_OVERDRAFT = 250_000
MAX_OPEN_ACCOUNTS = 4
MAX_SCHEDULE_DAYS = 365

AccountType = Literal["checking", "savings"]


class Customer(BaseModel):
    id: str
    name: str
    email: str
    phone: str
    kyc_status: Literal["verified", "pending"] = "verified"
    member_since: Day


class Account(BaseModel):
    id: str
    customer_id: str
    type: AccountType
    nickname: str
    balance_cents: int = 0
    overdraft_limit_cents: int = 0
    status: Literal["active", "frozen"] = "active"
    freeze_reason: str = ""
    opened_on: Day


class Transaction(BaseModel):
    id: str
    account_id: str
    posted_at: Timestamp
    #: signed: credits positive, debits negative
    amount_cents: int
    description: str
    category: str
    balance_after_cents: int
    transfer_id: str | None = None


class Payee(BaseModel):
    id: str
    customer_id: str
    name: str
    account_number: str
    routing_number: str
    nickname: str = ""


class Transfer(BaseModel):
    id: str
    from_account_id: str
    #: exactly one of to_account_id (internal) and payee_id (bill payment) is set
    to_account_id: str | None = None
    payee_id: str | None = None
    amount_cents: int
    memo: str = ""
    status: Literal["completed", "scheduled", "cancelled"]
    created_at: Timestamp
    #: the day the money moves (or moved)
    execute_on: Day


class BankLedgerState(BaseModel):
    seed: int = 0
    now: Timestamp = "2026-03-09T09:00"
    customers: dict[str, Customer] = Field(default_factory=dict)
    accounts: dict[str, Account] = Field(default_factory=dict)
    transactions: dict[str, Transaction] = Field(default_factory=dict)
    payees: dict[str, Payee] = Field(default_factory=dict)
    transfers: dict[str, Transfer] = Field(default_factory=dict)
    next_account_id: int = 1001
    next_transaction_id: int = 1
    next_payee_id: int = 1
    next_transfer_id: int = 1


# -- seed data ---------------------------------------------------------------------------

_CUSTOMERS = [
    "Priya Nair", "Jamal Wright", "Olivia Bennett", "Hiroshi Sato", "Fatima Zahra",
    "Liam Connolly", "Ana Ferreira", "Ethan Brooks", "Zoe Martin", "Mateo Garcia",
    "Chen Wei", "Amara Okoye", "Lucas Silva", "Emma Johansson", "Noah Williams",
    "Yuki Mori", "Sophie Laurent", "Daniel Cohen", "Grace Adeyemi", "Ryan Murphy",
    "Isla Campbell", "Arjun Mehta",
]
_EMPLOYERS = ["Northwind Labs", "Bayside Hospital", "City of Oakmont", "Greenleaf Foods",
              "Summit Insurance", "Harbor Freight Lines"]
_SPENDING = [("Safeway", "groceries", 4000, 16000), ("Trader Joe's", "groceries", 2500, 9000),
             ("Shell", "fuel", 3000, 7500), ("Blue Bottle Coffee", "dining", 450, 1400),
             ("Amazon", "shopping", 1500, 18000), ("Netflix", "subscriptions", 1549, 1549),
             ("Oakmont Water", "utilities", 3800, 7200), ("Walgreens", "health", 900, 4500),
             ("Chipotle", "dining", 1100, 3200), ("REI", "shopping", 3500, 22000)]
_BILLERS = [("Pacific Gas and Electric", "utilities"), ("Bayview Internet", "utilities"),
            ("Oakmont Property Management", "rent"), ("State Farm", "insurance"),
            ("Verizon Wireless", "utilities"), ("Evergreen Student Loans", "loans")]


class _Seeder:
    """Builds a consistent history: accounts open with a balance, then every seeded
    transaction is posted in time order, so balances and balance_after always agree."""

    def __init__(self, state: BankLedgerState) -> None:
        self.state = state
        self.history: dict[str, list[tuple[str, int, str, str, str | None]]] = defaultdict(list)

    def customer(self, name: str, since: str, kyc: str = "verified") -> Customer:
        cid = f"C{1000 + len(self.state.customers) + 1}"
        first, last = name.lower().split(" ", 1)
        phone = f"+1 510 555 {1000 + len(self.state.customers) * 37:04d}"
        customer = Customer(id=cid, name=name, email=f"{first}.{last}@mailbox.org",
                            phone=phone, kyc_status=kyc, member_since=since)  # type: ignore[arg-type]
        self.state.customers[cid] = customer
        return customer

    def account(self, customer: Customer, kind: str, nickname: str, opening: int,
                overdraft: int = 0, opened: str = "2024-05-01") -> Account:
        aid = f"AC{self.state.next_account_id}"
        self.state.next_account_id += 1
        account = Account(id=aid, customer_id=customer.id, type=kind,  # type: ignore[arg-type]
                          nickname=nickname, balance_cents=opening,
                          overdraft_limit_cents=overdraft, opened_on=opened)
        self.state.accounts[aid] = account
        return account

    def payee(self, customer: Customer, name: str, number: str, routing: str,
              nickname: str = "") -> Payee:
        pid = f"P{self.state.next_payee_id:03d}"
        self.state.next_payee_id += 1
        payee = Payee(id=pid, customer_id=customer.id, name=name, account_number=number,
                      routing_number=routing, nickname=nickname)
        self.state.payees[pid] = payee
        return payee

    def post(self, account: Account, when: str, cents: int, description: str,
             category: str, transfer_id: str | None = None) -> None:
        self.history[account.id].append((when, cents, description, category, transfer_id))

    def transfer(self, source: Account, when: str, cents: int, memo: str, *,
                 target: Account | None = None, payee: Payee | None = None,
                 status: str = "completed") -> None:
        tid = f"TR{self.state.next_transfer_id:04d}"
        self.state.next_transfer_id += 1
        self.state.transfers[tid] = Transfer(
            id=tid, from_account_id=source.id, to_account_id=target.id if target else None,
            payee_id=payee.id if payee else None, amount_cents=cents, memo=memo,
            status=status, created_at=min(when, self.state.now),  # type: ignore[arg-type]
            execute_on=when[:10])
        if status != "completed":
            return
        to_name = payee.name if payee else target.nickname  # type: ignore[union-attr]
        self.post(source, when, -cents, f"Transfer to {to_name}" if target else
                  f"Bill payment to {to_name}", "transfer" if target else "bills", tid)
        if target:
            self.post(target, when, cents, f"Transfer from {source.nickname}", "transfer", tid)

    def finish(self) -> None:
        """Post every account's history in time order."""
        rows = sorted((when, aid, cents, desc, cat, tid)
                      for aid, items in self.history.items()
                      for when, cents, desc, cat, tid in items)
        for when, aid, cents, desc, cat, tid in rows:
            account = self.state.accounts[aid]
            account.balance_cents += cents
            txid = f"TX{self.state.next_transaction_id:05d}"
            self.state.next_transaction_id += 1
            self.state.transactions[txid] = Transaction(
                id=txid, account_id=aid, posted_at=when, amount_cents=cents, description=desc,
                category=cat, balance_after_cents=account.balance_cents, transfer_id=tid)


def _seeded_state(seed: int) -> BankLedgerState:
    rng = random.Random(seed)
    state = BankLedgerState(seed=seed)
    s = _Seeder(state)

    # Priya: checking runs low (tasks move money from savings before paying bills).
    priya = s.customer("Priya Nair", "2019-08-14")
    checking = s.account(priya, "checking", "Everyday Checking", 260731, opened="2019-08-14")
    savings = s.account(priya, "savings", "Rainy Day Savings", 592782, opened="2019-08-14")
    landlord = s.payee(priya, "Martin Reyes", "88120455", "026009593", "Landlord")
    power = s.payee(priya, "Pacific Gas and Electric", "5512093381", "121000248")
    internet = s.payee(priya, "Bayview Internet", "7700182", "322271627")
    for month in ("01", "02"):
        s.post(checking, f"2026-{month}-27T06:00", 485000, "Payroll Northwind Labs", "income")
    s.transfer(checking, "2026-01-02T09:00", 185000, "January rent", payee=landlord)
    s.transfer(checking, "2026-02-01T09:00", 185000, "February rent", payee=landlord)
    s.transfer(checking, "2026-01-22T08:00", 7999, "Internet", payee=internet)
    s.transfer(checking, "2026-02-22T08:00", 7999, "Internet", payee=internet)
    s.transfer(checking, "2026-03-01T09:00", 185000, "March rent", payee=landlord)
    s.transfer(checking, "2026-02-18T08:00", 9214, "Gas and electric", payee=power)
    s.transfer(checking, "2026-01-28T12:00", 150000, "Emergency fund", target=savings)
    s.transfer(checking, "2026-03-02T12:00", 150000, "Emergency fund", target=savings)
    s.transfer(checking, "2026-03-20T08:00", 8640, "Gas and electric", payee=power,
               status="scheduled")
    for when, merchant, cents, cat in [
            ("2026-01-09T17:45", "Costco", 28612, "groceries"),
            ("2026-01-29T21:10", "Alaska Airlines", 64230, "travel"),
            ("2026-02-03T18:20", "Safeway", 12744, "groceries"),
            ("2026-02-28T14:00", "Apple", 129900, "shopping"),
            ("2026-02-14T20:30", "Nopa", 18450, "dining"),
            ("2026-02-11T12:05", "Chipotle", 1890, "dining"),
            ("2026-02-21T10:40", "REI", 21999, "shopping"),
            ("2026-03-03T19:02", "Trader Joe's", 8431, "groceries"),
            ("2026-03-05T08:15", "Shell", 5520, "fuel"),
            ("2026-03-07T13:30", "Amazon", 16488, "shopping"),
            ("2026-03-08T11:00", "Blue Bottle Coffee", 975, "dining")]:
        s.post(checking, when, -cents, merchant, cat)
    s.post(savings, "2026-02-28T00:00", 1118, "Interest", "interest")

    for n, name in enumerate(_CUSTOMERS[1:], 2):
        year = rng.randint(2012, 2025)
        customer = s.customer(name, f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                              "pending" if n in (9, 17) else "verified")
        if customer.kyc_status == "pending":
            continue
        chk = s.account(customer, "checking", rng.choice(["Checking", "Everyday Checking",
                                                         "Household"]),
                        rng.randint(200000, 800000), rng.choice([0, 0, 25000, 50000, 100000]),
                        opened=customer.member_since)
        accounts = [chk]
        if rng.random() < 0.6:
            accounts.append(s.account(customer, "savings", rng.choice(["Savings", "Vacation",
                                                                      "Emergency Fund"]),
                                      rng.randint(50000, 4000000), opened=customer.member_since))
        biller, category = rng.choice(_BILLERS)
        payee = s.payee(customer, biller, str(rng.randint(10**7, 10**10)),
                        rng.choice(["121000248", "026009593", "322271627", "111000025"]))
        pay = rng.randint(180000, 720000)
        for month in ("01", "02"):
            s.post(chk, f"2026-{month}-{rng.randint(25, 28)}T06:00", pay,
                   f"Payroll {rng.choice(_EMPLOYERS)}", "income")
        for _ in range(rng.randint(3, 6)):
            merchant, cat, low, high = rng.choice(_SPENDING)
            moment = datetime(2026, 1, 5) + timedelta(minutes=rng.randint(0, 62 * 24 * 60))
            s.post(chk, f"{moment:%Y-%m-%dT%H:%M}", -rng.randint(low, high), merchant, cat)
        s.transfer(chk, f"2026-02-{rng.randint(2, 26):02d}T09:00", rng.randint(4000, 160000),
                   category.title(), payee=payee)
        if len(accounts) == 2 and rng.random() < 0.5:
            s.transfer(chk, f"2026-03-0{rng.randint(1, 8)}T20:00",
                       rng.randint(5, 50) * 1000, "Saving", target=accounts[1])
        if n % 4 == 0:
            s.transfer(chk, f"2026-03-{rng.randint(12, 30)}T08:00", rng.randint(4000, 90000),
                       category.title(), payee=payee, status="scheduled")
    frozen = state.accounts["AC1012"]
    frozen.status, frozen.freeze_reason = "frozen", "Card reported stolen"
    s.finish()
    return state


def _cents(amount: float) -> int:
    if amount <= 0:
        raise ToolError("Amount must be positive.")
    cents = round(amount * 100)
    if abs(cents - amount * 100) > 1e-6:
        raise ToolError("Amounts can have at most two decimals.")
    return cents


def _dollars(cents: int) -> float:
    return round(cents / 100, 2)


# -- what the tools return ---------------------------------------------------------------


class AccountView(TypedDict):
    """An account as the tools show it: money in dollars, owner's name resolved."""

    id: str
    customer_id: str
    owner: Annotated[str, Field(description="Name of the owning customer")]
    type: AccountType
    nickname: str
    balance: Annotated[float, Field(description="Balance in dollars (negative if overdrawn)")]
    overdraft_limit: Annotated[float, Field(description="Overdraft allowed, in dollars")]
    available: Annotated[float, Field(description="Balance plus overdraft, dollars, at least 0")]
    status: Literal["active", "frozen"]
    freeze_reason: Annotated[str, Field(description="Why the account is frozen; empty if active")]
    opened_on: Day


class TransactionView(TypedDict):
    """One posted transaction, amounts in dollars."""

    id: str
    posted_at: Timestamp
    amount: Annotated[float, Field(description="Signed dollars: credits positive, debits negative")]
    description: str
    category: str
    balance_after: Annotated[float, Field(description="Account balance after posting, dollars")]
    transfer_id: Annotated[str | None, Field(description="Transfer that caused it, if any")]


class TransferView(TypedDict):
    """A transfer or bill payment, amount in dollars."""

    id: str
    from_account_id: str
    to_account_id: Annotated[str | None, Field(description="Target account (internal transfer)")]
    payee_id: Annotated[str | None, Field(description="Target payee (bill payment)")]
    payee_name: Annotated[str | None, Field(description="Name of the payee, if a bill payment")]
    amount: Annotated[float, Field(description="Amount in dollars")]
    memo: str
    status: Literal["completed", "scheduled", "cancelled"]
    execute_on: Annotated[Day, Field(description="Day the money moves (or moved)")]


class Statement(TypedDict):
    """A month's statement of one account."""

    account_id: str
    month: Annotated[str, Field(description="YYYY-MM")]
    opening_balance: Annotated[float, Field(description="Balance at the month's start, dollars")]
    closing_balance: Annotated[float, Field(description="Balance at the end of the month, dollars")]
    total_in: Annotated[float, Field(description="Sum of credits in the month, dollars")]
    total_out: Annotated[float, Field(description="Sum of debits in the month, dollars (positive)")]
    transactions: list[TransactionView]


class TransferReceipt(TypedDict):
    """An internal transfer and both balances after it."""

    transfer: TransferView
    from_balance: Annotated[float, Field(description="Source account balance after, dollars")]
    to_balance: Annotated[float, Field(description="Target account balance after, dollars")]


class PaymentReceipt(TypedDict):
    """A bill payment and the paying account's balance after it."""

    transfer: TransferView
    balance: Annotated[float, Field(description="Paying account balance after, dollars")]


class BankLedger(Environment):
    """A credit union's teller console: customers, accounts, transfers and bill payments."""

    name = "bank_ledger"
    description = ("A credit union's back-office ledger: look up customers and accounts, read "
                   "transactions and statements, move money, pay and schedule bills, and "
                   "manage payees, overdraft limits and account freezes.")
    domain = "finance"
    State = BankLedgerState
    state: BankLedgerState

    @classmethod
    def default_state(cls, seed: int = 0) -> BankLedgerState:
        """22 customers, ~35 accounts, their payees and two months of transactions and
        transfers up to Monday 2026-03-09."""
        return _seeded_state(seed)

    # -- helpers ----------------------------------------------------------------------

    def _customer(self, customer_id: str) -> Customer:
        if customer_id not in self.state.customers:
            raise ToolError(f"Customer {customer_id!r} not found.")
        return self.state.customers[customer_id]

    def _account(self, account_id: str) -> Account:
        if account_id not in self.state.accounts:
            raise ToolError(f"Account {account_id!r} not found.")
        return self.state.accounts[account_id]

    def _active(self, account_id: str) -> Account:
        account = self._account(account_id)
        if account.status == "frozen":
            raise ToolError(f"Account {account.id} is frozen ({account.freeze_reason}); no "
                            "money can move in or out.")
        return account

    def _payee(self, payee_id: str) -> Payee:
        if payee_id not in self.state.payees:
            raise ToolError(f"Payee {payee_id!r} not found.")
        return self.state.payees[payee_id]

    def _debit_check(self, account: Account, cents: int) -> None:
        available = account.balance_cents + account.overdraft_limit_cents
        if cents > available:
            raise ToolError(f"Insufficient funds in {account.id} ({account.nickname}): "
                            f"available {_dollars(available):.2f}, requested "
                            f"{_dollars(cents):.2f}.")
        today = current_day(self.state).isoformat()
        sent_today = sum(t.amount_cents for t in self.state.transfers.values()
                         if t.from_account_id == account.id and t.status == "completed"
                         and t.execute_on == today)
        if sent_today + cents > DAILY_OUTGOING_LIMIT:
            raise ToolError(f"Daily outgoing limit of {_dollars(DAILY_OUTGOING_LIMIT):.2f} "
                            f"exceeded for {account.id} ({_dollars(sent_today):.2f} already "
                            "sent today).")

    def _post(self, account: Account, cents: int, description: str, category: str,
              transfer_id: str) -> Transaction:
        account.balance_cents += cents
        txid = f"TX{self.state.next_transaction_id:05d}"
        self.state.next_transaction_id += 1
        tx = Transaction(id=txid, account_id=account.id, posted_at=self.state.now,
                         amount_cents=cents, description=description, category=category,
                         balance_after_cents=account.balance_cents, transfer_id=transfer_id)
        self.state.transactions[txid] = tx
        return tx

    def _new_transfer(self, **fields: Any) -> Transfer:
        tid = f"TR{self.state.next_transfer_id:04d}"
        self.state.next_transfer_id += 1
        transfer = Transfer(id=tid, created_at=self.state.now, **fields)
        self.state.transfers[tid] = transfer
        return transfer

    def _account_view(self, account: Account) -> AccountView:
        return {"id": account.id, "customer_id": account.customer_id,
                "owner": self.state.customers[account.customer_id].name,
                "type": account.type, "nickname": account.nickname,
                "balance": _dollars(account.balance_cents),
                "overdraft_limit": _dollars(account.overdraft_limit_cents),
                "available": _dollars(max(0, account.balance_cents
                                          + account.overdraft_limit_cents)),
                "status": account.status, "freeze_reason": account.freeze_reason,
                "opened_on": account.opened_on}

    @staticmethod
    def _tx_view(tx: Transaction) -> TransactionView:
        return {"id": tx.id, "posted_at": tx.posted_at, "amount": _dollars(tx.amount_cents),
                "description": tx.description, "category": tx.category,
                "balance_after": _dollars(tx.balance_after_cents), "transfer_id": tx.transfer_id}

    def _transfer_view(self, transfer: Transfer) -> TransferView:
        payee = self.state.payees.get(transfer.payee_id or "")
        return {"id": transfer.id, "from_account_id": transfer.from_account_id,
                "to_account_id": transfer.to_account_id, "payee_id": transfer.payee_id,
                "payee_name": payee.name if payee else None,
                "amount": _dollars(transfer.amount_cents), "memo": transfer.memo,
                "status": transfer.status, "execute_on": transfer.execute_on}

    # -- read tools -------------------------------------------------------------------

    @tool
    def find_customer(self, query: str) -> list[Customer]:
        """Find customers by part of their name, email address or phone number.

        Args:
            query: Text to look for (case-insensitive), e.g. "nair" or "555 1037".

        Returns:
            Matching customers with id, name, contact details, KYC status and member since.
        """
        q = query.strip().lower()
        if not q:
            raise ToolError("Query must not be empty.")
        return [c for c in self.state.customers.values()
                if q in c.name.lower() or q in c.email.lower() or q in c.phone]

    @tool
    def list_accounts(self, customer_id: str) -> list[AccountView]:
        """List a customer's accounts with balances and status.

        Args:
            customer_id: The customer, e.g. "C1001".

        Returns:
            Accounts with id, type, nickname, balance, overdraft limit, available funds
            (balance plus overdraft) and status.
        """
        self._customer(customer_id)
        return [self._account_view(a) for a in self.state.accounts.values()
                if a.customer_id == customer_id]

    @tool
    def get_account(self, account_id: str) -> AccountView:
        """Show one account: owner, balance, overdraft limit, available funds and status.

        Args:
            account_id: The account, e.g. "AC1001".

        Returns:
            The account.
        """
        return self._account_view(self._account(account_id))

    @tool
    def list_transactions(self, account_id: str, start_date: str | None = None,
                          end_date: str | None = None, query: str = "",
                          limit: int = 20) -> list[TransactionView]:
        """List an account's posted transactions, newest first.

        Args:
            account_id: The account.
            start_date: Earliest posting day, YYYY-MM-DD.
            end_date: Latest posting day, YYYY-MM-DD.
            query: Only transactions whose description contains this text.
            limit: Most transactions to return (1-100).

        Returns:
            Transactions with id, time, signed amount (debits negative), description,
            category, balance after and the transfer that caused it, if any.
        """
        self._account(account_id)
        if not 1 <= limit <= 100:
            raise ToolError("limit must be between 1 and 100.")
        first = _parse_day(start_date) if start_date else None
        last = _parse_day(end_date) if end_date else None
        txs = [t for t in self.state.transactions.values() if t.account_id == account_id
               and (first is None or t.posted_at[:10] >= first.isoformat())
               and (last is None or t.posted_at[:10] <= last.isoformat())
               and query.lower() in t.description.lower()]
        txs.sort(key=lambda t: (t.posted_at, t.id), reverse=True)
        return [self._tx_view(t) for t in txs[:limit]]

    @tool
    def get_statement(self, account_id: str, month: str) -> Statement:
        """Build a monthly statement: opening and closing balance, money in and out.

        Args:
            account_id: The account.
            month: The month, YYYY-MM (the current month gives a statement to date).

        Returns:
            Opening balance, closing balance, total credits, total debits and the month's
            transactions in posting order.
        """
        account = self._account(account_id)
        if not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", month):
            raise ToolError(f"Invalid month {month!r}: expected YYYY-MM.")
        if month > self.state.now[:7]:
            raise ToolError(f"No statement for {month} yet (today is {current_day(self.state)}).")
        if month < account.opened_on[:7]:
            raise ToolError(f"Account {account.id} was opened on {account.opened_on}.")
        txs = sorted((t for t in self.state.transactions.values()
                      if t.account_id == account_id), key=lambda t: (t.posted_at, t.id))
        later = sum(t.amount_cents for t in txs if t.posted_at[:7] > month)
        inside = [t for t in txs if t.posted_at[:7] == month]
        closing = account.balance_cents - later
        opening = closing - sum(t.amount_cents for t in inside)
        return {"account_id": account.id, "month": month,
                "opening_balance": _dollars(opening), "closing_balance": _dollars(closing),
                "total_in": _dollars(sum(t.amount_cents for t in inside if t.amount_cents > 0)),
                "total_out": _dollars(-sum(t.amount_cents for t in inside
                                           if t.amount_cents < 0)),
                "transactions": [self._tx_view(t) for t in inside]}

    @tool
    def list_payees(self, customer_id: str) -> list[Payee]:
        """List the payees a customer can pay bills to.

        Args:
            customer_id: The customer.

        Returns:
            Payees with id, name, account and routing number, and nickname.
        """
        self._customer(customer_id)
        return [p for p in self.state.payees.values() if p.customer_id == customer_id]

    @tool
    def list_transfers(self, account_id: str,
                       status: Literal["completed", "scheduled", "cancelled"] | None = None
                       ) -> list[TransferView]:
        """List transfers and bill payments into or out of an account.

        Args:
            account_id: The account.
            status: Only transfers with this status.

        Returns:
            Transfers with id, accounts or payee, amount, memo, status and execution day.
        """
        self._account(account_id)
        return [self._transfer_view(t) for t in self.state.transfers.values()
                if account_id in (t.from_account_id, t.to_account_id)
                and (status is None or t.status == status)]

    # -- write tools ------------------------------------------------------------------

    @tool(write=True)
    def transfer_funds(self, from_account_id: str, to_account_id: str, amount: float,
                       memo: str = "") -> TransferReceipt:
        """Move money now from one account at this credit union to another.

        Args:
            from_account_id: Account to debit.
            to_account_id: Account to credit.
            amount: Dollars, positive, at most two decimals.
            memo: Note shown on the transfer.

        Returns:
            The completed transfer and both new balances.
        """
        source, target = self._active(from_account_id), self._active(to_account_id)
        if source.id == target.id:
            raise ToolError("Choose two different accounts.")
        cents = _cents(amount)
        self._debit_check(source, cents)
        transfer = self._new_transfer(from_account_id=source.id, to_account_id=target.id,
                                      amount_cents=cents, memo=memo, status="completed",
                                      execute_on=current_day(self.state).isoformat())
        self._post(source, -cents, f"Transfer to {target.nickname}", "transfer", transfer.id)
        self._post(target, cents, f"Transfer from {source.nickname}", "transfer", transfer.id)
        return {"transfer": self._transfer_view(transfer),
                "from_balance": _dollars(source.balance_cents),
                "to_balance": _dollars(target.balance_cents)}

    @tool(write=True)
    def pay_payee(self, from_account_id: str, payee_id: str, amount: float, memo: str = "",
                  pay_on: str | None = None) -> PaymentReceipt:
        """Pay a bill from a checking account to one of its owner's payees, now or later.

        A payment dated today is made at once (funds are checked now); a later date
        schedules it without moving money yet.

        Args:
            from_account_id: The customer's checking account.
            payee_id: One of the same customer's payees.
            amount: Dollars, positive, at most two decimals.
            memo: Note for the payee, e.g. an invoice number.
            pay_on: Day to pay, YYYY-MM-DD, today or up to a year ahead; omit for today.

        Returns:
            The transfer (status completed or scheduled) and the account balance.
        """
        account = self._active(from_account_id)
        payee = self._payee(payee_id)
        if account.type != "checking":
            raise ToolError(f"Bill payments must come from a checking account; {account.id} "
                            f"is {account.type}.")
        if payee.customer_id != account.customer_id:
            raise ToolError(f"Payee {payee.id} ({payee.name}) belongs to another customer.")
        cents = _cents(amount)
        day = _parse_day(pay_on) if pay_on else current_day(self.state)
        if day < current_day(self.state):
            raise ToolError(f"Cannot pay on {day}: the date is in the past.")
        if (day - current_day(self.state)).days > MAX_SCHEDULE_DAYS:
            raise ToolError("Payments can be scheduled at most a year ahead.")
        scheduled = day > current_day(self.state)
        if not scheduled:
            self._debit_check(account, cents)
        transfer = self._new_transfer(from_account_id=account.id, payee_id=payee.id,
                                      amount_cents=cents, memo=memo,
                                      status="scheduled" if scheduled else "completed",
                                      execute_on=day.isoformat())
        if not scheduled:
            self._post(account, -cents, f"Bill payment to {payee.name}", "bills", transfer.id)
        return {"transfer": self._transfer_view(transfer),
                "balance": _dollars(account.balance_cents)}

    @tool(write=True)
    def cancel_transfer(self, transfer_id: str) -> TransferView:
        """Cancel a scheduled payment before it executes.

        Args:
            transfer_id: The scheduled transfer, e.g. "TR0005".

        Returns:
            The cancelled transfer.
        """
        transfer = self.state.transfers.get(transfer_id)
        if transfer is None:
            raise ToolError(f"Transfer {transfer_id!r} not found.")
        if transfer.status != "scheduled":
            raise ToolError(f"Transfer {transfer_id} is {transfer.status}; only scheduled "
                            "transfers can be cancelled.")
        transfer.status = "cancelled"
        return self._transfer_view(transfer)

    @tool(write=True)
    def add_payee(self, customer_id: str, name: str, account_number: str,
                  routing_number: str, nickname: str = "") -> Payee:
        """Save an outside person or company a customer wants to pay.

        Args:
            customer_id: The customer.
            name: The payee's name as on their bank account.
            account_number: Their account number, 4-17 digits.
            routing_number: Their bank's 9-digit routing number.
            nickname: A short name the customer uses for them.

        Returns:
            The new payee.
        """
        customer = self._customer(customer_id)
        if not name.strip():
            raise ToolError("Payee name must not be empty.")
        if not re.fullmatch(r"\d{4,17}", account_number):
            raise ToolError(f"Invalid account number {account_number!r}: use 4-17 digits.")
        if not re.fullmatch(r"\d{9}", routing_number):
            raise ToolError(f"Invalid routing number {routing_number!r}: use 9 digits.")
        for payee in self.state.payees.values():
            if payee.customer_id == customer.id and payee.account_number == account_number \
                    and payee.routing_number == routing_number:
                raise ToolError(f"{customer.name} already has this account as payee "
                                f"{payee.id} ({payee.name}).")
        pid = f"P{self.state.next_payee_id:03d}"
        self.state.next_payee_id += 1
        payee = Payee(id=pid, customer_id=customer.id, name=name.strip(),
                      account_number=account_number, routing_number=routing_number,
                      nickname=nickname)
        self.state.payees[pid] = payee
        return payee

    @tool(write=True)
    def set_overdraft_limit(self, account_id: str, limit: float) -> AccountView:
        """Change how far a checking account may go below zero.

        Args:
            account_id: A checking account.
            limit: New overdraft limit in dollars, 0 to 2500 (0 turns overdraft off).

        Returns:
            The updated account.
        """
        account = self._account(account_id)
        if account.type != "checking":
            raise ToolError(f"Only checking accounts have overdraft; {account.id} is "
                            f"{account.type}.")
        if not 0 <= limit <= _dollars(MAX_OVERDRAFT):
            raise ToolError(f"Overdraft limit must be between 0 and "
                            f"{_dollars(MAX_OVERDRAFT):.2f}.")
        cents = round(limit * 100)
        if cents == account.overdraft_limit_cents:
            raise ToolError(f"The overdraft limit of {account.id} is already {limit:.2f}.")
        if account.balance_cents + cents < 0:
            raise ToolError(f"Account {account.id} is overdrawn by "
                            f"{_dollars(-account.balance_cents):.2f}; the limit cannot be "
                            "lower than that.")
        account.overdraft_limit_cents = cents
        return self._account_view(account)

    @tool(write=True)
    def freeze_account(self, account_id: str, reason: str) -> AccountView:
        """Freeze an account so no money can move in or out (e.g. a lost card or fraud).

        Args:
            account_id: The account.
            reason: Why it is frozen; kept on the account.

        Returns:
            The updated account.
        """
        account = self._account(account_id)
        if not reason.strip():
            raise ToolError("Give a reason for the freeze.")
        if account.status == "frozen":
            raise ToolError(f"Account {account.id} is already frozen "
                            f"({account.freeze_reason}).")
        account.status, account.freeze_reason = "frozen", reason.strip()
        return self._account_view(account)

    @tool(write=True)
    def unfreeze_account(self, account_id: str) -> AccountView:
        """Lift a freeze so the account can be used again.

        Args:
            account_id: A frozen account.

        Returns:
            The updated account.
        """
        account = self._account(account_id)
        if account.status != "frozen":
            raise ToolError(f"Account {account.id} is not frozen.")
        account.status, account.freeze_reason = "active", ""
        return self._account_view(account)

    @tool(write=True)
    def open_account(self, customer_id: str, account_type: AccountType,
                     nickname: str = "") -> AccountView:
        """Open a new, empty account for a verified customer.

        Args:
            customer_id: The customer.
            account_type: "checking" or "savings".
            nickname: Name shown for the account; defaults to the type.

        Returns:
            The new account.
        """
        customer = self._customer(customer_id)
        if customer.kyc_status != "verified":
            raise ToolError(f"{customer.name} has not completed identity verification (KYC "
                            f"{customer.kyc_status}); accounts can only be opened once it "
                            "is verified.")
        held = [a for a in self.state.accounts.values() if a.customer_id == customer.id]
        if len(held) >= MAX_OPEN_ACCOUNTS:
            raise ToolError(f"{customer.name} already has {MAX_OPEN_ACCOUNTS} accounts, the "
                            "most allowed.")
        aid = f"AC{self.state.next_account_id}"
        self.state.next_account_id += 1
        account = Account(id=aid, customer_id=customer.id, type=account_type,
                          nickname=nickname.strip() or account_type.title(),
                          opened_on=current_day(self.state).isoformat())
        self.state.accounts[aid] = account
        return self._account_view(account)


def _parse_day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ToolError(f"Invalid date {value!r}: expected YYYY-MM-DD.") from None
