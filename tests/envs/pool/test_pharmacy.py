"""The pharmacy environment: every tool's success path and business-rule failures."""

from __future__ import annotations

import json

import pytest

from envs.pool import pool_classes
from envs.pool.pharmacy import Pharmacy
from tests.envs.pool.helpers import fails, ok


@pytest.fixture
def env() -> Pharmacy:
    return Pharmacy()




def test_registered_with_metadata() -> None:
    assert pool_classes()["pharmacy"] is Pharmacy
    assert Pharmacy.domain == "health" and Pharmacy.description
    writes = {s.name for s in Pharmacy.tool_specs() if s.write}
    assert writes == {"enter_prescription", "fill_prescription", "mark_picked_up",
                      "cancel_fill", "set_prescription_status", "add_allergy",
                      "set_insurance_plan", "restock_drug"}
    assert 6 <= len(Pharmacy.tool_specs()) <= 15


def test_default_state_is_deterministic_and_sized() -> None:
    a, b = Pharmacy.default_state(), Pharmacy.default_state()
    assert a == b and a.seed == 0
    assert min(len(a.patients), len(a.drugs), len(a.prescriptions), len(a.fills)) >= 20
    for rx in a.prescriptions.values():
        assert rx.patient_id in a.patients and rx.drug_id in a.drugs
    assert all(f.prescription_id in a.prescriptions for f in a.fills.values())


def test_snapshot_round_trip(env: Pharmacy) -> None:
    ok(env, "fill_prescription", prescription_id="RX-40006")
    snap = env.snapshot()
    restored = Pharmacy()
    restored.restore(json.loads(json.dumps(snap)))
    assert restored.snapshot() == snap and restored.state == env.state
    call = {"drug_id": "D-106", "quantity": 10}
    assert restored.call("restock_drug", call) == env.call("restock_drug", call)


def test_find_patient(env: Pharmacy) -> None:
    found = ok(env, "find_patient", name="lindqvist")
    assert {p["name"] for p in found} == {"Yuki Lindqvist", "Leila Lindqvist",
                                          "Maria Lindqvist", "Aisha Lindqvist"}
    exact = ok(env, "find_patient", name="Lindqvist", date_of_birth="1979-11-12")
    assert [p["id"] for p in exact] == ["PT-1019"]
    assert ok(env, "find_patient", name="Nobody Here") == []


def test_get_patient(env: Pharmacy) -> None:
    george = ok(env, "get_patient", patient_id="PT-1004")
    assert george["insurance_plan_name"] == "UnitedCare Bronze"
    assert [f["id"] for f in george["ready_for_pickup"]] == ["F-9017"]
    fails(env, "get_patient", "Patient 'PT-9999' not found.", patient_id="PT-9999")


def test_list_prescriptions(env: Pharmacy) -> None:
    rxs = ok(env, "list_prescriptions", patient_id="PT-1003")
    assert [(r["id"], r["drug_name"]) for r in rxs] == [
        ("RX-40005", "Insulin glargine 100 units/mL pen"), ("RX-40006", "Amlodipine 5 mg tablet")]
    assert rxs[0]["refill_eligible_on"] == "2026-06-14"
    env.state.prescriptions["RX-40005"].status = "cancelled"
    assert [r["id"] for r in ok(env, "list_prescriptions", patient_id="PT-1003")] == ["RX-40006"]
    everything = ok(env, "list_prescriptions", patient_id="PT-1003", include_inactive=True)
    assert len(everything) == 2
    fails(env, "list_prescriptions", "Patient 'PT-0' not found.", patient_id="PT-0")


def test_search_drugs_and_plans(env: Pharmacy) -> None:
    assert {d["id"] for d in ok(env, "search_drugs", query="statin")} == {"D-101", "D-102"}
    assert [d["name"] for d in ok(env, "search_drugs", query="IBUPROFEN")] == [
        "Ibuprofen 800 mg tablet"]
    assert ok(env, "search_drugs", query="unobtainium") == []
    plans = ok(env, "list_insurance_plans")
    assert len(plans) == 5 and plans[0]["copays"] == {"1": 10.0, "2": 25.0, "3": 60.0}


def test_check_interactions(env: Pharmacy) -> None:
    # Olivia Brennan takes apixaban (anticoagulant): an NSAID is a major interaction
    result = ok(env, "check_interactions", patient_id="PT-1009", drug_id="D-112")
    assert not result["safe"]
    assert result["conflicts"][0]["with"] == "Apixaban 5 mg tablet (RX-40015)"
    # Leila Sullivan is allergic to NSAIDs
    allergy = ok(env, "check_interactions", patient_id="PT-1016", drug_id="D-113")
    assert allergy["conflicts"][0]["type"] == "allergy" and not allergy["safe"]
    assert ok(env, "check_interactions", patient_id="PT-1016", drug_id="D-121")["safe"]
    fails(env, "check_interactions", "Patient 'PT-1' not found.", patient_id="PT-1",
          drug_id="D-112")
    fails(env, "check_interactions", "Drug 'D-999' not found.", patient_id="PT-1009",
          drug_id="D-999")


