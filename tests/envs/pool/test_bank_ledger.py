"""Bank ledger environment: every tool's success and failure paths, atomic failed writes,
ledger consistency, snapshot round-trips and a deterministic seed."""

from __future__ import annotations

import json

import pytest

from envs.pool.bank_ledger import BankLedger
from tests.envs.pool.helpers import fails, ok


@pytest.fixture
def env() -> BankLedger:
    return BankLedger()




def assert_ledger_consistent(env: BankLedger) -> None:
    """Every account's balance is the running total of its transactions."""
    state = env.state
    for account in state.accounts.values():
        txs = sorted((t for t in state.transactions.values() if t.account_id == account.id),
                     key=lambda t: (t.posted_at, t.id))
        if txs:
            assert txs[-1].balance_after_cents == account.balance_cents
        for before, after in zip(txs, txs[1:], strict=False):
            assert after.balance_after_cents == before.balance_after_cents + after.amount_cents


def test_default_state_is_deterministic_and_rich() -> None:
    state = BankLedger.default_state()
    assert state == BankLedger.default_state()
    assert BankLedger.default_state(seed=7) != state
    for entity in (state.customers, state.accounts, state.transactions, state.payees,
                   state.transfers):
        assert len(entity) >= 20
    assert all(a.customer_id in state.customers for a in state.accounts.values())
    assert all(p.customer_id in state.customers for p in state.payees.values())
    assert all(t.account_id in state.accounts for t in state.transactions.values())
    assert_ledger_consistent(BankLedger(state))


def test_metadata() -> None:
    assert BankLedger.name == "bank_ledger" and BankLedger.domain == "finance"
    specs = {s.name: s for s in BankLedger.tool_specs()}
    assert 6 <= len(specs) <= 15
    assert not specs["get_statement"].write and specs["pay_payee"].write


def test_snapshot_round_trip(env: BankLedger) -> None:
    ok(env, "transfer_funds", from_account_id="AC1002", to_account_id="AC1001", amount=100)
    snap = env.snapshot()
    restored = BankLedger()
    restored.restore(json.loads(json.dumps(snap)))
    assert restored.snapshot() == snap and restored.state == env.state
    call = {"from_account_id": "AC1001", "payee_id": "P001", "amount": 12.5}
    assert restored.call("pay_payee", call) == env.call("pay_payee", call)


def test_find_customer(env: BankLedger) -> None:
    assert [c["id"] for c in ok(env, "find_customer", query="nair")] == ["C1001"]
    assert [c["name"] for c in ok(env, "find_customer", query="555 1037")] == ["Jamal Wright"]
    fails(env, "find_customer", "Query must not be empty", query=" ")


def test_accounts(env: BankLedger) -> None:
    accounts = ok(env, "list_accounts", customer_id="C1001")
    assert [(a["id"], a["type"], a["balance"]) for a in accounts] == [
        ("AC1001", "checking", 412.8), ("AC1002", "savings", 8939.0)]
    frozen = ok(env, "get_account", account_id="AC1012")
    assert frozen["status"] == "frozen" and frozen["owner"] == "Ana Ferreira"
    jamal = ok(env, "get_account", account_id="AC1003")
    assert jamal["available"] == pytest.approx(jamal["balance"] + jamal["overdraft_limit"])
    fails(env, "list_accounts", "Customer 'C9999' not found", customer_id="C9999")
    fails(env, "get_account", "Account 'AC0001' not found", account_id="AC0001")


def test_list_transactions(env: BankLedger) -> None:
    txs = ok(env, "list_transactions", account_id="AC1001", limit=3)
    assert [t["description"] for t in txs] == ["Blue Bottle Coffee", "Amazon", "Shell"]
    assert txs[0]["amount"] == -9.75 and txs[0]["balance_after"] == 412.8
    rent = ok(env, "list_transactions", account_id="AC1001", query="martin",
              start_date="2026-02-01", end_date="2026-02-28")
    assert [(t["posted_at"], t["amount"]) for t in rent] == [("2026-02-01T09:00", -1850.0)]
    fails(env, "list_transactions", "limit must be between 1 and 100", account_id="AC1001",
          limit=500)
    fails(env, "list_transactions", "Invalid date '02/01/2026'", account_id="AC1001",
          start_date="02/01/2026")
    fails(env, "list_transactions", "Account 'AC42' not found", account_id="AC42")


