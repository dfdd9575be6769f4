"""The team_chat environment: every tool's success path and each permission failure."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envs.pool import pool_classes
from envs.pool.team_chat import TeamChat
from tests.envs.pool.helpers import fails_exactly as fails
from tests.envs.pool.helpers import ok


@pytest.fixture
def env() -> TeamChat:
    return TeamChat()




def ids(items: list[dict[str, Any]]) -> list[str]:
    return [item["id"] for item in items]


def test_registered_with_metadata() -> None:
    assert pool_classes()["team_chat"] is TeamChat
    assert TeamChat.domain == "communication" and TeamChat.description
    writes = {s.name for s in TeamChat.tool_specs() if s.write}
    assert writes == {"post_message", "edit_message", "add_reaction", "pin_message",
                      "create_channel", "join_channel", "invite_to_channel",
                      "set_channel_topic", "archive_channel"}
    assert 6 <= len(TeamChat.tool_specs()) <= 15


def test_default_state_is_deterministic_and_consistent() -> None:
    a, b = TeamChat.default_state(), TeamChat.default_state()
    assert a == b and a.seed == 0
    assert min(len(a.users), len(a.channels), len(a.messages)) >= 20
    for channel in a.channels.values():
        assert set(channel.members) <= set(a.workspaces[channel.workspace_id].members)
    for msg in a.messages.values():
        assert msg.author_id in a.channels[msg.channel_id].members and msg.ts < a.now
        if msg.thread_id is not None:
            parent = a.messages[msg.thread_id]
            assert parent.channel_id == msg.channel_id and parent.thread_id is None
    assert list(a.messages) == sorted(a.messages, key=lambda m: (a.messages[m].ts, m))
    assert a.next_message_id == len(a.messages) + 1


def test_snapshot_round_trip(env: TeamChat) -> None:
    ok(env, "post_message", channel_id="C06", text="Quarter closes Friday")
    snap = env.snapshot()
    restored = TeamChat()
    restored.restore(json.loads(json.dumps(snap)))
    assert restored.snapshot() == snap and restored.state == env.state
    call = {"message_id": "M0146", "emoji": "tada"}
    assert restored.call("add_reaction", call) == env.call("add_reaction", call)
    assert restored.snapshot() == env.snapshot()


def test_list_channels(env: TeamChat) -> None:
    assert ids(ok(env, "list_channels", query="#sales")) == ["C06", "C20"]
    general = ok(env, "list_channels", query="general")
    assert [(c["id"], c["workspace"]) for c in general] == [
        ("C01", "Northwind Labs"), ("C24", "Riverside Running Club")]
    assert ids(ok(env, "list_channels", query="website")) == []
    assert ids(ok(env, "list_channels", query="website", include_archived=True)) == ["C22"]
    visible = ids(ok(env, "list_channels"))
    assert "C19" not in visible and "C21" not in visible and "C20" in visible  # private
    mine = ok(env, "list_channels", only_mine=True)
    assert all(c["is_member"] for c in mine) and "C04" not in ids(mine)


def test_get_channel(env: TeamChat) -> None:
    channel = ok(env, "get_channel", channel_id="C01")
    assert channel["member_count"] == 24 and channel["created_by"] == "Jonas Weber"
    assert ids(channel["pinned"]) == ["M0046", "M0068"]
    fails(env, "get_channel", "channel 'C19' not found", channel_id="C19")  # private
    fails(env, "get_channel", "channel 'C99' not found", channel_id="C99")


def test_read_messages(env: TeamChat) -> None:
    top = ok(env, "read_messages", channel_id="C06")
    assert ids(top) == ["M0014", "M0106", "M0137", "M0138"]
    assert top[1]["reply_count"] == 2 and top[1]["author"] == "Isabella Rossi"
    assert ids(ok(env, "read_messages", channel_id="C06", thread_id="M0106")) == [
        "M0107", "M0108"]
    assert ids(ok(env, "read_messages", channel_id="C04", limit=2)) == ["M0087", "M0092"]
    fails(env, "read_messages", "limit must be between 1 and 100, got 0", channel_id="C06",
          limit=0)
    fails(env, "read_messages", "message M0014 is not in #random", channel_id="C02",
          thread_id="M0014")
    fails(env, "read_messages", "channel 'C21' not found", channel_id="C21")


def test_search_messages(env: TeamChat) -> None:
    assert ids(ok(env, "search_messages", query="kestrel")) == ["M0014"]
    assert ids(ok(env, "search_messages", query="agenda", channel_id="C02")) == [
        "M0044", "M0032"]
    assert ids(ok(env, "search_messages", query="release", author_id="U08")) == ["M0082"]
    assert ok(env, "search_messages", query="board deck") == []  # private channel
    fails(env, "search_messages", "query must not be empty", query=" ")
    fails(env, "search_messages", "channel 'C19' not found", query="deck", channel_id="C19")


def test_find_users(env: TeamChat) -> None:
    found = ok(env, "find_users", query="@maria")
    assert ids(found) == ["U03"] and found[0]["workspaces"] == [
        {"workspace_id": "W1", "workspace": "Northwind Labs", "role": "member"}]
    assert [(w["workspace"], w["role"]) for w in ok(env, "find_users", query="priya")[0][
        "workspaces"]] == [("Northwind Labs", "member"), ("Riverside Running Club", "admin")]
    assert ids(ok(env, "find_users", query="account executive")) == [
        "U01", "U13", "U15", "U21"]
    fails(env, "find_users", "query must not be empty", query="")


def test_post_message(env: TeamChat) -> None:
    msg = ok(env, "post_message", channel_id="C06", text="Kestrel renewal signed")
    assert (msg["id"], msg["author_id"], msg["ts"], msg["channel"]) == (
        "M0146", "U01", "2026-03-16T10:15:00", "#sales")
    reply = ok(env, "post_message", channel_id="C06", text="Happy to help",
               thread_id="M0106")
    assert reply["thread_id"] == "M0106"
    # admins-only channels still take replies in threads
    assert ok(env, "post_message", channel_id="C03", text="Thanks!",
              thread_id="M0110")["thread_id"] == "M0110"
    fails(env, "post_message", "only workspace admins can post in #announcements",
          channel_id="C03", text="hello")
    fails(env, "post_message", "you are not a member of #engineering; join it to post",
          channel_id="C04", text="hello")
    fails(env, "post_message", "#old-website is archived; you cannot post", channel_id="C22",
          text="hello")
    fails(env, "post_message", "text must be 1-4000 characters", channel_id="C06", text=" ")
    fails(env, "post_message", "message M0030 is not in #sales", channel_id="C06",
          text="hello", thread_id="M0030")
    fails(env, "post_message", "message M0107 is a reply; reply to its thread M0106 instead",
          channel_id="C06", text="hello", thread_id="M0107")
    fails(env, "post_message", "channel 'C19' not found", channel_id="C19", text="hello")


def test_edit_message(env: TeamChat) -> None:
    edited = ok(env, "edit_message", message_id="M0138",
                text="Pipeline review Friday: bring your top 3 deals.")
    assert edited["edited"] is True and edited["text"].startswith("Pipeline review Friday")
    fails(env, "edit_message", "you can only edit your own messages; M0137 was posted by "
          "Jonas Weber", message_id="M0137", text="x")
    fails(env, "edit_message", "#old-website is archived; you cannot edit",
          message_id="M0001", text="x")
    fails(env, "edit_message", "message M0138 already has that text", message_id="M0138",
          text="Pipeline review Friday: bring your top 3 deals.")
    fails(env, "edit_message", "text must be 1-4000 characters", message_id="M0138",
          text="x" * 4001)
    fails(env, "edit_message", "message 'M0037' not found", message_id="M0037", text="x")


def test_add_reaction(env: TeamChat) -> None:
    assert ok(env, "add_reaction", message_id="M0137", emoji=":tada:") == {
        "message_id": "M0137", "reactions": {"tada": ["U01"]}}
    assert ok(env, "add_reaction", message_id="M0106",
              emoji="thumbsup")["reactions"]["thumbsup"] == ["U01"]
    fails(env, "add_reaction", "you already reacted with :heart: to M0106",
          message_id="M0106", emoji="heart")
    fails(env, "add_reaction", "'thumbs up!' is not a valid emoji name", message_id="M0106",
          emoji="thumbs up!")
    fails(env, "add_reaction", "#old-website is archived; you cannot react",
          message_id="M0005", emoji="tada")
    fails(env, "add_reaction", "message 'M0037' not found", message_id="M0037", emoji="eyes")


def test_pin_message(env: TeamChat) -> None:
    assert ok(env, "pin_message", message_id="M0106")["pinned"] is True
    fails(env, "pin_message", "message M0046 is already pinned in #general",
          message_id="M0046")
    fails(env, "pin_message", "you are not a member of #engineering; join it to pin",
          message_id="M0061")
    for msg in env.state.messages.values():
        if msg.channel_id == "C02":
            msg.pinned = msg.id != "M0030"
    assert sum(m.pinned for m in env.state.messages.values() if m.channel_id == "C02") == 10
    fails(env, "pin_message", "#random already has 10 pinned messages", message_id="M0030")


def test_create_channel(env: TeamChat) -> None:
    channel = ok(env, "create_channel", workspace_id="W1", name="#q2-launch", is_private=True,
                 topic="Launch war room")
    assert (channel["id"], channel["name"], channel["is_private"], channel["member_count"]) == (
        "C28", "q2-launch", True, 1)
    assert env.state.channels["C28"].created_by == "U01"
    fails(env, "create_channel", "workspace 'W9' not found", workspace_id="W9", name="x")
    fails(env, "create_channel", "invalid channel name 'Q2 Launch': use lowercase letters, "
          "digits, '-' and '_' (max 80)", workspace_id="W1", name="Q2 Launch")
    fails(env, "create_channel", "a channel named #sales already exists in Northwind Labs",
          workspace_id="W1", name="sales")
    fails(env, "create_channel", "a channel named #old-website already exists in "
          "Northwind Labs", workspace_id="W1", name="old-website")
    fails(env, "create_channel", "topic must be at most 250 characters", workspace_id="W2",
          name="trail-runs", topic="t" * 251)
    env.state.current_user_id = "U24"  # a guest in both workspaces
    fails(env, "create_channel", "guests cannot create channels in Riverside Running Club",
          workspace_id="W2", name="trail-runs")


def test_join_channel(env: TeamChat) -> None:
    joined = ok(env, "join_channel", channel_id="C04")
    assert joined["is_member"] is True and joined["member_count"] == 10
    fails(env, "join_channel", "you are already a member of #engineering", channel_id="C04")
    fails(env, "join_channel", "#old-website is archived; you cannot join", channel_id="C22")
    fails(env, "join_channel", "channel 'C19' not found", channel_id="C19")
    env.state.current_user_id = "U23"  # a guest in Northwind Labs
    fails(env, "join_channel", "guests must be invited to #design", channel_id="C05")


def test_invite_to_channel(env: TeamChat) -> None:
    result = ok(env, "invite_to_channel", channel_id="C06", user_ids=["U03", "U09"])
    assert result["added"] == ["Maria Gonzalez", "Sophie Laurent"]
    assert env.state.channels["C06"].members[-2:] == ["U03", "U09"]
    fails(env, "invite_to_channel", "Maria Gonzalez is already in #sales", channel_id="C06",
          user_ids=["U03"])
    fails(env, "invite_to_channel", "user 'U99' not found", channel_id="C06",
          user_ids=["U05", "U99"])
    fails(env, "invite_to_channel", "Jonas Weber is not in workspace Riverside Running Club",
          channel_id="C26", user_ids=["U02"])
    fails(env, "invite_to_channel", "user_ids must not be empty", channel_id="C06",
          user_ids=[])
    fails(env, "invite_to_channel", "you are not a member of #design; join it to invite "
          "people", channel_id="C05", user_ids=["U05"])


def test_set_channel_topic(env: TeamChat) -> None:
    assert ok(env, "set_channel_topic", channel_id="C06",
              topic="Q1 push: 3 weeks left")["topic"] == "Q1 push: 3 weeks left"
    fails(env, "set_channel_topic", "#sales already has that topic", channel_id="C06",
          topic="Q1 push: 3 weeks left")
    fails(env, "set_channel_topic", "topic must be at most 250 characters", channel_id="C06",
          topic="x" * 251)
    fails(env, "set_channel_topic", "you are not a member of #qa; join it to change the topic",
          channel_id="C15", topic="Bugs")


def test_archive_channel(env: TeamChat) -> None:
    assert ok(env, "archive_channel", channel_id="C06")["is_archived"] is True  # own channel
    assert ok(env, "archive_channel", channel_id="C25")["is_archived"] is True  # club admin
    fails(env, "archive_channel", "#sales is already archived", channel_id="C06")
    fails(env, "archive_channel", "#general is the workspace's default channel and cannot "
          "be archived", channel_id="C24")
    fails(env, "archive_channel", "only Tom Eriksen (the creator) or a workspace admin can "
          "archive #random", channel_id="C02")
    fails(env, "post_message", "#sales is archived; you cannot post", channel_id="C06",
          text="hello")
