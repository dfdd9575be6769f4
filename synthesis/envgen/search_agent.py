"""The EnvGen search agent (model role `searcher`): from a goal to API sketches.

Given a goal ("a calendar API with events and invitations") the agent searches a local
document corpus (`search_docs`, BM25 over SQLite FTS5), reads the sections it needs
(`read_doc`), optionally searches the web (`web_search`, only when the user enables it
and the machine has network), and proposes environments by writing one sketch per API
(`write_sketch`). A sketch is checked before it is saved (`sketch_check` rules, then the
description loader EnvGen builds from); a bad one is refused with every problem listed
as the tool's error, so the agent fixes it in its next call.

The conversation runs on the harness's one episode loop (`harness.episode.Episode`): the
tools are the episode's backend (`SearchTools`, a `ToolBackend`), and each user turn is
one episode over the same history: the goal first, then, while the agent answers
without having saved a sketch, a nudge to write one. The model calls of all turns
together are bounded by `max_turns` (each episode gets what is left as its tool-step
limit). The agent's last message is the summary of what it proposed. The run's counts
go to `search_report.json` and the conversation (the history the model saw) to
`search_transcript.json` beside the sketches.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser, Model
from inspect_ai.tool import ContentText, Tool, ToolDef, ToolError, ToolInfo
from inspect_ai.util import Store, token_limit
from pydantic import BaseModel, Field

from envs import errors
from envs.base import ToolResult
from envs.errors import ErrorKind
from harness.episode import (
    Episode,
    EpisodeProgress,
    Rules,
    ScriptedUser,
    Side,
    Termination,
    UserTurn,
)
from harness.tool_backends import Observation, ToolBackend
from harness.trajectory import Role
from synthesis.envgen.corpus import Corpus, CorpusError
from synthesis.envgen.description import DescriptionError, from_sketch, snake_case
from synthesis.envgen.sketch_check import SketchError, check_sketch

__all__ = ["ROLE", "SearchAgentError", "SearchConfig", "SearchResult", "SearchTools",
           "network_available", "run_search_agent"]

ROLE = "searcher"
WEB_SEARCH = "web_search"
REPORT = "search_report.json"
#: the whole conversation (Inspect chat messages as JSON), for reading what the agent did
TRANSCRIPT = "search_transcript.json"
#: the user's next turn when the agent answers without having saved a sketch
NUDGE = ("You have not saved a sketch yet. Call write_sketch with the sketch of the best API "
         "you found, then finish.")

SYSTEM = """You design stateful tool environments for training tool-use agents. You have a
local corpus of API documentation. Find APIs that fit the user's goal, read their docs, and
propose environments by writing one sketch per API with write_sketch.

Tools: search_docs(query, k) ranks documentation sections; read_doc(path, section) reads a
document or one of its sections (use the path and section a search hit shows).{web}
Search several times with different words before you decide; base every tool on what the
docs say (names, parameters, allowed values, error cases). Prefer APIs whose tools read and
change a state (records that can be created, looked up, updated); no live-network APIs.

A sketch is Python that is parsed, never run: one class <Name>Sketch with a docstring, and
one method per tool with typed parameters, a return annotation, a Google-style docstring
(summary, Args: for every parameter, Returns:) and `...` as its only body. Put `# write` on
the def line of every tool that changes state. Only imports from typing, __future__ and
collections.abc are allowed. Example:

```python
from typing import Literal


class ShelfSketch:
    \"\"\"A home library: books on shelves, lent to friends.\"\"\"

    def get_book(self, book_id: str) -> dict:
        \"\"\"Look a book up.

        Args:
            book_id: The book's id, e.g. "B1".

        Returns:
            The book with book_id, title and status.
        \"\"\"
        ...

    def lend_book(self, book_id: str, friend: str) -> dict:  # write
        \"\"\"Lend a book; a book already lent out cannot be lent.

        Args:
            book_id: The book's id.
            friend: Who borrows it.

        Returns:
            The book with status "lent".
        \"\"\"
        ...
```

