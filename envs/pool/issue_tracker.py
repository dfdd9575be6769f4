"""A software team's issue tracker: projects, issues, labels, assignees and a workflow.

Everything is done as the signed-in user (`current_user`), whose role differs per
project, so the same request can be allowed on one project and denied on another.
Issues move through a fixed workflow (open -> in progress -> in review -> done, with
closing and reopening) whose rules the tools enforce.
"""

from __future__ import annotations

import random
from typing import Literal

from pydantic import BaseModel, Field

from envs.base import Environment, ToolError, tool
from envs.timestamps import Timestamp

__all__ = ["IssueTracker", "IssueTrackerState"]

Role = Literal["viewer", "developer", "maintainer"]
Status = Literal["open", "in_progress", "in_review", "done", "closed"]
Priority = Literal["low", "medium", "high", "critical"]
IssueType = Literal["bug", "feature", "task"]
Resolution = Literal["won't fix", "duplicate", "cannot reproduce"]

_RANK: dict[str | None, int] = {None: 0, "viewer": 1, "developer": 2, "maintainer": 3}

#: the workflow: which statuses an issue may move to from each status
TRANSITIONS: dict[str, tuple[Status, ...]] = {
    "open": ("in_progress", "closed"),
    "in_progress": ("open", "in_review", "closed"),
    "in_review": ("in_progress", "done", "closed"),
    "done": ("open",),
    "closed": ("open",),
}


class User(BaseModel):
    username: str
    name: str
    email: str
    active: bool = True


class Project(BaseModel):
    key: str
    name: str
    lead: str
    members: dict[str, Role]
    labels: list[str]


class Issue(BaseModel):
    key: str
    project: str
    title: str
    description: str
    type: IssueType
    priority: Priority
    status: Status = "open"
    reporter: str
    assignee: str | None = None
    labels: list[str] = Field(default_factory=list)
    resolution: str | None = None
    created_at: Timestamp
    updated_at: Timestamp


class Comment(BaseModel):
    id: str
    issue_key: str
    author: str
    body: str
    created_at: Timestamp


# -- what the tools return ---------------------------------------------------------------


class Me(User):
    roles: dict[str, Role] = Field(description="Your role on each project you belong to, by key")


class ProjectSummary(BaseModel):
    key: str
    name: str
    lead: str = Field(description="Username of the project lead")
    labels: list[str]
    my_role: Role | None = Field(description="Your role on the project, if a member")
    unresolved_issues: int = Field(description="Issues not done or closed")


class Member(BaseModel):
    username: str
    name: str
    role: Role
    active: bool


class IssueSummary(BaseModel):
    """An issue as listed by a search."""

    key: str
    title: str
    type: IssueType
    status: Status
    priority: Priority
    assignee: str | None
    labels: list[str]


class IssueRecord(Issue):
    """An issue with its comments and the statuses it may move to next."""

    comments: list[Comment]
    allowed_transitions: list[Status]


class IssueTrackerState(BaseModel):
    seed: int = 0
    now: Timestamp = "2026-06-12T16:00:00"
    current_user: str = "alex.kim"
    users: dict[str, User] = Field(default_factory=dict)
    projects: dict[str, Project] = Field(default_factory=dict)
    issues: dict[str, Issue] = Field(default_factory=dict)
    comments: dict[str, Comment] = Field(default_factory=dict)
    next_issue_id: int = 101
    next_comment_id: int = 1


# -- seed data ------------------------------------------------------------------------

_USERS = ["Alex Kim", "Maria Santos", "Dev Patel", "Lena Fischer", "Omar Haddad", "Sara Lind",
          "Jin Park", "Tomas Novak", "Amara Obi", "Ryan Cole", "Ivy Chen", "Noah Berg",
          "Fatima Zahra", "Leo Martins", "Kate Murphy", "Yusuf Demir", "Chloe Dubois",
          "Raj Mehta", "Nina Volkova", "Ben Ortiz", "Hana Sato", "Eli Wright"]

