"""Team chat: workspaces, channels, members, messages, threads, reactions and pins.

A Slack-like workspace seen through the signed-in user's account: every tool acts as
`current_user_id`. Permissions follow the usual model: private channels are invisible to
non-members, posting needs membership, announcement channels take posts from admins
only, archived channels are read-only, people edit only their own messages, and only a
channel's creator or a workspace admin may archive it.
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta
from typing import Annotated, Literal, NotRequired

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from envs.base import Environment, ToolError, tool
from envs.timestamps import Timestamp, stamp

Role = Literal["owner", "admin", "member", "guest"]

CHANNEL_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,79}$")
EMOJI_RE = re.compile(r"^[a-z0-9_+-]{1,32}$")
MAX_TOPIC_CHARS = 250
MAX_MESSAGE_CHARS = 4000
MAX_PINS = 10
DEFAULT_CHANNEL = "general"


class User(BaseModel):
    id: str
    name: str
    handle: str
    title: str
    timezone: str


class Workspace(BaseModel):
    id: str
    name: str
    members: dict[str, Role] = Field(description="user id -> role")


class Channel(BaseModel):
    id: str
    workspace_id: str
    name: str
    topic: str = ""
    is_private: bool = False
    is_archived: bool = False
    posting: Literal["everyone", "admins_only"] = "everyone"
    created_by: str
    members: list[str] = Field(default_factory=list)


class Message(BaseModel):
    id: str
    channel_id: str
    author_id: str
    text: str
    ts: Timestamp
    thread_id: str | None = Field(default=None, description="parent message of a reply")
    reactions: dict[str, list[str]] = Field(default_factory=dict, description="emoji -> users")
    edited: bool = False
    pinned: bool = False


# -- what the tools return ---------------------------------------------------------------


class MessageView(TypedDict):
    """A message with author and channel names; top-level messages count their replies."""

    id: str
    channel_id: str
    author_id: str
    text: str
    ts: Timestamp
    thread_id: Annotated[str | None, Field(description="parent message of a reply")]
    reactions: Annotated[dict[str, list[str]], Field(description="emoji -> user ids")]
    edited: bool
    pinned: bool
    author: Annotated[str, Field(description="Author's name")]
    channel: Annotated[str, Field(description='Channel name, e.g. "#general"')]
    reply_count: NotRequired[Annotated[int, Field(
        description="Replies in the thread (top-level messages only)")]]


class ChannelSummary(TypedDict):
    id: str
    name: str
    workspace_id: str
    workspace: Annotated[str, Field(description="Workspace name")]
    topic: str
    is_private: bool
    is_archived: bool
    posting: Literal["everyone", "admins_only"]
    member_count: int
    is_member: Annotated[bool, Field(description="True if you are a member")]


class MemberName(TypedDict):
    id: str
    name: str


class ChannelDetail(ChannelSummary):
    created_by: Annotated[str, Field(description="Creator's name")]
    members: list[MemberName]
    pinned: Annotated[list[MessageView], Field(description="Pinned messages")]


class Invited(ChannelSummary):
    added: Annotated[list[str], Field(description="Names of the users invited")]


class Membership(TypedDict):
    workspace_id: str
    workspace: Annotated[str, Field(description="Workspace name")]
    role: Role


class UserRecord(User):
    workspaces: list[Membership]


class Reactions(TypedDict):
    message_id: str
    reactions: Annotated[dict[str, list[str]], Field(description="emoji -> user ids")]


class TeamChatState(BaseModel):
    seed: int = 0
    now: Timestamp = "2026-03-16T10:15:00"
    current_user_id: str = "U01"
    users: dict[str, User] = Field(default_factory=dict)
    workspaces: dict[str, Workspace] = Field(default_factory=dict)
    channels: dict[str, Channel] = Field(default_factory=dict)
    messages: dict[str, Message] = Field(default_factory=dict)
    next_channel_id: int = 1
    next_message_id: int = 1


# -- seed data ----------------------------------------------------------------------

USERS = [
    ("Priya Raman", "Account Executive", "America/Chicago"),
    ("Jonas Weber", "CEO", "Europe/Berlin"),
    ("Maria Gonzalez", "Head of Customer Success", "America/New_York"),
    ("Kenji Watanabe", "Engineering Manager", "America/Los_Angeles"),
    ("Aaliyah Brooks", "Product Designer", "America/New_York"),
    ("Tom Eriksen", "Backend Engineer", "Europe/Oslo"),
    ("Fatou Diallo", "Frontend Engineer", "Europe/Paris"),
    ("Ravi Shankar", "Data Engineer", "Asia/Kolkata"),
    ("Sophie Laurent", "Marketing Lead", "Europe/Paris"),
    ("Diego Fernández", "Sales Manager", "America/Chicago"),
    ("Hannah Kim", "Support Specialist", "America/Los_Angeles"),
    ("Lukas Novak", "QA Engineer", "Europe/Prague"),
    ("Grace Liu", "Account Executive", "America/Los_Angeles"),
    ("Omar Haddad", "Site Reliability Engineer", "Europe/London"),
    ("Elena Petrova", "Account Executive", "America/New_York"),
    ("Ben Carter", "Mobile Engineer", "America/Denver"),
    ("Nia Okoye", "People Operations", "America/Chicago"),
    ("Marcus Bell", "Sales Development Rep", "America/Chicago"),
    ("Isabella Rossi", "Product Manager", "Europe/Rome"),
    ("Chen Wei", "Security Engineer", "Asia/Singapore"),
    ("Tomás Herrera", "Account Executive", "America/Denver"),
    ("Zoe Adams", "Content Writer", "America/New_York"),
    ("Sam Patel", "Contract Designer", "Europe/London"),
    ("Lena Fischer", "Agency Consultant", "Europe/Berlin"),
]
#: (workspace, name, topic, private, posting, archived, members: "all" or a count to sample)
CHANNELS: list[tuple[str, str, str, bool, str, bool, str | int]] = [
    ("W1", "general", "Company-wide news and questions", False, "everyone", False, "all"),
    ("W1", "random", "Water-cooler chat", False, "everyone", False, 16),
    ("W1", "announcements", "Official announcements (admins post)", False, "admins_only", False,
     "all"),
    ("W1", "engineering", "Engineering discussion", False, "everyone", False, 9),
    ("W1", "design", "Design reviews and critiques", False, "everyone", False, 7),
    ("W1", "sales", "Pipeline, wins and deal help", False, "everyone", False, 8),
    ("W1", "support", "Customer support escalations", False, "everyone", False, 8),
    ("W1", "releases", "Release notes and deploy status", False, "everyone", False, 10),
    ("W1", "incidents", "Active incidents only", False, "everyone", False, 9),
    ("W1", "marketing", "Campaigns and content", False, "everyone", False, 7),
    ("W1", "product", "Roadmap and specs", False, "everyone", False, 10),
    ("W1", "data-team", "Data pipelines and dashboards", False, "everyone", False, 6),
    ("W1", "mobile", "iOS and Android app", False, "everyone", False, 6),
    ("W1", "frontend", "Web app front end", False, "everyone", False, 6),
    ("W1", "qa", "Test plans and bug triage", False, "everyone", False, 6),
    ("W1", "onboarding", "Help for new joiners", False, "everyone", False, 12),
    ("W1", "social", "Lunches, games and events", False, "everyone", False, 14),
    ("W1", "customer-success", "Renewals and account health", False, "everyone", False, 7),
    ("W1", "leadership", "Leadership team", True, "everyone", False, 5),
    ("W1", "sales-deals", "Deal desk: pricing and approvals", True, "everyone", False, 6),
    ("W1", "hiring-committee", "Candidate debriefs", True, "everyone", False, 5),
    ("W1", "old-website", "Website relaunch 2024", False, "everyone", True, 6),
    ("W1", "berlin-office", "Berlin office logistics", False, "everyone", False, 6),
    ("W2", "general", "Club news", False, "everyone", False, "all"),
    ("W2", "race-day", "Race logistics and results", False, "everyone", False, "all"),
    ("W2", "carpool", "Rides to races and long runs", False, "everyone", False, 5),
    ("W2", "training-plans", "Plans, paces and long-run routes", False, "everyone", False, 6),
]
#: Channels the signed-in user belongs to (besides "all" channels).
PERSONA_CHANNELS = {"random", "sales", "support", "product", "customer-success",
                    "sales-deals", "social", "onboarding", "old-website", "carpool",
                    "training-plans"}
#: The running club's members and roles (the signed-in user is one of its admins).
CLUB_ROLES: dict[str, Role] = {"U01": "admin", "U05": "member", "U09": "owner",
                               "U13": "member", "U16": "member", "U19": "member",
                               "U22": "member", "U24": "guest"}
TEXTS = {
    "general": ["Reminder: all-hands is Thursday at 4pm CET.",
                "The office Wi-Fi password rotates on Monday.",
                "Welcome Zoe, our new content writer!"],
    "random": ["Anyone up for ramen on Friday?", "Who left the oat milk in fridge 2?",
               "Photo dump from the hike on Saturday"],
    "announcements": ["Q1 OKRs are published in the handbook.",
                      "Office closed on Good Friday, April 3.",
                      "New expense policy takes effect April 1."],
    "engineering": ["Postgres 16 upgrade is scheduled for Wednesday night.",
                    "Please review the RFC on the new job queue.",
                    "CI is flaky on the integration suite again."],
    "design": ["New onboarding flow mocks are in Figma.", "Icon set v3 is ready for review.",
               "Design crit moved to 2pm today."],
    "sales": ["Closed Kestrel Aviation pilot!", "Who has a case study for logistics customers?",
              "Pricing page update goes live next week.",
              "Pipeline review Thursday: bring your top 3 deals."],
    "support": ["Ticket spike around SSO login failures this morning.",
                "Lumen Analytics reports slow dashboard exports.",
                "Macro for password resets is updated."],
    "releases": ["v4.12.0 deployed to production.", "v4.12.1 hotfix: export timeout fixed.",
                 "Release freeze starts Friday noon."],
    "incidents": ["INC-231: elevated API error rates, investigating.",
                  "INC-231 resolved: bad config rolled back."],
    "marketing": ["Webinar registration page is live.",
                  "Need a quote from a customer for the healthcare one-pager."],
    "product": ["Spec for bulk CSV import is up for comments.",
                "Roadmap review: audit log retention moved to Q2.",
                "Customer interviews summary for the reporting revamp."],
    "data-team": ["Nightly ETL finished late due to a schema change.",
                  "New churn dashboard is live."],
    "mobile": ["iOS 4.3 is in App Store review.", "Android crash rate down to 0.2%."],
    "frontend": ["We are dropping support for Safari 15.", "Storybook is deployed per PR now."],
    "qa": ["Regression suite for 4.12 passed.", "Found a date-picker bug in Firefox."],
    "onboarding": ["Laptop setup guide updated for the new MDM.",
                   "Buddy assignments for March joiners are out."],
    "social": ["Board game night next Wednesday!", "Lunch and learn: sourdough basics."],
    "customer-success": ["Redwood Credit Union renewal is at risk; exec sponsor left.",
                         "QBR deck template updated.",
                         "Helios Biotech expanded to 40 more seats."],
    "leadership": ["Board deck draft is in the leadership folder.",
                   "Headcount plan needs sign-off by Friday."],
    "sales-deals": ["Requesting 20% discount approval for Oakline Furniture.",
                    "Legal redlines back from Vantage Legal."],
    "hiring-committee": ["Debrief for the senior backend candidate at 3pm."],
    "old-website": ["Final launch checklist", "Redirects are all in place."],
    "berlin-office": ["Heating is fixed on the 3rd floor.", "Desk booking app is live."],
    "race-day": ["Bib pickup for the Harbor Half is Saturday 9-5 at the Convention Center.",
                 "Results are up: 11 PRs this weekend!"],
    "carpool": ["Driving to the trail race Sunday, 3 seats free from Central Station."],
    "training-plans": ["Long run this week: 18 km along the river, 6:00/km.",
                       "Track session Tuesday: 6 x 800 m."],
}
#: Per workspace, messages for its "general" channel (names repeat across workspaces).
GENERAL_TEXTS = {
    "W1": TEXTS["general"],
    "W2": ["Welcome to the club workspace!", "Spring membership dues are due by March 31."],
}
REPLIES = ["Thanks for the heads-up!", "On it.", "+1, agreed.", "Can we sync on this tomorrow?",
           "I'll take a look after lunch.", "Nice work!", "Is there a ticket for this?",
           "Added it to the agenda."]
EMOJI = ["thumbsup", "eyes", "tada", "white_check_mark", "heart", "raised_hands"]


def _build_state(seed: int) -> TeamChatState:
    """Deterministic: 24 users, a company and a club workspace, 27 channels, ~100 messages."""
    rng = random.Random(seed)
    state = TeamChatState(seed=seed)
    now = datetime.fromisoformat(state.now)
    for i, (name, title, tz) in enumerate(USERS, start=1):
        uid = f"U{i:02d}"
        state.users[uid] = User(id=uid, name=name, title=title, timezone=tz,
                                handle=name.lower().replace(" ", ".").replace("á", "a"))
    roles: dict[str, Role] = {uid: "member" for uid in state.users}
    roles.update({"U02": "owner", "U04": "admin", "U17": "admin", "U23": "guest",
                  "U24": "guest"})
    state.workspaces["W1"] = Workspace(id="W1", name="Northwind Labs", members=roles)
    state.workspaces["W2"] = Workspace(id="W2", name="Riverside Running Club",
                                       members=dict(CLUB_ROLES))

    for wid, name, topic, private, posting, archived, size in CHANNELS:
        workspace = state.workspaces[wid]
        cid = f"C{state.next_channel_id:02d}"
        state.next_channel_id += 1
        if size == "all":
            members = list(workspace.members)
        else:
            others = [u for u, r in workspace.members.items()
                      if r != "guest" and u != state.current_user_id]
            members = sorted(rng.sample(others, int(size) - (name in PERSONA_CHANNELS)))
            if name in PERSONA_CHANNELS:
                members = [state.current_user_id, *members]
        owner = next(u for u, r in workspace.members.items() if r == "owner")
        creator = owner if size == "all" else rng.choice(members)
        state.channels[cid] = Channel(
            id=cid, workspace_id=wid, name=name, topic=topic, is_private=private,
            is_archived=archived, posting=posting, created_by=creator,  # type: ignore[arg-type]
            members=members)

    for channel in state.channels.values():
        workspace_roles = state.workspaces[channel.workspace_id].members
        admins = [u for u in channel.members if workspace_roles[u] in ("owner", "admin")]
        authors = admins if channel.posting == "admins_only" else channel.members
        texts = GENERAL_TEXTS[channel.workspace_id] if channel.name == DEFAULT_CHANNEL \
            else TEXTS[channel.name]
        back = 8 * 24 * 60 if channel.is_archived else 5 * 24 * 60
        times = sorted(rng.sample(range(30, back), len(texts)), reverse=True)
        for text, minutes_ago in zip(texts, times, strict=True):
            ts = now - timedelta(minutes=minutes_ago + (400 * 24 * 60 if channel.is_archived
                                                        else 0))
            parent = _add_message(state, channel.id, rng.choice(authors), text, ts)
            for emoji in rng.sample(EMOJI, rng.randrange(0, 3)):
                parent.reactions[emoji] = sorted(rng.sample(channel.members,
                                                            rng.randrange(1, 4)))
            parent.pinned = channel.name in ("general", "announcements", "onboarding") \
                and rng.random() < 0.5
            if channel.posting == "everyone" and rng.random() < 0.5:
                for k in range(rng.randrange(1, 4)):
                    _add_message(state, channel.id, rng.choice(channel.members),
                                 rng.choice(REPLIES), ts + timedelta(minutes=3 + 7 * k),
                                 thread_id=parent.id)
    # keep ids in time order within the seed, like a real server would
    ordered = sorted(state.messages.values(), key=lambda m: (m.ts, m.id))
    renamed = {m.id: f"M{i:04d}" for i, m in enumerate(ordered, start=1)}
    state.messages = {}
    for m in ordered:
        m.id = renamed[m.id]
        m.thread_id = renamed[m.thread_id] if m.thread_id else None
        state.messages[m.id] = m
    return state


def _add_message(state: TeamChatState, channel_id: str, author_id: str, text: str,
                 ts: datetime, thread_id: str | None = None) -> Message:
    msg = Message(id=f"M{state.next_message_id:04d}", channel_id=channel_id, author_id=author_id,
                  text=text, ts=stamp(ts), thread_id=thread_id)
    state.next_message_id += 1
    state.messages[msg.id] = msg
    return msg


class TeamChat(Environment):
    """A team chat workspace as seen by the signed-in user."""

    name = "team_chat"
    domain = "communication"
    description = ("A team chat workspace where the signed-in user reads and posts in "
                   "channels and threads, reacts, pins, and manages channels and members.")
    State = TeamChatState
    state: TeamChatState

    @classmethod
    def default_state(cls) -> TeamChatState:
        return _build_state(seed=0)

    # -- lookups and permissions ----------------------------------------------------

    @property
    def _me(self) -> str:
        return self.state.current_user_id

    def _role(self, workspace_id: str) -> Role | None:
        return self.state.workspaces[workspace_id].members.get(self._me)

    def _visible(self, channel: Channel) -> bool:
        if self._role(channel.workspace_id) is None:
            return False
        return not channel.is_private or self._me in channel.members

    def _channel(self, channel_id: str) -> Channel:
        channel = self.state.channels.get(channel_id)
        if channel is None or not self._visible(channel):
            raise ToolError(f"channel {channel_id!r} not found")
        return channel

    def _member_channel(self, channel_id: str, action: str) -> Channel:
        """A channel the user belongs to and that is not archived."""
        channel = self._channel(channel_id)
        if channel.is_archived:
            raise ToolError(f"#{channel.name} is archived; you cannot {action}")
        if self._me not in channel.members:
            raise ToolError(f"you are not a member of #{channel.name}; join it to {action}")
        return channel

    def _message(self, message_id: str) -> Message:
        msg = self.state.messages.get(message_id)
        if msg is None or not self._visible(self.state.channels[msg.channel_id]):
            raise ToolError(f"message {message_id!r} not found")
        return msg

    def _user_name(self, user_id: str) -> str:
        return self.state.users[user_id].name

    def _message_view(self, msg: Message) -> MessageView:
        view: MessageView = {
            "id": msg.id, "channel_id": msg.channel_id, "author_id": msg.author_id,
            "text": msg.text, "ts": msg.ts, "thread_id": msg.thread_id,
            "reactions": msg.reactions, "edited": msg.edited, "pinned": msg.pinned,
            "author": self._user_name(msg.author_id),
            "channel": f"#{self.state.channels[msg.channel_id].name}"}
        if msg.thread_id is None:
            view["reply_count"] = sum(m.thread_id == msg.id for m in self.state.messages.values())
        return view

    def _channel_summary(self, channel: Channel) -> ChannelSummary:
        return {"id": channel.id, "name": channel.name, "workspace_id": channel.workspace_id,
                "workspace": self.state.workspaces[channel.workspace_id].name,
                "topic": channel.topic, "is_private": channel.is_private,
                "is_archived": channel.is_archived, "posting": channel.posting,
                "member_count": len(channel.members), "is_member": self._me in channel.members}

    # -- reading --------------------------------------------------------------------

    @tool
    def list_channels(self, query: str = "", include_archived: bool = False,
                      only_mine: bool = False) -> list[ChannelSummary]:
        """List the channels you can see: public ones and private ones you belong to.

        Args:
            query: Case-insensitive part of the channel name; empty matches all.
            include_archived: Also list archived channels.
            only_mine: Only channels you are a member of.

        Returns:
            Channel summaries: id, name, workspace, topic, privacy, archived, posting
            policy, member_count and is_member.
        """
        q = query.strip().lower().lstrip("#")
        return [self._channel_summary(c) for c in self.state.channels.values()
                if self._visible(c) and q in c.name
                and (include_archived or not c.is_archived)
                and (not only_mine or self._me in c.members)]

    @tool
    def get_channel(self, channel_id: str) -> ChannelDetail:
        """Show a channel's details, its members and its pinned messages.

        Args:
            channel_id: The channel's id, e.g. "C05".

        Returns:
            The channel summary plus `members` (id, name) and `pinned` messages.
        """
        channel = self._channel(channel_id)
        return {**self._channel_summary(channel),
                "created_by": self._user_name(channel.created_by),
                "members": [{"id": u, "name": self._user_name(u)} for u in channel.members],
                "pinned": [self._message_view(m) for m in self.state.messages.values()
                           if m.channel_id == channel_id and m.pinned]}

    @tool
    def read_messages(self, channel_id: str, thread_id: str | None = None,
                      limit: int = 20) -> list[MessageView]:
        """Read the latest top-level messages of a channel, or the replies in one thread.

        Args:
            channel_id: The channel to read.
            thread_id: A top-level message id: read its replies instead.
            limit: How many messages at most (the newest ones), 1-100.

        Returns:
            Messages oldest first, with author name, reactions and (for top-level
            messages) reply_count.
        """
        channel = self._channel(channel_id)
        if not 1 <= limit <= 100:
            raise ToolError(f"limit must be between 1 and 100, got {limit}")
        if thread_id is not None:
            parent = self._message(thread_id)
            if parent.channel_id != channel.id:
                raise ToolError(f"message {thread_id} is not in #{channel.name}")
        msgs = [m for m in self.state.messages.values()
                if m.channel_id == channel.id and m.thread_id == thread_id]
        msgs.sort(key=lambda m: (m.ts, m.id))
        return [self._message_view(m) for m in msgs[-limit:]]

    @tool
    def search_messages(self, query: str, channel_id: str | None = None,
                        author_id: str | None = None) -> list[MessageView]:
        """Search message text across the channels you can see, newest first.

        Args:
            query: Case-insensitive text to look for.
            channel_id: Only search this channel.
            author_id: Only messages by this user.

        Returns:
            Matching messages (at most 20) with channel and author names.
        """
        q = query.strip().lower()
        if not q:
            raise ToolError("query must not be empty")
        if channel_id is not None:
            self._channel(channel_id)
        hits = [m for m in self.state.messages.values()
                if q in m.text.lower() and self._visible(self.state.channels[m.channel_id])
                and (channel_id is None or m.channel_id == channel_id)
                and (author_id is None or m.author_id == author_id)]
        hits.sort(key=lambda m: (m.ts, m.id), reverse=True)
        return [self._message_view(m) for m in hits[:20]]

    @tool
    def find_users(self, query: str) -> list[UserRecord]:
        """Find people by name, handle or job title.

        Args:
            query: Case-insensitive part of the name, handle or title.

        Returns:
            Matching users with id, name, handle, title, timezone and `workspaces`
            (workspace_id, workspace name and role in each).
        """
        q = query.strip().lower().lstrip("@")
        if not q:
            raise ToolError("query must not be empty")
        return [UserRecord(**u.model_dump(),
                           workspaces=[{"workspace_id": w.id, "workspace": w.name,
                                        "role": w.members[u.id]}
                                       for w in self.state.workspaces.values()
                                       if u.id in w.members])
                for u in self.state.users.values()
                if q in u.name.lower() or q in u.handle or q in u.title.lower()]

    # -- writing --------------------------------------------------------------------

    @tool(write=True)
    def post_message(self, channel_id: str, text: str,
                     thread_id: str | None = None) -> MessageView:
        """Post a message in a channel, or reply in a thread.

        Args:
            channel_id: A channel you are a member of.
            text: The message text (1-4000 characters).
            thread_id: Reply in the thread of this top-level message of the channel.

        Returns:
            The posted message.
        """
        channel = self._member_channel(channel_id, "post")
        workspace_role = self._role(channel.workspace_id)
        if channel.posting == "admins_only" and workspace_role not in ("owner", "admin") \
                and thread_id is None:
            raise ToolError(f"only workspace admins can post in #{channel.name}")
        if not text.strip() or len(text) > MAX_MESSAGE_CHARS:
            raise ToolError(f"text must be 1-{MAX_MESSAGE_CHARS} characters")
        if thread_id is not None:
            parent = self._message(thread_id)
            if parent.channel_id != channel.id:
                raise ToolError(f"message {thread_id} is not in #{channel.name}")
            if parent.thread_id is not None:
                raise ToolError(f"message {thread_id} is a reply; reply to its thread "
                                f"{parent.thread_id} instead")
        msg = _add_message(self.state, channel.id, self._me, text,
                           datetime.fromisoformat(self.state.now), thread_id=thread_id)
        return self._message_view(msg)

    @tool(write=True)
    def edit_message(self, message_id: str, text: str) -> MessageView:
        """Replace the text of one of your own messages.

        Args:
            message_id: A message you posted.
            text: The new text (1-4000 characters).

        Returns:
            The edited message.
        """
        msg = self._message(message_id)
        if msg.author_id != self._me:
            raise ToolError(f"you can only edit your own messages; {message_id} was posted by "
                            f"{self._user_name(msg.author_id)}")
        channel = self.state.channels[msg.channel_id]
        if channel.is_archived:
            raise ToolError(f"#{channel.name} is archived; you cannot edit")
        if not text.strip() or len(text) > MAX_MESSAGE_CHARS:
            raise ToolError(f"text must be 1-{MAX_MESSAGE_CHARS} characters")
        if text == msg.text:
            raise ToolError(f"message {message_id} already has that text")
        msg.text, msg.edited = text, True
        return self._message_view(msg)

    @tool(write=True)
    def add_reaction(self, message_id: str, emoji: str) -> Reactions:
        """React to a message with an emoji.

        Args:
            message_id: The message to react to.
            emoji: Emoji name such as "thumbsup" or ":tada:" (colons optional).

        Returns:
            The message's reactions after the change.
        """
        msg = self._message(message_id)
        channel = self.state.channels[msg.channel_id]
        if channel.is_archived:
            raise ToolError(f"#{channel.name} is archived; you cannot react")
        name = emoji.strip().strip(":").lower()
        if not EMOJI_RE.match(name):
            raise ToolError(f"{emoji!r} is not a valid emoji name")
        users = msg.reactions.setdefault(name, [])
        if self._me in users:
            raise ToolError(f"you already reacted with :{name}: to {message_id}")
        users.append(self._me)
        return {"message_id": msg.id, "reactions": msg.reactions}

    @tool(write=True)
    def pin_message(self, message_id: str) -> MessageView:
        """Pin a message to its channel (at most 10 pins per channel).

        Args:
            message_id: A message in a channel you are a member of.

        Returns:
            The pinned message.
        """
        msg = self._message(message_id)
        channel = self._member_channel(msg.channel_id, "pin")
        if msg.pinned:
            raise ToolError(f"message {message_id} is already pinned in #{channel.name}")
        pins = sum(m.pinned for m in self.state.messages.values() if m.channel_id == channel.id)
        if pins >= MAX_PINS:
            raise ToolError(f"#{channel.name} already has {MAX_PINS} pinned messages")
        msg.pinned = True
        return self._message_view(msg)

    @tool(write=True)
    def create_channel(self, workspace_id: str, name: str, is_private: bool = False,
                       topic: str = "") -> ChannelSummary:
        """Create a channel in a workspace; you become its first member.

        Args:
            workspace_id: The workspace, e.g. "W1".
            name: Lowercase name without "#": letters, digits, "-" and "_", max 80.
            is_private: Make it visible to invited members only.
            topic: Optional topic (max 250 characters).

        Returns:
            The new channel.
        """
        workspace = self.state.workspaces.get(workspace_id)
        role = workspace.members.get(self._me) if workspace else None
        if workspace is None or role is None:
            raise ToolError(f"workspace {workspace_id!r} not found")
        if role == "guest":
            raise ToolError(f"guests cannot create channels in {workspace.name}")
        clean = name.strip().lstrip("#")
        if not CHANNEL_NAME_RE.match(clean):
            raise ToolError(f"invalid channel name {name!r}: use lowercase letters, digits, "
                            "'-' and '_' (max 80)")
        for other in self.state.channels.values():
            if other.workspace_id == workspace_id and other.name == clean:
                raise ToolError(f"a channel named #{clean} already exists in {workspace.name}")
        if len(topic) > MAX_TOPIC_CHARS:
            raise ToolError(f"topic must be at most {MAX_TOPIC_CHARS} characters")
        channel = Channel(id=f"C{self.state.next_channel_id:02d}", workspace_id=workspace_id,
                          name=clean, topic=topic, is_private=is_private,
                          created_by=self._me, members=[self._me])
        self.state.next_channel_id += 1
        self.state.channels[channel.id] = channel
        return self._channel_summary(channel)

    @tool(write=True)
    def join_channel(self, channel_id: str) -> ChannelSummary:
        """Join a public channel.

        Args:
            channel_id: A public, unarchived channel.

        Returns:
            The channel summary.
        """
        channel = self._channel(channel_id)
        if channel.is_archived:
            raise ToolError(f"#{channel.name} is archived; you cannot join")
        if self._me in channel.members:
            raise ToolError(f"you are already a member of #{channel.name}")
        if self._role(channel.workspace_id) == "guest":
            raise ToolError(f"guests must be invited to #{channel.name}")
        channel.members.append(self._me)
        return self._channel_summary(channel)

    @tool(write=True)
    def invite_to_channel(self, channel_id: str, user_ids: list[str]) -> Invited:
        """Add people to a channel you are a member of.

        Args:
            channel_id: The channel.
            user_ids: Users to add; each must belong to the channel's workspace and not be
                a member yet.

        Returns:
            The channel summary and the names of the people added.
        """
        channel = self._member_channel(channel_id, "invite people")
        if not user_ids:
            raise ToolError("user_ids must not be empty")
        workspace = self.state.workspaces[channel.workspace_id]
        for uid in user_ids:
            if uid not in self.state.users:
                raise ToolError(f"user {uid!r} not found")
            if uid not in workspace.members:
                raise ToolError(f"{self._user_name(uid)} is not in workspace {workspace.name}")
            if uid in channel.members:
                raise ToolError(f"{self._user_name(uid)} is already in #{channel.name}")
        for uid in dict.fromkeys(user_ids):
            channel.members.append(uid)
        return {**self._channel_summary(channel),
                "added": [self._user_name(u) for u in dict.fromkeys(user_ids)]}

    @tool(write=True)
    def set_channel_topic(self, channel_id: str, topic: str) -> ChannelSummary:
        """Set the topic line of a channel you are a member of.

        Args:
            channel_id: The channel.
            topic: The new topic (max 250 characters; empty clears it).

        Returns:
            The channel summary.
        """
        channel = self._member_channel(channel_id, "change the topic")
        if len(topic) > MAX_TOPIC_CHARS:
            raise ToolError(f"topic must be at most {MAX_TOPIC_CHARS} characters")
        if topic == channel.topic:
            raise ToolError(f"#{channel.name} already has that topic")
        channel.topic = topic
        return self._channel_summary(channel)

    @tool(write=True)
    def archive_channel(self, channel_id: str) -> ChannelSummary:
        """Archive a channel (read-only afterwards); creator or workspace admins only.

        Args:
            channel_id: The channel to archive.

        Returns:
            The channel summary.
        """
        channel = self._channel(channel_id)
        if channel.is_archived:
            raise ToolError(f"#{channel.name} is already archived")
        if channel.name == DEFAULT_CHANNEL:
            raise ToolError(f"#{DEFAULT_CHANNEL} is the workspace's default channel and "
                            "cannot be archived")
        if channel.created_by != self._me and self._role(channel.workspace_id) not in (
                "owner", "admin"):
            raise ToolError(f"only {self._user_name(channel.created_by)} (the creator) or a "
                            f"workspace admin can archive #{channel.name}")
        channel.is_archived = True
        return self._channel_summary(channel)
