"""The expense_reports environment: every tool's success path and business-rule failures."""

from __future__ import annotations

import json

import pytest

from envs.pool import pool_classes
from envs.pool.expense_reports import ExpenseReports
from tests.envs.pool.helpers import fails, ok


@pytest.fixture
def env() -> ExpenseReports:
    return ExpenseReports()




def test_registered_with_metadata() -> None:
    assert pool_classes()["expense_reports"] is ExpenseReports
    assert ExpenseReports.domain == "finance" and ExpenseReports.description
    writes = {s.name for s in ExpenseReports.tool_specs() if s.write}
    assert writes == {"add_expense_item", "update_expense_item", "attach_receipt",
                      "create_report", "add_items_to_report", "remove_item_from_report",
                      "submit_report", "review_report", "reimburse_report"}
    assert 6 <= len(ExpenseReports.tool_specs()) <= 15


def test_default_state_is_deterministic_and_sized() -> None:
    a, b = ExpenseReports.default_state(), ExpenseReports.default_state()
    assert a == b and a.seed == 0
    assert min(len(a.employees), len(a.items), len(a.reports)) >= 20
    for report in a.reports.values():
        assert report.employee_id in a.employees
        assert all(a.items[i].report_id == report.id for i in report.item_ids)
    assert all(i.date <= a.now[:10] for i in a.items.values())


def test_snapshot_round_trip(env: ExpenseReports) -> None:
    ok(env, "create_report", employee_id="E-103", title="Trip", item_ids=["X-5009"])
    snap = env.snapshot()
    restored = ExpenseReports()
    restored.restore(json.loads(json.dumps(snap)))
    assert restored.snapshot() == snap and restored.state == env.state
    call = {"report_id": "R-337"}
    assert restored.call("submit_report", call) == env.call("submit_report", call)


def test_find_employee_and_policy(env: ExpenseReports) -> None:
    assert [e["id"] for e in ok(env, "find_employee", query="karen")] == ["E-103"]
    assert len(ok(env, "find_employee", query="finance")) == 3
    assert ok(env, "find_employee", query="zzz") == []
    meals = ok(env, "get_expense_policy", category="meals")
    assert meals == [{"category": "meals", "limit_per_item": 75.0,
                      "receipt_required_over": 25.0}]
    assert len(ok(env, "get_expense_policy")) == 8


def test_list_expense_items(env: ExpenseReports) -> None:
    items = ok(env, "list_expense_items", employee_id="E-104")
    assert [i["id"] for i in items] == ["X-5011", "X-5012", "X-5013", "X-5014"]
    unreported = ok(env, "list_expense_items", employee_id="E-104", unreported_only=True)
    assert [i["id"] for i in unreported] == ["X-5014"]
    assert unreported[0]["policy_violations"] == [
        "Item X-5014 (Topgolf, $418.02) needs a receipt."]
    fails(env, "list_expense_items", "Employee 'E-1' not found.", employee_id="E-1")


def test_get_and_list_reports(env: ExpenseReports) -> None:
    report = ok(env, "get_report", report_id="R-303")
    assert report["total"] == 1255.09 and report["approver_name"] == "Tom Reyes"
    assert report["status"] == "rejected" and len(report["items"]) == 3
    fails(env, "get_report", "Report 'R-1' not found.", report_id="R-1")
    waiting = ok(env, "list_reports", approver_id="E-119", status="submitted")
    assert [r["id"] for r in waiting] == ["R-334", "R-335"]
    assert [r["id"] for r in ok(env, "list_reports", employee_id="E-104")] == ["R-305", "R-306"]
    assert len(ok(env, "list_reports")) == 36