# key, name, lead, the signed-in user's role (None: not a member), labels
_PROJECTS: list[tuple[str, str, str, Role | None, list[str]]] = [
    ("PAY", "Payments Service", "alex.kim", "maintainer",
     ["bug", "security", "performance", "backend", "tech-debt", "needs-triage"]),
    ("WEB", "Customer Web App", "maria.santos", "developer",
     ["bug", "ux", "frontend", "accessibility", "performance", "needs-triage"]),
    ("MOB", "Mobile App", "jin.park", "viewer",
     ["bug", "ios", "android", "crash", "ux", "needs-triage"]),
    ("INFRA", "Infrastructure", "omar.haddad", "developer",
     ["security", "cost", "reliability", "tech-debt", "needs-triage"]),
    ("DOCS", "Developer Docs", "kate.murphy", None, ["docs", "good-first-issue", "api"]),
]

# project -> (title, type, labels)
_ISSUES: dict[str, list[tuple[str, IssueType, list[str]]]] = {
    "PAY": [("Refund webhook retries forever on 410 Gone", "bug", ["bug", "backend"]),
            ("Add idempotency keys to charge endpoint", "feature", ["backend"]),
            ("Currency rounding error on JPY payouts", "bug", ["bug"]),
            ("Upgrade Stripe SDK to v12", "task", ["tech-debt"]),
            ("Decline codes not surfaced to checkout", "bug", ["bug", "needs-triage"]),
            ("Nightly settlement report misses late captures", "bug", ["bug", "backend"]),
            ("PCI scan flags TLS 1.0 on legacy endpoint", "task", ["security"]),
            ("Support partial captures", "feature", ["backend"]),
            ("Ledger reconciliation job times out", "bug", ["performance"]),
            ("Document payout schedule API", "task", [])],
    "WEB": [("Checkout button unresponsive on Safari 17", "bug", ["bug", "frontend"]),
            ("Dark mode toggle resets on reload", "bug", ["bug", "ux"]),
            ("Add address autocomplete", "feature", ["ux", "frontend"]),
            ("Cart badge shows stale count", "bug", ["bug"]),
            ("Migrate to React Router 7", "task", ["frontend"]),
            ("Lighthouse accessibility score below 90", "task", ["accessibility"]),
            ("Password reset link expires too fast", "bug", ["needs-triage"]),
            ("Order history pagination skips page 2", "bug", ["bug"]),
            ("Add SSO login with Google", "feature", []),
            ("Cookie banner overlaps footer on mobile", "bug", ["ux"])],
    "MOB": [("App crashes on launch on Android 15", "bug", ["crash", "android"]),
            ("Push notifications not delivered on iOS", "bug", ["bug", "ios"]),
            ("Add biometric login", "feature", ["ux"]),
            ("Offline mode loses cart contents", "bug", ["bug"]),
            ("Upgrade to React Native 0.76", "task", []),
            ("Deep links open home screen instead of product", "bug", ["bug"]),
            ("Reduce app bundle size", "task", []),
            ("Crash when rotating during video playback", "bug", ["crash"])],
    "INFRA": [("Rotate database credentials quarterly", "task", ["security"]),
              ("Postgres replica lag alerts too noisy", "bug", ["reliability"]),
              ("Migrate CI runners to ARM", "task", ["cost"]),
              ("Terraform state lock stuck in staging", "bug", ["needs-triage"]),
              ("Add budget alerts for GPU nodes", "feature", ["cost"]),
              ("Kubernetes 1.30 upgrade", "task", ["tech-debt"]),
              ("Log retention exceeds compliance window", "bug", ["security"]),
              ("Redis memory eviction during peak traffic", "bug", ["reliability"])],
    "DOCS": [("Quickstart uses deprecated auth flow", "bug", ["docs"]),
             ("Add code samples for Python SDK", "feature", ["good-first-issue"]),
             ("Broken links in webhooks guide", "bug", ["docs"]),
             ("Document rate limits per plan", "task", ["api"]),
             ("API reference missing pagination params", "bug", ["api"])],
}

