"""Email: the mailboxes one person can use, with folders, labels, drafts, rules and contacts.

The signed-in user owns a personal mailbox, is a delegate on a shared support mailbox
(may send as it) and has read-only access to the billing mailbox. Sending checks the
rules a mail server would: valid addresses, no blocked recipients, permission to send as
the mailbox. Bulk tools (move, label, mark) change what they can and refuse only when
nothing would change, so an agent never "succeeds" at a no-op.
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from envs.base import Environment, ToolError, tool
from envs.timestamps import Timestamp

__all__ = ["Email", "EmailState"]

#: folders every mailbox has; "sent" and "drafts" are filled only by sending and drafting
SYSTEM_FOLDERS = ("inbox", "sent", "drafts", "archive", "trash", "spam")
_ADDRESS = re.compile(r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$")
Color = Literal["red", "orange", "yellow", "green", "blue", "purple", "gray"]
Access = Literal["owner", "delegate", "read_only"]


class Mailbox(BaseModel):
    id: str
    address: str
    display_name: str
    access: Access
    #: user-created folders, in creation order
    folders: list[str] = Field(default_factory=list)


class Contact(BaseModel):
    id: str
    name: str
    email: str
    company: str = ""
    phone: str = ""
    blocked: bool = False


class Label(BaseModel):
    name: str
    color: Color


class Message(BaseModel):
    id: str
    mailbox_id: str
    folder: str
    sender: str
    sender_name: str
    to: list[str] = Field(default_factory=list)
    cc: list[str] = Field(default_factory=list)
    subject: str
    body: str
    #: when it was received or sent ("YYYY-MM-DDTHH:MM"); drafts: when last saved
    date: Timestamp
    read: bool = True
    labels: list[str] = Field(default_factory=list)
    #: id of the first message of the conversation
    thread_id: str
    in_reply_to: str | None = None


class MailRule(BaseModel):
    id: str
    mailbox_id: str
    name: str
    from_contains: str = ""
    subject_contains: str = ""
    action: Literal["move", "label", "mark_read"]
    #: folder for "move", label for "label", empty for "mark_read"
    target: str = ""


# -- what the tools return ---------------------------------------------------------------

#: a message as listed (the body cut to a snippet); functional form: "from" is a keyword
MessageSummary = TypedDict("MessageSummary", {
    "id": str,
    "mailbox_id": str,
    "folder": str,
    "from": Annotated[str, Field(description="Sender's address")],
    "from_name": Annotated[str, Field(description="Sender's display name")],
    "to": list[str],
    "subject": str,
    "date": Timestamp,
    "read": bool,
    "labels": list[str],
    "snippet": Annotated[str, Field(description="First 80 characters of the body")],
})


class FolderCount(TypedDict):
    name: str
    messages: Annotated[int, Field(description="Messages in the folder")]
    unread: Annotated[int, Field(description="Unread messages in the folder")]


class MailboxView(TypedDict):
    """A mailbox you can open, its folders with counts and the labels you may apply."""

    id: str
    address: str
    name: Annotated[str, Field(description="Display name")]
    access: Annotated[Access, Field(description='"owner", "delegate" (may send as it) or '
                                    '"read_only"')]
    folders: list[FolderCount]
    labels: Annotated[list[str], Field(description="Names of the labels you can apply")]


class Moved(TypedDict):
    moved: Annotated[list[str], Field(description="Ids of messages moved")]
    already_there: Annotated[list[str], Field(description="Ids already in that folder")]


class Changed(TypedDict):
    changed: Annotated[list[str], Field(description="Ids of messages changed")]
    unchanged: Annotated[list[str], Field(description="Ids already in the asked state")]


class MailboxFolders(TypedDict):
    mailbox_id: str
    folders: Annotated[list[str], Field(description="The mailbox's custom folders")]


class RuleCreated(TypedDict):
    rule: MailRule
    applied_to: Annotated[list[str], Field(
        description="Ids of inbox messages the rule was applied to now")]


class EmailState(BaseModel):
    seed: int = 0
    now: Timestamp = "2026-03-09T09:00"
    mailboxes: dict[str, Mailbox] = Field(default_factory=dict)
    contacts: dict[str, Contact] = Field(default_factory=dict)
    labels: dict[str, Label] = Field(default_factory=dict)
    messages: dict[str, Message] = Field(default_factory=dict)
    rules: dict[str, MailRule] = Field(default_factory=dict)
    next_message_id: int = 1
    next_contact_id: int = 1
    next_rule_id: int = 1


# -- seed data ---------------------------------------------------------------------------

_ME = ("Priya Nair", "priya.nair@northwind.io")

_CONTACTS = [
    ("Marcus Chen", "marcus.chen@northwind.io", "Northwind Labs", "+1 415 555 0102"),
    ("Sofia Alvarez", "sofia.alvarez@northwind.io", "Northwind Labs", "+1 415 555 0103"),
    ("Daniel Okafor", "daniel.okafor@northwind.io", "Northwind Labs", "+1 415 555 0104"),
    ("Hannah Kim", "hannah.kim@northwind.io", "Northwind Labs", "+1 415 555 0105"),
    ("Tomasz Nowak", "tomasz.nowak@northwind.io", "Northwind Labs", "+1 415 555 0106"),
    ("Grace Liu", "grace.liu@northwind.io", "Northwind Labs", "+1 415 555 0107"),
    ("Omar Haddad", "omar.haddad@northwind.io", "Northwind Labs", "+1 415 555 0108"),
    ("Elena Rossi", "elena.rossi@northwind.io", "Northwind Labs", "+1 415 555 0109"),
    ("Nina Petrova", "nina.petrova@northwind.io", "Northwind Labs", "+1 415 555 0113"),
    ("Raj Patel", "raj.patel@northwind.io", "Northwind Labs", "+1 415 555 0116"),
    ("Victor Santos", "victor.santos@northwind.io", "Northwind Labs", "+1 415 555 0118"),
    ("Laura Fischer", "laura.fischer@northwind.io", "Northwind Labs", "+1 415 555 0121"),
    ("Kevin Brooks", "kevin.brooks@northwind.io", "Northwind Labs", "+1 415 555 0122"),
    ("Isabel Moreno", "isabel.moreno@northwind.io", "Northwind Labs", "+1 415 555 0123"),
    ("Noah Schmidt", "noah.schmidt@northwind.io", "Northwind Labs", "+1 415 555 0124"),
    ("Lucas Meyer", "lucas.meyer@northwind.io", "Northwind Labs", "+1 415 555 0112"),
    ("Martin Reyes", "martin.reyes@reyesproperties.com", "Reyes Properties", "+1 510 555 0190"),
    ("Brightline Plumbing", "billing@brightlineplumbing.com", "Brightline Plumbing",
     "+1 510 555 0144"),
    ("Harbor Credit Union", "alerts@harborcu.com", "Harbor Credit Union", "+1 800 555 0199"),
    ("Anita Desai", "anita.desai@quantaretail.com", "Quanta Retail", "+1 212 555 0171"),
    ("Felix Wagner", "felix.wagner@orbitlogistics.de", "Orbit Logistics", "+49 30 5550 1733"),
    ("Jenna Park", "jenna@parkdesignstudio.com", "Park Design Studio", "+1 503 555 0160"),
    ("Dev Weekly", "digest@devweekly.io", "Dev Weekly", ""),
    ("Promo Blast", "deals@promoblast.biz", "Promo Blast", ""),
    ("Tom Hughes", "tom.hughes@talentbridge.co", "TalentBridge Recruiting", "+1 646 555 0128"),
    ("Sara Lindqvist", "sara.lindqvist@acmecloud.com", "Acme Cloud", "+46 8 555 0142"),
]

# (mailbox, folder, sender name, sender, subject, body, date, read, labels)
_ANCHORS: list[tuple[str, str, str, str, str, str, str, bool, list[str]]] = [
    ("mb-priya", "inbox", "Martin Reyes", "martin.reyes@reyesproperties.com",
     "April rent and lease renewal",
     "Hi Priya,\n\nA reminder that April rent of 1850.00 USD is due on 2026-04-01; please "
     "pay it to the usual account. Could you also let me know by 2026-03-20 whether you "
     "will renew the lease for another year?\n\nThanks,\nMartin", "2026-03-08T18:42",
     False, []),
    ("mb-priya", "inbox", "Brightline Plumbing", "billing@brightlineplumbing.com",
     "Invoice BP-2291 for your repair on 2026-03-02",
     "Hello Priya Nair,\n\nThank you for choosing Brightline Plumbing. Invoice BP-2291 for "
     "the kitchen sink repair: 480.00 USD, due by 2026-03-23.\n\nPay by bank transfer to "
     "account number 40021877, routing number 121000358 (Brightline Plumbing LLC).\n\n"
     "Brightline Plumbing", "2026-03-06T10:15", False, []),
    ("mb-priya", "inbox", "Marcus Chen", "marcus.chen@northwind.io",
     "Can we move our 1:1 this week?",
     "Hi Priya,\n\nI'm at the dentist on Tuesday morning. Could we do this week's 1:1 on "
     "2026-03-12 at 10:00 instead? Same 30 minutes.\n\nMarcus", "2026-03-09T07:55", False,
     []),
    ("mb-priya", "inbox", "Grace Liu", "grace.liu@northwind.io", "Q2 roadmap review prep",
     "Hi Priya,\n\nFor Wednesday's Q2 roadmap review, could you add Omar Haddad and Nina "
     "Petrova? They need to hear the checkout and QA plans.\n\nThanks!\nGrace",
     "2026-03-08T20:10", False, []),
    ("mb-priya", "inbox", "Noah Schmidt", "noah.schmidt@northwind.io",
     "tidewater 3.2.0 breaks retries",
     "Hey Priya,\n\nSeveral users report that tidewater 3.2.0 ignores the retry backoff "
     "setting and hammers servers. 3.1.4 is fine. Can we yank 3.2.0 until there is a fix?"
     "\n\nNoah", "2026-03-09T08:20", False, ["urgent"]),
    ("mb-priya", "inbox", "Northwind Package Registry", "noreply@pkgs.northwind.dev",
     "Maintainer request for gust-retry",
     "lmeyer (Lucas Meyer) asked to become a maintainer of gust-retry. Owners of the "
     "package can add them from the registry.", "2026-03-07T14:03", True, []),
    ("mb-priya", "inbox", "Laura Fischer", "laura.fischer@northwind.io",
     "Interview panel for the Senior SRE candidate",
     "Hi Priya,\n\nCould you set up the panel interview for our Senior SRE candidate on "
     "2026-03-18 from 14:00 to 15:00 with Hannah Kim and Victor Santos? A room with video "
     "would be best.\n\nLaura", "2026-03-06T16:30", True, ["follow-up"]),
    ("mb-priya", "inbox", "Harbor Credit Union", "alerts@harborcu.com",
     "Low balance alert",
     "Your Everyday Checking balance fell below 500.00 USD on 2026-03-07. Log in to review "
     "recent transactions.", "2026-03-07T06:00", True, ["finance"]),
    ("mb-priya", "inbox", "Raj Patel", "raj.patel@northwind.io",
     "Security review for harbor-cli",
     "Priya, Victor Santos will own the security review of harbor-cli. Please give him "
     "maintainer access on the registry so he can publish the fixes.\n\nRaj",
     "2026-03-05T11:47", True, []),
    ("mb-priya", "inbox", "Kevin Brooks", "kevin.brooks@northwind.io",
     "Offsite deposit reimbursement",
     "Hi Priya, finance approved your 250.00 USD offsite deposit. We'll reimburse it with "
     "the next payroll.\n\nKevin", "2026-03-04T09:12", True, ["finance"]),
    ("mb-priya", "inbox", "Tom Hughes", "tom.hughes@talentbridge.co",
     "Exciting leadership opportunity",
     "Hi Priya, I'm recruiting for a VP Engineering role and thought of you. Free for a "
     "chat this week?\n\nTom", "2026-03-03T12:00", False, []),
    ("mb-priya", "drafts", "Priya Nair", "priya.nair@northwind.io", "Lease renewal",
     "Hi Martin,\n\nYes, I'd like to renew the lease for another year.\n\nBest,\nPriya",
     "2026-03-08T21:05", True, []),
    ("mb-priya", "sent", "Priya Nair", "priya.nair@northwind.io", "Platform team offsite",
     "Hi all, the platform offsite is confirmed for 2026-04-16. Agenda to follow.\n\nPriya",
     "2026-03-02T17:20", True, []),
    ("mb-support", "inbox", "Anita Desai", "anita.desai@quantaretail.com",
     "Cannot install lattice-orm 2.0.0",
     "Hello support,\n\nInstalling lattice-orm 2.0.0 fails because one of its dependencies "
     "cannot be resolved. Our order number is QR-88412. Can you help?\n\nAnita Desai, "
     "Quanta Retail", "2026-03-08T13:25", False, ["customer"]),
    ("mb-support", "inbox", "Felix Wagner", "felix.wagner@orbitlogistics.de",
     "Invoice question for February",
     "Hi, our February invoice lists 12 seats but we only have 10 active users. Could you "
     "check? Felix Wagner, Orbit Logistics", "2026-03-06T09:40", False, ["customer"]),
    ("mb-support", "inbox", "Jenna Park", "jenna@parkdesignstudio.com",
     "Feature request: dark mode",
     "Love the product! Any plans for a dark mode in the dashboard?\n\nJenna",
     "2026-03-05T19:02", True, []),
    ("mb-support", "Escalations", "Anita Desai", "anita.desai@quantaretail.com",
     "Outage on 2026-02-27",
     "We saw errors for two hours on 2026-02-27. Please send an incident report.",
     "2026-02-27T15:10", True, ["customer", "urgent"]),
    ("mb-billing", "inbox", "Sara Lindqvist", "sara.lindqvist@acmecloud.com",
     "Acme Cloud invoice AC-2026-03",
     "Invoice AC-2026-03 for March hosting: 3120.50 USD, due 2026-03-31.",
     "2026-03-01T08:00", False, ["finance"]),
    ("mb-billing", "Invoices", "Brightline Plumbing", "billing@brightlineplumbing.com",
     "Office invoice BP-2207", "Office restroom repair: 265.00 USD, due 2026-03-15.",
     "2026-02-20T10:00", True, ["finance"]),
]

_NEWS = [
    ("Dev Weekly", "digest@devweekly.io", "Dev Weekly #{n}: {topic}",
     "This week: {topic}, plus release notes and a reader survey."),
    ("Promo Blast", "deals@promoblast.biz", "Last chance: {pct}% off cloud credits",
     "Unsubscribe anytime."),
    ("Acme Cloud Status", "status@acmecloud.com", "Resolved: elevated latency in {region}",
     "The incident affecting {region} has been resolved."),
]
_TOPICS = ["Rust in production", "Postgres 18 tips", "Observability on a budget",
           "Typed Python at scale", "Edge caching", "Incident reviews that work"]
_REGIONS = ["eu-west-1", "us-east-2", "ap-south-1"]
_UPDATES = [
    ("Notes from today's design review", "Sharing my notes from the design review; the main "
     "open question is the cache invalidation strategy."),
    ("PR review: billing-service #{n}", "Could you take a look at PR #{n} when you have a "
     "minute? It is a small refactor."),
    ("Out of office on {day}", "Heads up: I'm out on {day}; ping me on chat if urgent."),
    ("On-call handover", "Quiet week on call; two alerts, both flaky disks, both resolved."),
    ("Quick question about the Q2 budget", "Do we have headcount for an intern in Q2?"),
    ("Conference talk accepted!", "My talk on retries and backoff got accepted."),
]


def _seeded_state(seed: int) -> EmailState:
    rng = random.Random(seed)
    state = EmailState(seed=seed)
    state.mailboxes = {
        "mb-priya": Mailbox(id="mb-priya", address=_ME[1], display_name=_ME[0],
                            access="owner",
                            folders=["Projects", "Receipts", "Newsletters", "Hiring"]),
        "mb-support": Mailbox(id="mb-support", address="support@northwind.io",
                              display_name="Northwind Support", access="delegate",
                              folders=["Escalations", "Resolved"]),
        "mb-billing": Mailbox(id="mb-billing", address="billing@northwind.io",
                              display_name="Northwind Billing", access="read_only",
                              folders=["Invoices", "Paid"]),
    }
    for name, email, company, phone in _CONTACTS:
        cid = f"ct-{state.next_contact_id:03d}"
        state.next_contact_id += 1
        state.contacts[cid] = Contact(id=cid, name=name, email=email, company=company,
                                      phone=phone, blocked=email == "deals@promoblast.biz")
    for name, color in [("urgent", "red"), ("follow-up", "orange"), ("finance", "green"),
                        ("release", "blue"), ("personal", "purple"), ("customer", "yellow"),
                        ("travel", "gray")]:
        state.labels[name] = Label(name=name, color=color)  # type: ignore[arg-type]

    def add(mailbox: str, folder: str, sender_name: str, sender: str, subject: str,
            body: str, when: str, read: bool, labels: list[str]) -> None:
        mid = f"msg-{state.next_message_id:04d}"
        state.next_message_id += 1
        # the seeded draft answers Martin; the seeded sent mail went to the team list
        to = {"drafts": ["martin.reyes@reyesproperties.com"],
              "sent": ["platform-team@northwind.io"]}.get(folder,
                                                         [state.mailboxes[mailbox].address])
        state.messages[mid] = Message(
            id=mid, mailbox_id=mailbox, folder=folder, sender=sender, sender_name=sender_name,
            to=to, subject=subject, body=body, date=when, read=read, labels=list(labels),
            thread_id=mid)

    generated: list[tuple[str, str, str, str, str, str, datetime, bool, list[str]]] = []
    start = datetime(2026, 2, 16, 7, 0)
    colleagues = [c for c in _CONTACTS if c[1].endswith("@northwind.io")]
    for n in range(32):
        when = start + timedelta(minutes=rng.randint(0, 21 * 24 * 60))
        if n % 3 == 0:
            sender_name, sender, subject, body = rng.choice(_NEWS)
            fields = {"n": 200 + n, "topic": rng.choice(_TOPICS), "pct": rng.choice([20, 40]),
                      "region": rng.choice(_REGIONS)}
            folder = "Newsletters" if sender == "digest@devweekly.io" else "inbox"
            if sender == "deals@promoblast.biz":
                folder = "spam"
            generated.append(("mb-priya", folder, sender_name, sender,
                              subject.format(**fields), body.format(**fields), when,
                              rng.random() < 0.5, []))
        else:
            name, sender, _, _ = rng.choice(colleagues)
            subject, body = rng.choice(_UPDATES)
            fields = {"n": rng.randint(100, 999),
                      "day": (when + timedelta(days=rng.randint(3, 9))).date().isoformat()}
            folder = rng.choice(["inbox", "inbox", "inbox", "archive", "Projects"])
            generated.append(("mb-priya", folder, name, sender, subject.format(**fields),
                              body.format(**fields), when, rng.random() < 0.7, []))
    rows = [(*a[:6], datetime.fromisoformat(a[6]), *a[7:]) for a in _ANCHORS] + generated
    for mailbox, folder, sender_name, sender, subject, body, when, read, labels in sorted(
            rows, key=lambda r: r[6]):
        add(mailbox, folder, sender_name, sender, subject, body, f"{when:%Y-%m-%dT%H:%M}",
            read, labels)
    state.rules["rule-01"] = MailRule(id="rule-01", mailbox_id="mb-priya", name="Newsletters",
                                      from_contains="digest@devweekly.io", action="move",
                                      target="Newsletters")
    state.next_rule_id = 2
    return state


class Email(Environment):
    """Mailboxes with folders, labels, drafts, mail rules and an address book."""

    name = "email"
    description = ("An email client over a personal, a shared support and a read-only billing "
                   "mailbox: search, read, send, draft, file, label and filter mail, and "
                   "keep contacts.")
    domain = "communication"
    State = EmailState
    state: EmailState

    @classmethod
    def default_state(cls, seed: int = 0) -> EmailState:
        """Priya Nair's mail: three mailboxes, 26 contacts and ~50 messages from the three
        weeks before Monday 2026-03-09."""
        return _seeded_state(seed)

    # -- helpers ----------------------------------------------------------------------

    def _mailbox(self, mailbox_id: str, *, writing: bool = False) -> Mailbox:
        mailbox = self.state.mailboxes.get(mailbox_id)
        if mailbox is None:
            raise ToolError(f"Mailbox {mailbox_id!r} not found.")
        if writing and mailbox.access == "read_only":
            raise ToolError(f"Permission denied: you have read-only access to "
                            f"{mailbox.address}.")
        return mailbox

    def _message(self, message_id: str) -> Message:
        if message_id not in self.state.messages:
            raise ToolError(f"Message {message_id!r} not found.")
        return self.state.messages[message_id]

    def _messages(self, message_ids: list[str]) -> list[Message]:
        """Messages to change in bulk: all must exist in writable mailboxes."""
        if not message_ids:
            raise ToolError("Give at least one message id.")
        if len(set(message_ids)) != len(message_ids):
            raise ToolError("Each message id may appear only once.")
        messages = [self._message(m) for m in message_ids]
        for message in messages:
            self._mailbox(message.mailbox_id, writing=True)
        return messages

    def _folder(self, mailbox: Mailbox, folder: str) -> str:
        """The folder's canonical name in this mailbox (case-insensitive match)."""
        for name in (*SYSTEM_FOLDERS, *mailbox.folders):
            if name.lower() == folder.strip().lower():
                return name
        raise ToolError(f"Folder {folder!r} does not exist in {mailbox.address}.")

    def _recipients(self, addresses: list[str]) -> list[str]:
        blocked = {c.email.lower(): c.name for c in self.state.contacts.values() if c.blocked}
        out = []
        for address in addresses:
            address = address.strip()
            if not _ADDRESS.match(address):
                raise ToolError(f"Invalid email address {address!r}.")
            if address.lower() in blocked:
                raise ToolError(f"Recipient {address} ({blocked[address.lower()]}) is blocked.")
            out.append(address)
        return out

    def _mint_message_id(self) -> str:
        mid = f"msg-{self.state.next_message_id:04d}"
        self.state.next_message_id += 1
        return mid

    @staticmethod
    def _summary(message: Message) -> MessageSummary:
        return {"id": message.id, "mailbox_id": message.mailbox_id, "folder": message.folder,
                "from": message.sender, "from_name": message.sender_name, "to": message.to,
                "subject": message.subject, "date": message.date, "read": message.read,
                "labels": message.labels, "snippet": message.body[:80]}

    @staticmethod
    def _matches(rule: MailRule, message: Message) -> bool:
        return (rule.from_contains.lower() in message.sender.lower()
                and rule.subject_contains.lower() in message.subject.lower())

    # -- read tools -------------------------------------------------------------------

    @tool
    def list_mailboxes(self) -> list[MailboxView]:
        """List your mailboxes with their folders (message and unread counts) and labels.

        Returns:
            Mailboxes with id, address, your access ("owner", "delegate" may send as it,
            "read_only"), folders with counts, plus the labels you can apply.
        """
        out: list[MailboxView] = []
        for box in self.state.mailboxes.values():
            folders: list[FolderCount] = []
            for folder in (*SYSTEM_FOLDERS, *box.folders):
                inside = [m for m in self.state.messages.values()
                          if m.mailbox_id == box.id and m.folder == folder]
                folders.append({"name": folder, "messages": len(inside),
                                "unread": sum(not m.read for m in inside)})
            out.append({"id": box.id, "address": box.address, "name": box.display_name,
                        "access": box.access, "folders": folders,
                        "labels": sorted(self.state.labels)})
        return out

    @tool
    def search_messages(self, query: str = "", mailbox_id: str | None = None,
                        folder: str | None = None, sender: str = "",
                        label: str | None = None, unread_only: bool = False,
                        limit: int = 10) -> list[MessageSummary]:
        """Search mail, newest first.

        Args:
            query: Text to find in the subject or body (case-insensitive); empty matches all.
            mailbox_id: Only this mailbox.
            folder: Only this folder (needs mailbox_id), e.g. "inbox" or "Projects".
            sender: Text to find in the sender's name or address.
            label: Only messages with this label.
            unread_only: Only unread messages.
            limit: Most results to return (1-50).

        Returns:
            Message summaries: id, mailbox, folder, from, subject, date, read flag, labels
            and the first 80 characters of the body.
        """
        if not 1 <= limit <= 50:
            raise ToolError("limit must be between 1 and 50.")
        if folder is not None and mailbox_id is None:
            raise ToolError("Give mailbox_id together with folder.")
        folder_name = None
        if mailbox_id is not None:
            box = self._mailbox(mailbox_id)
            folder_name = self._folder(box, folder) if folder is not None else None
        if label is not None and label not in self.state.labels:
            raise ToolError(f"Label {label!r} not found.")
        q, who = query.lower(), sender.lower()
        hits = [m for m in self.state.messages.values()
                if (mailbox_id is None or m.mailbox_id == mailbox_id)
                and (folder_name is None or m.folder == folder_name)
                and (q in m.subject.lower() or q in m.body.lower())
                and (who in m.sender.lower() or who in m.sender_name.lower())
                and (label is None or label in m.labels)
                and (not unread_only or not m.read)]
        hits.sort(key=lambda m: (m.date, m.id), reverse=True)
        return [self._summary(m) for m in hits[:limit]]

    @tool
    def get_message(self, message_id: str) -> Message:
        """Read one message in full (this does not mark it read).

        Args:
            message_id: The message id, e.g. "msg-0012".

        Returns:
            The message with sender, recipients, subject, body, folder, labels and thread.
        """
        return self._message(message_id)

    @tool
    def search_contacts(self, query: str) -> list[Contact]:
        """Find contacts whose name, email address or company contains the query.

        Args:
            query: Part of a name, address or company (case-insensitive).

        Returns:
            Matching contacts with id, name, email, company, phone and blocked flag.
        """
        q = query.strip().lower()
        if not q:
            raise ToolError("Query must not be empty.")
        return [c for c in self.state.contacts.values()
                if q in c.name.lower() or q in c.email.lower() or q in c.company.lower()]

    # -- write tools ------------------------------------------------------------------

    @tool(write=True)
    def add_contact(self, name: str, email: str, company: str = "",
                    phone: str = "") -> Contact:
        """Add someone to the address book.

        Args:
            name: Full name.
            email: Email address (must be unique in the address book).
            company: Company or organization.
            phone: Phone number.

        Returns:
            The new contact.
        """
        if not name.strip():
            raise ToolError("Name must not be empty.")
        if not _ADDRESS.match(email.strip()):
            raise ToolError(f"Invalid email address {email!r}.")
        for contact in self.state.contacts.values():
            if contact.email.lower() == email.strip().lower():
                raise ToolError(f"{contact.email} is already saved as contact {contact.name} "
                                f"({contact.id}).")
        cid = f"ct-{self.state.next_contact_id:03d}"
        self.state.next_contact_id += 1
        contact = Contact(id=cid, name=name.strip(), email=email.strip(), company=company,
                          phone=phone)
        self.state.contacts[cid] = contact
        return contact

    @tool(write=True)
    def send_message(self, mailbox_id: str, to: list[str], body: str, subject: str = "",
                     cc: list[str] | None = None,
                     reply_to_message_id: str | None = None) -> MessageSummary:
        """Send an email from a mailbox, optionally as a reply in an existing conversation.

        Args:
            mailbox_id: Mailbox to send from (you need owner or delegate access).
            to: Recipient email addresses.
            body: Message text.
            subject: Subject line; may be omitted for a reply ("Re: <original>" is used).
            cc: Addresses to copy.
            reply_to_message_id: Message this answers (must be in the same mailbox).

        Returns:
            The sent message's summary, including its new id.
        """
        box = self._mailbox(mailbox_id, writing=True)
        original = None
        if reply_to_message_id is not None:
            original = self._message(reply_to_message_id)
            if original.mailbox_id != mailbox_id:
                raise ToolError(f"Message {reply_to_message_id} is in another mailbox; reply "
                                f"from {original.mailbox_id}.")
        message = self._compose(box, to, cc or [], subject, body, original)
        self._check_sendable(message)
        message.folder, message.read = "sent", True
        self.state.messages[message.id] = message
        return self._summary(message)

    def _compose(self, box: Mailbox, to: list[str], cc: list[str], subject: str, body: str,
                 original: Message | None) -> Message:
        if original is not None and not subject.strip():
            subject = original.subject if original.subject.lower().startswith("re:") \
                else f"Re: {original.subject}"
        mid = self._mint_message_id()
        return Message(id=mid, mailbox_id=box.id, folder="drafts", sender=box.address,
                       sender_name=box.display_name, to=self._recipients(to),
                       cc=self._recipients(cc), subject=subject.strip(), body=body,
                       date=self.state.now, thread_id=original.thread_id if original else mid,
                       in_reply_to=original.id if original else None)

    @staticmethod
    def _check_sendable(message: Message) -> None:
        if not message.to:
            raise ToolError("Add at least one recipient in 'to'.")
        if not message.subject:
            raise ToolError("Subject is required.")
        if not message.body.strip():
            raise ToolError("Body must not be empty.")

    @tool(write=True)
    def save_draft(self, mailbox_id: str, subject: str, body: str,
                   to: list[str] | None = None, cc: list[str] | None = None) -> MessageSummary:
        """Save a message as a draft to finish or send later.

        Args:
            mailbox_id: Mailbox the draft belongs to (owner or delegate access).
            subject: Subject line.
            body: Message text so far.
            to: Recipient email addresses, if known.
            cc: Addresses to copy.

        Returns:
            The draft's summary, including its id.
        """
        box = self._mailbox(mailbox_id, writing=True)
        if not subject.strip() and not body.strip():
            raise ToolError("A draft needs a subject or a body.")
        message = self._compose(box, to or [], cc or [], subject, body, None)
        self.state.messages[message.id] = message
        return self._summary(message)

    @tool(write=True)
    def send_draft(self, draft_id: str) -> MessageSummary:
        """Send a saved draft as it is.

        Args:
            draft_id: The draft's message id.

        Returns:
            The sent message's summary.
        """
        message = self._message(draft_id)
        self._mailbox(message.mailbox_id, writing=True)
        if message.folder != "drafts":
            raise ToolError(f"Message {draft_id} is not a draft (it is in {message.folder}).")
        self._check_sendable(message)
        message.folder, message.date, message.read = "sent", self.state.now, True
        return self._summary(message)

    @tool(write=True)
    def move_messages(self, message_ids: list[str], folder: str) -> Moved:
        """Move messages to another folder of their mailbox (e.g. archive, trash, Projects).

        Args:
            message_ids: Messages to move.
            folder: Target folder: "inbox", "archive", "trash", "spam" or a custom folder.
                Nothing can be moved into or out of "sent" and "drafts".

        Returns:
            Ids moved and ids already in that folder.
        """
        messages = self._messages(message_ids)
        moved: list[tuple[Message, str]] = []
        unchanged: list[tuple[Message, str]] = []
        for message in messages:
            target = self._folder(self.state.mailboxes[message.mailbox_id], folder)
            if target in ("sent", "drafts") or message.folder in ("sent", "drafts"):
                raise ToolError(f"Message {message.id}: nothing can be moved into or out of "
                                "sent or drafts.")
            (unchanged if message.folder == target else moved).append((message, target))
        if not moved:
            raise ToolError(f"All given messages are already in {folder}.")
        for message, target in moved:
            message.folder = target
        return {"moved": [m.id for m, _ in moved], "already_there": [m.id for m, _ in unchanged]}

    @tool(write=True)
    def label_messages(self, message_ids: list[str], label: str,
                       remove: bool = False) -> Changed:
        """Add a label to messages, or remove it.

        Args:
            message_ids: Messages to label.
            label: An existing label name, e.g. "urgent" (create new ones with create_label).
            remove: True to take the label off instead.

        Returns:
            Ids changed and ids that already were in the requested state.
        """
        messages = self._messages(message_ids)
        if label not in self.state.labels:
            raise ToolError(f"Label {label!r} not found; create it first.")
        changed = [m for m in messages if (label in m.labels) == remove]
        if not changed:
            state = "have no" if remove else "already have the"
            raise ToolError(f"All given messages {state} label {label!r}.")
        for message in changed:
            if remove:
                message.labels.remove(label)
            else:
                message.labels.append(label)
        return {"changed": [m.id for m in changed],
                "unchanged": [m.id for m in messages if m not in changed]}

    @tool(write=True)
    def mark_read(self, message_ids: list[str], read: bool = True) -> Changed:
        """Mark messages read, or unread again.

        Args:
            message_ids: Messages to mark.
            read: False to mark them unread.

        Returns:
            Ids changed and ids that already were in that state.
        """
        messages = self._messages(message_ids)
        changed = [m for m in messages if m.read != read]
        if not changed:
            raise ToolError(f"All given messages are already {'read' if read else 'unread'}.")
        for message in changed:
            message.read = read
        return {"changed": [m.id for m in changed],
                "unchanged": [m.id for m in messages if m not in changed]}

    @tool(write=True)
    def create_folder(self, mailbox_id: str, name: str) -> MailboxFolders:
        """Create a folder in a mailbox.

        Args:
            mailbox_id: The mailbox.
            name: Folder name (1-40 characters, no "/"; must not exist already).

        Returns:
            The mailbox id and its custom folders.
        """
        box = self._mailbox(mailbox_id, writing=True)
        name = name.strip()
        if not 1 <= len(name) <= 40 or "/" in name:
            raise ToolError("Folder names need 1-40 characters and no '/'.")
        if any(f.lower() == name.lower() for f in (*SYSTEM_FOLDERS, *box.folders)):
            raise ToolError(f"Folder {name!r} already exists in {box.address}.")
        box.folders.append(name)
        return {"mailbox_id": box.id, "folders": box.folders}

    @tool(write=True)
    def create_label(self, name: str, color: Color = "gray") -> Label:
        """Create a label that can be put on messages in any mailbox.

        Args:
            name: Label name, lowercase words joined by hyphens, e.g. "q2-planning".
            color: Display color.

        Returns:
            The new label.
        """
        if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name):
            raise ToolError(f"Invalid label name {name!r}: use lowercase words joined by "
                            "hyphens.")
        if name in self.state.labels:
            raise ToolError(f"Label {name!r} already exists.")
        label = Label(name=name, color=color)
        self.state.labels[name] = label
        return label

    @tool(write=True)
    def create_rule(self, mailbox_id: str, name: str,
                    action: Literal["move", "label", "mark_read"], target: str = "",
                    from_contains: str = "", subject_contains: str = "",
                    apply_to_inbox: bool = False) -> RuleCreated:
        """Create a rule for incoming mail, optionally running it on the inbox right away.

        Args:
            mailbox_id: Mailbox whose incoming mail the rule handles.
            name: A name for the rule.
            action: "move" to a folder, "label" with a label, or "mark_read".
            target: The folder (move) or label (label); leave empty for mark_read.
            from_contains: Match senders whose address contains this text.
            subject_contains: Match subjects containing this text.
            apply_to_inbox: Also apply it now to matching messages in the inbox.

        Returns:
            The rule and the ids of inbox messages it changed now.
        """
        box = self._mailbox(mailbox_id, writing=True)
        if not name.strip():
            raise ToolError("Rule name must not be empty.")
        if not from_contains.strip() and not subject_contains.strip():
            raise ToolError("A rule needs from_contains or subject_contains.")
        if action == "move":
            target = self._folder(box, target)
            if target in ("inbox", "sent", "drafts"):
                raise ToolError(f"Rules cannot move mail to {target}.")
        elif action == "label" and target not in self.state.labels:
            raise ToolError(f"Label {target!r} not found; create it first.")
        elif action == "mark_read" and target:
            raise ToolError("mark_read rules take no target.")
        rule = MailRule(id=f"rule-{self.state.next_rule_id:02d}", mailbox_id=box.id,
                        name=name.strip(), from_contains=from_contains.strip(),
                        subject_contains=subject_contains.strip(), action=action,
                        target=target)
        self.state.next_rule_id += 1
        self.state.rules[rule.id] = rule
        applied = []
        if apply_to_inbox:
            for message in self.state.messages.values():
                if message.mailbox_id != box.id or message.folder != "inbox" or \
                        not self._matches(rule, message):
                    continue
                if action == "move":
                    message.folder = target
                elif action == "label" and target not in message.labels:
                    message.labels.append(target)
                elif action == "mark_read" and not message.read:
                    message.read = True
                else:
                    continue
                applied.append(message.id)
        return {"rule": rule, "applied_to": applied}
