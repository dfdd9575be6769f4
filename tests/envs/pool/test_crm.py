"""The crm environment: every tool's success path and each business-rule failure."""

from __future__ import annotations

import json

import pytest

from envs.pool import pool_classes
from envs.pool.crm import Crm
from tests.envs.pool.helpers import fails_exactly as fails
from tests.envs.pool.helpers import ok


@pytest.fixture
def env() -> Crm:
    return Crm()




def test_registered_with_metadata() -> None:
    assert pool_classes()["crm"] is Crm
    assert Crm.domain == "commerce" and Crm.description
    writes = {s.name for s in Crm.tool_specs() if s.write}
    assert writes == {"add_contact", "create_deal", "update_deal", "move_deal_stage",
                      "log_activity", "create_quote", "update_quote_status"}
    assert 6 <= len(Crm.tool_specs()) <= 15


def test_default_state_is_deterministic_and_sized() -> None:
    a, b = Crm.default_state(), Crm.default_state()
    assert a == b and a.seed == 0
    assert min(len(a.companies), len(a.contacts), len(a.deals), len(a.activities),
               len(a.quotes)) >= 20
    for deal in a.deals.values():
        assert deal.company_id in a.companies
        assert a.contacts[deal.contact_id or ""].company_id == deal.company_id
    for quote in a.quotes.values():
        assert quote.deal_id in a.deals
        assert quote.total == round(quote.subtotal * (100 - quote.discount_pct) / 100)
    assert a.next_deal_id == len(a.deals) + 1 and a.next_quote_id == len(a.quotes) + 1


def test_snapshot_round_trip(env: Crm) -> None:
    ok(env, "log_activity", deal_id="DL-013", kind="call", summary="Walked through pricing")
    snap = env.snapshot()
    restored = Crm()
    restored.restore(json.loads(json.dumps(snap)))
    assert restored.snapshot() == snap and restored.state == env.state
    call = {"deal_id": "DL-013", "stage": "negotiation"}
    assert restored.call("move_deal_stage", call) == env.call("move_deal_stage", call)
    assert restored.snapshot() == env.snapshot()


def test_search_companies(env: Crm) -> None:
    assert [c["id"] for c in ok(env, "search_companies", query="helios")] == ["CO-013"]
    assert [c["id"] for c in ok(env, "search_companies", industry="Healthcare")] == [
        "CO-004", "CO-020"]
    assert len(ok(env, "search_companies")) == 22
    assert ok(env, "search_companies", query="zzz") == []


def test_get_company(env: Crm) -> None:
    company = ok(env, "get_company", company_id="CO-013")
    assert company["name"] == "Helios Biotech"
    assert [c["id"] for c in company["contacts"]] == ["CT-025", "CT-026"]
    assert [d["id"] for d in company["deals"]] == ["DL-021", "DL-026", "DL-027"]
    fails(env, "get_company", "company 'CO-999' not found", company_id="CO-999")


def test_search_contacts(env: Crm) -> None:
    assert [c["id"] for c in ok(env, "search_contacts", query="Romero")] == [
        "CT-002", "CT-003", "CT-017", "CT-042"]
    assert [c["id"] for c in ok(env, "search_contacts", query="romero",
                                company_id="CO-001")] == ["CT-002"]
    assert [c["id"] for c in ok(env, "search_contacts", query="@orbitfreight.com")] == [
        "CT-033", "CT-034"]
    fails(env, "search_contacts", "company 'CO-404' not found", company_id="CO-404")


def test_add_contact(env: Crm) -> None:
    contact = ok(env, "add_contact", company_id="CO-013", first_name="Ada", last_name="Moss",
                 email="ada.moss@heliosbiotech.com", title="Lab Director")
    assert contact["id"] == "CT-045" and env.state.next_contact_id == 46
    assert env.state.contacts["CT-045"].company_id == "CO-013"
    fails(env, "add_contact", "company 'CO-099' not found", company_id="CO-099",
          first_name="A", last_name="B", email="a@b.com")
    fails(env, "add_contact", "first_name and last_name must not be empty",
          company_id="CO-013", first_name=" ", last_name="B", email="a@b.com")
    fails(env, "add_contact", "'ada-at-helios' is not a valid email address",
          company_id="CO-013", first_name="A", last_name="B", email="ada-at-helios")
    fails(env, "add_contact",
          "a contact with email Hannah.Reyes@lumenanalytics.com already exists (CT-001)",
          company_id="CO-001", first_name="Hannah", last_name="Reyes",
          email="Hannah.Reyes@lumenanalytics.com")


def test_list_deals(env: Crm) -> None:
    assert [d["id"] for d in ok(env, "list_deals", stage="negotiation")] == [
        "DL-019", "DL-020", "DL-021", "DL-022", "DL-023"]
    assert [d["id"] for d in ok(env, "list_deals", owner="priya raman")] == [
        "DL-001", "DL-024", "DL-025"]
    assert [d["id"] for d in ok(env, "list_deals", company_id="CO-003",
                                stage="proposal")] == ["DL-013"]
    assert len(ok(env, "list_deals")) == 30


