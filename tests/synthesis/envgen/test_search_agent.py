"""The EnvGen search agent, driven by scripted models that make real tool calls against the
test corpus; sketch rules checked on hand-written good and bad sketches."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai.model import ChatMessage, ChatMessageTool, ModelOutput
from inspect_ai.tool import ToolCall

from harness.providers.responder import reply, responder_model
from synthesis.envgen.corpus import Corpus
from synthesis.envgen.description import from_sketch
from synthesis.envgen.search_agent import (
    REPORT,
    TRANSCRIPT,
    SearchAgentError,
    SearchConfig,
    run_search_agent,
)
from synthesis.envgen.sketch_check import SketchError, check_sketch

CORPUS = Path(__file__).resolve().parents[2] / "data" / "envgen_corpus"

GOOD = '''"""Calendar sketch written from calendar/README.md."""

from typing import Literal


class CalendarSketch:
    """Calendars with events and the invitations sent to attendees."""

    def create_event(self, calendar_id: str, title: str, start: str, end: str,
                     location: str = "") -> dict:  # write
        """Create an event; end must be after start.

        Args:
            calendar_id: The calendar to add the event to.
            title: What the event is called.
            start: Start time (ISO 8601, UTC).
            end: End time (ISO 8601, UTC).
            location: Optional place.

        Returns:
            The new event with its event_id.
        """
        ...

    def send_invitation(self, event_id: str, email: str) -> dict:  # write
        """Invite an attendee by email; inviting the same email twice is an error.

        Args:
            event_id: The event.
            email: The attendee's email.

        Returns:
            The pending invitation with its invitation_id.
        """
        ...

    def respond_to_invitation(  # write
            self, invitation_id: str,
            response: Literal["accepted", "declined", "tentative"]) -> dict:
        """Answer a pending or tentative invitation.

        Args:
            invitation_id: The invitation.
            response: The answer.

        Returns:
            The invitation with its new status.
        """
        ...

    def list_invitations(self, event_id: str) -> list[dict]:
        """List an event's invitations with each attendee's response status.

        Args:
            event_id: The event.

        Returns:
            The invitations.
        """
        ...
'''

#: a sketch with an implementation, an untyped parameter and an undocumented one
BAD = '''class CalendarSketch:
    """Calendars."""

    def create_event(self, title, start: str) -> dict:  # write
        """Create an event.

        Args:
            title: Name.
        """
        return {"title": title}
'''


def test_a_good_sketch_passes_and_parses_into_a_description(tmp_path: Path) -> None:
    assert check_sketch(GOOD) == "CalendarSketch"
    path = tmp_path / "calendar_sketch.py"
    path.write_text(GOOD)
    description = from_sketch(path)
    assert [(t.name, t.write) for t in description.tools] == [
        ("create_event", True), ("send_invitation", True), ("respond_to_invitation", True),
        ("list_invitations", False)]
    assert description.tools[0].required() == ["calendar_id", "title", "start", "end"]


@pytest.mark.parametrize(("source", "problems"), [
    (BAD, ["line 4: create_event: parameter 'title' needs a type hint",
           "line 4: create_event: the docstring's Args: section must describe start",
           "line 4: create_event: the body must be only the docstring and `...`"]),
    ("class Calendar:\n    pass\n", ["expected exactly one class named <Name>Sketch, found 0"]),
    ("import os\n" + GOOD, ["line 1: only imports from __future__, collections.abc, typing"]),
    ("x = 1\n" + GOOD, ["line 1: only imports and classes may appear at the top level"]),
    ("class ASketch:\n    def f(self) -> None:\n        ...\n",
     ["class ASketch needs a docstring", "line 2: f: needs a Google-style docstring"]),
    ("class BSketch:\n    '''B.'''\n    limit = 3\n",
     ["may contain only its docstring and methods, not Assign", "has no methods"]),
    ("class CSketch:\n    '''C.'''\n    async def f(self):\n        '''F.'''\n        ...\n",
     ["line 3: f must not be async"]),
    ("class DSketch:\n    '''D.'''\n    def f(self, *a: int) -> None:\n        '''F.'''\n"
     "        ...\n", ["line 3: f: no *args, **kwargs"]),
    ("class ESketch:\n    '''E.'''\n    def f(self)\n", ["line 3: not valid Python"]),
])
def test_bad_sketches_list_every_problem_with_its_line(source: str, problems: list[str]) -> None:
    with pytest.raises(SketchError) as raised:
        check_sketch(source)
    for expected in problems:
        assert any(p.startswith(expected) or expected in p for p in raised.value.problems), (
            expected, raised.value.problems)


def scripted(steps: list[Callable[[list[ChatMessage]], ModelOutput]]) -> tuple[
        Callable[[list[ChatMessage]], ModelOutput], list[list[ChatMessage]]]:
    """A respond function playing `steps` in order, keeping every prompt it was sent."""
    seen: list[list[ChatMessage]] = []
    it = iter(steps)

    def respond(messages: list[ChatMessage]) -> ModelOutput:
        seen.append(list(messages))
        return next(it)(messages)

    return respond, seen


ids = itertools.count()


def call(function: str, **arguments: object) -> Callable[[list[ChatMessage]], ModelOutput]:
    return lambda _: reply(calls=[ToolCall(id=f"c{next(ids)}", function=function,
                                           arguments=dict(arguments))])


def last_tool(messages: list[ChatMessage]) -> ChatMessageTool:
    message = messages[-1]
    assert isinstance(message, ChatMessageTool)
    return message


def read_top_hit(messages: list[ChatMessage]) -> ModelOutput:
    """Read the section the previous search ranked first, as a model would."""
    hit = re.search(r"1\. path='([^']+)' section='([^']+)'", last_tool(messages).text)
    assert hit, last_tool(messages).text
    return reply(calls=[ToolCall(id=f"c{next(ids)}", function="read_doc",
                                 arguments={"path": hit.group(1), "section": "Invitations"})])


async def test_agent_searches_reads_fixes_a_refused_sketch_and_saves_one(tmp_path: Path) -> None:
    respond, seen = scripted([
        call("search_docs", query="calendar events invitations attendees"),
        read_top_hit,
        call("write_sketch", code=BAD),
        call("write_sketch", code=GOOD),
        lambda _: reply("Proposed: Calendar (calendar/README.md)."),
    ])
    out = tmp_path / "sketches"
    with Corpus(CORPUS, tmp_path / "index.sqlite") as corpus:
        corpus.refresh()
        result = await run_search_agent("a calendar API with events and invitations", corpus,
                                        out, responder_model(respond))
    search_reply = last_tool(seen[1])
    assert not search_reply.text.startswith("Error:")
    assert search_reply.text.startswith(
        "1. path='calendar/README.md' section='Calendar API > Invitations > List invitations'")
    read_reply = last_tool(seen[2])
    assert not read_reply.text.startswith("Error:")
    # "Invitations" is a heading with no text of its own: its three subsections come back
    assert re.findall(r"^## (.*)$", read_reply.text, re.M) == [
        "Calendar API > Invitations > Send an invitation",
        "Calendar API > Invitations > Respond to an invitation",
        "Calendar API > Invitations > List invitations"]
    refused = last_tool(seen[3])  # a failed call reads as environments' failures do
    assert refused.text.startswith("Error: sketch refused: ")
    assert "parameter 'title' needs a type hint" in refused.text
    assert "the body must be only the docstring and `...`" in refused.text
    saved = last_tool(seen[4])
    assert saved.text == ("Saved calendar_sketch.py: Calendar with tools create_event (write), "
                          "send_invitation (write), respond_to_invitation (write), "
                          "list_invitations.")
    assert sorted(p.name for p in out.iterdir()) == ["calendar_sketch.py", REPORT, TRANSCRIPT]
    transcript = json.loads((out / TRANSCRIPT).read_text())
    assert [m["role"] for m in transcript] == ["system", "user"] + ["assistant", "tool"] * 4 + [
        "assistant"]
    assert transcript[3]["function"] == "search_docs"
    assert (out / "calendar_sketch.py").read_text() == GOOD
    assert [t.name for t in from_sketch(out / "calendar_sketch.py").tools][0] == "create_event"
    assert (result.searches, result.reads, result.rejected_sketches, result.turns,
            result.tokens) == (1, 1, 1, 5, 10)
    assert result.summary == "Proposed: Calendar (calendar/README.md)."
    assert json.loads((out / REPORT).read_text())["sketches"] == [str(out / "calendar_sketch.py")]
    # the system prompt offers no web search unless one is given
    assert "web_search" not in seen[0][0].text


async def test_tool_errors_reach_the_model_and_a_silent_agent_is_nudged(tmp_path: Path) -> None:
    respond, seen = scripted([
        call("read_doc", path="payment.md"),
        lambda _: reply("I think a payments API fits."),  # no sketch yet: nudged
        call("write_sketch", code=GOOD.replace("CalendarSketch", "PaySketch")),
        lambda _: reply("Done."),
    ])
    with Corpus(CORPUS, tmp_path / "index.sqlite") as corpus:
        corpus.refresh()
        result = await run_search_agent("payments", corpus, tmp_path / "out",
                                        responder_model(respond))
    error = last_tool(seen[1]).text
    assert error.startswith("Error: ") and "did you mean payments.md" in error
    assert seen[2][-1].text.startswith("You have not saved a sketch yet.")
    assert [Path(p).name for p in result.sketches] == ["pay_sketch.py"]


async def test_no_sketch_is_a_clear_failure(tmp_path: Path) -> None:
    respond, _ = scripted([lambda _: reply("Nothing fits.")] * 3)
    with Corpus(CORPUS, tmp_path / "index.sqlite") as corpus, \
            pytest.raises(SearchAgentError, match="stopped without writing a sketch"):
        await run_search_agent("x", corpus, tmp_path / "out", responder_model(respond))
    respond, _ = scripted([call("search_docs", query="book")] * 4)
    with Corpus(CORPUS, tmp_path / "index.sqlite") as corpus, \
            pytest.raises(SearchAgentError, match="no sketch after 4 model calls"):
        await run_search_agent("x", corpus, tmp_path / "out2", responder_model(respond),
                               config=SearchConfig(max_turns=4))


async def test_max_sketches_is_enforced(tmp_path: Path) -> None:
    respond, seen = scripted([
        call("write_sketch", code=GOOD),
        call("write_sketch", code=GOOD.replace("CalendarSketch", "OtherSketch")),
        lambda _: reply("Done."),
    ])
    with Corpus(CORPUS, tmp_path / "index.sqlite") as corpus:
        result = await run_search_agent("x", corpus, tmp_path / "out", responder_model(respond),
                                        config=SearchConfig(max_sketches=1))
    error = last_tool(seen[2]).text
    assert error.startswith("Error: ") and "already wrote 1 sketches" in error
    assert [Path(p).name for p in result.sketches] == ["calendar_sketch.py"]


async def test_unknown_tools_and_bad_arguments_are_answered_and_the_run_goes_on(
        tmp_path: Path) -> None:
    """The backend checks each call against the schema the model was offered."""
    respond, seen = scripted([
        call("list_docs"),
        call("search_docs", k=3),
        call("read_doc", path=7),
        call("write_sketch", code=GOOD),
        lambda _: reply("Done."),
    ])
    with Corpus(CORPUS, tmp_path / "index.sqlite") as corpus:
        corpus.refresh()
        result = await run_search_agent("x", corpus, tmp_path / "out", responder_model(respond))
    assert last_tool(seen[1]).text == ("Error: Unknown tool 'list_docs'. Available tools: "
                                       "read_doc, search_docs, write_sketch.")
    assert last_tool(seen[2]).text == ("Error: Invalid arguments for tool 'search_docs': "
                                       "'query' is a required property.")
    assert last_tool(seen[3]).text.startswith("Error: Invalid arguments for tool 'read_doc': "
                                              "7 is not of type 'string'")
    assert (result.searches, result.reads, result.turns) == (0, 0, 5)
    assert [Path(p).name for p in result.sketches] == ["calendar_sketch.py"]
