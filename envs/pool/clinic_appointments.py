"""Clinic appointments: patients, doctors and their schedules, bookings, referrals, notes.

The front desk of a multi-specialty outpatient clinic. Doctors publish appointment slots;
the desk finds patients, books, reschedules and cancels visits, checks patients in, issues
referrals and files visit notes. Rules follow common clinic policy: specialists need an
open referral, some doctors take no new patients, a patient cannot be double-booked, only
primary-care doctors refer, and notes go on visits that actually took place.
"""

from __future__ import annotations

import random
import re
from datetime import date, datetime, time, timedelta
from typing import Literal

from pydantic import BaseModel, Field

from envs.base import Environment, ToolError, tool
from envs.timestamps import Day, Timestamp, stamp

AppointmentStatus = Literal["scheduled", "checked_in", "completed", "cancelled", "no_show"]
ReferralStatus = Literal["open", "used", "expired"]

PRIMARY_CARE = ("family_medicine", "pediatrics")
#: Specialties whose doctors only see patients with an open referral.
REFERRAL_REQUIRED = ("cardiology", "orthopedics", "neurology", "endocrinology",
                     "gastroenterology")
REFERRAL_VALID_DAYS = 90
LATE_CANCEL_HOURS = 24
PHONE_RE = re.compile(r"^\+?[0-9][0-9 ()-]{6,18}[0-9]$")
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", re.IGNORECASE)


class Doctor(BaseModel):
    id: str
    name: str
    specialty: str
    room: str
    working_days: list[str] = Field(description="weekday names the doctor holds clinic")
    accepting_new_patients: bool


class Patient(BaseModel):
    id: str
    name: str
    date_of_birth: Day
    phone: str
    email: str
    insurance: str
    primary_doctor_id: str


class Slot(BaseModel):
    id: str
    doctor_id: str
    start: Timestamp
    duration_min: int
    status: Literal["available", "booked"]


class Appointment(BaseModel):
    id: str
    patient_id: str
    doctor_id: str
    slot_id: str
    start: Timestamp
    reason: str
    status: AppointmentStatus
    referral_id: str | None = None
    created_at: Timestamp
    cancel_reason: str | None = None
    late_cancellation: bool = False


class Referral(BaseModel):
    id: str
    patient_id: str
    from_doctor_id: str
    specialty: str
    reason: str
    status: ReferralStatus
    issued_on: Day
    expires_on: Day


class VisitNote(BaseModel):
    id: str
    appointment_id: str
    author_id: str
    text: str
    created_at: Timestamp


# -- what the tools return ---------------------------------------------------------------


class AppointmentView(Appointment):
    """An appointment with the names a receptionist reads out."""

    patient: str = Field(description="Patient's name")
    doctor: str = Field(description="Doctor's name")
    specialty: str = Field(description="Doctor's specialty")
    room: str = Field(description="Doctor's room")


class AppointmentDetail(AppointmentView):
    notes: list[VisitNote] = Field(description="Visit notes written for this appointment")


class PatientRecord(Patient):
    """A patient's record with appointments (by date) and referrals."""

    primary_doctor: str = Field(description="Name of the primary doctor")
    appointments: list[AppointmentView]
    referrals: list[Referral]


class OpenSlot(BaseModel):
    """A bookable slot."""

    id: str
    doctor_id: str
    start: Timestamp
    duration_min: int
    doctor: str = Field(description="Doctor's name")


class ClinicState(BaseModel):
    seed: int = 0
    now: Timestamp = "2026-03-16T08:00:00"
    clinic_name: str = "Riverside Medical Center"
    doctors: dict[str, Doctor] = Field(default_factory=dict)
    patients: dict[str, Patient] = Field(default_factory=dict)
    slots: dict[str, Slot] = Field(default_factory=dict)
    appointments: dict[str, Appointment] = Field(default_factory=dict)
    referrals: dict[str, Referral] = Field(default_factory=dict)
    visit_notes: dict[str, VisitNote] = Field(default_factory=dict)
    next_patient_id: int = 1
    next_slot_id: int = 1
    next_appointment_id: int = 1
    next_referral_id: int = 1
    next_note_id: int = 1


