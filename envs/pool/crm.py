"""CRM: companies, contacts, deals moving through a sales pipeline, activities and quotes.

A sales rep's everyday tool: look up accounts, log what happened, advance deals and
price quotes from a product catalog. The rules mirror ordinary CRM hygiene so that an
agent has to look before it writes: closed deals are frozen, a deal is only won on an
accepted quote, quotes move draft -> sent -> accepted/rejected, and discounts above a cap
need a manager.
"""

from __future__ import annotations

import random
import re
from datetime import date, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, Field

from envs.base import Environment, ToolError, tool
from envs.timestamps import Day, Timestamp, current_day, stamp

Stage = Literal["lead", "qualified", "proposal", "negotiation", "closed_won", "closed_lost"]
ActivityKind = Literal["call", "email", "meeting", "note"]
QuoteStatus = Literal["draft", "sent", "accepted", "rejected"]

OPEN_STAGES: tuple[str, ...] = ("lead", "qualified", "proposal", "negotiation")
#: Largest discount a rep may give on their own, in percent.
MAX_DISCOUNT_PCT = 25
QUOTE_VALIDITY_DAYS = 30
#: Which status a quote may move to from each status.
QUOTE_TRANSITIONS: dict[str, tuple[str, ...]] = {
    "draft": ("sent",),
    "sent": ("accepted", "rejected"),
    "accepted": (),
    "rejected": (),
}
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", re.IGNORECASE)


class Company(BaseModel):
    id: str
    name: str
    industry: str
    city: str
    employees: int
    website: str
    account_owner: str


class Contact(BaseModel):
    id: str
    company_id: str
    first_name: str
    last_name: str
    title: str
    email: str
    phone: str


class Deal(BaseModel):
    id: str
    company_id: str
    contact_id: str | None
    title: str
    amount: int = Field(description="expected value in whole US dollars")
    stage: Stage
    owner: str
    expected_close: Day = Field(description="YYYY-MM-DD")
    created_at: Timestamp
    closed_at: Timestamp | None = None
    lost_reason: str | None = None


class Activity(BaseModel):
    id: str
    deal_id: str
    contact_id: str | None
    kind: ActivityKind
    summary: str
    owner: str
    at: Timestamp


class Product(BaseModel):
    sku: str
    name: str
    unit_price: int = Field(description="list price in whole US dollars")


class QuoteLine(BaseModel):
    sku: str
    name: str
    quantity: int
    unit_price: int


class Quote(BaseModel):
    id: str
    deal_id: str
    lines: list[QuoteLine]
    discount_pct: int
    subtotal: int
    total: int
    status: QuoteStatus
    created_at: Timestamp
    valid_until: Day


# -- what the tools return ---------------------------------------------------------------


class DealSummary(BaseModel):
    """A deal as listed in the pipeline."""

    id: str
    title: str
    company_id: str
    company: str = Field(description="Company name")
    stage: Stage
    amount: int = Field(description="expected value in whole US dollars")
    owner: str
    expected_close: Day


class CompanyRecord(Company):
    """A company with its contacts and deal summaries."""

    contacts: list[Contact]
    deals: list[DealSummary]


class DealRecord(Deal):
    """A deal with its company name, primary contact, activities and quotes."""

    company: str = Field(description="Company name")
    contact: Contact | None = Field(description="Primary contact, if any")
    activities: list[Activity]
    quotes: list[Quote]


class CrmState(BaseModel):
    seed: int = 0
    now: Timestamp = "2026-03-16T09:00:00"
    #: the signed-in rep: owner of new deals and logged activities
    current_rep: str = "Priya Raman"
    reps: list[str] = Field(default_factory=list)
    products: dict[str, Product] = Field(default_factory=dict)
    companies: dict[str, Company] = Field(default_factory=dict)
    contacts: dict[str, Contact] = Field(default_factory=dict)
    deals: dict[str, Deal] = Field(default_factory=dict)
    activities: dict[str, Activity] = Field(default_factory=dict)
    quotes: dict[str, Quote] = Field(default_factory=dict)
    next_company_id: int = 1
    next_contact_id: int = 1
    next_deal_id: int = 1
    next_activity_id: int = 1
    next_quote_id: int = 1


