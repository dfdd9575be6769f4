"""A hand-written server in the EnvFactory release's single-file format (test data).

Two tools, a Pydantic scenario model whose `current_time` has a pattern (as many release
servers do, so a default empty time fails its own round trip), load/save as MCP tools.
"""
from typing import Dict

from pydantic import BaseModel, Field
from mcp.server.fastmcp import FastMCP


# Section 1: Schema
class Book(BaseModel):
    book_id: str = Field(..., description="Unique book identifier")
    title: str = Field(..., description="Book title")
    copies: int = Field(default=1, ge=0, description="Copies on the shelf")


class LibraryScenario(BaseModel):
    books: Dict[str, Book] = Field(default={}, description="Books by book_id")
    current_time: str = Field(..., pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$",
                              description="Current timestamp in ISO 8601 format")


Scenario_Schema = [Book, LibraryScenario]


# Section 2: Class
class LibraryAPI:
    def __init__(self):
        self.books: Dict[str, Book] = {}
        self.current_time: str = ""

    def load_scenario(self, scenario: dict) -> None:
        model = LibraryScenario(**scenario)
        self.books = model.books
        self.current_time = model.current_time

    def save_scenario(self) -> dict:
        return {"books": {k: b.model_dump() for k, b in self.books.items()},
                "current_time": self.current_time}

    def get_book(self, book_id: str) -> dict:
        if book_id not in self.books:
            raise ValueError(f"Book {book_id} not found")
        return self.books[book_id].model_dump()

    def borrow_book(self, book_id: str) -> dict:
        book = self.books.get(book_id)
        if book is None:
            raise ValueError(f"Book {book_id} not found")
        if book.copies == 0:
            raise ValueError(f"No copies of {book_id} left")
        book.copies -= 1
        return {"book_id": book_id, "copies_left": book.copies}


# Section 3: MCP Tools
mcp = FastMCP(name="LibraryAPI")
api = LibraryAPI()


@mcp.tool()
def load_scenario(scenario: dict) -> str:
    """
    Load scenario data into the Library API.

    Args:
        scenario (dict): Scenario dictionary matching LibraryScenario schema.

    Returns:
        success_message (str): Success message.
    """
    api.load_scenario(scenario)
    return "Successfully loaded scenario"


@mcp.tool()
def save_scenario() -> dict:
    """
    Save current Library state as scenario dictionary.

    Returns:
        scenario (dict): Dictionary containing all current state variables.
    """
    return api.save_scenario()


@mcp.tool()
def get_book(book_id: str) -> dict:
    """
    Get one book by its identifier.

    Args:
        book_id (str): The book's identifier.

    Returns:
        book (dict): The book.
    """
    if not book_id:
        raise ValueError("book_id must be a non-empty string")
    return api.get_book(book_id)


@mcp.tool()
def borrow_book(book_id: str) -> dict:
    """
    Borrow one copy of a book.

    Args:
        book_id (str): The book's identifier.

    Returns:
        book_id (str): The book borrowed.
        copies_left (int): Copies still on the shelf.
    """
    return api.borrow_book(book_id)


# Section 4: Entry Point
if __name__ == "__main__":
    mcp.run()