_COMMENTS = ["I can reproduce this on staging.", "Looks like it started after the 4.2 release.",
             "PR is up, please review when you get a chance.",
             "Blocked until the vendor sandbox is back.",
             "Three customers reported this in the last week.",
             "Can we get logs from one of the affected accounts?",
             "Not seeing this anymore on main - can someone confirm?",
             "Added a regression test for this case."]


def _username(name: str) -> str:
    return name.lower().replace(" ", ".")


def _seeded_state(seed: int) -> IssueTrackerState:
    rng = random.Random(seed)
    state = IssueTrackerState(seed=seed)
    for name in _USERS:
        username = _username(name)
        state.users[username] = User(username=username, name=name,
                                     email=f"{username}@northwind.example",
                                     active=name != "Eli Wright")
    others = [u for u in state.users if u not in (state.current_user, "eli.wright")]
    for key, pname, lead, my_role, labels in _PROJECTS:
        members: dict[str, Role] = {lead: "maintainer"}
        for username in rng.sample(others, 7):
            members.setdefault(username, rng.choice(["viewer", "developer", "developer",
                                                     "maintainer"]))
        if my_role is not None:
            members[state.current_user] = my_role
        if key == "INFRA":
            members["eli.wright"] = "developer"  # left the company, still listed
        state.projects[key] = Project(key=key, name=pname, lead=lead, members=members,
                                      labels=labels)
    for key, issues in _ISSUES.items():
        project = state.projects[key]
        workers = [u for u, r in project.members.items()
                   if _RANK[r] >= 2 and state.users[u].active]
        for title, itype, labels in issues:
            _seed_issue(state, rng, project, workers, title, itype, labels)
    return state


def _seed_issue(
    state: IssueTrackerState, rng: random.Random, project: Project, workers: list[str],
    title: str, itype: IssueType, labels: list[str]
) -> None:
    status: Status = rng.choice(["open", "open", "in_progress", "in_review", "done", "closed"])
    created_day, updated_day = rng.randint(1, 25), rng.randint(26, 30)
    created = f"2026-04-{created_day:02d}T{rng.randint(8, 18):02d}:{rng.randint(0, 59):02d}:00"
    key = f"{project.key}-{state.next_issue_id}"
    state.next_issue_id += 1
    assigned = status != "open" or rng.random() < 0.5
    issue = Issue(
        key=key, project=project.key, title=title, type=itype,
        description=f"{title}. Reported by a teammate; see comments for details.",
        priority=rng.choice(["low", "medium", "medium", "high", "critical"]), status=status,
        reporter=rng.choice(list(project.members)),
        assignee=rng.choice(workers) if assigned and status != "closed" else None,
        labels=labels, resolution={"done": "fixed", "closed": "won't fix"}.get(status),
        created_at=created, updated_at=f"2026-04-{updated_day:02d}T16:00:00")
    state.issues[key] = issue
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        comment_id = f"C-{state.next_comment_id}"
        state.next_comment_id += 1
        state.comments[comment_id] = Comment(
            id=comment_id, issue_key=key, author=rng.choice(list(project.members)),
            body=rng.choice(_COMMENTS), created_at=issue.updated_at)


