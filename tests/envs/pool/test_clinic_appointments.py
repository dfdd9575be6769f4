"""The clinic_appointments environment: every tool's success path and each rule failure."""

from __future__ import annotations

import json

import pytest

from envs.pool import pool_classes
from envs.pool.clinic_appointments import REFERRAL_REQUIRED, ClinicAppointments
from tests.envs.pool.helpers import fails_exactly as fails
from tests.envs.pool.helpers import ok


@pytest.fixture
def env() -> ClinicAppointments:
    return ClinicAppointments()




def test_registered_with_metadata() -> None:
    assert pool_classes()["clinic_appointments"] is ClinicAppointments
    assert ClinicAppointments.domain == "health" and ClinicAppointments.description
    writes = {s.name for s in ClinicAppointments.tool_specs() if s.write}
    assert writes == {"book_appointment", "reschedule_appointment", "cancel_appointment",
                      "check_in_patient", "create_referral", "add_visit_note",
                      "update_patient_contact"}
    assert 6 <= len(ClinicAppointments.tool_specs()) <= 15


def test_default_state_is_deterministic_and_consistent() -> None:
    a, b = ClinicAppointments.default_state(), ClinicAppointments.default_state()
    assert a == b and a.seed == 0
    assert min(len(a.doctors), len(a.patients), len(a.appointments), len(a.referrals),
               len(a.visit_notes), len(a.slots)) >= 20
    taken = {x.slot_id for x in a.appointments.values() if x.status != "cancelled"}
    assert taken == {s.id for s in a.slots.values() if s.status == "booked"}
    for appt in a.appointments.values():
        slot = a.slots[appt.slot_id]
        assert (slot.doctor_id, slot.start) == (appt.doctor_id, appt.start)
        if a.doctors[appt.doctor_id].specialty in REFERRAL_REQUIRED:
            ref = a.referrals[appt.referral_id or ""]
            assert ref.patient_id == appt.patient_id
    for note in a.visit_notes.values():
        assert a.appointments[note.appointment_id].status == "completed"
    assert sum(x.start[:10] == a.now[:10] and x.status == "scheduled"
               for x in a.appointments.values()) >= 1


def test_snapshot_round_trip(env: ClinicAppointments) -> None:
    ok(env, "book_appointment", patient_id="PAT-001", slot_id="SL-001", reason="Checkup")
    snap = env.snapshot()
    restored = ClinicAppointments()
    restored.restore(json.loads(json.dumps(snap)))
    assert restored.snapshot() == snap and restored.state == env.state
    call = {"appointment_id": "APT-037", "new_slot_id": "SL-002"}
    assert restored.call("reschedule_appointment", call) == env.call(
        "reschedule_appointment", call)
    assert restored.snapshot() == env.snapshot()


def test_find_patient(env: ClinicAppointments) -> None:
    assert [p["id"] for p in ok(env, "find_patient", query="Raman")] == ["PAT-001", "PAT-023"]
    assert [p["id"] for p in ok(env, "find_patient", query="1955-06-20")] == ["PAT-001"]
    assert [p["id"] for p in ok(env, "find_patient", query="218-8969")] == ["PAT-001"]
    fails(env, "find_patient", "query must not be empty", query="")


def test_get_patient(env: ClinicAppointments) -> None:
    patient = ok(env, "get_patient", patient_id="PAT-001")
    assert patient["primary_doctor"] == "Dr. Mei Tanaka"
    assert [a["id"] for a in patient["appointments"]] == ["APT-001"]
    assert [r["id"] for r in patient["referrals"]] == ["REF-001"]
    fails(env, "get_patient", "patient 'PAT-999' not found", patient_id="PAT-999")