def test_get_statement(env: BankLedger) -> None:
    feb = ok(env, "get_statement", account_id="AC1001", month="2026-02")
    assert (feb["opening_balance"], feb["closing_balance"]) == (3098.9, 4076.94)
    assert feb["total_in"] == 4850.0 and feb["total_out"] == pytest.approx(3871.96)
    assert ok(env, "get_statement", account_id="AC1001", month="2026-03")[
        "closing_balance"] == 412.8
    fails(env, "get_statement", "Invalid month '2026-2'", account_id="AC1001", month="2026-2")
    fails(env, "get_statement", "No statement for 2026-04 yet (today is 2026-03-09)",
          account_id="AC1001", month="2026-04")
    new = ok(env, "open_account", customer_id="C1001", account_type="savings")
    fails(env, "get_statement", f"Account {new['id']} was opened on 2026-03-09",
          account_id=new["id"], month="2026-02")


def test_payees_and_transfers_lists(env: BankLedger) -> None:
    assert [p["name"] for p in ok(env, "list_payees", customer_id="C1001")] == [
        "Martin Reyes", "Pacific Gas and Electric", "Bayview Internet"]
    scheduled = ok(env, "list_transfers", account_id="AC1001", status="scheduled")
    assert [(t["id"], t["payee_name"], t["amount"]) for t in scheduled] == [
        ("TR0009", "Pacific Gas and Electric", 86.4)]
    assert len(ok(env, "list_transfers", account_id="AC1002")) == 2
    fails(env, "list_payees", "Customer 'C0' not found", customer_id="C0")
    fails(env, "list_transfers", "Account 'AC9' not found", account_id="AC9")


def test_transfer_funds(env: BankLedger) -> None:
    out = ok(env, "transfer_funds", from_account_id="AC1002", to_account_id="AC1001",
             amount=500, memo="Top up")
    assert (out["from_balance"], out["to_balance"]) == (8439.0, 912.8)
    assert out["transfer"]["status"] == "completed" and out["transfer"]["id"] == "TR0038"
    assert_ledger_consistent(env)
    fails(env, "transfer_funds", "Choose two different accounts", from_account_id="AC1001",
          to_account_id="AC1001", amount=1)
    fails(env, "transfer_funds", "Account AC1012 is frozen (Card reported stolen)",
          from_account_id="AC1001", to_account_id="AC1012", amount=1)
    fails(env, "transfer_funds", "Insufficient funds in AC1001 (Everyday Checking): "
          "available 912.80, requested 1000.00", from_account_id="AC1001",
          to_account_id="AC1002", amount=1000)
    fails(env, "transfer_funds", "Amount must be positive", from_account_id="AC1002",
          to_account_id="AC1001", amount=0)
    fails(env, "transfer_funds", "at most two decimals", from_account_id="AC1002",
          to_account_id="AC1001", amount=1.005)
    fails(env, "transfer_funds", "Account 'AC7' not found", from_account_id="AC7",
          to_account_id="AC1001", amount=1)
    ok(env, "transfer_funds", from_account_id="AC1005", to_account_id="AC1004", amount=9000)
    fails(env, "transfer_funds", "Daily outgoing limit of 10000.00 exceeded for AC1005 "
          "(9000.00 already sent today)", from_account_id="AC1005", to_account_id="AC1004",
          amount=1500)


def test_pay_payee(env: BankLedger) -> None:
    fails(env, "pay_payee", "Insufficient funds in AC1001", from_account_id="AC1001",
          payee_id="P003", amount=480)
    paid = ok(env, "pay_payee", from_account_id="AC1001", payee_id="P003", amount=79.99,
              memo="March internet")
    assert paid["transfer"]["status"] == "completed" and paid["balance"] == 332.81
    later = ok(env, "pay_payee", from_account_id="AC1001", payee_id="P001", amount=1850,
               pay_on="2026-04-01", memo="April rent")
    assert later["transfer"]["status"] == "scheduled" and later["balance"] == 332.81
    assert later["transfer"]["execute_on"] == "2026-04-01"
    assert_ledger_consistent(env)
    fails(env, "pay_payee", "Bill payments must come from a checking account; AC1002 is "
          "savings", from_account_id="AC1002", payee_id="P001", amount=1)
    fails(env, "pay_payee", "Payee P004 (State Farm) belongs to another customer",
          from_account_id="AC1001", payee_id="P004", amount=1)
    fails(env, "pay_payee", "Cannot pay on 2026-03-01: the date is in the past",
          from_account_id="AC1001", payee_id="P001", amount=1, pay_on="2026-03-01")
    fails(env, "pay_payee", "at most a year ahead", from_account_id="AC1001",
          payee_id="P001", amount=1, pay_on="2027-06-01")
    fails(env, "pay_payee", "Payee 'P999' not found", from_account_id="AC1001",
          payee_id="P999", amount=1)


