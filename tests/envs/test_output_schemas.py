"""Tool output schemas (`ToolSpec.output_schema`) derived from return annotations.

Expected schemas are written out by hand from the return types of a tiny environment,
so a change in how they are derived (titles, `$ref` inlining, docstring descriptions)
shows up here.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from envs.base import Environment, tool
from envs.pool import pool_classes

ROOT = Path(__file__).resolve().parents[2]


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


def _untyped_nodes(node: object, path: str = "") -> list[str]:
    """Paths of schema nodes that say nothing about their value: `{}` (any) or an object
    with neither properties nor a typed `additionalProperties`."""
    found: list[str] = []
    if isinstance(node, dict):
        if node == {} or (node.get("type") == "object" and "properties" not in node
                          and not isinstance(node.get("additionalProperties"), dict)):
            found.append(path or "/")
        for key, value in node.items():
            if key not in ("default", "enum", "const", "examples"):
                found += _untyped_nodes(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _untyped_nodes(value, f"{path}/{i}")
    return found


@pytest.mark.parametrize("env_name", sorted(pool_classes()))
def test_every_pool_tool_has_a_typed_output_schema(env_name: str) -> None:
    for spec in pool_classes()[env_name].tool_specs():
        schema = spec.output_schema
        assert schema is not None, spec.name
        assert "properties" in schema or "items" in schema or schema.get("type") in (
            "string", "integer", "number", "boolean"), (spec.name, schema)
        assert _untyped_nodes(schema) == [], (spec.name, _untyped_nodes(schema))
        assert "$ref" not in json.dumps(schema), spec.name  # inlined: the graph reads it


def test_pool_result_schema_names_the_fields_a_tool_returns() -> None:
    """Hand-checked against BankLedger.get_statement's code: the keys it returns, and
    the nested transaction view."""
    specs = {s.name: s for s in pool_classes()["bank_ledger"].tool_specs()}
    schema = specs["get_statement"].output_schema
    assert schema is not None
    assert list(schema["properties"]) == ["account_id", "month", "opening_balance",
                                          "closing_balance", "total_in", "total_out",
                                          "transactions"]
    tx = schema["properties"]["transactions"]["items"]
    assert tx["properties"]["amount"] == {
        "type": "number", "description": "Signed dollars: credits positive, debits negative"}
    assert set(tx["required"]) == set(tx["properties"])


def test_shipped_gold_results_match_their_output_schemas() -> None:
    """Every successful gold call of the shipped EnvFactory tasks, replayed, returns a
    value its tool's output schema accepts (annotations that lied would fail here, and
    MCP clients validate structured results against these schemas)."""
    classes = pool_classes()
    validators = {(env, s.name): jsonschema.Draft202012Validator(s.output_schema or {})
                  for env, cls in classes.items() for s in cls.tool_specs()}
    checked: set[tuple[str, str]] = set()
    for path in sorted((ROOT / "tasks" / "envfactory" / "data").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            task = json.loads(line)
            envs = {e: classes[e](task["initial_state"][e]) for e in task["environments"]}
            for turn in task["turns"]:
                for call in turn["gold_calls"]:
                    env = envs[call["env"]]
                    result = env.call(call["name"], call["arguments"])
                    if not result.ok:
                        continue
                    key = (call["env"], call["name"])
                    validators[key].validate(result.content)
                    checked.add(key)
    assert len(checked) >= 150  # 160 of the 164 pool tools when written
