"""A hand-written environment in our contract, registered by the EnvGen registration tests
as if EnvGen had generated it (test fixture)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from envs.base import Environment, ToolError, tool


class Book(BaseModel):
    book_id: str
    title: str
    on_loan: bool = False


class ShelfState(BaseModel):
    books: dict[str, Book] = Field(default_factory=dict)
    next_id: int = 1


class Shelf(Environment):
    name = "shelf"
    description = "A small bookshelf: add books, look them up, lend them out."
    State = ShelfState

    @classmethod
    def default_state(cls) -> ShelfState:
        return ShelfState(books={"B1": Book(book_id="B1", title="Dune")}, next_id=2)

    @tool(write=True)
    def add_book(self, title: str) -> dict[str, str]:
        """Put a new book on the shelf.

        Args:
            title: The book's title.

        Returns:
            The new book's id as book_id.
        """
        if not title.strip():
            raise ToolError("title must not be empty")
        book_id = f"B{self.state.next_id}"
        self.state.next_id += 1
        self.state.books[book_id] = Book(book_id=book_id, title=title)
        return {"book_id": book_id}

    @tool
    def get_book(self, book_id: str) -> Book:
        """Look a book up by id.

        Args:
            book_id: The book's id.
        """
        if book_id not in self.state.books:
            raise ToolError(f"no book {book_id!r}")
        return self.state.books[book_id]

    @tool(write=True)
    def lend_book(self, book_id: str) -> str:
        """Lend a book out; a book already on loan cannot be lent.

        Args:
            book_id: The book's id.
        """
        book = self.get_book(book_id)
        if book.on_loan:
            raise ToolError(f"{book_id} is already on loan")
        book.on_loan = True
        return f"{book_id} lent"
