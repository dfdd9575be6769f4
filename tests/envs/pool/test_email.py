"""Email environment: every tool's success and failure paths, atomic failed writes,
snapshot round-trips and a deterministic seed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envs.pool.email import Email
from tests.envs.pool.helpers import fails, ok

MARTIN = "martin.reyes@reyesproperties.com"


@pytest.fixture
def env() -> Email:
    return Email()




def test_default_state_is_deterministic_and_rich() -> None:
    state = Email.default_state()
    assert state == Email.default_state()
    assert Email.default_state(seed=3) != state
    assert len(state.contacts) >= 20 and len(state.messages) >= 20
    assert state.next_message_id == len(state.messages) + 1
    for message in state.messages.values():
        box = state.mailboxes[message.mailbox_id]
        assert message.folder in ("inbox", "sent", "drafts", "archive", "trash", "spam",
                                  *box.folders)
        assert all(label in state.labels for label in message.labels)
        assert message.date <= state.now


def test_metadata() -> None:
    assert Email.name == "email" and Email.domain == "communication"
    specs = {s.name: s for s in Email.tool_specs()}
    assert 6 <= len(specs) <= 15
    assert not specs["get_message"].write and specs["mark_read"].write


def test_snapshot_round_trip(env: Email) -> None:
    ok(env, "label_messages", message_ids=["msg-0046"], label="personal")
    snap = env.snapshot()
    restored = Email()
    restored.restore(json.loads(json.dumps(snap)))
    assert restored.snapshot() == snap and restored.state == env.state
    call = {"mailbox_id": "mb-priya", "to": [MARTIN], "body": "Paid.",
            "reply_to_message_id": "msg-0046"}
    assert restored.call("send_message", call) == env.call("send_message", call)


def test_list_mailboxes(env: Email) -> None:
    boxes = {b["id"]: b for b in ok(env, "list_mailboxes")}
    assert boxes["mb-billing"]["access"] == "read_only"
    inbox = next(f for f in boxes["mb-support"]["folders"] if f["name"] == "inbox")
    assert inbox == {"name": "inbox", "messages": 3, "unread": 2}
    assert "urgent" in boxes["mb-priya"]["labels"]


def test_search_messages(env: Email) -> None:
    hits = ok(env, "search_messages", query="rent", mailbox_id="mb-priya")
    assert [h["id"] for h in hits] == ["msg-0046"] and hits[0]["from_name"] == "Martin Reyes"
    unread = ok(env, "search_messages", mailbox_id="mb-support", folder="INBOX",
                unread_only=True)
    assert [h["id"] for h in unread] == ["msg-0044", "msg-0035"]
    assert len(ok(env, "search_messages", sender="dev weekly", limit=2)) == 2
    assert {h["id"] for h in ok(env, "search_messages", label="customer")} == {
        "msg-0021", "msg-0035", "msg-0044"}
    fails(env, "search_messages", "limit must be between 1 and 50", limit=0)
    fails(env, "search_messages", "Give mailbox_id together with folder", folder="inbox")
    fails(env, "search_messages", "Mailbox 'mb-x' not found", mailbox_id="mb-x")
    fails(env, "search_messages", "Folder 'Taxes' does not exist in priya.nair@northwind.io",
          mailbox_id="mb-priya", folder="Taxes")
    fails(env, "search_messages", "Label 'vip' not found", label="vip")


def test_get_message(env: Email) -> None:
    message = ok(env, "get_message", message_id="msg-0036")
    assert "account number 40021877" in message["body"] and message["read"] is False
    assert env.state.messages["msg-0036"].read is False  # reading is not a write
    fails(env, "get_message", "Message 'msg-9999' not found", message_id="msg-9999")


def test_search_contacts(env: Email) -> None:
    assert [c["id"] for c in ok(env, "search_contacts", query="reyes")] == ["ct-017"]
    assert len(ok(env, "search_contacts", query="northwind labs")) == 16
    fails(env, "search_contacts", "Query must not be empty", query="")


def test_add_contact(env: Email) -> None:
    contact = ok(env, "add_contact", name="Ines Duarte", email="ines@duarte.pt",
                 company="Duarte Lda")
    assert contact["id"] == "ct-027" and env.state.next_contact_id == 28
    fails(env, "add_contact", "Name must not be empty", name=" ", email="x@y.com")
    fails(env, "add_contact", "Invalid email address 'ines-at-duarte'", name="Ines",
          email="ines-at-duarte")
    fails(env, "add_contact", "ines@duarte.pt is already saved as contact Ines Duarte (ct-027)",
          name="Ines D", email="INES@duarte.pt")


def test_send_message(env: Email) -> None:
    reply = ok(env, "send_message", mailbox_id="mb-priya", to=[MARTIN],
               body="Rent is scheduled.", reply_to_message_id="msg-0046")
    assert reply["subject"] == "Re: April rent and lease renewal"
    sent = env.state.messages[reply["id"]]
    assert sent.folder == "sent" and sent.thread_id == "msg-0046" and sent.date == env.state.now
    fresh = ok(env, "send_message", mailbox_id="mb-support",
               to=["anita.desai@quantaretail.com"], cc=["isabel.moreno@northwind.io"],
               subject="Your ticket", body="We are on it.")
    assert env.state.messages[fresh["id"]].sender == "support@northwind.io"


@pytest.mark.parametrize(("args", "message"), [
    ({"mailbox_id": "mb-billing"},
     "Permission denied: you have read-only access to billing@northwind.io"),
    ({"mailbox_id": "mb-nope"}, "Mailbox 'mb-nope' not found"),
    ({"to": ["martin at reyes"]}, "Invalid email address 'martin at reyes'"),
    ({"cc": ["deals@promoblast.biz"]}, "Recipient deals@promoblast.biz (Promo Blast) is blocked"),
    ({"to": []}, "Add at least one recipient in 'to'"),
    ({"subject": ""}, "Subject is required"),
    ({"body": "  "}, "Body must not be empty"),
    ({"reply_to_message_id": "msg-0044"},
     "Message msg-0044 is in another mailbox; reply from mb-support"),
    ({"reply_to_message_id": "msg-0000"}, "Message 'msg-0000' not found"),
])
def test_send_message_failures(env: Email, args: dict[str, Any], message: str) -> None:
    base = {"mailbox_id": "mb-priya", "to": [MARTIN], "subject": "Hello", "body": "Hi"}
    fails(env, "send_message", message, **{**base, **args})


def test_drafts(env: Email) -> None:
    draft = ok(env, "save_draft", mailbox_id="mb-priya", subject="Ideas", body="todo")
    assert env.state.messages[draft["id"]].folder == "drafts" and draft["to"] == []
    fails(env, "send_draft", "Add at least one recipient in 'to'", draft_id=draft["id"])
    fails(env, "save_draft", "A draft needs a subject or a body", mailbox_id="mb-priya",
          subject="", body=" ")
    fails(env, "save_draft", "read-only access to billing@northwind.io",
          mailbox_id="mb-billing", subject="x", body="y")
    sent = ok(env, "send_draft", draft_id="msg-0049")
    assert sent["folder"] == "sent" and sent["date"] == "2026-03-09T09:00"
    fails(env, "send_draft", "Message msg-0049 is not a draft (it is in sent)",
          draft_id="msg-0049")
    fails(env, "send_draft", "Message 'msg-7777' not found", draft_id="msg-7777")


def test_move_messages(env: Email) -> None:
    out = ok(env, "move_messages", message_ids=["msg-0029", "msg-0013"], folder="trash")
    assert out == {"moved": ["msg-0029", "msg-0013"], "already_there": []}
    assert ok(env, "move_messages", message_ids=["msg-0029", "msg-0046"],
              folder="Projects") == {"moved": ["msg-0029", "msg-0046"], "already_there": []}
    fails(env, "move_messages", "All given messages are already in projects",
          message_ids=["msg-0046"], folder="projects")
    fails(env, "move_messages", "nothing can be moved into or out of sent or drafts",
          message_ids=["msg-0046"], folder="sent")
    fails(env, "move_messages", "nothing can be moved into or out of sent or drafts",
          message_ids=["msg-0049"], folder="archive")
    fails(env, "move_messages", "Folder 'Escalations' does not exist in priya.nair@",
          message_ids=["msg-0046"], folder="Escalations")
    fails(env, "move_messages", "Give at least one message id", message_ids=[],
          folder="archive")
    fails(env, "move_messages", "Each message id may appear only once",
          message_ids=["msg-0046", "msg-0046"], folder="archive")
    fails(env, "move_messages", "Message 'msg-0999' not found", message_ids=["msg-0999"],
          folder="archive")
    fails(env, "move_messages", "read-only access to billing@northwind.io",
          message_ids=["msg-0024"], folder="Paid")


def test_label_messages(env: Email) -> None:
    out = ok(env, "label_messages", message_ids=["msg-0051", "msg-0046"], label="urgent")
    assert out == {"changed": ["msg-0046"], "unchanged": ["msg-0051"]}
    assert ok(env, "label_messages", message_ids=["msg-0051"], label="urgent",
              remove=True)["changed"] == ["msg-0051"]
    fails(env, "label_messages", "All given messages have no label 'urgent'",
          message_ids=["msg-0051"], label="urgent", remove=True)
    fails(env, "label_messages", "All given messages already have the label 'urgent'",
          message_ids=["msg-0046"], label="urgent")
    fails(env, "label_messages", "Label 'vip' not found; create it first",
          message_ids=["msg-0046"], label="vip")


def test_mark_read(env: Email) -> None:
    out = ok(env, "mark_read", message_ids=["msg-0046", "msg-0030"])
    assert out == {"changed": ["msg-0046"], "unchanged": ["msg-0030"]}
    assert ok(env, "mark_read", message_ids=["msg-0046"], read=False)["changed"] == [
        "msg-0046"]
    fails(env, "mark_read", "All given messages are already read", message_ids=["msg-0030"])


def test_create_folder(env: Email) -> None:
    assert ok(env, "create_folder", mailbox_id="mb-priya", name="Taxes 2025")["folders"][-1] \
        == "Taxes 2025"
    ok(env, "move_messages", message_ids=["msg-0040"], folder="taxes 2025")
    assert env.state.messages["msg-0040"].folder == "Taxes 2025"
    fails(env, "create_folder", "Folder 'archive' already exists", mailbox_id="mb-priya",
          name="archive")
    fails(env, "create_folder", "Folder 'projects' already exists", mailbox_id="mb-priya",
          name="projects")
    fails(env, "create_folder", "Folder names need 1-40 characters and no '/'",
          mailbox_id="mb-priya", name="a/b")
    fails(env, "create_folder", "read-only access", mailbox_id="mb-billing", name="Q1")


def test_create_label(env: Email) -> None:
    assert ok(env, "create_label", name="q2-planning", color="blue") == {
        "name": "q2-planning", "color": "blue"}
    fails(env, "create_label", "Invalid label name 'Q2 Planning'", name="Q2 Planning")
    fails(env, "create_label", "Label 'urgent' already exists", name="urgent")
    fails(env, "create_label", "argument 'color'", name="new", color="pink")


def test_create_rule(env: Email) -> None:
    out = ok(env, "create_rule", mailbox_id="mb-priya", name="Cloud status",
             action="move", target="archive", from_contains="status@acmecloud.com",
             apply_to_inbox=True)
    assert out["rule"]["id"] == "rule-02"
    assert out["applied_to"] == ["msg-0005", "msg-0012", "msg-0018", "msg-0038"]
    assert env.state.messages["msg-0005"].folder == "archive"
    labelled = ok(env, "create_rule", mailbox_id="mb-support", name="Invoices",
                  action="label", target="finance", subject_contains="invoice",
                  apply_to_inbox=True)
    assert labelled["applied_to"] == ["msg-0035"]
    fails(env, "create_rule", "A rule needs from_contains or subject_contains",
          mailbox_id="mb-priya", name="x", action="mark_read")
    fails(env, "create_rule", "Folder 'Later' does not exist", mailbox_id="mb-priya",
          name="x", action="move", target="Later", from_contains="a")
    fails(env, "create_rule", "Rules cannot move mail to inbox", mailbox_id="mb-priya",
          name="x", action="move", target="inbox", from_contains="a")
    fails(env, "create_rule", "Label 'vip' not found", mailbox_id="mb-priya", name="x",
          action="label", target="vip", from_contains="a")
    fails(env, "create_rule", "mark_read rules take no target", mailbox_id="mb-priya",
          name="x", action="mark_read", target="archive", from_contains="a")
    fails(env, "create_rule", "Rule name must not be empty", mailbox_id="mb-priya", name="",
          action="mark_read", from_contains="a")
    fails(env, "create_rule", "read-only access", mailbox_id="mb-billing", name="x",
          action="mark_read", from_contains="a")