Write at most {max_sketches} sketches (pass the whole file as `code`). When you are done,
reply without calling a tool: list the APIs you proposed, one line each, and the documents
they are based on."""


class SearchAgentError(Exception):
    """The agent ended without a usable sketch (or could not start); says why."""


class SearchConfig(BaseModel):
    max_sketches: int = Field(default=3, ge=1)
    #: model calls, tool turns included
    max_turns: int = Field(default=30, ge=1)
    #: hits per search_docs call unless the agent asks for another k (capped at 20)
    k: int = Field(default=8, ge=1, le=20)
    #: most characters of one read_doc result
    max_read_chars: int = Field(default=12_000, ge=500)
    #: times the agent is told to write a sketch when it stops without one
    nudges: int = Field(default=2, ge=0)


class SearchResult(BaseModel):
    """What one run did; written as `search_report.json` beside the sketches."""

    goal: str
    sketches: list[str]
    summary: str
    searches: int = 0
    reads: int = 0
    web_searches: int = 0
    rejected_sketches: int = 0
    turns: int = 0
    tokens: int = 0


def network_available(host: str = "1.1.1.1", port: int = 443, timeout: float = 3.0) -> bool:
    """Whether a TCP connection out of this machine succeeds (the web-search precondition)."""
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError:
        return False
    return True


class SearchTools(ToolBackend):
    """The episode's tool backend: the tools of one run, bound to its corpus and output
    folder, with the run's counters (`result`), plus the caller's `web_search` if given.

    The model is offered each tool as Inspect describes it from its signature and
    docstring (`ToolDef`). A call is checked against that schema before it runs; an
    unoffered name, arguments that break the schema, or a tool's refusal (`ToolError`)
    come back as a failed result of that kind, in `envs`' wording (`Error: ...`, as
    environments' failures read), for the agent to fix in its next call."""

    def __init__(self, corpus: Corpus, out_dir: Path, config: SearchConfig,
                 result: SearchResult, web_search: Tool | None = None) -> None:
        self.corpus, self.out_dir, self.config, self.result = corpus, out_dir, config, result
        defs = [ToolDef(self.search_docs), ToolDef(self.read_doc), ToolDef(self.write_sketch)]
        if web_search is not None:
            defs.append(ToolDef(web_search))
        self._defs = {d.name: d for d in defs}
        self._infos = [ToolInfo(name=d.name, description=d.description, parameters=d.parameters,
                                options=d.options) for d in defs]

    def tools(self, role: Role = "assistant") -> list[ToolInfo]:
        return self._infos if role == "assistant" else []

    async def call(self, name: str, arguments: Mapping[str, Any],
                   role: Role = "assistant") -> Observation:
        tool = self._defs.get(name) if role == "assistant" else None
        if tool is None:
            return _failure(ErrorKind.UNKNOWN_TOOL, errors.unknown_tool(name, self._defs))
        if name == WEB_SEARCH:
            self.result.web_searches += 1
        schema = tool.parameters.model_dump(exclude_none=True)
        problems = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(
            dict(arguments))]
        if problems:
            return _failure(ErrorKind.INVALID_ARGUMENTS,
                            errors.invalid_arguments(name, sorted(problems)))
        try:
            value = await tool.tool(**arguments)
        except ToolError as e:
            return _failure(ErrorKind.REFUSED, e.message)
        items = value if isinstance(value, list) else [value]
        return Observation(text="".join(
            item.text if isinstance(item, ContentText) else
            str(item) if isinstance(item, str | int | float) else f"({item.type} omitted)"
            for item in items), ok=True)

    async def snapshot(self) -> None:
        """No world to record: the sketches are files, listed in the report."""
        return None

    async def search_docs(self, query: str, k: int = 0) -> str:
        """Rank documentation sections for a free-text query (BM25 over the local corpus).

        Args:
            query: Words describing what you look for, e.g. "invite attendee to event".
            k: How many hits to return (default 8, at most 20).

        Returns:
            Numbered hits: path, section title, score and a snippet with «matched» words.
        """
        self.result.searches += 1
        try:
            hits = self.corpus.search(query, min(k or self.config.k, 20))
        except CorpusError as e:
            raise ToolError(str(e)) from None
        if not hits:
            return f"No section matches {query!r}; try other words."
        return "\n".join(f"{i}. path={h.path!r} section={h.section!r} score={h.score}\n"
                         f"   {h.snippet}" for i, h in enumerate(hits, 1))

    async def read_doc(self, path: str, section: str = "") -> str:
        """Read a document of the corpus, or one section of it.

        Args:
            path: The document's path as a search hit shows it.
            section: A section title (or a unique part of one); empty for the whole document.

        Returns:
            The text, each section under a "## title" line.
        """
        self.result.reads += 1
        try:
            return self.corpus.read(path, section, self.config.max_read_chars)
        except CorpusError as e:
            raise ToolError(str(e)) from None

    async def write_sketch(self, code: str) -> str:
        """Save one API sketch (the whole Python file). A sketch that breaks the rules is
        refused with every problem listed; fix them and call again.

        Args:
            code: The sketch file: one <Name>Sketch class, typed methods, docstrings, `...`.

        Returns:
            Where the sketch was saved and the tools read from it.
        """
        try:
            class_name = check_sketch(code)
        except SketchError as e:
            self.result.rejected_sketches += 1
            raise ToolError("sketch refused: " + "; ".join(e.problems)) from None
        path = self.out_dir / f"{snake_case(class_name.removesuffix('Sketch'))}_sketch.py"
        if str(path) not in self.result.sketches and \
                len(self.result.sketches) >= self.config.max_sketches:
            raise ToolError(f"you already wrote {self.config.max_sketches} sketches, the "
                            "most allowed; reply without a tool call to finish")
        staged = path.with_suffix(".tmp")
        staged.write_text(code, encoding="utf-8")
        try:
            description = from_sketch(staged)
        except DescriptionError as e:
            staged.unlink()
            self.result.rejected_sketches += 1
            raise ToolError(f"sketch refused: {str(e).removeprefix(f'{staged}: ')}") from None
        staged.replace(path)
        if str(path) not in self.result.sketches:
            self.result.sketches.append(str(path))
        tools = ", ".join(f"{t.name}{' (write)' if t.write else ''}" for t in description.tools)
        return f"Saved {path.name}: {description.name} with tools {tools}."