def test_add_expense_item(env: ExpenseReports) -> None:
    item = ok(env, "add_expense_item", employee_id="E-103", expense_date="2026-06-11",
              category="meals", merchant="Sweetgreen", amount=82.5,
              description="Lunch with Acme buyers")
    assert item["id"] == "X-5091" and item["report_id"] is None
    assert item["policy_violations"] == [
        "Item X-5091 (Sweetgreen, $82.50) exceeds the meals limit of $75.00.",
        "Item X-5091 (Sweetgreen, $82.50) needs a receipt."]
    base = {"employee_id": "E-103", "expense_date": "2026-06-11", "category": "meals",
            "merchant": "Sweetgreen", "amount": 20.0}
    fails(env, "add_expense_item", "Expense date 2026-06-13 is in the future.",
          **{**base, "expense_date": "2026-06-13"})
    fails(env, "add_expense_item", "Invalid date 'April 3'; use YYYY-MM-DD.",
          **{**base, "expense_date": "April 3"})
    fails(env, "add_expense_item", "Amount must be positive.", **{**base, "amount": 0})
    fails(env, "add_expense_item", "Employee 'E-999' not found.",
          **{**base, "employee_id": "E-999"})


def test_update_expense_item(env: ExpenseReports) -> None:
    item = ok(env, "update_expense_item", item_id="X-5057", amount=234.42)
    assert item["amount"] == 234.42
    assert item["policy_violations"] == ["Item X-5057 (Staples, $234.42) needs a receipt."]
    fails(env, "update_expense_item", "Expense item X-5018 is on report R-308, which is "
          "submitted; it can no longer be changed.", item_id="X-5018", amount=10.0)
    fails(env, "update_expense_item", "No changes given for expense item X-5057.",
          item_id="X-5057", amount=234.42)
    fails(env, "update_expense_item", "Amount must be positive.", item_id="X-5057", amount=-1)
    fails(env, "update_expense_item", "Expense item 'X-1' not found.", item_id="X-1",
          merchant="Staples")


def test_attach_receipt(env: ExpenseReports) -> None:
    item = ok(env, "attach_receipt", item_id="X-5014", receipt_file="topgolf_0328.pdf")
    assert item["receipt_file"] == "topgolf_0328.pdf" and item["policy_violations"] == []
    fails(env, "attach_receipt", "Expense item X-5014 already has a receipt "
          "(topgolf_0328.pdf).", item_id="X-5014", receipt_file="again.pdf")
    fails(env, "attach_receipt", "is on report R-309, which is reimbursed",
          item_id="X-5019", receipt_file="r.pdf")
    fails(env, "attach_receipt", "Expense item 'X-0' not found.", item_id="X-0",
          receipt_file="r.pdf")


def test_create_report(env: ExpenseReports) -> None:
    report = ok(env, "create_report", employee_id="E-103", title="Portland client visit",
                item_ids=["X-5009", "X-5010"])
    assert report["id"] == "R-337" and report["status"] == "draft"
    assert report["total"] == 119.57 and env.state.items["X-5009"].report_id == "R-337"
    assert ok(env, "create_report", employee_id="E-103", title="Empty")["items"] == []
    fails(env, "create_report", "Expense item X-5014 belongs to another employee.",
          employee_id="E-103", title="T", item_ids=["X-5014"])
    fails(env, "create_report", "Expense item X-5009 is already on report R-337.",
          employee_id="E-103", title="T", item_ids=["X-5009"])
    fails(env, "create_report", "Report title must not be empty.", employee_id="E-103",
          title=" ")
    fails(env, "create_report", "Employee 'E-0' not found.", employee_id="E-0", title="T")


def test_add_and_remove_items(env: ExpenseReports) -> None:
    report = ok(env, "add_items_to_report", report_id="R-304", item_ids=["X-5009"])
    assert [i["id"] for i in report["items"]] == ["X-5008", "X-5009"]
    fails(env, "add_items_to_report", "No expense items given.", report_id="R-304",
          item_ids=[])
    fails(env, "add_items_to_report", "Report R-308 is submitted; only draft or rejected "
          "reports can be edited.", report_id="R-308", item_ids=["X-5023"])
    fails(env, "add_items_to_report", "Report 'R-9' not found.", report_id="R-9",
          item_ids=["X-5010"])
    report = ok(env, "remove_item_from_report", report_id="R-304", item_id="X-5008")
    assert [i["id"] for i in report["items"]] == ["X-5009"]
    assert env.state.items["X-5008"].report_id is None
    fails(env, "remove_item_from_report", "Expense item X-5008 is not on report R-304.",
          report_id="R-304", item_id="X-5008")
    fails(env, "remove_item_from_report", "Report R-309 is reimbursed", report_id="R-309",
          item_id="X-5019")


