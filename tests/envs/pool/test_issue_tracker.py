"""The issue_tracker environment: every tool's success path, workflow and permission rules."""

from __future__ import annotations

import json

import pytest

from envs.pool import pool_classes
from envs.pool.issue_tracker import IssueTracker
from tests.envs.pool.helpers import fails, ok


@pytest.fixture
def env() -> IssueTracker:
    return IssueTracker()




def test_registered_with_metadata() -> None:
    assert pool_classes()["issue_tracker"] is IssueTracker
    assert IssueTracker.domain == "developer" and IssueTracker.description
    writes = {s.name for s in IssueTracker.tool_specs() if s.write}
    assert writes == {"create_issue", "assign_issue", "transition_issue", "update_labels",
                      "set_priority", "add_comment", "create_label"}
    assert 6 <= len(IssueTracker.tool_specs()) <= 15


def test_default_state_is_deterministic_and_sized() -> None:
    a, b = IssueTracker.default_state(), IssueTracker.default_state()
    assert a == b and a.seed == 0
    assert min(len(a.users), len(a.issues), len(a.comments)) >= 20
    for issue in a.issues.values():
        project = a.projects[issue.project]
        assert issue.assignee is None or issue.assignee in project.members
        assert set(issue.labels) <= set(project.labels)
    assert all(c.issue_key in a.issues for c in a.comments.values())


def test_snapshot_round_trip(env: IssueTracker) -> None:
    ok(env, "add_comment", issue_key="PAY-106", body="Looking into it.")
    snap = env.snapshot()
    restored = IssueTracker()
    restored.restore(json.loads(json.dumps(snap)))
    assert restored.snapshot() == snap and restored.state == env.state
    call = {"issue_key": "PAY-106", "priority": "high"}
    assert restored.call("set_priority", call) == env.call("set_priority", call)


def test_whoami_projects_members(env: IssueTracker) -> None:
    me = ok(env, "whoami")
    assert me["username"] == "alex.kim"
    assert me["roles"] == {"PAY": "maintainer", "WEB": "developer", "MOB": "viewer",
                           "INFRA": "developer"}
    projects = {p["key"]: p for p in ok(env, "list_projects")}
    assert projects["DOCS"]["my_role"] is None and projects["PAY"]["unresolved_issues"] == 3
    members = {m["username"]: m for m in ok(env, "list_members", project="INFRA")}
    assert members["eli.wright"]["active"] is False and members["alex.kim"]["role"] == "developer"
    fails(env, "list_members", "Project 'NOPE' not found.", project="NOPE")


def test_search_and_get_issue(env: IssueTracker) -> None:
    mine = ok(env, "search_issues", assignee="alex.kim")
    assert [i["key"] for i in mine] == ["PAY-110", "WEB-111"]
    assert [i["key"] for i in ok(env, "search_issues", project="WEB", label="ux")] == [
        "WEB-112", "WEB-113", "WEB-120"]
    assert [i["key"] for i in ok(env, "search_issues", text="redis")] == ["INFRA-136"]
    assert [i["key"] for i in ok(env, "search_issues", project="INFRA", status="in_progress",
                                 priority="high")] == ["INFRA-130"]
    fails(env, "search_issues", "Project 'XX' not found.", project="XX")
    issue = ok(env, "get_issue", issue_key="PAY-110")
    assert [c["id"] for c in issue["comments"]] == ["C-7", "C-8"]
    assert issue["allowed_transitions"] == ["in_progress", "closed"]
    fails(env, "get_issue", "Issue 'PAY-1' not found.", issue_key="PAY-1")


def test_create_issue(env: IssueTracker) -> None:
    issue = ok(env, "create_issue", project="WEB", title="Coupon field accepts expired codes",
               type="bug", priority="high", labels=["bug", "frontend"], assignee="ivy.chen")
    assert issue["key"] == "WEB-142" and issue["status"] == "open"
    assert issue["reporter"] == "alex.kim" and issue["created_at"] == "2026-06-12T16:00:00"
    fails(env, "create_issue", "Permission denied: alex.kim is a viewer on MOB; creating "
          "issues requires the developer role.", project="MOB", title="T", type="bug")
    fails(env, "create_issue", "Permission denied: alex.kim is not a member on DOCS",
          project="DOCS", title="T", type="task")
    fails(env, "create_issue", "Unknown label(s) for WEB: ios. Available: bug, ux, frontend, "
          "accessibility, performance, needs-triage.", project="WEB", title="T", type="bug",
          labels=["ios"])
    fails(env, "create_issue", "User omar.haddad cannot be assigned on WEB: assignees need "
          "the developer role.", project="WEB", title="T", type="bug", assignee="omar.haddad")
    fails(env, "create_issue", "Issue title must not be empty.", project="WEB", title=" ",
          type="bug")
    fails(env, "create_issue", "Project 'ZZ' not found.", project="ZZ", title="T", type="bug")


