"""Company expense reporting: expense items, reports, approval and reimbursement.

Employees log expense items, bundle them into reports and submit them; the submitter's
manager approves or rejects; Finance reimburses approved reports. A report can only be
submitted when every item meets the per-category policy (amount limit, receipt
threshold, claim window), which is what makes the workflow worth automating carefully.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Literal, get_args

from pydantic import BaseModel, Field

from envs.base import Environment, ToolError, tool
from envs.timestamps import Day, Timestamp, current_day

__all__ = ["ExpenseReports", "ExpenseReportsState"]

Category = Literal["airfare", "lodging", "meals", "client_entertainment", "ground_transport",
                   "conference_fees", "office_supplies", "software"]
CATEGORIES: tuple[Category, ...] = get_args(Category)
ReportStatus = Literal["draft", "submitted", "approved", "rejected", "reimbursed"]

#: items older than this many days (at submission) can no longer be claimed
CLAIM_WINDOW_DAYS = 90
#: report statuses whose items may still be edited
EDITABLE = ("draft", "rejected")


class CategoryPolicy(BaseModel):
    category: str
    limit_per_item: float
    receipt_required_over: float


class Employee(BaseModel):
    id: str
    name: str
    email: str
    department: str
    title: str
    manager_id: str | None


class ExpenseItem(BaseModel):
    id: str
    employee_id: str
    date: Day
    category: Category
    merchant: str
    amount: float
    description: str
    receipt_file: str | None = None
    report_id: str | None = None


class ExpenseReport(BaseModel):
    id: str
    employee_id: str
    title: str
    status: ReportStatus = "draft"
    item_ids: list[str] = Field(default_factory=list)
    created_at: Timestamp
    approver_id: str | None = None
    submitted_at: Timestamp | None = None
    decided_at: Timestamp | None = None
    decision_note: str | None = None
    reimbursed_at: Timestamp | None = None
    reimbursed_by: str | None = None


# -- what the tools return ---------------------------------------------------------------


class ItemView(ExpenseItem):
    """An expense item with what keeps it from being submitted."""

    policy_violations: list[str] = Field(
        description="Why the item cannot be submitted as it stands (empty when it complies)")


class ReportView(ExpenseReport):
    """A report with names resolved, its total and its items."""

    employee_name: str
    approver_name: str | None = Field(description="Name of the approver, once assigned")
    total: float = Field(description="Sum of the item amounts")
    items: list[ItemView]


class ReportSummary(BaseModel):
    """A report as listed."""

    id: str
    employee_id: str
    employee_name: str
    title: str
    status: ReportStatus
    total: float = Field(description="Sum of the item amounts")
    approver_id: str | None
    submitted_at: Timestamp | None


class ExpenseReportsState(BaseModel):
    seed: int = 0
    now: Timestamp = "2026-06-12T16:00:00"
    employees: dict[str, Employee] = Field(default_factory=dict)
    policies: dict[str, CategoryPolicy] = Field(default_factory=dict)
    items: dict[str, ExpenseItem] = Field(default_factory=dict)
    reports: dict[str, ExpenseReport] = Field(default_factory=dict)
    next_employee_id: int = 101
    next_item_id: int = 5001
    next_report_id: int = 301


# -- seed data ------------------------------------------------------------------------

# category -> (limit per item, receipt required over, typical amount range, merchants)
_POLICIES: dict[str, tuple[float, float, tuple[int, int], list[str]]] = {
    "airfare": (1200.0, 0.0, (180, 950),
                ["Delta Air Lines", "United Airlines", "Alaska Airlines", "JetBlue"]),
    "lodging": (1500.0, 0.0, (160, 1100),
                ["Marriott Downtown", "Hilton Garden Inn", "Hyatt Regency", "Courtyard"]),
    "meals": (75.0, 25.0, (9, 70),
              ["Sweetgreen", "Panera Bread", "Blue Bottle Coffee", "Joe's Diner", "Chipotle"]),
    "client_entertainment": (500.0, 25.0, (60, 460),
                             ["The Capital Grille", "Ruth's Chris Steak House", "Topgolf"]),
    "ground_transport": (150.0, 25.0, (12, 95), ["Uber", "Lyft", "Yellow Cab", "Hertz"]),
    "conference_fees": (2000.0, 0.0, (300, 1800),
                        ["SaaStr Annual", "AWS re:Invent", "Gartner Symposium"]),
    "office_supplies": (250.0, 25.0, (8, 180), ["Staples", "Amazon Business", "Office Depot"]),
    "software": (300.0, 0.0, (12, 240), ["Figma", "Notion", "JetBrains", "Zoom"]),
}

# department -> (head's name and title, [(member name, title)])
_ORG: list[tuple[str, tuple[str, str], list[tuple[str, str]]]] = [
    ("Executive", ("Diane Mercer", "Chief Executive Officer"), []),
    ("Sales", ("Tom Reyes", "VP of Sales"),
     [("Karen Holt", "Account Executive"), ("Marcus Bell", "Account Executive"),
      ("Nina Alvarez", "Sales Engineer"), ("Owen Park", "Sales Development Rep")]),
    ("Engineering", ("Priya Raman", "VP of Engineering"),
     [("Jonas Weber", "Staff Engineer"), ("Aaliyah Brooks", "Software Engineer"),
      ("Alex Kim", "Engineering Manager"), ("Lucia Romano", "Site Reliability Engineer")]),
    ("Marketing", ("Grace Liu", "Head of Marketing"),
     [("Sam Okoye", "Content Strategist"), ("Hannah Fischer", "Events Manager"),
      ("Diego Santos", "Product Marketing Manager")]),
    ("Finance", ("Robert Kim", "Chief Financial Officer"),
     [("Emily Shaw", "Accounts Payable Specialist"), ("Farid Haddad", "Controller")]),
    ("Operations", ("Julia Novak", "Head of Operations"),
     [("Victor Chen", "Office Manager"), ("Zoe Adams", "Procurement Analyst"),
      ("Ravi Iyer", "IT Administrator"), ("Chloe Martin", "Executive Assistant")]),
]

_TRIPS = ["Chicago client visit", "Austin customer workshop", "Q1 team offsite",
          "New York sales kickoff", "Denver partner summit", "Seattle onsite",
          "Boston recruiting trip", "Atlanta trade show"]
_REJECTIONS = ["Please attach itemized receipts for the meals.",
               "Missing project code - add it to the descriptions and resubmit.",
               "Personal expenses included; split them out and resubmit."]


def _email(name: str) -> str:
    first, last = name.lower().split()
    return f"{first}.{last}@northwind.example"


def _seeded_state(seed: int) -> ExpenseReportsState:
    rng = random.Random(seed)
    state = ExpenseReportsState(seed=seed)
    today = date.fromisoformat(state.now[:10])
    state.policies = {c: CategoryPolicy(category=c, limit_per_item=limit,
                                        receipt_required_over=receipt)
                      for c, (limit, receipt, _, _) in _POLICIES.items()}
    ceo_id = None
    for department, (head_name, head_title), members in _ORG:
        head = _add_employee(state, head_name, department, head_title, ceo_id)
        ceo_id = ceo_id or head.id
        for name, title in members:
            _add_employee(state, name, department, title, head.id)
    statuses: list[ReportStatus] = ["reimbursed", "approved", "submitted", "rejected", "draft"]
    for employee in list(state.employees.values())[1:]:
        for _ in range(rng.randint(1, 2)):
            status = rng.choice(statuses)
            age = {"reimbursed": (40, 80), "approved": (20, 45), "submitted": (8, 30),
                   "rejected": (10, 40), "draft": (5, 20)}[status]
            start = today - timedelta(days=rng.randint(*age))
            items = [_add_item(state, rng, employee.id, start + timedelta(days=d), within=True)
                     for d in sorted(rng.sample(range(0, 5), rng.randint(1, 3)))]
            _add_report(state, rng, employee, items, status, start)
        for _ in range(rng.randint(0, 2)):
            spent = today - timedelta(days=rng.randint(1, 25))
            _add_item(state, rng, employee.id, spent, within=rng.random() < 0.7)
    return state


def _add_employee(
    state: ExpenseReportsState, name: str, department: str, title: str, manager_id: str | None
) -> Employee:
    employee_id = f"E-{state.next_employee_id}"
    state.next_employee_id += 1
    employee = Employee(id=employee_id, name=name, email=_email(name), department=department,
                        title=title, manager_id=manager_id)
    state.employees[employee_id] = employee
    return employee


def _add_item(
    state: ExpenseReportsState, rng: random.Random, employee_id: str, spent: date, within: bool
) -> ExpenseItem:
    """One seeded item; `within=False` may break the policy (over limit or no receipt)."""
    category = rng.choice(CATEGORIES)
    limit, receipt_over, (low, high), merchants = _POLICIES[category]
    amount = round(rng.uniform(low, high), 2)
    if not within and rng.random() < 0.5:
        amount = round(limit * rng.uniform(1.05, 1.4), 2)
    has_receipt = within or amount <= receipt_over or rng.random() < 0.5
    item_id = f"X-{state.next_item_id}"
    state.next_item_id += 1
    merchant = rng.choice(merchants)
    item = ExpenseItem(
        id=item_id, employee_id=employee_id, date=spent.isoformat(), category=category,
        merchant=merchant, amount=amount,
        description=f"{category.replace('_', ' ').capitalize()} - {merchant}",
        receipt_file=f"receipt_{item_id.lower()}.pdf" if has_receipt else None)
    state.items[item_id] = item
    return item


def _add_report(
    state: ExpenseReportsState, rng: random.Random, employee: Employee,
    items: list[ExpenseItem], status: ReportStatus, start: date
) -> None:
    report_id = f"R-{state.next_report_id}"
    state.next_report_id += 1
    travel = any(i.category in ("airfare", "lodging") for i in items)
    title = rng.choice(_TRIPS) if travel else f"{start.strftime('%B')} expenses"
    report = ExpenseReport(id=report_id, employee_id=employee.id, title=title,
                           status=status, item_ids=[i.id for i in items],
                           created_at=f"{(start + timedelta(days=5)).isoformat()}T17:00:00")
    for item in items:
        item.report_id = report_id
    if status != "draft":
        report.approver_id = employee.manager_id
        report.submitted_at = f"{(start + timedelta(days=6)).isoformat()}T09:00:00"
    if status in ("approved", "rejected", "reimbursed"):
        report.decided_at = f"{(start + timedelta(days=8)).isoformat()}T14:00:00"
        report.decision_note = rng.choice(_REJECTIONS) if status == "rejected" else None
    if status == "reimbursed":
        report.reimbursed_at = f"{(start + timedelta(days=12)).isoformat()}T11:00:00"
        report.reimbursed_by = next(e.id for e in state.employees.values()
                                    if e.title == "Accounts Payable Specialist")
    state.reports[report_id] = report


class ExpenseReports(Environment):
    """The expense module of a company's finance system."""

    name = "expense_reports"
    description = ("A company expense system for logging expense items, building and "
                   "submitting reports, manager approval and Finance reimbursement.")
    domain = "finance"
    State = ExpenseReportsState
    state: ExpenseReportsState

    @classmethod
    def default_state(cls) -> ExpenseReportsState:
        return _seeded_state(0)

    # -- helpers ------------------------------------------------------------------------

    def _employee(self, employee_id: str) -> Employee:
        if employee_id not in self.state.employees:
            raise ToolError(f"Employee {employee_id!r} not found.")
        return self.state.employees[employee_id]

    def _item(self, item_id: str) -> ExpenseItem:
        if item_id not in self.state.items:
            raise ToolError(f"Expense item {item_id!r} not found.")
        return self.state.items[item_id]

    def _report(self, report_id: str) -> ExpenseReport:
        if report_id not in self.state.reports:
            raise ToolError(f"Report {report_id!r} not found.")
        return self.state.reports[report_id]

    def _editable_item(self, item_id: str) -> ExpenseItem:
        item = self._item(item_id)
        if item.report_id and self.state.reports[item.report_id].status not in EDITABLE:
            status = self.state.reports[item.report_id].status
            raise ToolError(f"Expense item {item_id} is on report {item.report_id}, which is "
                            f"{status}; it can no longer be changed.")
        return item

    def _editable_report(self, report_id: str) -> ExpenseReport:
        report = self._report(report_id)
        if report.status not in EDITABLE:
            raise ToolError(f"Report {report_id} is {report.status}; only draft or rejected "
                            "reports can be edited.")
        return report

    def _violations(self, item: ExpenseItem) -> list[str]:
        """Why this item cannot be submitted as it stands (empty when it complies)."""
        policy = self.state.policies[item.category]
        found = []
        label = f"Item {item.id} ({item.merchant}, ${item.amount:,.2f})"
        if item.amount > policy.limit_per_item:
            found.append(f"{label} exceeds the {item.category} limit of "
                         f"${policy.limit_per_item:,.2f}.")
        if item.receipt_file is None and item.amount > policy.receipt_required_over:
            found.append(f"{label} needs a receipt.")
        age = (current_day(self.state) - date.fromisoformat(item.date)).days
        if age > CLAIM_WINDOW_DAYS:
            found.append(f"{label} is older than {CLAIM_WINDOW_DAYS} days and can no longer "
                         "be claimed.")
        return found

    def _item_view(self, item: ExpenseItem) -> ItemView:
        return ItemView(**item.model_dump(), policy_violations=self._violations(item))

    def _report_view(self, report: ExpenseReport) -> ReportView:
        items = [self.state.items[i] for i in report.item_ids]
        approver = self.state.employees.get(report.approver_id or "")
        return ReportView(**report.model_dump(),
                          employee_name=self.state.employees[report.employee_id].name,
                          approver_name=approver.name if approver else None,
                          total=round(sum(i.amount for i in items), 2),
                          items=[self._item_view(i) for i in items])

    def _attach(self, report: ExpenseReport, item_ids: list[str]) -> None:
        if not item_ids:
            raise ToolError("No expense items given.")
        for item_id in item_ids:
            item = self._item(item_id)
            if item.employee_id != report.employee_id:
                raise ToolError(f"Expense item {item_id} belongs to another employee.")
            if item.report_id is not None:
                raise ToolError(f"Expense item {item_id} is already on report {item.report_id}.")
        for item_id in dict.fromkeys(item_ids):
            self.state.items[item_id].report_id = report.id
            report.item_ids.append(item_id)

    # -- read tools ---------------------------------------------------------------------

    @tool
    def find_employee(self, query: str) -> list[Employee]:
        """Find employees by (part of) their name, email or department.

        Args:
            query: Text to match, case-insensitive, e.g. "Karen", "karen.holt" or "Sales".

        Returns:
            Matching employees with their manager's id.
        """
        q = query.lower()
        return [e for e in self.state.employees.values()
                if q in e.name.lower() or q in e.email or q in e.department.lower()]

    @tool
    def get_expense_policy(self, category: Category | None = None) -> list[CategoryPolicy]:
        """Show the expense policy: per-item limit and receipt threshold per category.

        Items must also be submitted within 90 days of the expense date.

        Args:
            category: Only this category; all categories when omitted.

        Returns:
            The policy rows.
        """
        return [p for c, p in self.state.policies.items() if category in (None, c)]

    @tool
    def list_expense_items(
        self, employee_id: str, unreported_only: bool = False
    ) -> list[ItemView]:
        """List an employee's expense items with any policy violations.

        Args:
            employee_id: The employee id, e.g. "E-102".
            unreported_only: Only items that are not on any report yet.

        Returns:
            Items (date, category, merchant, amount, receipt, report) and `policy_violations`.
        """
        self._employee(employee_id)
        return [self._item_view(i) for i in self.state.items.values()
                if i.employee_id == employee_id
                and not (unreported_only and i.report_id is not None)]

    @tool
    def get_report(self, report_id: str) -> ReportView:
        """Get a report with its items, total, approver and policy violations.

        Args:
            report_id: The report id, e.g. "R-301".

        Returns:
            The report, `total`, `approver_name` and `items` (each with `policy_violations`).
        """
        return self._report_view(self._report(report_id))

    @tool
    def list_reports(
        self,
        employee_id: str | None = None,
        status: ReportStatus | None = None,
        approver_id: str | None = None,
    ) -> list[ReportSummary]:
        """List reports, filtered by submitter, status and/or approver.

        Args:
            employee_id: Only reports submitted by this employee.
            status: Only reports in this status.
            approver_id: Only reports awaiting or decided by this approver.

        Returns:
            Report summaries: id, employee, title, status, total, approver.
        """
        out: list[ReportSummary] = []
        for r in self.state.reports.values():
            if employee_id not in (None, r.employee_id) or status not in (None, r.status):
                continue
            if approver_id not in (None, r.approver_id):
                continue
            view = self._report_view(r)
            out.append(ReportSummary(**view.model_dump(include=set(ReportSummary.model_fields))))
        return out

    # -- write tools --------------------------------------------------------------------

    @tool(write=True)
    def add_expense_item(
        self,
        employee_id: str,
        expense_date: str,
        category: Category,
        merchant: str,
        amount: float,
        description: str = "",
        receipt_file: str | None = None,
    ) -> ItemView:
        """Log a new expense item for an employee (not yet on any report).

        Items that break the policy can still be logged; they are returned with
        `policy_violations` and block submission until fixed.

        Args:
            employee_id: Who spent the money.
            expense_date: When the money was spent, YYYY-MM-DD, not in the future.
            category: Expense category.
            merchant: Where the money was spent, e.g. "Delta Air Lines".
            amount: Amount in USD, positive.
            description: Business purpose.
            receipt_file: File name of the uploaded receipt, if any.

        Returns:
            The new item with its `policy_violations`.
        """
        self._employee(employee_id)
        spent = _parse_date(expense_date)
        if spent > current_day(self.state):
            raise ToolError(f"Expense date {expense_date} is in the future.")
        if amount <= 0:
            raise ToolError("Amount must be positive.")
        item_id = f"X-{self.state.next_item_id}"
        self.state.next_item_id += 1
        item = ExpenseItem(id=item_id, employee_id=employee_id, date=spent.isoformat(),
                           category=category, merchant=merchant, amount=round(amount, 2),
                           description=description, receipt_file=receipt_file)
        self.state.items[item_id] = item
        return self._item_view(item)

    @tool(write=True)
    def update_expense_item(
        self,
        item_id: str,
        amount: float | None = None,
        category: Category | None = None,
        merchant: str | None = None,
        description: str | None = None,
    ) -> ItemView:
        """Correct an expense item that is not on a submitted, approved or paid report.

        Args:
            item_id: The item id, e.g. "X-5003".
            amount: New amount in USD, positive.
            category: New category.
            merchant: New merchant name.
            description: New business purpose.

        Returns:
            The updated item with its `policy_violations`.
        """
        item = self._editable_item(item_id)
        if amount is not None and amount <= 0:
            raise ToolError("Amount must be positive.")
        changes = {"amount": None if amount is None else round(amount, 2), "category": category,
                   "merchant": merchant, "description": description}
        changes = {k: v for k, v in changes.items() if v is not None and getattr(item, k) != v}
        if not changes:
            raise ToolError(f"No changes given for expense item {item_id}.")
        for field, value in changes.items():
            setattr(item, field, value)
        return self._item_view(item)

    @tool(write=True)
    def attach_receipt(self, item_id: str, receipt_file: str) -> ItemView:
        """Attach an uploaded receipt file to an expense item.

        Args:
            item_id: The item id.
            receipt_file: File name of the receipt, e.g. "delta_0412.pdf".

        Returns:
            The updated item with its `policy_violations`.
        """
        item = self._editable_item(item_id)
        if item.receipt_file is not None:
            raise ToolError(f"Expense item {item_id} already has a receipt "
                            f"({item.receipt_file}).")
        item.receipt_file = receipt_file
        return self._item_view(item)

    @tool(write=True)
    def create_report(
        self, employee_id: str, title: str, item_ids: list[str] | None = None
    ) -> ReportView:
        """Start a draft expense report, optionally with some of the employee's items.

        Args:
            employee_id: The employee the report is for.
            title: A short title, e.g. "Chicago client visit".
            item_ids: Unreported items of this employee to put on the report.

        Returns:
            The new draft report with items and total.
        """
        self._employee(employee_id)
        if not title.strip():
            raise ToolError("Report title must not be empty.")
        report = ExpenseReport(id=f"R-{self.state.next_report_id}", employee_id=employee_id,
                               title=title.strip(), created_at=self.state.now)
        self.state.next_report_id += 1
        self.state.reports[report.id] = report
        if item_ids:
            self._attach(report, item_ids)
        return self._report_view(report)

    @tool(write=True)
    def add_items_to_report(self, report_id: str, item_ids: list[str]) -> ReportView:
        """Add unreported expense items of the same employee to a draft or rejected report.

        Args:
            report_id: The report id.
            item_ids: The items to add.

        Returns:
            The updated report.
        """
        report = self._editable_report(report_id)
        self._attach(report, item_ids)
        return self._report_view(report)

    @tool(write=True)
    def remove_item_from_report(self, report_id: str, item_id: str) -> ReportView:
        """Take an item off a draft or rejected report (the item itself is kept).

        Args:
            report_id: The report id.
            item_id: The item to remove.

        Returns:
            The updated report.
        """
        report = self._editable_report(report_id)
        if item_id not in report.item_ids:
            raise ToolError(f"Expense item {item_id} is not on report {report_id}.")
        report.item_ids.remove(item_id)
        self.state.items[item_id].report_id = None
        return self._report_view(report)

    @tool(write=True)
    def submit_report(self, report_id: str) -> ReportView:
        """Submit a draft (or resubmit a rejected) report to the employee's manager.

        Fails if the report is empty or any item breaks the expense policy.

        Args:
            report_id: The report id.

        Returns:
            The submitted report with its approver.
        """
        report = self._report(report_id)
        if report.status not in EDITABLE:
            raise ToolError(f"Report {report_id} is {report.status} and cannot be submitted.")
        if not report.item_ids:
            raise ToolError(f"Report {report_id} has no expense items.")
        problems = [v for i in report.item_ids for v in self._violations(self.state.items[i])]
        if problems:
            raise ToolError(f"Report {report_id} cannot be submitted: " + " ".join(problems))
        employee = self.state.employees[report.employee_id]
        if employee.manager_id is None:
            raise ToolError(f"{employee.name} has no manager to approve report {report_id}.")
        report.status, report.approver_id = "submitted", employee.manager_id
        report.submitted_at, report.decided_at, report.decision_note = self.state.now, None, None
        return self._report_view(report)

    @tool(write=True)
    def review_report(
        self,
        report_id: str,
        reviewer_id: str,
        decision: Literal["approve", "reject"],
        note: str = "",
    ) -> ReportView:
        """Approve or reject a submitted report, as its assigned approver.

        Args:
            report_id: The report id.
            reviewer_id: The employee id of the person deciding (must be the approver).
            decision: "approve" or "reject".
            note: Reason for the decision; required when rejecting.

        Returns:
            The decided report.
        """
        report = self._report(report_id)
        reviewer = self._employee(reviewer_id)
        if report.status != "submitted":
            raise ToolError(f"Report {report_id} is {report.status}, not awaiting approval.")
        if reviewer_id != report.approver_id:
            approver = self.state.employees[report.approver_id or ""]
            raise ToolError(f"Permission denied: {reviewer.name} is not the approver of report "
                            f"{report_id} ({approver.name} is).")
        if decision == "reject" and not note.strip():
            raise ToolError("A note explaining the rejection is required.")
        report.status = "approved" if decision == "approve" else "rejected"
        report.decided_at, report.decision_note = self.state.now, note.strip() or None
        return self._report_view(report)

    @tool(write=True)
    def reimburse_report(self, report_id: str, finance_employee_id: str) -> ReportView:
        """Pay out an approved report (Finance staff only, never their own report).

        Args:
            report_id: The report id.
            finance_employee_id: The employee id of the Finance team member paying it.

        Returns:
            The reimbursed report with its total.
        """
        report = self._report(report_id)
        payer = self._employee(finance_employee_id)
        if payer.department != "Finance":
            raise ToolError(f"Permission denied: {payer.name} is not in Finance.")
        if report.employee_id == payer.id:
            raise ToolError(f"Permission denied: {payer.name} cannot reimburse their own report.")
        if report.status != "approved":
            raise ToolError(f"Report {report_id} is {report.status}; only approved reports "
                            "can be reimbursed.")
        report.status, report.reimbursed_at = "reimbursed", self.state.now
        report.reimbursed_by = payer.id
        return self._report_view(report)


def _parse_date(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ToolError(f"Invalid date {value!r}; use YYYY-MM-DD.") from None