# -- seed data ----------------------------------------------------------------------

REPS = ["Priya Raman", "Marcus Bell", "Elena Petrova", "Tomás Herrera", "Grace Liu"]

PRODUCTS = [
    ("SEAT-STD", "Standard seat (annual)", 480),
    ("SEAT-PRO", "Pro seat (annual)", 900),
    ("SEAT-ENT", "Enterprise seat (annual)", 1500),
    ("ONB-PKG", "Onboarding package", 3500),
    ("TRAIN-DAY", "On-site training day", 1800),
    ("DATA-MIG", "Data migration service", 5000),
    ("SSO-ADDON", "SSO & SCIM add-on (annual)", 2400),
    ("SUP-PREM", "Premium support (annual)", 6000),
    ("API-10K", "API bundle, 10k calls/month (annual)", 1200),
    ("STOR-1TB", "Extra storage, 1 TB (annual)", 600),
    ("AUDIT-LOG", "Audit log retention (annual)", 1800),
    ("SANDBOX", "Sandbox environment (annual)", 2000),
]

SEAT_SKUS = ("SEAT-STD", "SEAT-PRO", "SEAT-ENT")

COMPANIES = [
    ("Lumen Analytics", "software"),
    ("Brightwater Foods", "food & beverage"),
    ("Granite Peak Outfitters", "retail"),
    ("Bluebird Home Health", "healthcare"),
    ("Atlas Civil Engineering", "engineering"),
    ("Sundial Solar", "energy"),
    ("Redwood Credit Union", "financial services"),
    ("Meridian Hotels", "hospitality"),
    ("Kestrel Aviation Services", "aviation"),
    ("Oakline Furniture", "manufacturing"),
    ("Pinecrest Academy", "education"),
    ("Vantage Legal LLP", "legal"),
    ("Helios Biotech", "biotech"),
    ("Tidewater Marine Supply", "wholesale"),
    ("Quarry Lane Brewing", "food & beverage"),
    ("Silverline Media", "media"),
    ("Orbit Freight", "logistics"),
    ("Copperleaf Architects", "architecture"),
    ("Evergreen Property Management", "real estate"),
    ("Summit Physical Therapy", "healthcare"),
    ("Northstar Insurance Brokers", "insurance"),
    ("Fieldstone Agritech", "agriculture"),
]
CITIES = ["Austin", "Denver", "Seattle", "Chicago", "Boston", "Portland", "Atlanta", "San Diego"]
FIRST_NAMES = [
    "Olivia", "Liam", "Amara", "Noah", "Sofia", "Ethan", "Hannah", "Mateo", "Chloe", "Daniel",
    "Yuki", "Omar", "Isabel", "Lucas", "Fatima", "Jacob", "Nadia", "Samuel", "Leah", "Victor",
    "Camille", "Arjun", "Rosa", "Felix",
]
LAST_NAMES = [
    "Nguyen", "Okafor", "Schmidt", "Patel", "Romero", "Kowalski", "Brennan", "Tanaka", "Haddad",
    "Lindqvist", "Moreau", "Castillo", "Adeyemi", "Fischer", "Sato", "Reyes", "Novak", "Byrne",
]
TITLES = [
    "Head of Operations", "VP Finance", "IT Director", "Procurement Manager", "CTO",
    "Office Manager", "COO", "Data Lead", "Controller", "Director of Sales Operations",
]
DEAL_KINDS = [
    "Team rollout", "Enterprise upgrade", "Analytics expansion", "Pilot", "Renewal",
    "Data migration project", "Regional rollout", "Security add-on",
]
ACTIVITY_SUMMARIES = {
    "call": ["Discovery call: mapped current reporting workflow",
             "Pricing call; they asked about volume discounts",
             "Check-in call, budget confirmed for Q2"],
    "email": ["Sent product overview deck", "Followed up on security questionnaire",
              "Shared case study from a similar customer"],
    "meeting": ["Demo for the operations team", "On-site workshop with stakeholders",
                "Negotiation meeting with procurement"],
    "note": ["Champion is moving teams next quarter", "Competitor also in evaluation",
             "Legal review expected to take two weeks"],
}


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", name.lower().replace("llp", ""))


