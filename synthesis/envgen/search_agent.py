"""The EnvGen search agent (model role `searcher`): from a goal to API sketches.

Given a goal ("a calendar API with events and invitations") the agent searches a local
document corpus (`search_docs`, BM25 over SQLite FTS5), reads the sections it needs
(`read_doc`), optionally searches the web (`web_search`, only when the user enables it
and the machine has network), and proposes environments by writing one sketch per API
(`write_sketch`). A sketch is checked before it is saved (`sketch_check` rules, then the
description loader EnvGen builds from); a bad one is refused with every problem listed
as the tool's error, so the agent fixes it in its next call. The loop is plain Inspect
tool calling: `Model.generate` with the tools, `execute_tools` for the calls, until the
agent answers without a call; its last message is the summary of what it proposed.
The run's counts go to `search_report.json` and the conversation to
`search_transcript.json` beside the sketches.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    Model,
    execute_tools,
)
from inspect_ai.tool import Tool, ToolDef, ToolError
from pydantic import BaseModel, Field

from synthesis.envgen.corpus import Corpus, CorpusError
from synthesis.envgen.description import DescriptionError, from_sketch, snake_case
from synthesis.envgen.sketch_check import SketchError, check_sketch

__all__ = ["ROLE", "SearchAgentError", "SearchConfig", "SearchResult", "network_available",
           "run_search_agent"]

ROLE = "searcher"
REPORT = "search_report.json"
#: the whole conversation (Inspect chat messages as JSON), for reading what the agent did
TRANSCRIPT = "search_transcript.json"

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


class _Session:
    """The tools of one run, bound to its corpus and output folder, with counters."""

    def __init__(self, corpus: Corpus, out_dir: Path, config: SearchConfig,
                 result: SearchResult) -> None:
        self.corpus, self.out_dir, self.config, self.result = corpus, out_dir, config, result

    def tools(self) -> list[ToolDef]:
        return [ToolDef(self.search_docs), ToolDef(self.read_doc), ToolDef(self.write_sketch)]

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
    session = _Session(corpus, out_dir, config, result)
    tools: list[Tool | ToolDef] = [*session.tools()]
    web = ""
    if web_search is not None:
        tools.append(web_search)
        web = ("\nweb_search(query) searches the web: use it for APIs the corpus lacks, "
               "preferring official documentation.")
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=SYSTEM.replace("{web}", web)
                          .replace("{max_sketches}", str(config.max_sketches))),
        ChatMessageUser(content=f"Goal: {goal}"),
    ]
    nudges = 0
    while result.turns < config.max_turns:
        output = await model.generate(messages, tools=tools)
        result.turns += 1
        result.tokens += output.usage.total_tokens if output.usage else 0
        messages.append(output.message)
        if output.message.tool_calls:
            executed = await execute_tools(messages, tools)
            for message in executed.messages:
                if getattr(message, "function", None) == "web_search":
                    result.web_searches += 1
            messages += executed.messages
            continue
        if result.sketches:
            result.summary = output.message.text
            break
        if nudges >= config.nudges:
            raise SearchAgentError(f"{ROLE}: stopped without writing a sketch "
                                   f"(told {nudges} times to write one)")
        nudges += 1
        messages.append(ChatMessageUser(content="You have not saved a sketch yet. Call "
                                        "write_sketch with the sketch of the best API you "
                                        "found, then finish."))
    else:
        if not result.sketches:
            raise SearchAgentError(f"{ROLE}: no sketch after {config.max_turns} model calls")
        result.summary = f"(stopped after {config.max_turns} model calls)"
    (out_dir / REPORT).write_text(json.dumps(result.model_dump(), indent=2, ensure_ascii=False),
                                  encoding="utf-8")
    transcript = [m.model_dump(mode="json", exclude_none=True) for m in messages]
    (out_dir / TRANSCRIPT).write_text(json.dumps(transcript, indent=1, ensure_ascii=False),
                                      encoding="utf-8")
    return result