def _failure(kind: ErrorKind, error: str) -> Observation:
    result = ToolResult.failure(kind, error)
    return Observation(text=result.text(), ok=False, error_kind=kind)


async def run_search_agent(goal: str, corpus: Corpus, out_dir: Path, model: Model, *,
                           config: SearchConfig | None = None,
                           web_search: Tool | None = None) -> SearchResult:
    """Run the agent on `goal` until it stops with at least one saved sketch.

    `corpus` must already be refreshed. `web_search` (an Inspect tool, e.g.
    `inspect_ai.tool.web_search(...)`) is offered only when given; the caller decides
    whether the user enabled it and the network is there. Raises `SearchAgentError` when
    the agent ends (or runs out of turns) without a sketch.
    """
    config = config or SearchConfig()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    result = SearchResult(goal=goal, sketches=[], summary="")
    backend = SearchTools(corpus, out_dir, config, result, web_search)
    web = ""
    if web_search is not None:
        web = ("\nweb_search(query) searches the web: use it for APIs the corpus lacks, "
               "preferring official documentation.")
    agent = Side(role="assistant", model=model, tools=backend.tools(), history=[
        ChatMessageSystem(content=SYSTEM.replace("{web}", web)
                          .replace("{max_sketches}", str(config.max_sketches)))])
    say: ChatMessage = ChatMessageUser(content=f"Goal: {goal}")
    nudges = 0
    with token_limit(None) as usage:  # counts every model call made inside it
        while True:
            progress = await _user_turn(agent, backend, say, config.max_turns - result.turns)
            result.turns += sum(m.role == "assistant" for m in progress.messages)
            result.tokens = int(usage.usage)
            if progress.termination == Termination.TURN_STEP_LIMIT:  # out of model calls
                if not result.sketches:
                    raise SearchAgentError(
                        f"{ROLE}: no sketch after {config.max_turns} model calls")
                result.summary = f"(stopped after {config.max_turns} model calls)"
                break
            if result.sketches:  # it answered without a call, with work saved
                result.summary = agent.history[-1].text
                break
            if nudges >= config.nudges:
                raise SearchAgentError(f"{ROLE}: stopped without writing a sketch "
                                       f"(told {nudges} times to write one)")
            nudges += 1
            say = ChatMessageUser(content=NUDGE)
            if result.turns >= config.max_turns:
                raise SearchAgentError(
                    f"{ROLE}: no sketch after {config.max_turns} model calls")
    (out_dir / REPORT).write_text(json.dumps(result.model_dump(), indent=2, ensure_ascii=False),
                                  encoding="utf-8")
    transcript = [m.model_dump(mode="json", exclude_none=True) for m in agent.history]
    (out_dir / TRANSCRIPT).write_text(json.dumps(transcript, indent=1, ensure_ascii=False),
                                      encoding="utf-8")
    return result


async def _user_turn(agent: Side, backend: SearchTools, message: ChatMessage,
                     model_calls: int) -> EpisodeProgress:
    """One episode: `message` from the user, then the agent's calls until it answers in
    text (`TURNS_DONE`) or has made `model_calls` calls that all called tools
    (`TURN_STEP_LIMIT`: each executed tool step follows one model call). Its progress is
    its own (a fresh `Store`), never the store of a sample the caller may be running in."""
    rules = Rules(turn_step_limit=model_calls, end_episode_at_turn_step_limit=True)
    return await Episode(agent, backend, rules,
                         user=ScriptedUser([UserTurn(messages=[message])]),
                         progress=EpisodeProgress(store=Store())).run()
