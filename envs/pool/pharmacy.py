"""A retail pharmacy counter: patients, prescriptions, dispensing, stock and copays.

The rules a pharmacist enforces before handing anything over are the point of this
environment: a fill must be authorized (active, unexpired, refills left, not too early),
safe (no allergy or major drug-interaction conflict) and possible (enough stock), and
what the patient pays depends on their insurance plan's copay for the drug's tier.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from envs.base import Environment, ToolError, tool
from envs.timestamps import Day, Timestamp, current_day

__all__ = ["Pharmacy", "PharmacyState"]

#: a refill is allowed once this fraction of the previous fill's days supply has elapsed
REFILL_THRESHOLD = 0.75
#: federal limits for controlled substances (schedules III-V)
CONTROLLED_MAX_REFILLS = 5
CONTROLLED_VALID_DAYS = 180


class InsurancePlan(BaseModel):
    id: str
    name: str
    #: formulary tier -> flat copay per fill; a tier missing here is not covered
    copays: dict[int, float]


class Patient(BaseModel):
    id: str
    name: str
    date_of_birth: Day
    phone: str
    allergies: list[str] = Field(default_factory=list)
    insurance_plan_id: str | None = None


class Drug(BaseModel):
    id: str
    name: str
    generic: str
    drug_class: str
    tier: int
    unit_price: float
    stock: int
    controlled: bool = False


class Prescription(BaseModel):
    id: str
    patient_id: str
    drug_id: str
    prescriber: str
    directions: str
    quantity: int
    days_supply: int
    refills_remaining: int
    written_on: Day
    expires_on: Day
    status: Literal["active", "on_hold", "cancelled"] = "active"


class Fill(BaseModel):
    id: str
    prescription_id: str
    quantity: int
    copay: float
    filled_on: Day
    #: whether this fill used up one of the prescription's refills (the first fill does not)
    was_refill: bool
    status: Literal["ready", "picked_up", "cancelled"] = "ready"
    picked_up_at: str | None = None


class Interaction(BaseModel):
    class_a: str
    class_b: str
    severity: Literal["major", "moderate"]
    effect: str


# -- what the tools return ---------------------------------------------------------------

#: an allergy or drug-interaction conflict (functional form: "with" is a keyword)
Conflict = TypedDict("Conflict", {
    "type": Literal["allergy", "interaction"],
    "severity": Annotated[Literal["major", "moderate"], Field(
        description="major conflicts block dispensing")],
    "with": Annotated[str, Field(description="The allergy, or the drug and prescription")],
    "effect": str,
})


class PrescriptionView(Prescription):
    drug_name: str
    expired: bool
    last_filled_on: Day | None
    refill_eligible_on: Day | None = Field(description="Earliest day a refill may be filled")


class NewPrescription(Prescription):
    drug_name: str
    warnings: list[Conflict] = Field(description="Moderate conflicts found on entry")


class PatientRecord(Patient):
    insurance_plan_name: str | None
    ready_for_pickup: list[Fill] = Field(description="Fills waiting for pickup")


class InteractionCheck(BaseModel):
    drug: str = Field(description="Drug name")
    safe: bool = Field(description="False if any conflict is major")
    conflicts: list[Conflict]


class CopayQuote(BaseModel):
    prescription_id: str
    drug: str = Field(description="Drug name")
    quantity: int
    cash_price: float = Field(description="Price without insurance")
    copay: float = Field(description="What the patient pays now")
    insurance_plan: str | None = Field(description="Plan name, if insured")
    covered: bool = Field(description="True if the plan covers this drug's tier")


class FillReceipt(Fill):
    drug: str = Field(description="Drug name")
    refills_remaining: int
    warnings: list[Conflict] = Field(description="Moderate conflicts dispensed despite")


class CancelledFill(Fill):
    stock: int = Field(description="Drug stock after the return")


class InsuranceChange(TypedDict):
    patient_id: str
    insurance_plan_id: str | None
    insurance_plan_name: str | None


class PharmacyState(BaseModel):
    seed: int = 0
    now: Timestamp = "2026-06-12T16:00:00"
    patients: dict[str, Patient] = Field(default_factory=dict)
    drugs: dict[str, Drug] = Field(default_factory=dict)
    insurance_plans: dict[str, InsurancePlan] = Field(default_factory=dict)
    prescriptions: dict[str, Prescription] = Field(default_factory=dict)
    fills: dict[str, Fill] = Field(default_factory=dict)
    interactions: list[Interaction] = Field(default_factory=list)
    next_patient_id: int = 1001
    next_prescription_id: int = 40001
    next_fill_id: int = 9001


# -- seed data ------------------------------------------------------------------------

_PLANS = [
    ("INS-BSP", "BlueShield Silver PPO", {1: 10.0, 2: 25.0, 3: 60.0}),
    ("INS-AGH", "Aetna Gold HMO", {1: 5.0, 2: 15.0, 3: 40.0, 4: 100.0}),
    ("INS-MPD", "Medicare Part D Standard", {1: 2.0, 2: 10.0, 3: 47.0, 4: 150.0}),
    ("INS-UCB", "UnitedCare Bronze", {1: 15.0, 2: 40.0}),
    ("INS-CPL", "Cigna Platinum", {1: 0.0, 2: 10.0, 3: 30.0, 4: 75.0}),
]

# name, generic, class, tier, cash price per unit, controlled, directions, quantity, days
_DRUGS = [
    ("Atorvastatin 20 mg tablet", "atorvastatin", "statin", 1, 0.35, False,
     "Take 1 tablet by mouth at bedtime", 30, 30),
    ("Simvastatin 40 mg tablet", "simvastatin", "statin", 1, 0.28, False,
     "Take 1 tablet by mouth every evening", 30, 30),
    ("Lisinopril 10 mg tablet", "lisinopril", "ACE inhibitor", 1, 0.22, False,
     "Take 1 tablet by mouth once daily", 30, 30),
    ("Metformin 500 mg tablet", "metformin", "biguanide", 1, 0.15, False,
     "Take 1 tablet by mouth twice daily with meals", 60, 30),
    ("Levothyroxine 50 mcg tablet", "levothyroxine", "thyroid hormone", 1, 0.40, False,
     "Take 1 tablet by mouth every morning on an empty stomach", 90, 90),
    ("Amlodipine 5 mg tablet", "amlodipine", "calcium channel blocker", 1, 0.25, False,
     "Take 1 tablet by mouth once daily", 90, 90),
    ("Sertraline 50 mg tablet", "sertraline", "SSRI", 1, 0.45, False,
     "Take 1 tablet by mouth once daily", 30, 30),
    ("Escitalopram 10 mg tablet", "escitalopram", "SSRI", 2, 0.90, False,
     "Take 1 tablet by mouth once daily", 30, 30),
    ("Tramadol 50 mg tablet", "tramadol", "opioid analgesic", 2, 0.60, True,
     "Take 1 tablet by mouth every 6 hours as needed for pain", 40, 10),
    ("Warfarin 5 mg tablet", "warfarin", "anticoagulant", 1, 0.30, False,
     "Take 1 tablet by mouth daily or as directed by the clinic", 30, 30),
    ("Apixaban 5 mg tablet", "apixaban", "anticoagulant", 3, 8.20, False,
     "Take 1 tablet by mouth twice daily", 60, 30),
    ("Ibuprofen 800 mg tablet", "ibuprofen", "NSAID", 1, 0.20, False,
     "Take 1 tablet by mouth three times daily with food", 30, 10),
    ("Naproxen 500 mg tablet", "naproxen", "NSAID", 1, 0.30, False,
     "Take 1 tablet by mouth twice daily with food", 28, 14),
    ("Clarithromycin 500 mg tablet", "clarithromycin", "macrolide antibiotic", 2, 2.10, False,
     "Take 1 tablet by mouth twice daily for 7 days", 14, 7),
    ("Azithromycin 250 mg tablet", "azithromycin", "macrolide antibiotic", 1, 1.50, False,
     "Take 2 tablets on day 1, then 1 tablet daily for 4 days", 6, 5),
    ("Amoxicillin 500 mg capsule", "amoxicillin", "penicillin antibiotic", 1, 0.35, False,
     "Take 1 capsule by mouth three times daily for 10 days", 30, 10),
    ("Cephalexin 500 mg capsule", "cephalexin", "cephalosporin antibiotic", 1, 0.55, False,
     "Take 1 capsule by mouth four times daily for 7 days", 28, 7),
    ("Spironolactone 25 mg tablet", "spironolactone", "potassium-sparing diuretic", 1, 0.40,
     False, "Take 1 tablet by mouth once daily", 30, 30),
    ("Sildenafil 50 mg tablet", "sildenafil", "PDE5 inhibitor", 2, 1.80, False,
     "Take 1 tablet by mouth 1 hour before activity as needed", 10, 30),
    ("Nitroglycerin 0.4 mg sublingual tablet", "nitroglycerin", "nitrate", 2, 0.95, False,
     "Dissolve 1 tablet under the tongue at onset of chest pain", 25, 30),
    ("Omeprazole 20 mg capsule", "omeprazole", "proton pump inhibitor", 1, 0.30, False,
     "Take 1 capsule by mouth before breakfast", 30, 30),
    ("Albuterol HFA inhaler", "albuterol", "bronchodilator", 2, 32.00, False,
     "Inhale 2 puffs every 4 to 6 hours as needed", 1, 30),
    ("Insulin glargine 100 units/mL pen", "insulin glargine", "insulin", 3, 95.00, False,
     "Inject 20 units under the skin at bedtime", 5, 30),
    ("Semaglutide 1 mg pen", "semaglutide", "GLP-1 agonist", 4, 230.00, False,
     "Inject 1 mg under the skin once weekly", 1, 28),
    ("Montelukast 10 mg tablet", "montelukast", "leukotriene antagonist", 1, 0.50, False,
     "Take 1 tablet by mouth every evening", 30, 30),
    ("Gabapentin 300 mg capsule", "gabapentin", "anticonvulsant", 1, 0.25, False,
     "Take 1 capsule by mouth three times daily", 90, 30),
]

_INTERACTIONS: list[tuple[str, str, Literal["major", "moderate"], str]] = [
    ("anticoagulant", "NSAID", "major", "greatly increased bleeding risk"),
    ("statin", "macrolide antibiotic", "major", "risk of muscle breakdown (rhabdomyolysis)"),
    ("SSRI", "opioid analgesic", "major", "risk of serotonin syndrome"),
    ("PDE5 inhibitor", "nitrate", "major", "dangerous drop in blood pressure"),
    ("ACE inhibitor", "potassium-sparing diuretic", "moderate", "raised potassium levels"),
    ("SSRI", "NSAID", "moderate", "increased risk of stomach bleeding"),
    ("anticoagulant", "macrolide antibiotic", "moderate", "stronger anticoagulant effect"),
    ("insulin", "GLP-1 agonist", "moderate", "increased risk of low blood sugar"),
]

_FIRST = ["Maria", "James", "Aisha", "Robert", "Mei", "Daniel", "Priya", "Thomas", "Sofia",
          "Kwame", "Hannah", "Luis", "Olivia", "Ethan", "Fatima", "George", "Yuki", "Grace",
          "Samuel", "Ingrid", "Carlos", "Nora", "Patrick", "Leila"]
_LAST = ["Gonzalez", "Whitfield", "Okafor", "Nakamura", "Brennan", "Haddad", "Kowalski",
         "Lindqvist", "Patel", "Moreau", "Sullivan", "Adeyemi", "Fischer", "Castillo",
         "Duarte", "Thompson", "Ivanova", "Reyes", "Chen", "O'Neill"]
_PRESCRIBERS = ["Dr. Ana Gomez", "Dr. Michael Osei", "Dr. Rachel Stein", "Dr. Vikram Rao",
                "Dr. Claire Dubois", "Dr. Henry Park"]
_ALLERGIES = ["penicillin", "sulfa", "codeine", "NSAID", "latex"]


def _seeded_state(seed: int) -> PharmacyState:
    rng = random.Random(seed)
    state = PharmacyState(seed=seed)
    today = date.fromisoformat(state.now[:10])
    state.insurance_plans = {
        pid: InsurancePlan(id=pid, name=name, copays=copays) for pid, name, copays in _PLANS
    }
    state.interactions = [Interaction(class_a=a, class_b=b, severity=sev, effect=effect)
                          for a, b, sev, effect in _INTERACTIONS]
    for i, (name, generic, cls, tier, price, controlled, *_rest) in enumerate(_DRUGS):
        drug_id = f"D-{101 + i}"
        stock = rng.choice([0, 12, 30, 45, 60, 90, 120, 180, 240, 300])
        if name.endswith(("pen", "inhaler")):
            stock = rng.randint(0, 8)
        state.drugs[drug_id] = Drug(id=drug_id, name=name, generic=generic, drug_class=cls,
                                    tier=tier, unit_price=price, stock=stock,
                                    controlled=controlled)
    names = rng.sample([(f, la) for f in _FIRST for la in _LAST], 24)
    plan_ids = [pid for pid, _, _ in _PLANS]
    for first, last in names:
        patient_id = f"PT-{state.next_patient_id}"
        state.next_patient_id += 1
        born = date(rng.randint(1940, 2004), rng.randint(1, 12), rng.randint(1, 28))
        allergies = [rng.choice(_ALLERGIES)] if rng.random() < 0.3 else []
        state.patients[patient_id] = Patient(
            id=patient_id, name=f"{first} {last}", date_of_birth=born.isoformat(),
            phone=f"555-{rng.randint(200, 989):03d}-{rng.randint(0, 9999):04d}",
            allergies=allergies,
            insurance_plan_id=rng.choice(plan_ids) if rng.random() < 0.85 else None)
    for patient in state.patients.values():
        safe = [d for d in state.drugs.values() if not _allergy_conflicts(patient, d)]
        for drug in rng.sample(safe, rng.randint(1, 2)):
            _seed_prescription(state, rng, patient, drug, today)
    return state


def _seed_prescription(
    state: PharmacyState, rng: random.Random, patient: Patient, drug: Drug, today: date
) -> None:
    """One prescription with a plausible fill history ending at or before `today`."""
    spec = next(d for d in _DRUGS if d[0] == drug.name)
    directions, quantity, days = spec[6], spec[7], spec[8]
    written = today - timedelta(days=rng.randint(5, 330))
    rx_id = f"RX-{state.next_prescription_id}"
    state.next_prescription_id += 1
    refills = 0 if drug.controlled else rng.choice([0, 1, 2, 3, 5, 11])
    rx = Prescription(
        id=rx_id, patient_id=patient.id, drug_id=drug.id, prescriber=rng.choice(_PRESCRIBERS),
        directions=directions, quantity=quantity, days_supply=days, refills_remaining=refills,
        written_on=written.isoformat(),
        expires_on=(written + timedelta(days=_valid_days(drug))).isoformat(),
        status="on_hold" if rng.random() < 0.1 else "active")
    state.prescriptions[rx_id] = rx
    fill_day, first = written + timedelta(days=rng.randint(0, 3)), True
    while fill_day <= today and (first or rx.refills_remaining > 0) and rng.random() < 0.8:
        ready = (today - fill_day).days <= 10 and rng.random() < 0.8
        fill_id = f"F-{state.next_fill_id}"
        state.next_fill_id += 1
        state.fills[fill_id] = Fill(
            id=fill_id, prescription_id=rx_id, quantity=quantity,
            copay=_copay(state, patient, drug, quantity), filled_on=fill_day.isoformat(),
            was_refill=not first, status="ready" if ready else "picked_up",
            picked_up_at=None if ready else f"{fill_day.isoformat()}T{rng.randint(9, 19)}:15:00")
        if not first:
            rx.refills_remaining -= 1
        first = False
        fill_day += timedelta(days=days + rng.randint(0, 6))


def _valid_days(drug: Drug) -> int:
    """How long a prescription for this drug stays valid after it is written."""
    return CONTROLLED_VALID_DAYS if drug.controlled else 365


def _allergy_conflicts(patient: Patient, drug: Drug) -> list[str]:
    """The patient's allergies that name this drug's generic name or drug class."""
    targets = f"{drug.generic} {drug.drug_class}".lower()
    return [a for a in patient.allergies if a.lower() in targets]


def _copay(state: PharmacyState, patient: Patient, drug: Drug, quantity: int) -> float:
    """What the patient pays: the plan's tier copay, never more than the cash price."""
    cash = round(drug.unit_price * quantity, 2)
    plan = state.insurance_plans.get(patient.insurance_plan_id or "")
    if plan is None or drug.tier not in plan.copays:
        return cash
    return min(plan.copays[drug.tier], cash)