def test_search_doctors(env: ClinicAppointments) -> None:
    assert [d["id"] for d in ok(env, "search_doctors", specialty="Cardiology")] == [
        "DOC-08", "DOC-09"]
    assert [d["id"] for d in ok(env, "search_doctors", query="okafor")] == ["DOC-01"]
    assert [d["id"] for d in ok(env, "search_doctors", specialty="family medicine",
                                query="tanaka")] == ["DOC-03"]
    fails(env, "search_doctors", "unknown specialty 'oncology'; offered: cardiology, "
          "dermatology, endocrinology, family_medicine, gastroenterology, neurology, "
          "ophthalmology, orthopedics, pediatrics, psychiatry, rheumatology",
          specialty="oncology")


def test_find_available_slots(env: ClinicAppointments) -> None:
    assert [s["id"] for s in ok(env, "find_available_slots", doctor_id="DOC-01")] == [
        "SL-001", "SL-002", "SL-003", "SL-005", "SL-006"]
    by_day = ok(env, "find_available_slots", specialty="orthopedics", date="2026-03-19")
    assert [(s["id"], s["doctor"]) for s in by_day] == [
        ("SL-070", "Dr. Grace Obi"), ("SL-071", "Dr. Grace Obi"), ("SL-072", "Dr. Grace Obi")]
    fails(env, "find_available_slots", "give a doctor_id or a specialty")
    fails(env, "find_available_slots", "doctor 'DOC-99' not found", doctor_id="DOC-99")
    fails(env, "find_available_slots", "date must be YYYY-MM-DD, got 'Thursday'",
          doctor_id="DOC-01", date="Thursday")


def test_book_appointment(env: ClinicAppointments) -> None:
    appt = ok(env, "book_appointment", patient_id="PAT-001", slot_id="SL-001",
              reason="Annual checkup")
    assert (appt["id"], appt["doctor"], appt["start"], appt["room"], appt["referral_id"]) == (
        "APT-037", "Dr. Amara Okafor", "2026-03-19T09:00:00", "A101", None)
    assert env.state.slots["SL-001"].status == "booked"
    # a specialist: the patient's open referral is attached and used up
    cardio = ok(env, "book_appointment", patient_id="PAT-017", slot_id="SL-043",
                reason="Palpitations")
    assert cardio["referral_id"] == "REF-017" and env.state.referrals["REF-017"].status == "used"
    fails(env, "book_appointment", "patient 'PAT-000' not found", patient_id="PAT-000",
          slot_id="SL-002", reason="x")
    fails(env, "book_appointment", "slot 'SL-999' not found", patient_id="PAT-001",
          slot_id="SL-999", reason="x")
    fails(env, "book_appointment", "slot SL-004 (2026-03-20T09:00:00) is already booked",
          patient_id="PAT-002", slot_id="SL-004", reason="x")
    fails(env, "book_appointment", "slot SL-129 (2026-03-13T14:00:00) is in the past",
          patient_id="PAT-002", slot_id="SL-129", reason="x")
    fails(env, "book_appointment", "reason must not be empty", patient_id="PAT-002",
          slot_id="SL-002", reason=" ")
    fails(env, "book_appointment", "Dr. Ingrid Larsen is not accepting new patients",
          patient_id="PAT-014", slot_id="SL-050", reason="Chest pain")
    fails(env, "book_appointment", "patient PAT-019 already has appointment APT-029 at "
          "2026-03-16T10:30:00", patient_id="PAT-019", slot_id="SL-038", reason="Rash")
    fails(env, "book_appointment", "Dr. Robert Chen (cardiology) requires a referral; patient "
          "PAT-001 has no open cardiology referral", patient_id="PAT-001", slot_id="SL-044",
          reason="Palpitations")
    fails(env, "book_appointment", "referral 'REF-002' not found for patient PAT-001",
          patient_id="PAT-001", slot_id="SL-044", reason="x", referral_id="REF-002")
    fails(env, "book_appointment", "referral REF-001 is expired", patient_id="PAT-001",
          slot_id="SL-044", reason="x", referral_id="REF-001")
    fails(env, "book_appointment", "referral REF-017 is used", patient_id="PAT-017",
          slot_id="SL-044", reason="x", referral_id="REF-017")
    fails(env, "book_appointment", "referral REF-003 is for orthopedics, not cardiology",
          patient_id="PAT-003", slot_id="SL-045", reason="x", referral_id="REF-003")


