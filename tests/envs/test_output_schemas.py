"""Tool output schemas (`ToolSpec.output_schema`) derived from return annotations.

Expected schemas are written out by hand from the return types of a tiny environment,
so a change in how they are derived (titles, `$ref` inlining, docstring descriptions)
shows up here.
"""

from __future__ import annotations

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from envs.base import Environment, tool


class Item(BaseModel):
    """A thing on a shelf."""

    title: str = Field(description="Printed name")
    qty: int = 0


class Shelf(BaseModel):
    label: str
    items: list[Item]


class Node(BaseModel):
    name: str
    children: list[Node] = []


class Count(TypedDict):
    total: int


class State(BaseModel):
    items: list[Item] = []


class Tiny(Environment):
    name = "tiny"
    State = State

    @tool
    def item(self) -> Item:
        """One item.

        Returns:
            The first item
            on the shelf.
        """
        return Item(title="a")

    @tool
    def shelf(self) -> Shelf:
        """A shelf."""
        return Shelf(label="s", items=[])

    @tool
    def names(self) -> list[str]:
        """Names."""
        return []

    @tool
    def count(self) -> Count:
        """How many."""
        return {"total": 0}

    @tool
    def maybe(self) -> int | None:
        """Perhaps a number."""
        return None

    @tool(write=True)
    def clear(self) -> None:
        """Empty the shelf."""

    @tool
    def untyped(self):  # type: ignore[no-untyped-def]
        """No annotation."""
        return 1

    @tool
    def tree(self) -> Node:
        """A recursive result."""
        return Node(name="root")


SPECS = {s.name: s for s in Tiny.tool_specs()}

ITEM = {
    "type": "object",
    "description": "A thing on a shelf.",
    "properties": {
        "title": {"type": "string", "description": "Printed name"},
        "qty": {"type": "integer", "default": 0},
    },
    "required": ["title"],
}


def test_model_result_with_returns_section_as_description() -> None:
    assert SPECS["item"].output_schema == {**ITEM, "description": "The first item on the shelf."}


def test_nested_models_are_inlined_and_titles_stripped() -> None:
    assert SPECS["shelf"].output_schema == {
        "type": "object",
        "properties": {
            "label": {"type": "string"},
            "items": {"type": "array", "items": ITEM},
        },
        "required": ["label", "items"],
    }


def test_plain_and_typed_dict_and_optional_results() -> None:
    assert SPECS["names"].output_schema == {"type": "array", "items": {"type": "string"}}
    assert SPECS["count"].output_schema == {
        "type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]}
    assert SPECS["maybe"].output_schema == {"anyOf": [{"type": "integer"}, {"type": "null"}]}


def test_no_result_and_unannotated_have_no_schema() -> None:
    assert SPECS["clear"].output_schema is None
    assert SPECS["untyped"].output_schema is None


def test_recursive_model_keeps_its_defs() -> None:
    schema = SPECS["tree"].output_schema
    assert schema is not None
    assert schema["properties"]["name"] == {"type": "string"}
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert schema["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}


def test_description_of_the_tool_is_unchanged_by_returns_section() -> None:
    assert SPECS["item"].description == "One item.\n\nReturns:\nThe first item\non the shelf."