def test_quote_copay(env: Pharmacy) -> None:
    covered = ok(env, "quote_copay", prescription_id="RX-40006")
    assert covered["copay"] == 0.0 and covered["cash_price"] == 22.5 and covered["covered"]
    # UnitedCare Bronze does not cover tier 4: cash price
    uncovered = ok(env, "quote_copay", prescription_id="RX-40007")
    assert uncovered["copay"] == 230.0 and not uncovered["covered"]
    # no insurance at all
    cash = ok(env, "quote_copay", prescription_id="RX-40010", quantity=4)
    assert cash["copay"] == 7.2 and cash["insurance_plan"] is None
    fails(env, "quote_copay", "Prescription 'RX-1' not found.", prescription_id="RX-1")
    fails(env, "quote_copay", "Quantity must be positive.", prescription_id="RX-40006",
          quantity=0)


def test_enter_prescription(env: Pharmacy) -> None:
    rx = ok(env, "enter_prescription", patient_id="PT-1009", drug_id="D-112",
            prescriber="Dr. Henry Park", directions="Take 1 tablet three times daily",
            quantity=30, days_supply=10, refills=1)
    assert rx["id"] == "RX-40037" and rx["status"] == "active"
    assert rx["written_on"] == "2026-06-12" and rx["expires_on"] == "2027-06-12"
    assert rx["warnings"][0]["severity"] == "major"
    assert env.state.next_prescription_id == 40038
    base = {"patient_id": "PT-1009", "drug_id": "D-109", "prescriber": "Dr. Henry Park",
            "directions": "Take 1 tablet as needed", "quantity": 20, "days_supply": 5}
    fails(env, "enter_prescription", "Tramadol 50 mg tablet is a controlled substance: "
          "at most 5 refills may be authorized.", **base, refills=6)
    fails(env, "enter_prescription", "Quantity and days supply must be positive",
          **{**base, "quantity": 0})
    fails(env, "enter_prescription", "Patient 'PT-0' not found.", **{**base, "patient_id": "PT-0"})
    fails(env, "enter_prescription", "Drug 'D-0' not found.", **{**base, "drug_id": "D-0"})
    controlled = ok(env, "enter_prescription", **base, refills=5)
    assert controlled["expires_on"] == "2026-12-09"


def test_fill_prescription_success_and_moderate_warning(env: Pharmacy) -> None:
    fill = ok(env, "fill_prescription", prescription_id="RX-40006")
    assert fill["id"] == "F-9077" and fill["status"] == "ready" and fill["was_refill"]
    assert fill["copay"] == 0.0 and fill["refills_remaining"] == 8 and fill["warnings"] == []
    assert env.state.drugs["D-106"].stock == 90
    # a new SSRI for a patient on naproxen: moderate interaction, filled with a warning
    rx = ok(env, "enter_prescription", patient_id="PT-1011", drug_id="D-107",
            prescriber="Dr. Ana Gomez", directions="Take 1 tablet daily", quantity=30,
            days_supply=30)
    first = ok(env, "fill_prescription", prescription_id=rx["id"], quantity=15)
    assert not first["was_refill"] and first["quantity"] == 15
    assert first["warnings"][0]["severity"] == "moderate"


def test_fill_prescription_failures(env: Pharmacy) -> None:
    fails(env, "fill_prescription", "Prescription 'RX-0' not found.", prescription_id="RX-0")
    fails(env, "fill_prescription", "Prescription RX-40003 is on hold and cannot be filled.",
          prescription_id="RX-40003")
    fails(env, "fill_prescription", "Quantity for RX-40006 must be between 1 and 90.",
          prescription_id="RX-40006", quantity=91)
    fails(env, "fill_prescription", "Prescription RX-40007 already has a fill waiting",
          prescription_id="RX-40007")
    fails(env, "fill_prescription", "Prescription RX-40016 has no refills remaining; "
          "contact Dr. Ana Gomez for a renewal.", prescription_id="RX-40016")
    fails(env, "fill_prescription", "Prescription RX-40005 is too early to refill; "
          "eligible on 2026-06-14.", prescription_id="RX-40005")
    fails(env, "fill_prescription", "Lisinopril 10 mg tablet is out of stock: 0 units on "
          "hand, 30 needed.", prescription_id="RX-40034")
    env.state.prescriptions["RX-40006"].expires_on = "2026-03-01"
    fails(env, "fill_prescription", "Prescription RX-40006 expired on 2026-03-01; a new "
          "prescription is needed from Dr. Henry Park.", prescription_id="RX-40006")
    env.state.prescriptions["RX-40006"].status = "cancelled"
    fails(env, "fill_prescription", "Prescription RX-40006 is cancelled",
          prescription_id="RX-40006")


