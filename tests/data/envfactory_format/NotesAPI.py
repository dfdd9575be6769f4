"""A small tool server in EnvFactory's single-file format (test fixture)."""

# ---- Section 1: Schema ----
from typing import Dict, List

from mcp.server.fastmcp import FastMCP
from pydantic import BaseModel, Field


class Note(BaseModel):
    note_id: str = Field(pattern=r"^N\d+$")
    title: str
    body: str = ""
    tags: List[str] = Field(default_factory=list)


class NotesScenario(BaseModel):
    notes: Dict[str, Note] = Field(default_factory=dict)
    next_note_id: int = Field(default=1, ge=1)
    current_time: str = "2026-01-01T09:00:00"


Scenario_Schema = [Note, NotesScenario]


# ---- Section 2: Class ----
class NotesAPI:
    def __init__(self):
        self.notes: Dict[str, Note] = {}
        self.next_note_id = 1
        self.current_time = "2026-01-01T09:00:00"

    def load_scenario(self, scenario: dict) -> None:
        model = NotesScenario(**scenario)
        self.notes = dict(model.notes)
        self.next_note_id = model.next_note_id
        self.current_time = model.current_time

    def save_scenario(self) -> dict:
        return NotesScenario(notes=self.notes, next_note_id=self.next_note_id,
                             current_time=self.current_time).model_dump()

    def create_note(self, title: str, body: str = "") -> dict:
        note_id = f"N{self.next_note_id}"
        self.next_note_id += 1
        self.notes[note_id] = Note(note_id=note_id, title=title, body=body)
        return {"note_id": note_id}

    def get_note(self, note_id: str) -> dict:
        return self.notes[note_id].model_dump()

    def tag_note(self, note_id: str, tags: List[str]) -> dict:
        note = self.notes[note_id]
        for tag in tags:
            note.tags.append(tag)
            if len(note.tags) > 3:
                raise ValueError(f"note {note_id} cannot have more than 3 tags")
        return {"tags": note.tags}


# ---- Section 3: MCP tools ----
mcp = FastMCP(name="NotesAPI")
api = NotesAPI()


@mcp.tool()
def load_scenario(scenario: dict) -> str:
    """Load a scenario into the notes server."""
    api.load_scenario(scenario)
    return "Successfully loaded scenario"


@mcp.tool()
def save_scenario() -> dict:
    """Save the current scenario."""
    return api.save_scenario()


@mcp.tool()
def create_note(title: str, body: str = "") -> dict:
    """Create a note.

    Args:
        title: Title of the note.
        body: Text of the note.
    """
    if not title:
        raise ValueError("title must not be empty")
    return api.create_note(title, body)


@mcp.tool()
def get_note(note_id: str) -> dict:
    """Get a note by id.

    Args:
        note_id: The note id, e.g. N1.
    """
    if note_id not in api.notes:
        raise ValueError(f"note {note_id} not found")
    return api.get_note(note_id)


@mcp.tool()
def tag_note(note_id: str, tags: List[str]) -> dict:
    """Add tags to a note (at most 3 tags per note).

    Args:
        note_id: The note id.
        tags: Tags to add.
    """
    if note_id not in api.notes:
        raise ValueError(f"note {note_id} not found")
    return api.tag_note(note_id, tags)


# ---- Section 4: Entry point ----
if __name__ == "__main__":
    mcp.run()