def _build_state(seed: int) -> CrmState:
    """A deterministic book of business: 22 companies, 44 contacts, 30 deals, quotes."""
    rng = random.Random(seed)
    state = CrmState(seed=seed, reps=list(REPS))
    now = datetime.fromisoformat(state.now)
    state.products = {sku: Product(sku=sku, name=n, unit_price=p) for sku, n, p in PRODUCTS}

    for name, industry in COMPANIES:
        cid = f"CO-{state.next_company_id:03d}"
        state.next_company_id += 1
        state.companies[cid] = Company(
            id=cid, name=name, industry=industry, city=rng.choice(CITIES),
            employees=rng.choice([18, 45, 80, 140, 260, 520, 1100, 2400]),
            website=f"https://www.{_slug(name)}.com", account_owner=rng.choice(REPS))

    people = rng.sample([(f, last) for f in FIRST_NAMES for last in LAST_NAMES],
                        2 * len(state.companies))
    for i, company in enumerate(state.companies.values()):
        for first, last in people[2 * i: 2 * i + 2]:
            ctid = f"CT-{state.next_contact_id:03d}"
            state.next_contact_id += 1
            state.contacts[ctid] = Contact(
                id=ctid, company_id=company.id, first_name=first, last_name=last,
                title=rng.choice(TITLES),
                email=f"{first.lower()}.{last.lower()}@{_slug(company.name)}.com",
                phone=f"+1-555-{rng.randrange(200, 999)}-{rng.randrange(1000, 9999)}")

    stages = ["lead"] * 6 + ["qualified"] * 6 + ["proposal"] * 6 + ["negotiation"] * 5 \
        + ["closed_won"] * 4 + ["closed_lost"] * 3
    company_ids = list(state.companies)
    for stage in stages:
        company = state.companies[rng.choice(company_ids)]
        contacts = [c.id for c in state.contacts.values() if c.company_id == company.id]
        did = f"DL-{state.next_deal_id:03d}"
        state.next_deal_id += 1
        created = now - timedelta(days=rng.randrange(20, 120))
        deal = Deal(
            id=did, company_id=company.id, contact_id=rng.choice(contacts),
            title=f"{company.name} - {rng.choice(DEAL_KINDS)}",
            amount=rng.randrange(6, 160) * 1000, stage=stage,  # type: ignore[arg-type]
            owner=rng.choice(REPS), created_at=stamp(created),
            expected_close=(now + timedelta(days=rng.randrange(10, 120))).date().isoformat())
        if stage.startswith("closed"):
            closed = created + timedelta(days=rng.randrange(5, 18))
            deal.closed_at = stamp(closed)
            deal.expected_close = closed.date().isoformat()
            if stage == "closed_lost":
                deal.lost_reason = rng.choice(["Chose a competitor", "Budget cut",
                                               "No decision"])
        state.deals[did] = deal

    for deal in state.deals.values():
        for _ in range(rng.randrange(1, 3)):
            kind: ActivityKind = rng.choice(["call", "email", "meeting", "note"])
            aid = f"AC-{state.next_activity_id:03d}"
            state.next_activity_id += 1
            at = datetime.fromisoformat(deal.created_at) + timedelta(
                days=rng.randrange(0, 5), hours=rng.randrange(1, 8))
            state.activities[aid] = Activity(
                id=aid, deal_id=deal.id, contact_id=deal.contact_id, kind=kind,
                summary=rng.choice(ACTIVITY_SUMMARIES[kind]), owner=deal.owner, at=stamp(at))

    # Quote history per stage: negotiations and lost deals carry an earlier rejected quote.
    history: dict[str, list[QuoteStatus]] = {
        "proposal": ["draft"], "negotiation": ["rejected", "sent"],
        "closed_won": ["accepted"], "closed_lost": ["rejected"]}
    services = [sku for sku in state.products if sku not in SEAT_SKUS]
    for deal in state.deals.values():
        for age, status in enumerate(reversed(history.get(deal.stage, []))):
            created = datetime.fromisoformat(deal.closed_at or state.now) - timedelta(
                days=rng.randrange(2, 10) + 12 * age)
            # seats sized to roughly the deal's value, plus a service or two
            seat = rng.choice(SEAT_SKUS)
            extras = rng.sample(services, rng.randrange(0, 3))
            seats = max(1, round(deal.amount * 0.8 / state.products[seat].unit_price))
            quote = _price_quote(state, f"QT-{state.next_quote_id:03d}", deal.id,
                                 [seat, *extras], [seats] + [1] * len(extras),
                                 rng.choice([0, 5, 10, 15]), status, created)
            state.next_quote_id += 1
            state.quotes[quote.id] = quote
            if status == "accepted":
                deal.amount = quote.total
    return state