def test_reschedule_appointment(env: ClinicAppointments) -> None:
    moved = ok(env, "reschedule_appointment", appointment_id="APT-035", new_slot_id="SL-010")
    assert (moved["slot_id"], moved["start"]) == ("SL-010", "2026-03-20T09:00:00")
    assert env.state.slots["SL-012"].status == "available"
    assert env.state.slots["SL-010"].status == "booked"
    fails(env, "reschedule_appointment", "appointment 'APT-999' not found",
          appointment_id="APT-999", new_slot_id="SL-011")
    fails(env, "reschedule_appointment", "appointment APT-003 is completed, not scheduled",
          appointment_id="APT-003", new_slot_id="SL-011")
    fails(env, "reschedule_appointment", "slot SL-001 belongs to Dr. Amara Okafor, not "
          "Dr. Daniel Brooks; cancel and book a new appointment to change doctors",
          appointment_id="APT-035", new_slot_id="SL-001")
    fails(env, "reschedule_appointment", "slot SL-010 (2026-03-20T09:00:00) is already booked",
          appointment_id="APT-035", new_slot_id="SL-010")


def test_reschedule_refuses_a_double_booking(env: ClinicAppointments) -> None:
    ok(env, "book_appointment", patient_id="PAT-002", slot_id="SL-106", reason="Eye exam")
    fails(env, "reschedule_appointment", "patient PAT-002 already has appointment APT-037 at "
          "2026-03-20T09:00:00", appointment_id="APT-035", new_slot_id="SL-010")


def test_cancel_appointment(env: ClinicAppointments) -> None:
    late = ok(env, "cancel_appointment", appointment_id="APT-029", reason="Feeling better")
    assert late["status"] == "cancelled" and late["late_cancellation"] is True
    assert env.state.slots["SL-026"].status == "available"
    early = ok(env, "cancel_appointment", appointment_id="APT-035", reason="Travelling")
    assert early["late_cancellation"] is False and early["cancel_reason"] == "Travelling"
    ok(env, "book_appointment", patient_id="PAT-017", slot_id="SL-043", reason="Palpitations")
    ok(env, "cancel_appointment", appointment_id="APT-037", reason="Rescheduling later")
    assert env.state.referrals["REF-017"].status == "open"
    fails(env, "cancel_appointment", "appointment APT-035 is cancelled, not scheduled",
          appointment_id="APT-035", reason="x")
    fails(env, "cancel_appointment", "reason must not be empty", appointment_id="APT-030",
          reason="")
    fails(env, "cancel_appointment", "appointment 'APT-000' not found",
          appointment_id="APT-000", reason="x")


def test_list_appointments(env: ClinicAppointments) -> None:
    assert [a["id"] for a in ok(env, "list_appointments", date="2026-03-16")] == ["APT-029"]
    assert [a["id"] for a in ok(env, "list_appointments", doctor_id="DOC-06",
                                status="scheduled")] == ["APT-033", "APT-034", "APT-030"]
    assert [a["id"] for a in ok(env, "list_appointments", patient_id="PAT-002")] == [
        "APT-002", "APT-023", "APT-035"]
    fails(env, "list_appointments", "date must be YYYY-MM-DD, got '16/03'", date="16/03")


def test_get_appointment(env: ClinicAppointments) -> None:
    appt = ok(env, "get_appointment", appointment_id="APT-001")
    assert appt["doctor"] == "Dr. Paul Moreau" and appt["patient"] == "Priya Raman"
    assert [n["id"] for n in appt["notes"]] == ["NOTE-001"]
    fails(env, "get_appointment", "appointment 'APT-404' not found", appointment_id="APT-404")