class Pharmacy(Environment):
    """A pharmacy's dispensing system, as used by the staff at the counter."""

    name = "pharmacy"
    description = ("A retail pharmacy system for looking up patients and prescriptions, "
                   "checking drug interactions and copays, and dispensing refills from stock.")
    domain = "health"
    State = PharmacyState
    state: PharmacyState

    @classmethod
    def default_state(cls) -> PharmacyState:
        return _seeded_state(0)

    # -- lookups ------------------------------------------------------------------------

    def _patient(self, patient_id: str) -> Patient:
        if patient_id not in self.state.patients:
            raise ToolError(f"Patient {patient_id!r} not found.")
        return self.state.patients[patient_id]

    def _drug(self, drug_id: str) -> Drug:
        if drug_id not in self.state.drugs:
            raise ToolError(f"Drug {drug_id!r} not found.")
        return self.state.drugs[drug_id]

    def _prescription(self, prescription_id: str) -> Prescription:
        if prescription_id not in self.state.prescriptions:
            raise ToolError(f"Prescription {prescription_id!r} not found.")
        return self.state.prescriptions[prescription_id]

    def _fill(self, fill_id: str) -> Fill:
        if fill_id not in self.state.fills:
            raise ToolError(f"Fill {fill_id!r} not found.")
        return self.state.fills[fill_id]

    def _fills_of(self, rx: Prescription) -> list[Fill]:
        return [f for f in self.state.fills.values()
                if f.prescription_id == rx.id and f.status != "cancelled"]

    def _refill_eligible_on(self, rx: Prescription) -> date | None:
        fills = self._fills_of(rx)
        if not fills:
            return None
        last = max(date.fromisoformat(f.filled_on) for f in fills)
        return last + timedelta(days=int(rx.days_supply * REFILL_THRESHOLD))

    def _is_current(self, rx: Prescription) -> bool:
        """Active and not past its expiry date: the prescriptions a patient is taking."""
        return (rx.status == "active"
                and date.fromisoformat(rx.expires_on) >= current_day(self.state))

    def _rx_view(self, rx: Prescription) -> PrescriptionView:
        drug = self.state.drugs[rx.drug_id]
        fills = self._fills_of(rx)
        eligible = self._refill_eligible_on(rx)
        return PrescriptionView(
            **rx.model_dump(), drug_name=drug.name,
            expired=date.fromisoformat(rx.expires_on) < current_day(self.state),
            last_filled_on=max((f.filled_on for f in fills), default=None),
            refill_eligible_on=eligible.isoformat() if eligible else None,
        )

    def _conflicts(
        self, patient: Patient, drug: Drug, exclude_rx: str | None
    ) -> list[Conflict]:
        """Allergy and interaction conflicts of `drug` with the patient's current medicines."""
        found: list[Conflict] = [{"type": "allergy", "severity": "major", "with": allergy,
                  "effect": f"patient is allergic to {allergy}"}
                 for allergy in _allergy_conflicts(patient, drug)]
        for rx in self.state.prescriptions.values():
            if rx.patient_id != patient.id or rx.id == exclude_rx or not self._is_current(rx):
                continue
            other = self.state.drugs[rx.drug_id]
            for rule in self.state.interactions:
                if {rule.class_a, rule.class_b} == {drug.drug_class, other.drug_class}:
                    found.append({"type": "interaction", "severity": rule.severity,
                                  "with": f"{other.name} ({rx.id})", "effect": rule.effect})
        return found

    # -- read tools ---------------------------------------------------------------------

    @tool
    def find_patient(self, name: str, date_of_birth: str | None = None) -> list[Patient]:
        """Find patients whose name contains the given text (case-insensitive).

        Args:
            name: Full or partial patient name, e.g. "Chen" or "Mei Chen".
            date_of_birth: Optional YYYY-MM-DD date of birth to narrow the match.

        Returns:
            The matching patient records (possibly empty).
        """
        return [p for p in self.state.patients.values()
                if name.lower() in p.name.lower()
                and (date_of_birth is None or p.date_of_birth == date_of_birth)]

    @tool
    def get_patient(self, patient_id: str) -> PatientRecord:
        """Get a patient's profile, insurance plan and fills waiting for pickup.

        Args:
            patient_id: The patient id, e.g. "PT-1001".

        Returns:
            The patient record plus `insurance_plan_name` and `ready_for_pickup` fills.
        """
        patient = self._patient(patient_id)
        plan = self.state.insurance_plans.get(patient.insurance_plan_id or "")
        ready = [f for f in self.state.fills.values() if f.status == "ready"
                 and self.state.prescriptions[f.prescription_id].patient_id == patient_id]
        return PatientRecord(**patient.model_dump(),
                             insurance_plan_name=plan.name if plan else None,
                             ready_for_pickup=ready)

    @tool
    def list_prescriptions(
        self, patient_id: str, include_inactive: bool = False
    ) -> list[PrescriptionView]:
        """List a patient's prescriptions with refill status.

        Args:
            patient_id: The patient id.
            include_inactive: Also list cancelled and expired prescriptions.

        Returns:
            Prescriptions with drug name, refills remaining, expiry, last fill date and the
            earliest date a refill is allowed.
        """
        self._patient(patient_id)
        return [self._rx_view(rx) for rx in self.state.prescriptions.values()
                if rx.patient_id == patient_id
                and (include_inactive or (
                    rx.status != "cancelled"
                    and date.fromisoformat(rx.expires_on) >= current_day(self.state)))]

    @tool
    def search_drugs(self, query: str) -> list[Drug]:
        """Search the drug catalog by brand/strength name, generic name or drug class.

        Args:
            query: Text to look for, e.g. "statin", "ibuprofen" or "500 mg".

        Returns:
            Matching drugs with formulary tier, cash price per unit and units in stock.
        """
        q = query.lower()
        return [d for d in self.state.drugs.values()
                if q in d.name.lower() or q in d.generic or q in d.drug_class.lower()]

    @tool
    def list_insurance_plans(self) -> list[InsurancePlan]:
        """List the insurance plans the pharmacy bills, with copay per formulary tier.

        Returns:
            Plans with `copays` mapping tier -> flat copay; a missing tier is not covered.
        """
        return list(self.state.insurance_plans.values())

    @tool
    def check_interactions(self, patient_id: str, drug_id: str) -> InteractionCheck:
        """Check a drug against a patient's allergies and current prescriptions.

        Args:
            patient_id: The patient id.
            drug_id: The drug to check, e.g. "D-112".

        Returns:
            `safe` (false if any major conflict) and the list of `conflicts`.
        """
        patient, drug = self._patient(patient_id), self._drug(drug_id)
        conflicts = self._conflicts(patient, drug, exclude_rx=None)
        return InteractionCheck(drug=drug.name,
                                safe=all(c["severity"] != "major" for c in conflicts),
                                conflicts=conflicts)

    @tool
    def quote_copay(self, prescription_id: str, quantity: int | None = None) -> CopayQuote:
        """Quote what the patient would pay to fill a prescription now.

        Args:
            prescription_id: The prescription id, e.g. "RX-40001".
            quantity: Units to dispense; defaults to the prescribed quantity.

        Returns:
            Cash price, the patient's copay, and the insurance plan used (if any).
        """
        rx = self._prescription(prescription_id)
        qty = rx.quantity if quantity is None else quantity
        if qty <= 0:
            raise ToolError("Quantity must be positive.")
        patient, drug = self.state.patients[rx.patient_id], self.state.drugs[rx.drug_id]
        plan = self.state.insurance_plans.get(patient.insurance_plan_id or "")
        return CopayQuote(prescription_id=rx.id, drug=drug.name, quantity=qty,
                          cash_price=round(drug.unit_price * qty, 2),
                          copay=_copay(self.state, patient, drug, qty),
                          insurance_plan=plan.name if plan else None,
                          covered=plan is not None and drug.tier in plan.copays)

    # -- write tools --------------------------------------------------------------------

    @tool(write=True)
    def fill_prescription(
        self, prescription_id: str, quantity: int | None = None
    ) -> FillReceipt:
        """Dispense a prescription (first fill or refill) and put it in the pickup bin.

        Fails if the prescription is not active, expired, out of refills, too early to
        refill, already waiting for pickup, unsafe for the patient (allergy or major
        interaction) or the drug is short on stock. Moderate interactions are returned as
        warnings but do not block the fill.

        Args:
            prescription_id: The prescription id.
            quantity: Units to dispense (at most the prescribed quantity); defaults to it.

        Returns:
            The new fill (status "ready") and any moderate-interaction `warnings`.
        """
        rx = self._prescription(prescription_id)
        patient, drug = self.state.patients[rx.patient_id], self.state.drugs[rx.drug_id]
        qty = rx.quantity if quantity is None else quantity
        if rx.status != "active":
            raise ToolError(f"Prescription {rx.id} is {rx.status.replace('_', ' ')} "
                            "and cannot be filled.")
        if date.fromisoformat(rx.expires_on) < current_day(self.state):
            raise ToolError(f"Prescription {rx.id} expired on {rx.expires_on}; "
                            f"a new prescription is needed from {rx.prescriber}.")
        if not 0 < qty <= rx.quantity:
            raise ToolError(f"Quantity for {rx.id} must be between 1 and {rx.quantity}.")
        fills = self._fills_of(rx)
        if any(f.status == "ready" for f in fills):
            raise ToolError(f"Prescription {rx.id} already has a fill waiting for pickup.")
        if fills and rx.refills_remaining == 0:
            raise ToolError(f"Prescription {rx.id} has no refills remaining; "
                            f"contact {rx.prescriber} for a renewal.")
        eligible = self._refill_eligible_on(rx)
        if eligible is not None and eligible > current_day(self.state):
            raise ToolError(f"Prescription {rx.id} is too early to refill; "
                            f"eligible on {eligible.isoformat()}.")
        conflicts = self._conflicts(patient, drug, exclude_rx=rx.id)
        major = [c for c in conflicts if c["severity"] == "major"]
        if major:
            c = major[0]
            raise ToolError(f"Cannot fill {rx.id} ({drug.name}) for {patient.name}: major "
                            f"{c['type']} with {c['with']}: {c['effect']}.")
        if drug.stock < qty:
            raise ToolError(f"{drug.name} is out of stock: {drug.stock} units on hand, "
                            f"{qty} needed.")
        drug.stock -= qty
        if fills:
            rx.refills_remaining -= 1
        fill_id = f"F-{self.state.next_fill_id}"
        self.state.next_fill_id += 1
        fill = Fill(id=fill_id, prescription_id=rx.id, quantity=qty,
                    copay=_copay(self.state, patient, drug, qty),
                    filled_on=current_day(self.state).isoformat(), was_refill=bool(fills))
        self.state.fills[fill_id] = fill
        return FillReceipt(**fill.model_dump(), drug=drug.name,
                           refills_remaining=rx.refills_remaining, warnings=conflicts)

    @tool(write=True)
    def enter_prescription(
        self,
        patient_id: str,
        drug_id: str,
        prescriber: str,
        directions: str,
        quantity: int,
        days_supply: int,
        refills: int = 0,
    ) -> NewPrescription:
        """Enter a new prescription received from a prescriber (it is not filled yet).

        Conflicts with the patient's allergies or current prescriptions are returned as
        warnings; a major conflict will block filling it.

        Args:
            patient_id: The patient id.
            drug_id: The prescribed drug's id.
            prescriber: The prescriber's name, e.g. "Dr. Ana Gomez".
            directions: The dosing directions (sig) as written.
            quantity: Units per fill, positive.
            days_supply: Days one fill lasts, positive.
            refills: Refills authorized after the first fill (at most 5 for controlled drugs).

        Returns:
            The new prescription (status "active") and any `warnings`.
        """
        patient, drug = self._patient(patient_id), self._drug(drug_id)
        if quantity <= 0 or days_supply <= 0 or refills < 0:
            raise ToolError("Quantity and days supply must be positive and refills "
                            "non-negative.")
        if drug.controlled and refills > CONTROLLED_MAX_REFILLS:
            raise ToolError(f"{drug.name} is a controlled substance: at most "
                            f"{CONTROLLED_MAX_REFILLS} refills may be authorized.")
        rx_id = f"RX-{self.state.next_prescription_id}"
        self.state.next_prescription_id += 1
        today = current_day(self.state)
        rx = Prescription(
            id=rx_id, patient_id=patient.id, drug_id=drug.id, prescriber=prescriber,
            directions=directions, quantity=quantity, days_supply=days_supply,
            refills_remaining=refills, written_on=today.isoformat(),
            expires_on=(today + timedelta(days=_valid_days(drug))).isoformat())
        self.state.prescriptions[rx_id] = rx
        return NewPrescription(**rx.model_dump(), drug_name=drug.name,
                               warnings=self._conflicts(patient, drug, exclude_rx=rx_id))

    @tool(write=True)
    def mark_picked_up(self, fill_id: str) -> Fill:
        """Record that the patient collected a ready fill (and paid its copay).

        Args:
            fill_id: The fill id, e.g. "F-9012".

        Returns:
            The updated fill.
        """
        fill = self._fill(fill_id)
        if fill.status != "ready":
            raise ToolError(f"Fill {fill_id} is {fill.status.replace('_', ' ')}, "
                            "not ready for pickup.")
        fill.status, fill.picked_up_at = "picked_up", self.state.now
        return fill

    @tool(write=True)
    def cancel_fill(self, fill_id: str) -> CancelledFill:
        """Cancel a fill that has not been picked up: return it to stock, restore the refill.

        Args:
            fill_id: The fill id.

        Returns:
            The cancelled fill and the drug's stock after restocking.
        """
        fill = self._fill(fill_id)
        if fill.status != "ready":
            raise ToolError(f"Fill {fill_id} is {fill.status.replace('_', ' ')} "
                            "and cannot be cancelled.")
        rx = self.state.prescriptions[fill.prescription_id]
        drug = self.state.drugs[rx.drug_id]
        fill.status = "cancelled"
        drug.stock += fill.quantity
        if fill.was_refill:
            rx.refills_remaining += 1
        return CancelledFill(**fill.model_dump(), stock=drug.stock)

    @tool(write=True)
    def set_prescription_status(
        self, prescription_id: str, status: Literal["active", "on_hold", "cancelled"]
    ) -> Prescription:
        """Put a prescription on hold, reactivate it, or cancel it for good.

        Args:
            prescription_id: The prescription id.
            status: "on_hold" (patient does not want it filled yet), "active" or "cancelled".

        Returns:
            The updated prescription.
        """
        rx = self._prescription(prescription_id)
        if rx.status == "cancelled":
            raise ToolError(f"Prescription {rx.id} is cancelled and cannot be changed.")
        if rx.status == status:
            raise ToolError(f"Prescription {rx.id} is already {status.replace('_', ' ')}.")
        rx.status = status
        return rx

    @tool(write=True)
    def add_allergy(self, patient_id: str, allergy: str) -> Patient:
        """Record a drug allergy on a patient's profile.

        Args:
            patient_id: The patient id.
            allergy: The allergen as a generic name or drug class, e.g. "penicillin".

        Returns:
            The updated patient record.
        """
        patient = self._patient(patient_id)
        allergy = allergy.strip()
        if not allergy:
            raise ToolError("Allergy must not be empty.")
        if allergy.lower() in (a.lower() for a in patient.allergies):
            raise ToolError(f"{patient.name} already has a recorded allergy to {allergy}.")
        patient.allergies.append(allergy)
        return patient

    @tool(write=True)
    def set_insurance_plan(self, patient_id: str, plan_id: str | None) -> InsuranceChange:
        """Change (or remove, with null) the insurance plan billed for a patient.

        Args:
            patient_id: The patient id.
            plan_id: An insurance plan id from list_insurance_plans, or null for cash.

        Returns:
            The patient id and the new plan's id and name.
        """
        patient = self._patient(patient_id)
        if plan_id is not None and plan_id not in self.state.insurance_plans:
            raise ToolError(f"Insurance plan {plan_id!r} not found.")
        if patient.insurance_plan_id == plan_id:
            raise ToolError(f"{patient.name} is already on that insurance plan.")
        patient.insurance_plan_id = plan_id
        plan = self.state.insurance_plans.get(plan_id or "")
        return {"patient_id": patient.id, "insurance_plan_id": plan_id,
                "insurance_plan_name": plan.name if plan else None}

    @tool(write=True)
    def restock_drug(self, drug_id: str, quantity: int) -> Drug:
        """Add a received delivery to a drug's stock.

        Args:
            drug_id: The drug id.
            quantity: Units received, positive.

        Returns:
            The drug with its new stock level.
        """
        drug = self._drug(drug_id)
        if quantity <= 0:
            raise ToolError("Restock quantity must be positive.")
        drug.stock += quantity
        return drug