def test_cancel_transfer(env: BankLedger) -> None:
    assert ok(env, "cancel_transfer", transfer_id="TR0009")["status"] == "cancelled"
    fails(env, "cancel_transfer", "Transfer TR0009 is cancelled; only scheduled transfers",
          transfer_id="TR0009")
    fails(env, "cancel_transfer", "Transfer TR0005 is completed", transfer_id="TR0005")
    fails(env, "cancel_transfer", "Transfer 'TR9999' not found", transfer_id="TR9999")


def test_add_payee(env: BankLedger) -> None:
    payee = ok(env, "add_payee", customer_id="C1001", name="Brightline Plumbing LLC",
               account_number="40021877", routing_number="121000358", nickname="Plumber")
    assert payee["id"] == "P023"
    fails(env, "add_payee", "Priya Nair already has this account as payee P023",
          customer_id="C1001", name="Brightline", account_number="40021877",
          routing_number="121000358")
    fails(env, "add_payee", "Invalid account number '12-34'", customer_id="C1001",
          name="X", account_number="12-34", routing_number="121000358")
    fails(env, "add_payee", "Invalid routing number '1210'", customer_id="C1001",
          name="X", account_number="1234", routing_number="1210")
    fails(env, "add_payee", "Payee name must not be empty", customer_id="C1001", name="",
          account_number="1234", routing_number="121000358")
    fails(env, "add_payee", "Customer 'C5' not found", customer_id="C5", name="X",
          account_number="1234", routing_number="121000358")


def test_set_overdraft_limit(env: BankLedger) -> None:
    assert ok(env, "set_overdraft_limit", account_id="AC1001", limit=500)[
        "available"] == 912.8
    ok(env, "pay_payee", from_account_id="AC1001", payee_id="P003", amount=800)
    fails(env, "set_overdraft_limit", "Account AC1001 is overdrawn by 387.20",
          account_id="AC1001", limit=300)
    fails(env, "set_overdraft_limit", "already 500.00", account_id="AC1001", limit=500)
    fails(env, "set_overdraft_limit", "Only checking accounts have overdraft; AC1002 is "
          "savings", account_id="AC1002", limit=100)
    fails(env, "set_overdraft_limit", "between 0 and 2500.00", account_id="AC1001",
          limit=3000)


def test_freeze_and_unfreeze(env: BankLedger) -> None:
    assert ok(env, "freeze_account", account_id="AC1001", reason="Lost card")[
        "status"] == "frozen"
    fails(env, "pay_payee", "Account AC1001 is frozen (Lost card)", from_account_id="AC1001",
          payee_id="P003", amount=1)
    fails(env, "freeze_account", "Account AC1001 is already frozen (Lost card)",
          account_id="AC1001", reason="again")
    fails(env, "freeze_account", "Give a reason for the freeze", account_id="AC1002",
          reason=" ")
    assert ok(env, "unfreeze_account", account_id="AC1012")["freeze_reason"] == ""
    fails(env, "unfreeze_account", "Account AC1012 is not frozen", account_id="AC1012")


def test_open_account(env: BankLedger) -> None:
    new = ok(env, "open_account", customer_id="C1001", account_type="savings",
             nickname="Travel fund")
    assert (new["id"], new["balance"], new["nickname"]) == ("AC1033", 0.0, "Travel fund")
    assert ok(env, "open_account", customer_id="C1001", account_type="checking")[
        "nickname"] == "Checking"
    fails(env, "open_account", "Priya Nair already has 4 accounts", customer_id="C1001",
          account_type="savings")
    fails(env, "open_account", "Zoe Martin has not completed identity verification",
          customer_id="C1009", account_type="checking")
    fails(env, "open_account", "argument 'account_type'", customer_id="C1002",
          account_type="brokerage")