def test_submit_report(env: ExpenseReports) -> None:
    report = ok(env, "submit_report", report_id="R-305")
    assert report["status"] == "submitted" and report["approver_id"] == "E-102"
    assert report["submitted_at"] == "2026-06-12T16:00:00"
    fails(env, "submit_report", "Report R-305 is submitted and cannot be submitted.",
          report_id="R-305")
    # resubmitting a rejected report clears the old decision
    again = ok(env, "submit_report", report_id="R-303")
    assert again["status"] == "submitted" and again["decision_note"] is None
    ok(env, "create_report", employee_id="E-106", title="Return flight", item_ids=["X-5022"])
    fails(env, "submit_report", "Report R-337 cannot be submitted: Item X-5022 (Delta Air "
          "Lines, $599.06) needs a receipt.", report_id="R-337")
    ok(env, "create_report", employee_id="E-106", title="Nothing yet")
    fails(env, "submit_report", "Report R-338 has no expense items.", report_id="R-338")
    fails(env, "submit_report", "Report 'R-0' not found.", report_id="R-0")


def test_submit_rejects_stale_items_and_ceo_without_manager(env: ExpenseReports) -> None:
    ok(env, "add_expense_item", employee_id="E-104", expense_date="2025-12-01",
       category="meals", merchant="Chipotle", amount=18.0)
    ok(env, "create_report", employee_id="E-104", title="Old lunch", item_ids=["X-5091"])
    fails(env, "submit_report", "is older than 90 days and can no longer be claimed.",
          report_id="R-337")
    ok(env, "add_expense_item", employee_id="E-101", expense_date="2026-06-08",
       category="meals", merchant="Chipotle", amount=18.0)
    ok(env, "create_report", employee_id="E-101", title="Lunch", item_ids=["X-5092"])
    fails(env, "submit_report", "Diane Mercer has no manager to approve report R-338.",
          report_id="R-338")


def test_review_report(env: ExpenseReports) -> None:
    fails(env, "review_report", "Permission denied: Julia Novak is not the approver of report "
          "R-308 (Tom Reyes is).", report_id="R-308", reviewer_id="E-119", decision="approve")
    fails(env, "review_report", "A note explaining the rejection is required.",
          report_id="R-308", reviewer_id="E-102", decision="reject")
    fails(env, "review_report", "Report R-305 is draft, not awaiting approval.",
          report_id="R-305", reviewer_id="E-102", decision="approve")
    fails(env, "review_report", "Employee 'E-7' not found.", report_id="R-308",
          reviewer_id="E-7", decision="approve")
    fails(env, "review_report", "Report 'R-7' not found.", report_id="R-7",
          reviewer_id="E-102", decision="approve")
    approved = ok(env, "review_report", report_id="R-308", reviewer_id="E-102",
                  decision="approve")
    assert approved["status"] == "approved" and approved["decided_at"] == env.state.now
    rejected = ok(env, "review_report", report_id="R-334", reviewer_id="E-119",
                  decision="reject", note="Hotel folio missing")
    assert rejected["status"] == "rejected" and rejected["decision_note"] == "Hotel folio missing"


def test_reimburse_report(env: ExpenseReports) -> None:
    fails(env, "reimburse_report", "Permission denied: Tom Reyes is not in Finance.",
          report_id="R-306", finance_employee_id="E-102")
    fails(env, "reimburse_report", "Report R-308 is submitted; only approved reports can be "
          "reimbursed.", report_id="R-308", finance_employee_id="E-117")
    ok(env, "review_report", report_id="R-327", reviewer_id="E-116", decision="approve")
    fails(env, "reimburse_report", "Permission denied: Emily Shaw cannot reimburse their own "
          "report.", report_id="R-327", finance_employee_id="E-117")
    paid = ok(env, "reimburse_report", report_id="R-306", finance_employee_id="E-117")
    assert paid["status"] == "reimbursed" and paid["reimbursed_by"] == "E-117"
    assert paid["total"] == 152.11
    fails(env, "reimburse_report", "Report 'R-5' not found.", report_id="R-5",
          finance_employee_id="E-117")