def test_fill_blocked_by_major_interaction_and_allergy(env: Pharmacy) -> None:
    rx = ok(env, "enter_prescription", patient_id="PT-1009", drug_id="D-112",
            prescriber="Dr. Henry Park", directions="Take 1 tablet daily", quantity=30,
            days_supply=10)
    fails(env, "fill_prescription", f"Cannot fill {rx['id']} (Ibuprofen 800 mg tablet) for "
          "Olivia Brennan: major interaction with Apixaban 5 mg tablet (RX-40015): "
          "greatly increased bleeding risk.", prescription_id=rx["id"])
    amox = ok(env, "enter_prescription", patient_id="PT-1014", drug_id="D-116",
              prescriber="Dr. Ana Gomez", directions="Take 1 capsule three times daily",
              quantity=30, days_supply=10)
    fails(env, "fill_prescription", "major allergy with penicillin: patient is allergic to "
          "penicillin.", prescription_id=amox["id"])


def test_mark_picked_up(env: Pharmacy) -> None:
    fill = ok(env, "mark_picked_up", fill_id="F-9017")
    assert fill["status"] == "picked_up" and fill["picked_up_at"] == "2026-06-12T16:00:00"
    fails(env, "mark_picked_up", "Fill F-9017 is picked up, not ready for pickup.",
          fill_id="F-9017")
    fails(env, "mark_picked_up", "Fill 'F-1' not found.", fill_id="F-1")


def test_cancel_fill_restores_stock_and_refill(env: Pharmacy) -> None:
    result = ok(env, "cancel_fill", fill_id="F-9017")
    assert result["status"] == "cancelled" and result["stock"] == 8
    assert env.state.prescriptions["RX-40007"].refills_remaining == 2
    fails(env, "cancel_fill", "Fill F-9017 is cancelled and cannot be cancelled.",
          fill_id="F-9017")
    fails(env, "cancel_fill", "Fill F-9001 is picked up and cannot be cancelled.",
          fill_id="F-9001")
    fails(env, "cancel_fill", "Fill 'F-0' not found.", fill_id="F-0")


def test_set_prescription_status(env: Pharmacy) -> None:
    assert ok(env, "set_prescription_status", prescription_id="RX-40003",
              status="active")["status"] == "active"
    fails(env, "set_prescription_status", "Prescription RX-40003 is already active.",
          prescription_id="RX-40003", status="active")
    ok(env, "set_prescription_status", prescription_id="RX-40003", status="cancelled")
    fails(env, "set_prescription_status", "Prescription RX-40003 is cancelled and cannot be "
          "changed.", prescription_id="RX-40003", status="active")
    fails(env, "set_prescription_status", "Prescription 'RX-9' not found.",
          prescription_id="RX-9", status="on_hold")


def test_add_allergy(env: Pharmacy) -> None:
    assert ok(env, "add_allergy", patient_id="PT-1001", allergy="codeine")["allergies"] == [
        "codeine"]
    fails(env, "add_allergy", "Kwame Whitfield already has a recorded allergy to Codeine.",
          patient_id="PT-1001", allergy="Codeine")
    fails(env, "add_allergy", "Allergy must not be empty.", patient_id="PT-1001", allergy=" ")
    fails(env, "add_allergy", "Patient 'X' not found.", patient_id="X", allergy="sulfa")


def test_set_insurance_plan(env: Pharmacy) -> None:
    result = ok(env, "set_insurance_plan", patient_id="PT-1006", plan_id="INS-AGH")
    assert result["insurance_plan_name"] == "Aetna Gold HMO"
    assert ok(env, "quote_copay", prescription_id="RX-40010")["copay"] == 15.0
    fails(env, "set_insurance_plan", "Leila Lindqvist is already on that insurance plan.",
          patient_id="PT-1006", plan_id="INS-AGH")
    fails(env, "set_insurance_plan", "Insurance plan 'INS-NOPE' not found.",
          patient_id="PT-1006", plan_id="INS-NOPE")
    fails(env, "set_insurance_plan", "Patient 'PT-2' not found.", patient_id="PT-2",
          plan_id="INS-AGH")
    assert ok(env, "set_insurance_plan", patient_id="PT-1006", plan_id=None)[
        "insurance_plan_id"] is None


def test_restock_drug_then_fill(env: Pharmacy) -> None:
    assert ok(env, "restock_drug", drug_id="D-103", quantity=100)["stock"] == 100
    assert ok(env, "fill_prescription", prescription_id="RX-40034")["quantity"] == 30
    fails(env, "restock_drug", "Restock quantity must be positive.", drug_id="D-103",
          quantity=0)
    fails(env, "restock_drug", "Drug 'D-1' not found.", drug_id="D-1", quantity=5)