# -- seed data ----------------------------------------------------------------------

DOCTORS = [
    ("Dr. Amara Okafor", "family_medicine"), ("Dr. Daniel Brooks", "family_medicine"),
    ("Dr. Mei Tanaka", "family_medicine"), ("Dr. Carlos Rivera", "family_medicine"),
    ("Dr. Helen Fischer", "family_medicine"), ("Dr. Sam Whitaker", "pediatrics"),
    ("Dr. Laila Haddad", "pediatrics"), ("Dr. Robert Chen", "cardiology"),
    ("Dr. Ingrid Larsen", "cardiology"), ("Dr. Nadia Rahman", "dermatology"),
    ("Dr. Paul Moreau", "dermatology"), ("Dr. Grace Obi", "orthopedics"),
    ("Dr. Victor Alvarez", "orthopedics"), ("Dr. Hannah Weiss", "neurology"),
    ("Dr. Omar Farouk", "endocrinology"), ("Dr. Julia Santos", "endocrinology"),
    ("Dr. Kevin O'Neill", "gastroenterology"), ("Dr. Sofia Petrakis", "ophthalmology"),
    ("Dr. Aaron Goldberg", "psychiatry"), ("Dr. Elena Ivanova", "rheumatology"),
]
#: How last week's visits ended, weighted: most took place.
COMPLETED: AppointmentStatus = "completed"
PAST_OUTCOMES: list[AppointmentStatus] = [COMPLETED] * 8 + ["cancelled", "no_show"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
SLOT_TIMES = [time(9, 0), time(10, 30), time(14, 0)]
FIRST = ["Priya", "Tom", "Alicia", "Marcus", "Yara", "George", "Emily", "Hiroshi", "Beatriz",
         "Kofi", "Anna", "Rahul", "Megan", "Dmitri", "Lucia", "Ahmed", "Sarah", "Jonas",
         "Fiona", "Wei", "Rachel", "Pedro", "Zainab", "Oscar"]
LAST = ["Raman", "Becker", "Gomez", "Johnson", "Nasser", "Papadopoulos", "Clarke", "Yamamoto",
        "Lopes", "Asante", "Kowalczyk", "Mehta", "O'Brien", "Volkov", "Bianchi", "Karimi",
        "Thompson", "Berg", "MacLeod", "Zhang", "Goldstein", "Almeida", "Bello", "Lindgren"]
INSURERS = ["BlueShield PPO", "Aetna Choice POS II", "Kaiser Silver 70", "Cigna Open Access",
            "UnitedHealthcare Gold", "Medicare Part B", "Self-pay"]
VISIT_REASONS = {
    "family_medicine": ["Annual physical", "Persistent cough", "Blood pressure follow-up",
                        "Sinus infection", "Lower back pain"],
    "pediatrics": ["Well-child visit", "Ear infection", "Vaccination"],
    "cardiology": ["Palpitations", "Chest pain evaluation", "Post-stent follow-up"],
    "dermatology": ["Mole check", "Eczema flare", "Acne treatment"],
    "orthopedics": ["Knee pain", "Shoulder injury", "Ankle sprain follow-up"],
    "neurology": ["Migraines", "Numbness in hands"],
    "endocrinology": ["Thyroid nodule", "Type 2 diabetes management"],
    "gastroenterology": ["Reflux", "Abdominal pain"],
    "ophthalmology": ["Blurred vision", "Glaucoma screening"],
    "psychiatry": ["Anxiety follow-up", "Sleep problems"],
    "rheumatology": ["Joint stiffness", "Gout follow-up"],
}
NOTE_TEXT = [
    "Vitals stable. Discussed findings and plan; follow up in 4 weeks.",
    "Symptoms improving on current treatment. Continue as prescribed.",
    "Ordered labs; will call patient with results.",
    "Exam unremarkable. Reassured patient; return if symptoms worsen.",
    "Adjusted medication dose. Recheck in 2 weeks.",
]


def _build_state(seed: int) -> ClinicState:
    """A deterministic clinic: 20 doctors, 24 patients, this week's slots, ~40 visits."""
    rng = random.Random(seed)
    state = ClinicState(seed=seed)
    now = datetime.fromisoformat(state.now)
    monday = now.date() - timedelta(days=now.weekday())

    def add_slot(doctor_id: str, start: datetime, status: Literal["available", "booked"]) -> Slot:
        slot = Slot(id=f"SL-{state.next_slot_id:03d}", doctor_id=doctor_id, start=stamp(start),
                    duration_min=30, status=status)
        state.next_slot_id += 1
        state.slots[slot.id] = slot
        return slot

    for i, (name, specialty) in enumerate(DOCTORS, start=1):
        did = f"DOC-{i:02d}"
        days = sorted(rng.sample(range(5), 2))
        state.doctors[did] = Doctor(
            id=did, name=name, specialty=specialty, room=f"{rng.choice('ABC')}{100 + i}",
            working_days=[WEEKDAYS[d] for d in days],
            accepting_new_patients=rng.random() < 0.8)
        for d in days:  # this week's published schedule
            for t in SLOT_TIMES:
                add_slot(did, datetime.combine(monday + timedelta(days=d), t), "available")

    by_specialty: dict[str, list[str]] = {}
    for doctor in state.doctors.values():
        by_specialty.setdefault(doctor.specialty, []).append(doctor.id)
    people = rng.sample([(f, last) for f in FIRST for last in LAST if f != "Priya"], 23)
    for n, (first, last) in enumerate([("Priya", "Raman"), *people]):
        child = n >= 20  # the last four patients are children seen by pediatrics
        pid = f"PAT-{state.next_patient_id:03d}"
        state.next_patient_id += 1
        born = date(rng.randrange(2012, 2022) if child else rng.randrange(1950, 2004),
                    rng.randrange(1, 13), rng.randrange(1, 29))
        state.patients[pid] = Patient(
            id=pid, name=f"{first} {last}", date_of_birth=born.isoformat(),
            phone=f"+1-555-{rng.randrange(100, 999)}-{rng.randrange(1000, 9999)}",
            email=f"{first.lower()}.{last.lower().replace(chr(39), '')}@mailbox.example",
            insurance=rng.choice(INSURERS),
            primary_doctor_id=rng.choice(by_specialty["pediatrics" if child
                                                      else "family_medicine"]))

    patients = list(state.patients.values())
    for patient in patients:  # one specialist referral each from their primary doctor
        specialty = rng.choice(REFERRAL_REQUIRED)
        issued = now.date() - timedelta(days=rng.randrange(10, 120))
        expires = issued + timedelta(days=REFERRAL_VALID_DAYS)
        rid = f"REF-{state.next_referral_id:03d}"
        state.next_referral_id += 1
        state.referrals[rid] = Referral(
            id=rid, patient_id=patient.id, from_doctor_id=patient.primary_doctor_id,
            specialty=specialty, reason=rng.choice(VISIT_REASONS[specialty]),
            status="open" if expires >= now.date() else "expired",
            issued_on=issued.isoformat(), expires_on=expires.isoformat())

    # Last week's visits, each on a slot of its own; stop at 28 of them.
    n = 0
    while sum(a.status != "scheduled" for a in state.appointments.values()) < 28:
        patient = patients[n % len(patients)]
        n += 1
        referral = next((r for r in state.referrals.values()
                         if r.patient_id == patient.id and r.status == "open"), None)
        specialty = rng.choice(
            ["pediatrics"] if patient.primary_doctor_id in by_specialty["pediatrics"] else
            ["family_medicine", "dermatology", "ophthalmology", "psychiatry"]
            + ([referral.specialty] * 2 if referral else []))
        doctor = state.doctors[rng.choice(by_specialty[specialty])]
        day = monday - timedelta(days=7 - WEEKDAYS.index(rng.choice(doctor.working_days)))
        start = stamp(datetime.combine(day, rng.choice(SLOT_TIMES)))
        if any(x.start == start and x.doctor_id == doctor.id for x in state.slots.values()) \
                or any(a.start == start and a.patient_id == patient.id
                       for a in state.appointments.values()):
            continue  # that hour was already taken
        _seed_visit(state, rng, patient, add_slot(doctor.id, datetime.fromisoformat(start),
                                                   "booked"), rng.choice(PAST_OUTCOMES), referral)

    # This week's bookings: two of them today, so that patients can be checked in.
    open_slots = [s for s in state.slots.values() if s.start >= state.now]
    today = [s for s in open_slots if s.start.startswith(state.now[:10])]
    for slot in rng.sample(today, 2) + rng.sample([s for s in open_slots if s not in today], 10):
        doctor = state.doctors[slot.doctor_id]
        pediatric = doctor.specialty == "pediatrics"
        candidates = [p for p in patients
                      if (p.primary_doctor_id in by_specialty["pediatrics"]) == pediatric
                      and (doctor.accepting_new_patients or p.primary_doctor_id == doctor.id)
                      and not any(a.patient_id == p.id and a.status == "scheduled"
                                  for a in state.appointments.values())]
        if candidates:
            patient = rng.choice(candidates)
            referral = next((r for r in state.referrals.values()
                             if r.patient_id == patient.id and r.status == "open"), None)
            _seed_visit(state, rng, patient, slot, "scheduled", referral)
    return state


def _seed_visit(state: ClinicState, rng: random.Random, patient: Patient, slot: Slot,
                status: AppointmentStatus, referral: Referral | None) -> None:
    """Record one seeded appointment (skipped where a specialist lacks a referral)."""
    doctor = state.doctors[slot.doctor_id]
    needs_referral = doctor.specialty in REFERRAL_REQUIRED
    if needs_referral and (referral is None or referral.specialty != doctor.specialty):
        slot.status = "available"  # the desk would never have booked it
        return
    start = datetime.fromisoformat(slot.start)
    appt = Appointment(
        id=f"APT-{state.next_appointment_id:03d}", patient_id=patient.id, doctor_id=doctor.id,
        slot_id=slot.id, start=slot.start, reason=rng.choice(VISIT_REASONS[doctor.specialty]),
        status=status, created_at=stamp(start - timedelta(days=rng.randrange(3, 20))),
        referral_id=referral.id if needs_referral and referral else None)
    state.next_appointment_id += 1
    state.appointments[appt.id] = appt
    slot.status = "available" if status == "cancelled" else "booked"
    if status == "cancelled":
        appt.cancel_reason = "Patient request"
    elif needs_referral and referral is not None:
        referral.status = "used"
    if status == "completed":
        nid = f"NOTE-{state.next_note_id:03d}"
        state.next_note_id += 1
        state.visit_notes[nid] = VisitNote(
            id=nid, appointment_id=appt.id, author_id=doctor.id, text=rng.choice(NOTE_TEXT),
            created_at=stamp(start + timedelta(minutes=40)))


class ClinicAppointments(Environment):
    """Front desk of an outpatient clinic: schedules, bookings, referrals, visit notes."""

    name = "clinic_appointments"
    domain = "health"
    description = ("An outpatient clinic's front desk for finding patients and doctors, "
                   "booking and rescheduling visits, referrals, check-in and visit notes.")
    State = ClinicState
    state: ClinicState

    @classmethod
    def default_state(cls) -> ClinicState:
        return _build_state(seed=0)

    # -- lookups --------------------------------------------------------------------

    def _patient(self, patient_id: str) -> Patient:
        if patient_id not in self.state.patients:
            raise ToolError(f"patient {patient_id!r} not found")
        return self.state.patients[patient_id]

    def _doctor(self, doctor_id: str) -> Doctor:
        if doctor_id not in self.state.doctors:
            raise ToolError(f"doctor {doctor_id!r} not found")
        return self.state.doctors[doctor_id]

    def _appointment(self, appointment_id: str) -> Appointment:
        if appointment_id not in self.state.appointments:
            raise ToolError(f"appointment {appointment_id!r} not found")
        return self.state.appointments[appointment_id]

    def _scheduled(self, appointment_id: str) -> Appointment:
        appt = self._appointment(appointment_id)
        if appt.status != "scheduled":
            raise ToolError(f"appointment {appointment_id} is {appt.status}, not scheduled")
        return appt

    def _bookable_slot(self, slot_id: str) -> Slot:
        if slot_id not in self.state.slots:
            raise ToolError(f"slot {slot_id!r} not found")
        slot = self.state.slots[slot_id]
        if slot.status != "available":
            raise ToolError(f"slot {slot_id} ({slot.start}) is already booked")
        if slot.start < self.state.now:
            raise ToolError(f"slot {slot_id} ({slot.start}) is in the past")
        return slot

    def _check_no_clash(self, patient_id: str, start: str, ignore: str | None = None) -> None:
        for appt in self.state.appointments.values():
            if appt.patient_id == patient_id and appt.start == start and appt.id != ignore \
                    and appt.status in ("scheduled", "checked_in"):
                raise ToolError(f"patient {patient_id} already has appointment {appt.id} at "
                                f"{start}")

    def _specialty(self, specialty: str) -> str:
        key = specialty.strip().lower().replace(" ", "_")
        offered = sorted({d.specialty for d in self.state.doctors.values()})
        if key not in offered:
            raise ToolError(f"unknown specialty {specialty!r}; offered: {', '.join(offered)}")
        return key

    def _day(self, value: str) -> str:
        try:
            return date.fromisoformat(value).isoformat()
        except ValueError:
            raise ToolError(f"date must be YYYY-MM-DD, got {value!r}") from None

    def _appointment_view(self, appt: Appointment) -> AppointmentView:
        doctor = self.state.doctors[appt.doctor_id]
        return AppointmentView(**appt.model_dump(),
                               patient=self.state.patients[appt.patient_id].name,
                               doctor=doctor.name, specialty=doctor.specialty, room=doctor.room)

    # -- tools ----------------------------------------------------------------------

    @tool
    def find_patient(self, query: str) -> list[Patient]:
        """Look up patients by name, phone, email or date of birth.

        Args:
            query: Case-insensitive part of the name, phone or email, or a full date of
                birth (YYYY-MM-DD).

        Returns:
            The matching patient records.
        """
        q = query.strip().lower()
        if not q:
            raise ToolError("query must not be empty")
        return [p for p in self.state.patients.values()
                if q in p.name.lower() or q in p.phone or q in p.email.lower()
                or q == p.date_of_birth]

    @tool
    def get_patient(self, patient_id: str) -> PatientRecord:
        """Show a patient's record with their appointments and referrals.

        Args:
            patient_id: The patient's id, e.g. "PAT-004".

        Returns:
            The patient plus `primary_doctor`, `appointments` (by date) and `referrals`.
        """
        patient = self._patient(patient_id)
        appts = sorted((a for a in self.state.appointments.values()
                        if a.patient_id == patient_id), key=lambda a: a.start)
        return PatientRecord(
            **patient.model_dump(),
            primary_doctor=self.state.doctors[patient.primary_doctor_id].name,
            appointments=[self._appointment_view(a) for a in appts],
            referrals=[r for r in self.state.referrals.values() if r.patient_id == patient_id])

    @tool
    def search_doctors(self, specialty: str | None = None, query: str = "") -> list[Doctor]:
        """Find the clinic's doctors by specialty and/or name.

        Args:
            specialty: e.g. "cardiology", "family_medicine", "dermatology".
            query: Case-insensitive part of the doctor's name.

        Returns:
            Matching doctors with specialty, room, working days and whether they accept
            new patients.
        """
        key = self._specialty(specialty) if specialty is not None else None
        q = query.strip().lower()
        return [d for d in self.state.doctors.values()
                if (key is None or d.specialty == key) and q in d.name.lower()]

    @tool
    def find_available_slots(self, doctor_id: str | None = None, specialty: str | None = None,
                             date: str | None = None) -> list[OpenSlot]:
        """List open, future appointment slots for a doctor or a whole specialty.

        Args:
            doctor_id: Only this doctor's slots.
            specialty: Only slots of doctors in this specialty (used if no doctor_id).
            date: Only slots on this day, YYYY-MM-DD.

        Returns:
            Open slots in time order: slot id, start, duration and the doctor.
        """
        if doctor_id is None and specialty is None:
            raise ToolError("give a doctor_id or a specialty")
        doctors = [self._doctor(doctor_id)] if doctor_id is not None else [
            d for d in self.state.doctors.values() if d.specialty == self._specialty(
                specialty or "")]
        day = self._day(date) if date is not None else None
        ids = {d.id for d in doctors}
        slots = [s for s in self.state.slots.values()
                 if s.doctor_id in ids and s.status == "available" and s.start >= self.state.now
                 and (day is None or s.start.startswith(day))]
        slots.sort(key=lambda s: (s.start, s.doctor_id))
        return [OpenSlot(**s.model_dump(exclude={"status"}),
                         doctor=self.state.doctors[s.doctor_id].name) for s in slots]

    @tool(write=True)
    def book_appointment(self, patient_id: str, slot_id: str, reason: str,
                         referral_id: str | None = None) -> AppointmentView:
        """Book a patient into an open slot.

        Specialists in cardiology, orthopedics, neurology, endocrinology and
        gastroenterology need an open referral for their specialty: the given one, or
        else the patient's open referral is used automatically.

        Args:
            patient_id: The patient to book.
            slot_id: An open, future slot (see find_available_slots).
            reason: Reason for the visit.
            referral_id: Referral to attach (optional).

        Returns:
            The scheduled appointment with doctor, room and time.
        """
        patient = self._patient(patient_id)
        slot = self._bookable_slot(slot_id)
        doctor = self.state.doctors[slot.doctor_id]
        if not reason.strip():
            raise ToolError("reason must not be empty")
        seen_before = any(a.patient_id == patient_id and a.doctor_id == doctor.id
                          and a.status == "completed" for a in self.state.appointments.values())
        if not doctor.accepting_new_patients and not seen_before \
                and patient.primary_doctor_id != doctor.id:
            raise ToolError(f"{doctor.name} is not accepting new patients")
        self._check_no_clash(patient_id, slot.start)
        referral = self._referral_for(patient, doctor, referral_id)
        appt = Appointment(id=f"APT-{self.state.next_appointment_id:03d}", patient_id=patient_id,
                           doctor_id=doctor.id, slot_id=slot.id, start=slot.start,
                           reason=reason.strip(), status="scheduled",
                           referral_id=referral.id if referral else None,
                           created_at=self.state.now)
        self.state.next_appointment_id += 1
        self.state.appointments[appt.id] = appt
        slot.status = "booked"
        if referral is not None:
            referral.status = "used"
        return self._appointment_view(appt)

    def _referral_for(self, patient: Patient, doctor: Doctor,
                      referral_id: str | None) -> Referral | None:
        """The referral a booking uses: None when the specialty needs none."""
        if referral_id is not None:
            ref = self.state.referrals.get(referral_id)
            if ref is None or ref.patient_id != patient.id:
                raise ToolError(f"referral {referral_id!r} not found for patient {patient.id}")
            if ref.status != "open" or ref.expires_on < self.state.now[:10]:
                state = "expired" if ref.status == "open" else ref.status
                raise ToolError(f"referral {ref.id} is {state}")
            if ref.specialty != doctor.specialty:
                raise ToolError(f"referral {ref.id} is for {ref.specialty}, not "
                                f"{doctor.specialty}")
            return ref
        if doctor.specialty not in REFERRAL_REQUIRED:
            return None
        for ref in self.state.referrals.values():
            if ref.patient_id == patient.id and ref.specialty == doctor.specialty \
                    and ref.status == "open" and ref.expires_on >= self.state.now[:10]:
                return ref
        raise ToolError(f"{doctor.name} ({doctor.specialty}) requires a referral; patient "
                        f"{patient.id} has no open {doctor.specialty} referral")

    @tool(write=True)
    def reschedule_appointment(self, appointment_id: str, new_slot_id: str) -> AppointmentView:
        """Move a scheduled appointment to another open slot of the same doctor.

        Args:
            appointment_id: The scheduled appointment.
            new_slot_id: An open, future slot of the same doctor.

        Returns:
            The updated appointment.
        """
        appt = self._scheduled(appointment_id)
        slot = self._bookable_slot(new_slot_id)
        if slot.doctor_id != appt.doctor_id:
            raise ToolError(f"slot {slot.id} belongs to {self.state.doctors[slot.doctor_id].name}"
                            f", not {self.state.doctors[appt.doctor_id].name}; cancel and book "
                            "a new appointment to change doctors")
        self._check_no_clash(appt.patient_id, slot.start, ignore=appt.id)
        self.state.slots[appt.slot_id].status = "available"
        slot.status = "booked"
        appt.slot_id, appt.start = slot.id, slot.start
        return self._appointment_view(appt)

    @tool(write=True)
    def cancel_appointment(self, appointment_id: str, reason: str) -> AppointmentView:
        """Cancel a scheduled appointment, freeing its slot and any referral it used.

        Cancelling less than 24 hours before the start is allowed but flagged as late.

        Args:
            appointment_id: The scheduled appointment.
            reason: Why it is cancelled.

        Returns:
            The cancelled appointment, with `late_cancellation`.
        """
        appt = self._scheduled(appointment_id)
        if not reason.strip():
            raise ToolError("reason must not be empty")
        start = datetime.fromisoformat(appt.start)
        appt.late_cancellation = start - datetime.fromisoformat(self.state.now) < timedelta(
            hours=LATE_CANCEL_HOURS)
        appt.status, appt.cancel_reason = "cancelled", reason.strip()
        self.state.slots[appt.slot_id].status = "available"
        if appt.referral_id is not None:
            self.state.referrals[appt.referral_id].status = "open"
        return self._appointment_view(appt)

    @tool
    def list_appointments(self, patient_id: str | None = None, doctor_id: str | None = None,
                          date: str | None = None,
                          status: AppointmentStatus | None = None) -> list[AppointmentView]:
        """List appointments in time order, filtered by patient, doctor, day and/or status.

        Args:
            patient_id: Only this patient's appointments.
            doctor_id: Only this doctor's appointments.
            date: Only appointments on this day, YYYY-MM-DD.
            status: scheduled, checked_in, completed, cancelled or no_show.

        Returns:
            Appointment records with patient and doctor names.
        """
        day = self._day(date) if date is not None else None
        appts = [a for a in self.state.appointments.values()
                 if (patient_id is None or a.patient_id == patient_id)
                 and (doctor_id is None or a.doctor_id == doctor_id)
                 and (day is None or a.start.startswith(day))
                 and (status is None or a.status == status)]
        return [self._appointment_view(a) for a in sorted(appts, key=lambda a: a.start)]

    @tool
    def get_appointment(self, appointment_id: str) -> AppointmentDetail:
        """Show one appointment with its visit notes.

        Args:
            appointment_id: The appointment's id, e.g. "APT-012".

        Returns:
            The appointment with patient, doctor, room and `notes`.
        """
        appt = self._appointment(appointment_id)
        return AppointmentDetail(
            **self._appointment_view(appt).model_dump(),
            notes=[n for n in self.state.visit_notes.values()
                   if n.appointment_id == appointment_id])

    @tool(write=True)
    def check_in_patient(self, appointment_id: str) -> AppointmentView:
        """Mark a patient as arrived for today's scheduled appointment.

        Args:
            appointment_id: A scheduled appointment taking place today.

        Returns:
            The checked-in appointment.
        """
        appt = self._scheduled(appointment_id)
        today = self.state.now[:10]
        if appt.start[:10] != today:
            raise ToolError(f"appointment {appointment_id} is on {appt.start[:10]}, not today "
                            f"({today})")
        appt.status = "checked_in"
        return self._appointment_view(appt)

    @tool(write=True)
    def create_referral(self, patient_id: str, from_doctor_id: str, specialty: str,
                        reason: str) -> Referral:
        """Issue a referral to a specialty, valid for 90 days.

        Only primary-care doctors (family medicine, pediatrics) issue referrals, and a
        patient holds at most one open referral per specialty.

        Args:
            patient_id: The patient being referred.
            from_doctor_id: The referring primary-care doctor.
            specialty: The specialty referred to, e.g. "cardiology".
            reason: Clinical reason for the referral.

        Returns:
            The open referral.
        """
        patient = self._patient(patient_id)
        doctor = self._doctor(from_doctor_id)
        key = self._specialty(specialty)
        if doctor.specialty not in PRIMARY_CARE:
            raise ToolError(f"{doctor.name} ({doctor.specialty}) cannot issue referrals; only "
                            "family medicine and pediatrics can")
        if key in PRIMARY_CARE:
            raise ToolError(f"{key} needs no referral")
        if not reason.strip():
            raise ToolError("reason must not be empty")
        for ref in self.state.referrals.values():
            if ref.patient_id == patient.id and ref.specialty == key and ref.status == "open" \
                    and ref.expires_on >= self.state.now[:10]:
                raise ToolError(f"patient {patient.id} already has an open {key} referral "
                                f"({ref.id})")
        issued = datetime.fromisoformat(self.state.now).date()
        ref = Referral(id=f"REF-{self.state.next_referral_id:03d}", patient_id=patient.id,
                       from_doctor_id=doctor.id, specialty=key, reason=reason.strip(),
                       status="open", issued_on=issued.isoformat(),
                       expires_on=(issued + timedelta(days=REFERRAL_VALID_DAYS)).isoformat())
        self.state.next_referral_id += 1
        self.state.referrals[ref.id] = ref
        return ref

    @tool(write=True)
    def add_visit_note(self, appointment_id: str, text: str) -> VisitNote:
        """File a note on a visit that took place (checked in or completed), by its doctor.

        Args:
            appointment_id: The appointment the note belongs to.
            text: The note's text.

        Returns:
            The saved note.
        """
        appt = self._appointment(appointment_id)
        if appt.status not in ("checked_in", "completed"):
            raise ToolError(f"appointment {appointment_id} is {appt.status}; notes can only be "
                            "added to visits that took place")
        if not text.strip():
            raise ToolError("text must not be empty")
        note = VisitNote(id=f"NOTE-{self.state.next_note_id:03d}", appointment_id=appt.id,
                         author_id=appt.doctor_id, text=text.strip(), created_at=self.state.now)
        self.state.next_note_id += 1
        self.state.visit_notes[note.id] = note
        return note

    @tool(write=True)
    def update_patient_contact(self, patient_id: str, phone: str | None = None,
                               email: str | None = None) -> Patient:
        """Change a patient's phone number and/or email address.

        Args:
            patient_id: The patient.
            phone: New phone number, e.g. "+1-555-201-7788".
            email: New email address.

        Returns:
            The updated patient record.
        """
        patient = self._patient(patient_id)
        if phone is None and email is None:
            raise ToolError("nothing to update: give phone and/or email")
        if phone is not None:
            if not PHONE_RE.match(phone.strip()):
                raise ToolError(f"{phone!r} is not a valid phone number")
            patient.phone = phone.strip()
        if email is not None:
            if not EMAIL_RE.match(email.strip()):
                raise ToolError(f"{email!r} is not a valid email address")
            patient.email = email.strip()
        return patient