def _price_quote(state: CrmState, quote_id: str, deal_id: str, skus: list[str],
                 quantities: list[int], discount_pct: int, status: QuoteStatus,
                 created: datetime) -> Quote:
    lines = [QuoteLine(sku=s, name=state.products[s].name, quantity=q,
                       unit_price=state.products[s].unit_price)
             for s, q in zip(skus, quantities, strict=True)]
    subtotal = sum(line.quantity * line.unit_price for line in lines)
    return Quote(
        id=quote_id, deal_id=deal_id, lines=lines, discount_pct=discount_pct,
        subtotal=subtotal, total=round(subtotal * (100 - discount_pct) / 100),
        status=status, created_at=stamp(created),
        valid_until=(created + timedelta(days=QUOTE_VALIDITY_DAYS)).date().isoformat())


class Crm(Environment):
    """Companies, contacts, a deal pipeline, logged activities and priced quotes."""

    name = "crm"
    domain = "commerce"
    description = ("A sales CRM with companies, contacts, deals in pipeline stages, "
                   "logged activities and product quotes.")
    State = CrmState
    state: CrmState

    @classmethod
    def default_state(cls) -> CrmState:
        return _build_state(seed=0)

    # -- lookups --------------------------------------------------------------------

    def _company(self, company_id: str) -> Company:
        if company_id not in self.state.companies:
            raise ToolError(f"company {company_id!r} not found")
        return self.state.companies[company_id]

    def _contact(self, contact_id: str) -> Contact:
        if contact_id not in self.state.contacts:
            raise ToolError(f"contact {contact_id!r} not found")
        return self.state.contacts[contact_id]

    def _deal(self, deal_id: str) -> Deal:
        if deal_id not in self.state.deals:
            raise ToolError(f"deal {deal_id!r} not found")
        return self.state.deals[deal_id]

    def _open_deal(self, deal_id: str) -> Deal:
        deal = self._deal(deal_id)
        if deal.stage not in OPEN_STAGES:
            raise ToolError(f"deal {deal_id} is {deal.stage}; closed deals cannot be changed")
        return deal

    def _future_date(self, value: str, field: str) -> str:
        try:
            day = date.fromisoformat(value)
        except ValueError:
            raise ToolError(f"{field} must be a date in YYYY-MM-DD format, got {value!r}") \
                from None
        if day < current_day(self.state):
            raise ToolError(f"{field} {value} is in the past (today is {current_day(self.state)})")
        return day.isoformat()

    def _contact_of_company(self, contact_id: str, company_id: str) -> str:
        contact = self._contact(contact_id)
        if contact.company_id != company_id:
            company = self.state.companies[company_id].name
            raise ToolError(f"contact {contact_id} ({contact.first_name} {contact.last_name}) "
                            f"does not work at {company}")
        return contact_id

    def _deal_summary(self, deal: Deal) -> DealSummary:
        return DealSummary(id=deal.id, title=deal.title, company_id=deal.company_id,
                           company=self.state.companies[deal.company_id].name,
                           stage=deal.stage, amount=deal.amount, owner=deal.owner,
                           expected_close=deal.expected_close)

    # -- tools ----------------------------------------------------------------------

    @tool
    def search_companies(self, query: str = "", industry: str | None = None) -> list[Company]:
        """Find companies by name and/or industry.

        Args:
            query: Case-insensitive part of the company name; empty matches every company.
            industry: Exact industry to filter on (e.g. "healthcare"), case-insensitive.

        Returns:
            The matching companies, ordered by id.
        """
        q = query.strip().lower()
        return [c for c in self.state.companies.values()
                if q in c.name.lower()
                and (industry is None or c.industry.lower() == industry.strip().lower())]

    @tool
    def get_company(self, company_id: str) -> CompanyRecord:
        """Show one company with its contacts and all of its deals.

        Args:
            company_id: The company's id, e.g. "CO-004".

        Returns:
            The company record plus `contacts` and `deals` (summaries).
        """
        company = self._company(company_id)
        return CompanyRecord(
            **company.model_dump(),
            contacts=[c for c in self.state.contacts.values() if c.company_id == company_id],
            deals=[self._deal_summary(d) for d in self.state.deals.values()
                   if d.company_id == company_id])

    @tool
    def search_contacts(self, query: str = "", company_id: str | None = None) -> list[Contact]:
        """Find contacts by name or email, optionally within one company.

        Args:
            query: Case-insensitive part of the full name or email; empty matches all.
            company_id: Only contacts of this company.

        Returns:
            The matching contacts, ordered by id.
        """
        if company_id is not None:
            self._company(company_id)
        q = query.strip().lower()
        return [c for c in self.state.contacts.values()
                if (q in f"{c.first_name} {c.last_name}".lower() or q in c.email.lower())
                and (company_id is None or c.company_id == company_id)]

    @tool(write=True)
    def add_contact(self, company_id: str, first_name: str, last_name: str, email: str,
                    title: str = "", phone: str = "") -> Contact:
        """Add a person to a company's contacts.

        Args:
            company_id: The company the person works at.
            first_name: Given name.
            last_name: Family name.
            email: Work email address; must be unique across all contacts.
            title: Job title.
            phone: Phone number.

        Returns:
            The new contact.
        """
        self._company(company_id)
        if not first_name.strip() or not last_name.strip():
            raise ToolError("first_name and last_name must not be empty")
        if not EMAIL_RE.match(email):
            raise ToolError(f"{email!r} is not a valid email address")
        for other in self.state.contacts.values():
            if other.email.lower() == email.lower():
                raise ToolError(f"a contact with email {email} already exists ({other.id})")
        contact = Contact(id=f"CT-{self.state.next_contact_id:03d}", company_id=company_id,
                          first_name=first_name.strip(), last_name=last_name.strip(),
                          title=title, email=email, phone=phone)
        self.state.next_contact_id += 1
        self.state.contacts[contact.id] = contact
        return contact

    @tool
    def list_deals(self, stage: Stage | None = None, owner: str | None = None,
                   company_id: str | None = None) -> list[DealSummary]:
        """List deals in the pipeline, optionally filtered.

        Args:
            stage: Only deals in this pipeline stage.
            owner: Only deals owned by this rep (full name, case-insensitive).
            company_id: Only deals with this company.

        Returns:
            Deal summaries (id, title, company, stage, amount, owner, expected_close).
        """
        return [self._deal_summary(d) for d in self.state.deals.values()
                if (stage is None or d.stage == stage)
                and (owner is None or d.owner.lower() == owner.strip().lower())
                and (company_id is None or d.company_id == company_id)]

    @tool
    def get_deal(self, deal_id: str) -> DealRecord:
        """Show one deal with its primary contact, activities and quotes.

        Args:
            deal_id: The deal's id, e.g. "DL-012".

        Returns:
            The deal record plus `company`, `contact`, `activities` and `quotes`.
        """
        deal = self._deal(deal_id)
        return DealRecord(
            **deal.model_dump(), company=self.state.companies[deal.company_id].name,
            contact=self.state.contacts.get(deal.contact_id or ""),
            activities=[a for a in self.state.activities.values() if a.deal_id == deal_id],
            quotes=[q for q in self.state.quotes.values() if q.deal_id == deal_id])

    @tool(write=True)
    def create_deal(self, company_id: str, title: str, amount: int, expected_close: str,
                    contact_id: str | None = None) -> Deal:
        """Open a new deal (stage "lead") owned by the signed-in rep.

        Args:
            company_id: The company the deal is with.
            title: Short name of the opportunity.
            amount: Expected value in whole US dollars, positive.
            expected_close: Expected close date, YYYY-MM-DD, not in the past.
            contact_id: Primary contact; must work at the company.

        Returns:
            The new deal.
        """
        self._company(company_id)
        if not title.strip():
            raise ToolError("title must not be empty")
        if amount <= 0:
            raise ToolError(f"amount must be positive, got {amount}")
        close = self._future_date(expected_close, "expected_close")
        if contact_id is not None:
            self._contact_of_company(contact_id, company_id)
        deal = Deal(id=f"DL-{self.state.next_deal_id:03d}", company_id=company_id,
                    contact_id=contact_id, title=title.strip(), amount=amount, stage="lead",
                    owner=self.state.current_rep, expected_close=close,
                    created_at=self.state.now)
        self.state.next_deal_id += 1
        self.state.deals[deal.id] = deal
        return deal

    @tool(write=True)
    def update_deal(self, deal_id: str, amount: int | None = None,
                    expected_close: str | None = None, owner: str | None = None,
                    contact_id: str | None = None) -> Deal:
        """Change an open deal's amount, expected close date, owner or primary contact.

        Args:
            deal_id: The deal to change.
            amount: New expected value in whole US dollars, positive.
            expected_close: New expected close date, YYYY-MM-DD, not in the past.
            owner: New owning rep (full name of a rep on the team).
            contact_id: New primary contact; must work at the deal's company.

        Returns:
            The updated deal.
        """
        deal = self._open_deal(deal_id)
        if amount is None and expected_close is None and owner is None and contact_id is None:
            raise ToolError("nothing to update: give amount, expected_close, owner or contact_id")
        if amount is not None:
            if amount <= 0:
                raise ToolError(f"amount must be positive, got {amount}")
            deal.amount = amount
        if expected_close is not None:
            deal.expected_close = self._future_date(expected_close, "expected_close")
        if owner is not None:
            matches = [r for r in self.state.reps if r.lower() == owner.strip().lower()]
            if not matches:
                raise ToolError(f"unknown sales rep {owner!r}; reps: {', '.join(self.state.reps)}")
            deal.owner = matches[0]
        if contact_id is not None:
            deal.contact_id = self._contact_of_company(contact_id, deal.company_id)
        return deal

    @tool(write=True)
    def move_deal_stage(self, deal_id: str, stage: Stage,
                        lost_reason: str | None = None) -> Deal:
        """Move an open deal to another pipeline stage, or close it as won or lost.

        Closing as won requires an accepted quote on the deal; closing as lost requires a
        reason. Closed deals cannot move again.

        Args:
            deal_id: The deal to move.
            stage: Target stage: lead, qualified, proposal, negotiation, closed_won or
                closed_lost.
            lost_reason: Why the deal was lost (required for closed_lost).

        Returns:
            The updated deal.
        """
        deal = self._open_deal(deal_id)
        if deal.stage == stage:
            raise ToolError(f"deal {deal_id} is already in stage {stage!r}")
        if stage == "closed_lost":
            if not (lost_reason or "").strip():
                raise ToolError(f"a lost_reason is required to close deal {deal_id} as lost")
            deal.lost_reason = (lost_reason or "").strip()
        if stage == "closed_won" and not any(
                q.deal_id == deal_id and q.status == "accepted"
                for q in self.state.quotes.values()):
            raise ToolError(f"deal {deal_id} has no accepted quote; "
                            "accept a quote before closing it as won")
        deal.stage = stage
        if stage not in OPEN_STAGES:
            deal.closed_at = self.state.now
        return deal

    @tool(write=True)
    def log_activity(self, deal_id: str, kind: ActivityKind, summary: str,
                     contact_id: str | None = None) -> Activity:
        """Record a call, email, meeting or note on a deal, timestamped now.

        Args:
            deal_id: The deal the activity belongs to.
            kind: call, email, meeting or note.
            summary: What happened, in one or two sentences.
            contact_id: The contact involved; must work at the deal's company.

        Returns:
            The logged activity.
        """
        deal = self._deal(deal_id)
        if not summary.strip():
            raise ToolError("summary must not be empty")
        if contact_id is not None:
            self._contact_of_company(contact_id, deal.company_id)
        activity = Activity(id=f"AC-{self.state.next_activity_id:03d}", deal_id=deal_id,
                            contact_id=contact_id, kind=kind, summary=summary.strip(),
                            owner=self.state.current_rep, at=self.state.now)
        self.state.next_activity_id += 1
        self.state.activities[activity.id] = activity
        return activity

    @tool
    def list_products(self) -> list[Product]:
        """List the product catalog that quotes are priced from.

        Returns:
            Every product with its SKU, name and list unit price in US dollars.
        """
        return list(self.state.products.values())

    @tool(write=True)
    def create_quote(self, deal_id: str, skus: list[str], quantities: list[int],
                     discount_pct: int = 0) -> Quote:
        """Create a draft quote on an open deal from catalog products.

        Args:
            deal_id: The deal to quote.
            skus: Product SKUs, one per line (see list_products).
            quantities: Quantity for each SKU, same order and length as skus, each >= 1.
            discount_pct: Whole-percent discount on the subtotal, 0-25 (more needs a
                manager's approval outside this system).

        Returns:
            The draft quote with subtotal, total and validity date (30 days).
        """
        self._open_deal(deal_id)
        if not skus:
            raise ToolError("a quote needs at least one product")
        if len(skus) != len(quantities):
            raise ToolError(f"got {len(skus)} skus but {len(quantities)} quantities")
        for sku in skus:
            if sku not in self.state.products:
                raise ToolError(f"unknown product SKU {sku!r}")
        if len(set(skus)) != len(skus):
            raise ToolError("each SKU may appear only once per quote")
        if any(q < 1 for q in quantities):
            raise ToolError("every quantity must be at least 1")
        if not 0 <= discount_pct <= MAX_DISCOUNT_PCT:
            raise ToolError(f"discount of {discount_pct}% is outside 0-{MAX_DISCOUNT_PCT}%; "
                            "larger discounts need manager approval")
        quote = _price_quote(self.state, f"QT-{self.state.next_quote_id:03d}", deal_id, skus,
                             quantities, discount_pct, "draft",
                             datetime.fromisoformat(self.state.now))
        self.state.next_quote_id += 1
        self.state.quotes[quote.id] = quote
        return quote

    @tool(write=True)
    def update_quote_status(self, quote_id: str,
                            status: Literal["sent", "accepted", "rejected"]) -> Quote:
        """Advance a quote: draft -> sent, then sent -> accepted or rejected.

        Accepting a quote sets its deal's amount to the quote total; a deal can have only
        one accepted quote, and an expired quote cannot be accepted.

        Args:
            quote_id: The quote to update, e.g. "QT-007".
            status: sent, accepted or rejected.

        Returns:
            The updated quote.
        """
        if quote_id not in self.state.quotes:
            raise ToolError(f"quote {quote_id!r} not found")
        quote = self.state.quotes[quote_id]
        allowed = QUOTE_TRANSITIONS[quote.status]
        if status not in allowed:
            hint = ", ".join(allowed) if allowed else "none (final status)"
            raise ToolError(f"cannot change quote {quote_id} from {quote.status!r} to "
                            f"{status!r}; allowed: {hint}")
        if status == "accepted":
            deal = self._open_deal(quote.deal_id)
            if date.fromisoformat(quote.valid_until) < current_day(self.state):
                raise ToolError(f"quote {quote_id} expired on {quote.valid_until}")
            for other in self.state.quotes.values():
                if other.deal_id == deal.id and other.status == "accepted":
                    raise ToolError(f"deal {deal.id} already has an accepted quote ({other.id})")
            deal.amount = quote.total
        quote.status = status
        return quote
