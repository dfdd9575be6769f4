"""`envs.schemas.inline_refs`: one recursion policy for every schema shown to a model."""

from __future__ import annotations

import pytest

from envs.schemas import inline_refs, ref_target


def test_a_parameter_named_title_is_kept_while_schema_titles_go() -> None:
    schema = {"type": "object", "title": "Args", "required": ["title"],
              "properties": {"title": {"type": "string", "title": "Title"},
                             "when": {"type": "string", "default": {"title": "data"}}}}
    assert inline_refs(schema) == {"type": "object", "required": ["title"], "properties": {
        "title": {"type": "string"}, "when": {"type": "string", "default": {"title": "data"}}}}


def test_a_recursive_definition_stays_a_ref_with_its_defs() -> None:
    node = {"type": "object", "title": "Node", "properties": {
        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}
    out = inline_refs({"$defs": {"Node": node}, "properties": {"root": {"$ref": "#/$defs/Node"}}})
    assert out["properties"]["root"]["properties"]["children"]["items"] == {
        "$ref": "#/$defs/Node"}
    assert out["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}


def test_a_schema_without_recursion_loses_its_defs() -> None:
    out = inline_refs({"$defs": {"Mode": {"enum": ["a"], "title": "Mode"}},
                       "properties": {"mode": {"$ref": "#/$defs/Mode", "description": "m"}}})
    assert out == {"properties": {"mode": {"enum": ["a"], "description": "m"}}}


def test_openapi_refs_resolve_in_the_document_and_keep_titles() -> None:
    doc = {"components": {"schemas": {
        "Event": {"title": "Event", "type": "object",
                  "properties": {"next": {"$ref": "#/components/schemas/Event"}}}}}}
    out = inline_refs({"$ref": "#/components/schemas/Event"}, root=doc, titles=True)
    assert out == {"title": "Event", "type": "object",
                   "properties": {"next": {"$ref": "#/components/schemas/Event"}}}


def test_a_reference_to_nothing_is_an_error_in_ours_and_empty_in_a_document() -> None:
    with pytest.raises(ValueError, match="undefined '#/\\$defs/X'"):
        inline_refs({"properties": {"x": {"$ref": "#/$defs/X"}}})
    doc = {"components": {"schemas": {}}}
    assert inline_refs({"properties": {"x": {"$ref": "#/components/schemas/X",
                                             "description": "an x"}}}, root=doc) == {
        "properties": {"x": {"description": "an x"}}}
    assert ref_target(doc, {"$ref": "#/components/schemas/X"}) == {}
    assert ref_target(doc, {"type": "string"}) == {"type": "string"}