def test_check_in_patient(env: ClinicAppointments) -> None:
    assert ok(env, "check_in_patient", appointment_id="APT-029")["status"] == "checked_in"
    fails(env, "check_in_patient", "appointment APT-029 is checked_in, not scheduled",
          appointment_id="APT-029")
    fails(env, "check_in_patient", "appointment APT-035 is on 2026-03-20, not today "
          "(2026-03-16)", appointment_id="APT-035")


def test_create_referral(env: ClinicAppointments) -> None:
    ref = ok(env, "create_referral", patient_id="PAT-001", from_doctor_id="DOC-03",
             specialty="Cardiology", reason="Irregular heartbeat on ECG")
    assert ref == {"id": "REF-025", "patient_id": "PAT-001", "from_doctor_id": "DOC-03",
                   "specialty": "cardiology", "reason": "Irregular heartbeat on ECG",
                   "status": "open", "issued_on": "2026-03-16", "expires_on": "2026-06-14"}
    args = {"patient_id": "PAT-001", "from_doctor_id": "DOC-03", "reason": "x"}
    fails(env, "create_referral", "patient PAT-001 already has an open cardiology referral "
          "(REF-025)", **args, specialty="cardiology")
    fails(env, "create_referral", "Dr. Robert Chen (cardiology) cannot issue referrals; only "
          "family medicine and pediatrics can", **{**args, "from_doctor_id": "DOC-08"},
          specialty="neurology")
    fails(env, "create_referral", "family_medicine needs no referral", **args,
          specialty="family_medicine")
    fails(env, "create_referral", "reason must not be empty", **{**args, "reason": " "},
          specialty="neurology")
    fails(env, "create_referral", "doctor 'DOC-00' not found",
          **{**args, "from_doctor_id": "DOC-00"}, specialty="neurology")
    fails(env, "create_referral", "patient 'PAT-000' not found",
          **{**args, "patient_id": "PAT-000"}, specialty="neurology")
    fails(env, "create_referral", "unknown specialty 'podiatry'; offered: cardiology, "
          "dermatology, endocrinology, family_medicine, gastroenterology, neurology, "
          "ophthalmology, orthopedics, pediatrics, psychiatry, rheumatology", **args,
          specialty="podiatry")


def test_add_visit_note(env: ClinicAppointments) -> None:
    note = ok(env, "add_visit_note", appointment_id="APT-003", text="Pressure normal.")
    assert note == {"id": "NOTE-024", "appointment_id": "APT-003", "author_id": "DOC-18",
                    "text": "Pressure normal.", "created_at": "2026-03-16T08:00:00"}
    ok(env, "check_in_patient", appointment_id="APT-029")
    assert ok(env, "add_visit_note", appointment_id="APT-029",
              text="Arrived with lower back pain.")["author_id"] == "DOC-05"
    fails(env, "add_visit_note", "appointment APT-035 is scheduled; notes can only be added "
          "to visits that took place", appointment_id="APT-035", text="x")
    fails(env, "add_visit_note", "text must not be empty", appointment_id="APT-003", text="")
    fails(env, "add_visit_note", "appointment 'APT-777' not found", appointment_id="APT-777",
          text="x")


def test_update_patient_contact(env: ClinicAppointments) -> None:
    patient = ok(env, "update_patient_contact", patient_id="PAT-001", phone="+1-555-201-7788",
                 email="priya@raman.example")
    assert (patient["phone"], patient["email"]) == ("+1-555-201-7788", "priya@raman.example")
    fails(env, "update_patient_contact", "nothing to update: give phone and/or email",
          patient_id="PAT-001")
    fails(env, "update_patient_contact", "'call me' is not a valid phone number",
          patient_id="PAT-001", phone="call me")
    fails(env, "update_patient_contact", "'priya@' is not a valid email address",
          patient_id="PAT-001", phone="+1-555-201-0000", email="priya@")
    fails(env, "update_patient_contact", "patient 'PAT-404' not found", patient_id="PAT-404",
          email="a@b.co")