def test_get_deal(env: Crm) -> None:
    deal = ok(env, "get_deal", deal_id="DL-019")
    assert deal["company"] == "Oakline Furniture" and deal["contact"]["id"] == "CT-019"
    assert [q["id"] for q in deal["quotes"]] == ["QT-007", "QT-008"]
    assert all(a["deal_id"] == "DL-019" for a in deal["activities"]) and deal["activities"]
    fails(env, "get_deal", "deal 'DL-777' not found", deal_id="DL-777")


def test_create_deal(env: Crm) -> None:
    deal = ok(env, "create_deal", company_id="CO-008", title="Meridian Hotels - Pilot",
              amount=24000, expected_close="2026-05-29", contact_id="CT-016")
    assert deal["id"] == "DL-031" and deal["stage"] == "lead"
    assert deal["owner"] == "Priya Raman" and deal["created_at"] == "2026-03-16T09:00:00"
    args = {"company_id": "CO-008", "title": "X", "amount": 1000,
            "expected_close": "2026-05-29"}
    fails(env, "create_deal", "company 'CO-000' not found", **{**args, "company_id": "CO-000"})
    fails(env, "create_deal", "title must not be empty", **{**args, "title": "  "})
    fails(env, "create_deal", "amount must be positive, got 0", **{**args, "amount": 0})
    fails(env, "create_deal", "expected_close must be a date in YYYY-MM-DD format, got 'May 29'",
          **{**args, "expected_close": "May 29"})
    fails(env, "create_deal", "expected_close 2026-03-01 is in the past (today is 2026-03-16)",
          **{**args, "expected_close": "2026-03-01"})
    fails(env, "create_deal", "contact CT-001 (Hannah Reyes) does not work at Meridian Hotels",
          **args, contact_id="CT-001")


def test_update_deal(env: Crm) -> None:
    deal = ok(env, "update_deal", deal_id="DL-013", amount=82000, owner="grace liu",
              expected_close="2026-04-30", contact_id="CT-006")
    assert (deal["amount"], deal["owner"], deal["expected_close"], deal["contact_id"]) == (
        82000, "Grace Liu", "2026-04-30", "CT-006")
    fails(env, "update_deal", "deal 'DL-100' not found", deal_id="DL-100", amount=5)
    fails(env, "update_deal", "deal DL-024 is closed_won; closed deals cannot be changed",
          deal_id="DL-024", amount=5)
    fails(env, "update_deal",
          "nothing to update: give amount, expected_close, owner or contact_id",
          deal_id="DL-013")
    fails(env, "update_deal", "amount must be positive, got -5", deal_id="DL-013", amount=-5)
    fails(env, "update_deal", "expected_close 2026-01-01 is in the past (today is 2026-03-16)",
          deal_id="DL-013", expected_close="2026-01-01")
    fails(env, "update_deal", "unknown sales rep 'Bob'; reps: Priya Raman, Marcus Bell, "
          "Elena Petrova, Tomás Herrera, Grace Liu", deal_id="DL-013", owner="Bob")
    fails(env, "update_deal", "contact CT-001 (Hannah Reyes) does not work at "
          "Granite Peak Outfitters", deal_id="DL-013", contact_id="CT-001")
    # a failure after an earlier field was applied is rolled back as a whole
    fails(env, "update_deal", "unknown sales rep 'Bob'; reps: Priya Raman, Marcus Bell, "
          "Elena Petrova, Tomás Herrera, Grace Liu", deal_id="DL-013", amount=1, owner="Bob")


def test_move_deal_stage(env: Crm) -> None:
    assert ok(env, "move_deal_stage", deal_id="DL-001", stage="qualified")["stage"] == "qualified"
    lost = ok(env, "move_deal_stage", deal_id="DL-002", stage="closed_lost",
              lost_reason="Went with an in-house tool")
    assert lost["lost_reason"] == "Went with an in-house tool"
    assert lost["closed_at"] == "2026-03-16T09:00:00"
    fails(env, "move_deal_stage", "deal 'DL-404' not found", deal_id="DL-404", stage="lead")
    fails(env, "move_deal_stage", "deal DL-002 is closed_lost; closed deals cannot be changed",
          deal_id="DL-002", stage="lead")
    fails(env, "move_deal_stage", "deal DL-001 is already in stage 'qualified'",
          deal_id="DL-001", stage="qualified")
    fails(env, "move_deal_stage", "a lost_reason is required to close deal DL-003 as lost",
          deal_id="DL-003", stage="closed_lost")
    fails(env, "move_deal_stage", "deal DL-019 has no accepted quote; accept a quote before "
          "closing it as won", deal_id="DL-019", stage="closed_won")
    ok(env, "update_quote_status", quote_id="QT-007", status="accepted")
    won = ok(env, "move_deal_stage", deal_id="DL-019", stage="closed_won")
    assert won["stage"] == "closed_won" and won["amount"] == 115710