class IssueTracker(Environment):
    """The issue tracker, as seen by the signed-in user."""

    name = "issue_tracker"
    description = ("A software issue tracker for searching, filing, assigning, labelling, "
                   "commenting on and moving issues through a workflow with per-project roles.")
    domain = "developer"
    State = IssueTrackerState
    state: IssueTrackerState

    @classmethod
    def default_state(cls) -> IssueTrackerState:
        return _seeded_state(0)

    # -- helpers ------------------------------------------------------------------------

    def _project(self, key: str) -> Project:
        if key not in self.state.projects:
            raise ToolError(f"Project {key!r} not found.")
        return self.state.projects[key]

    def _issue(self, key: str) -> Issue:
        if key not in self.state.issues:
            raise ToolError(f"Issue {key!r} not found.")
        return self.state.issues[key]

    def _require(self, project: Project, needed: Role, action: str) -> None:
        """Raise unless the signed-in user has at least `needed` role on the project."""
        me = self.state.current_user
        role = project.members.get(me)
        if _RANK[role] < _RANK[needed]:
            held = f"a {role}" if role else "not a member"
            raise ToolError(f"Permission denied: {me} is {held} on {project.key}; "
                            f"{action} requires the {needed} role.")

    def _check_labels(self, project: Project, labels: list[str]) -> None:
        unknown = [label for label in labels if label not in project.labels]
        if unknown:
            raise ToolError(f"Unknown label(s) for {project.key}: {', '.join(unknown)}. "
                            f"Available: {', '.join(project.labels)}.")

    def _check_assignee(self, project: Project, username: str) -> None:
        user = self.state.users.get(username)
        if user is None:
            raise ToolError(f"User {username!r} not found.")
        if not user.active:
            raise ToolError(f"User {username} is deactivated and cannot be assigned.")
        if _RANK[project.members.get(username)] < _RANK["developer"]:
            raise ToolError(f"User {username} cannot be assigned on {project.key}: "
                            "assignees need the developer role.")

    def _touch(self, issue: Issue) -> Issue:
        issue.updated_at = self.state.now
        return issue

    # -- read tools ---------------------------------------------------------------------

    @tool
    def whoami(self) -> Me:
        """Show the signed-in user and their role on each project.

        Returns:
            Username, name, email and `roles` (project key -> role; absent: not a member).
        """
        me = self.state.users[self.state.current_user]
        roles = {k: p.members[me.username] for k, p in self.state.projects.items()
                 if me.username in p.members}
        return Me(**me.model_dump(), roles=roles)

    @tool
    def list_projects(self) -> list[ProjectSummary]:
        """List all projects with their lead, labels and count of unresolved issues.

        Returns:
            Projects with key, name, lead, labels, `my_role` and `unresolved_issues`.
        """
        return [ProjectSummary(
            key=p.key, name=p.name, lead=p.lead, labels=p.labels,
            my_role=p.members.get(self.state.current_user),
            unresolved_issues=sum(1 for i in self.state.issues.values()
                                  if i.project == p.key and i.status not in ("done", "closed")))
            for p in self.state.projects.values()]

    @tool
    def list_members(self, project: str) -> list[Member]:
        """List a project's members with their roles.

        Args:
            project: The project key, e.g. "PAY".

        Returns:
            Members with username, name, role and whether their account is active.
        """
        proj = self._project(project)
        return [Member(username=u, name=self.state.users[u].name, role=role,
                       active=self.state.users[u].active) for u, role in proj.members.items()]

    @tool
    def search_issues(
        self,
        project: str | None = None,
        status: Status | None = None,
        assignee: str | None = None,
        label: str | None = None,
        priority: Priority | None = None,
        text: str | None = None,
    ) -> list[IssueSummary]:
        """Search issues; every filter given must match.

        Args:
            project: Project key, e.g. "WEB".
            status: Workflow status.
            assignee: Username of the assignee.
            label: A label the issue carries.
            priority: Priority.
            text: Case-insensitive text to find in the title or description.

        Returns:
            Issue summaries: key, title, type, status, priority, assignee, labels.
        """
        if project is not None:
            self._project(project)
        fields = set(IssueSummary.model_fields)
        return [IssueSummary(**i.model_dump(include=fields)) for i in self.state.issues.values()
                if project in (None, i.project) and status in (None, i.status)
                and assignee in (None, i.assignee) and priority in (None, i.priority)
                and (label is None or label in i.labels)
                and (text is None or text.lower() in f"{i.title} {i.description}".lower())]

    @tool
    def get_issue(self, issue_key: str) -> IssueRecord:
        """Get an issue with its comments and the statuses it can move to next.

        Args:
            issue_key: The issue key, e.g. "PAY-103".

        Returns:
            The issue, `comments` (oldest first) and `allowed_transitions`.
        """
        issue = self._issue(issue_key)
        comments = [c for c in self.state.comments.values() if c.issue_key == issue_key]
        return IssueRecord(**issue.model_dump(), comments=comments,
                           allowed_transitions=list(TRANSITIONS[issue.status]))

    # -- write tools --------------------------------------------------------------------

    @tool(write=True)
    def create_issue(
        self,
        project: str,
        title: str,
        type: IssueType,
        priority: Priority = "medium",
        description: str = "",
        labels: list[str] | None = None,
        assignee: str | None = None,
    ) -> Issue:
        """File a new issue (status "open") reported by the signed-in user.

        Args:
            project: The project key.
            title: One-line summary.
            type: "bug", "feature" or "task".
            priority: "low", "medium", "high" or "critical".
            description: Details, steps to reproduce.
            labels: Labels to apply; each must exist in the project.
            assignee: Username to assign (a developer or maintainer of the project).

        Returns:
            The new issue with its key.
        """
        proj = self._project(project)
        self._require(proj, "developer", "creating issues")
        if not title.strip():
            raise ToolError("Issue title must not be empty.")
        labels = list(dict.fromkeys(labels or []))
        self._check_labels(proj, labels)
        if assignee is not None:
            self._check_assignee(proj, assignee)
        key = f"{proj.key}-{self.state.next_issue_id}"
        self.state.next_issue_id += 1
        issue = Issue(key=key, project=proj.key, title=title.strip(), description=description,
                      type=type, priority=priority, reporter=self.state.current_user,
                      assignee=assignee, labels=labels, created_at=self.state.now,
                      updated_at=self.state.now)
        self.state.issues[key] = issue
        return issue

    @tool(write=True)
    def assign_issue(self, issue_key: str, assignee: str | None) -> Issue:
        """Assign an issue to a project developer, or unassign it with null.

        Args:
            issue_key: The issue key.
            assignee: Username of the new assignee, or null to unassign.

        Returns:
            The updated issue.
        """
        issue = self._issue(issue_key)
        proj = self.state.projects[issue.project]
        self._require(proj, "developer", "assigning issues")
        if assignee == issue.assignee:
            raise ToolError(f"Issue {issue_key} is already "
                            + (f"assigned to {assignee}." if assignee else "unassigned."))
        if assignee is None and issue.status in ("in_progress", "in_review"):
            raise ToolError(f"Issue {issue_key} is {issue.status.replace('_', ' ')} and must "
                            "keep an assignee; reassign it instead.")
        if assignee is not None:
            self._check_assignee(proj, assignee)
        issue.assignee = assignee
        return self._touch(issue)

    @tool(write=True)
    def transition_issue(
        self, issue_key: str, status: Status, resolution: Resolution | None = None
    ) -> Issue:
        """Move an issue along the workflow.

        Allowed moves: open -> in_progress | closed; in_progress -> open | in_review |
        closed; in_review -> in_progress | done | closed; done -> open; closed -> open.
        Starting work needs an assignee; closing and reopening a closed issue need the
        maintainer role, and closing needs a resolution.

        Args:
            issue_key: The issue key.
            status: The target status.
            resolution: Why it is closed ("won't fix", "duplicate", "cannot reproduce");
                only when closing.

        Returns:
            The updated issue.
        """
        issue = self._issue(issue_key)
        proj = self.state.projects[issue.project]
        closing_or_reviving = status == "closed" or issue.status == "closed"
        self._require(proj, "maintainer" if closing_or_reviving else "developer",
                      "closing or reopening closed issues" if closing_or_reviving
                      else "changing issue status")
        if status not in TRANSITIONS[issue.status]:
            raise ToolError(f"Issue {issue_key} cannot move from {issue.status} to {status}; "
                            f"allowed: {', '.join(TRANSITIONS[issue.status])}.")
        if status == "in_progress" and issue.assignee is None:
            raise ToolError(f"Issue {issue_key} has no assignee; assign it before starting.")
        if (status == "closed") != (resolution is not None):
            raise ToolError("A resolution is required when closing an issue, and only then.")
        issue.status = status
        issue.resolution = {"closed": resolution, "done": "fixed"}.get(status)
        return self._touch(issue)

    @tool(write=True)
    def update_labels(
        self, issue_key: str, add: list[str] | None = None, remove: list[str] | None = None
    ) -> Issue:
        """Add and/or remove labels on an issue.

        Args:
            issue_key: The issue key.
            add: Labels to add; each must exist in the project.
            remove: Labels to remove; each must be on the issue.

        Returns:
            The updated issue.
        """
        issue = self._issue(issue_key)
        proj = self.state.projects[issue.project]
        self._require(proj, "developer", "changing labels")
        add, remove = add or [], remove or []
        if not add and not remove:
            raise ToolError("Give at least one label to add or remove.")
        self._check_labels(proj, add)
        missing = [label for label in remove if label not in issue.labels]
        if missing:
            raise ToolError(f"Issue {issue_key} does not have label(s): {', '.join(missing)}.")
        labels = [label for label in issue.labels if label not in remove]
        labels += [label for label in dict.fromkeys(add) if label not in labels]
        if labels == issue.labels:
            raise ToolError(f"Issue {issue_key} already has those labels.")
        issue.labels = labels
        return self._touch(issue)

    @tool(write=True)
    def set_priority(self, issue_key: str, priority: Priority) -> Issue:
        """Change an issue's priority.

        Args:
            issue_key: The issue key.
            priority: "low", "medium", "high" or "critical".

        Returns:
            The updated issue.
        """
        issue = self._issue(issue_key)
        self._require(self.state.projects[issue.project], "developer", "changing priority")
        if issue.priority == priority:
            raise ToolError(f"Issue {issue_key} is already {priority} priority.")
        issue.priority = priority
        return self._touch(issue)

    @tool(write=True)
    def add_comment(self, issue_key: str, body: str) -> Comment:
        """Comment on an issue as the signed-in user (any project member may comment).

        Args:
            issue_key: The issue key.
            body: The comment text.

        Returns:
            The new comment.
        """
        issue = self._issue(issue_key)
        self._require(self.state.projects[issue.project], "viewer", "commenting")
        if not body.strip():
            raise ToolError("Comment body must not be empty.")
        comment = Comment(id=f"C-{self.state.next_comment_id}", issue_key=issue_key,
                          author=self.state.current_user, body=body.strip(),
                          created_at=self.state.now)
        self.state.next_comment_id += 1
        self.state.comments[comment.id] = comment
        self._touch(issue)
        return comment

    @tool(write=True)
    def create_label(self, project: str, label: str) -> list[str]:
        """Add a new label to a project's label set (maintainers only).

        Args:
            project: The project key.
            label: The label, lowercase words joined by hyphens, e.g. "regression".

        Returns:
            The project's labels after the change.
        """
        proj = self._project(project)
        self._require(proj, "maintainer", "creating labels")
        if not label or label != label.strip().lower() or " " in label:
            raise ToolError(f"Invalid label {label!r}: use lowercase words joined by hyphens.")
        if label in proj.labels:
            raise ToolError(f"Label {label} already exists in {proj.key}.")
        proj.labels.append(label)
        return proj.labels