def test_assign_issue(env: IssueTracker) -> None:
    assert ok(env, "assign_issue", issue_key="INFRA-134", assignee="noah.berg")[
        "assignee"] == "noah.berg"
    assert ok(env, "assign_issue", issue_key="INFRA-134", assignee=None)["assignee"] is None
    fails(env, "assign_issue", "User eli.wright is deactivated and cannot be assigned.",
          issue_key="INFRA-134", assignee="eli.wright")
    fails(env, "assign_issue", "User 'nobody' not found.", issue_key="INFRA-134",
          assignee="nobody")
    fails(env, "assign_issue", "Issue INFRA-131 is already assigned to ivy.chen.",
          issue_key="INFRA-131", assignee="ivy.chen")
    fails(env, "assign_issue", "Issue WEB-111 is in progress and must keep an assignee; "
          "reassign it instead.", issue_key="WEB-111", assignee=None)
    fails(env, "assign_issue", "Permission denied: alex.kim is a viewer on MOB; assigning "
          "issues requires the developer role.", issue_key="MOB-122", assignee="hana.sato")
    fails(env, "assign_issue", "Issue 'X-1' not found.", issue_key="X-1", assignee=None)


def test_transition_issue_workflow(env: IssueTracker) -> None:
    assert ok(env, "transition_issue", issue_key="WEB-111", status="in_review")[
        "status"] == "in_review"
    done = ok(env, "transition_issue", issue_key="WEB-111", status="done")
    assert done["resolution"] == "fixed" and done["updated_at"] == "2026-06-12T16:00:00"
    reopened = ok(env, "transition_issue", issue_key="WEB-111", status="open")
    assert reopened["resolution"] is None
    fails(env, "transition_issue", "Issue WEB-112 cannot move from open to done; allowed: "
          "in_progress, closed.", issue_key="WEB-112", status="done")
    fails(env, "transition_issue", "Issue WEB-112 has no assignee; assign it before starting.",
          issue_key="WEB-112", status="in_progress")
    fails(env, "transition_issue", "Permission denied: alex.kim is a developer on WEB; "
          "closing or reopening closed issues requires the maintainer role.",
          issue_key="WEB-112", status="closed", resolution="duplicate")
    fails(env, "transition_issue", "Issue 'WEB-1' not found.", issue_key="WEB-1",
          status="open")


def test_close_and_reopen_as_maintainer(env: IssueTracker) -> None:
    fails(env, "transition_issue", "A resolution is required when closing an issue, and only "
          "then.", issue_key="PAY-107", status="closed")
    fails(env, "transition_issue", "A resolution is required", issue_key="PAY-110",
          status="in_progress", resolution="duplicate")
    closed = ok(env, "transition_issue", issue_key="PAY-107", status="closed",
                resolution="duplicate")
    assert closed["status"] == "closed" and closed["resolution"] == "duplicate"
    assert ok(env, "transition_issue", issue_key="PAY-102", status="open")["status"] == "open"


def test_update_labels(env: IssueTracker) -> None:
    issue = ok(env, "update_labels", issue_key="WEB-117", add=["bug", "ux", "bug"],
               remove=["needs-triage"])
    assert issue["labels"] == ["bug", "ux"]
    fails(env, "update_labels", "Issue WEB-117 does not have label(s): frontend.",
          issue_key="WEB-117", remove=["frontend"])
    fails(env, "update_labels", "Issue WEB-117 already has those labels.",
          issue_key="WEB-117", add=["bug"])
    fails(env, "update_labels", "Give at least one label to add or remove.",
          issue_key="WEB-117")
    fails(env, "update_labels", "Unknown label(s) for WEB: crash.", issue_key="WEB-117",
          add=["crash"])
    fails(env, "update_labels", "Permission denied: alex.kim is a viewer on MOB",
          issue_key="MOB-122", add=["crash"])


def test_set_priority(env: IssueTracker) -> None:
    assert ok(env, "set_priority", issue_key="INFRA-132", priority="critical")[
        "priority"] == "critical"
    fails(env, "set_priority", "Issue INFRA-132 is already critical priority.",
          issue_key="INFRA-132", priority="critical")
    fails(env, "set_priority", "Permission denied: alex.kim is not a member on DOCS",
          issue_key="DOCS-138", priority="low")
    fails(env, "set_priority", "Issue 'INFRA-1' not found.", issue_key="INFRA-1",
          priority="low")


def test_add_comment(env: IssueTracker) -> None:
    comment = ok(env, "add_comment", issue_key="MOB-122", body="Seeing this on iOS 18.4 too.")
    assert comment == {"id": "C-30", "issue_key": "MOB-122", "author": "alex.kim",
                       "body": "Seeing this on iOS 18.4 too.",
                       "created_at": "2026-06-12T16:00:00"}
    assert env.state.issues["MOB-122"].updated_at == "2026-06-12T16:00:00"
    fails(env, "add_comment", "Comment body must not be empty.", issue_key="MOB-122", body="")
    fails(env, "add_comment", "Permission denied: alex.kim is not a member on DOCS; commenting "
          "requires the viewer role.", issue_key="DOCS-138", body="Hi")
    fails(env, "add_comment", "Issue 'MOB-1' not found.", issue_key="MOB-1", body="Hi")


def test_create_label(env: IssueTracker) -> None:
    assert ok(env, "create_label", project="PAY", label="regression")[-1] == "regression"
    fails(env, "create_label", "Label regression already exists in PAY.", project="PAY",
          label="regression")
    fails(env, "create_label", "Invalid label 'Needs Design': use lowercase words joined by "
          "hyphens.", project="PAY", label="Needs Design")
    fails(env, "create_label", "Permission denied: alex.kim is a developer on WEB; creating "
          "labels requires the maintainer role.", project="WEB", label="regression")
    fails(env, "create_label", "Project 'Q' not found.", project="Q", label="x")