def test_log_activity(env: Crm) -> None:
    activity = ok(env, "log_activity", deal_id="DL-021", kind="meeting",
                  summary="  Security review with IT  ", contact_id="CT-026")
    assert activity == {"id": "AC-041", "deal_id": "DL-021", "contact_id": "CT-026",
                        "kind": "meeting", "summary": "Security review with IT",
                        "owner": "Priya Raman", "at": "2026-03-16T09:00:00"}
    fails(env, "log_activity", "deal 'DL-000' not found", deal_id="DL-000", kind="note",
          summary="x")
    fails(env, "log_activity", "summary must not be empty", deal_id="DL-021", kind="note",
          summary=" ")
    fails(env, "log_activity", "contact CT-001 (Hannah Reyes) does not work at Helios Biotech",
          deal_id="DL-021", kind="call", summary="x", contact_id="CT-001")
    assert not env.call("log_activity", {"deal_id": "DL-021", "kind": "fax",
                                         "summary": "x"}).ok


def test_list_products(env: Crm) -> None:
    products = ok(env, "list_products")
    assert len(products) == 12
    assert products[0] == {"sku": "SEAT-STD", "name": "Standard seat (annual)",
                           "unit_price": 480}


def test_create_quote(env: Crm) -> None:
    quote = ok(env, "create_quote", deal_id="DL-002", skus=["SEAT-PRO", "ONB-PKG"],
               quantities=[12, 1], discount_pct=10)
    assert (quote["id"], quote["status"], quote["subtotal"], quote["total"]) == (
        "QT-024", "draft", 14300, 12870)
    assert quote["valid_until"] == "2026-04-15"
    fails(env, "create_quote", "deal DL-024 is closed_won; closed deals cannot be changed",
          deal_id="DL-024", skus=["SEAT-STD"], quantities=[1])
    fails(env, "create_quote", "a quote needs at least one product", deal_id="DL-002",
          skus=[], quantities=[])
    fails(env, "create_quote", "got 2 skus but 1 quantities", deal_id="DL-002",
          skus=["SEAT-STD", "SANDBOX"], quantities=[1])
    fails(env, "create_quote", "unknown product SKU 'SEAT-XXL'", deal_id="DL-002",
          skus=["SEAT-XXL"], quantities=[1])
    fails(env, "create_quote", "each SKU may appear only once per quote", deal_id="DL-002",
          skus=["SANDBOX", "SANDBOX"], quantities=[1, 1])
    fails(env, "create_quote", "every quantity must be at least 1", deal_id="DL-002",
          skus=["SANDBOX"], quantities=[0])
    fails(env, "create_quote", "discount of 30% is outside 0-25%; larger discounts need "
          "manager approval", deal_id="DL-002", skus=["SANDBOX"], quantities=[1],
          discount_pct=30)


def test_update_quote_status(env: Crm) -> None:
    assert ok(env, "update_quote_status", quote_id="QT-001", status="sent")["status"] == "sent"
    assert ok(env, "update_quote_status", quote_id="QT-009",
              status="rejected")["status"] == "rejected"
    accepted = ok(env, "update_quote_status", quote_id="QT-001", status="accepted")
    assert accepted["status"] == "accepted"
    assert env.state.deals["DL-013"].amount == accepted["total"] == 60350
    fails(env, "update_quote_status", "quote 'QT-999' not found", quote_id="QT-999",
          status="sent")
    fails(env, "update_quote_status",
          "cannot change quote QT-002 from 'draft' to 'accepted'; allowed: sent",
          quote_id="QT-002", status="accepted")
    fails(env, "update_quote_status",
          "cannot change quote QT-017 from 'accepted' to 'rejected'; allowed: none "
          "(final status)", quote_id="QT-017", status="rejected")
    # a second accepted quote on one deal
    ok(env, "create_quote", deal_id="DL-019", skus=["SEAT-PRO"], quantities=[100])
    ok(env, "update_quote_status", quote_id="QT-024", status="sent")
    ok(env, "update_quote_status", quote_id="QT-007", status="accepted")
    fails(env, "update_quote_status", "deal DL-019 already has an accepted quote (QT-007)",
          quote_id="QT-024", status="accepted")
    # an expired quote
    env.state.quotes["QT-011"].valid_until = "2026-03-10"
    fails(env, "update_quote_status", "quote QT-011 expired on 2026-03-10", quote_id="QT-011",
          status="accepted")
    # a sent quote whose deal has since closed
    ok(env, "move_deal_stage", deal_id="DL-023", stage="closed_lost", lost_reason="No budget")
    fails(env, "update_quote_status",
          "deal DL-023 is closed_lost; closed deals cannot be changed", quote_id="QT-015",
          status="accepted")
