"""JSON-schema helpers shared by everything that shows a tool to a model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["inline_refs"]


def inline_refs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` with every local `$ref` (`#/$defs/X`) replaced by its definition.

    Pydantic puts nested models and enums in `$defs`; tool schemas are sent to models as
    a properties map, where a `$ref` would point nowhere. Sibling keys of a `$ref`
    (a field's description) are kept over the definition's; titles are dropped.
    """
    defs = dict(schema.get("$defs", {}))

    def walk(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(n, seen) for n in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            key = ref.removeprefix("#/$defs/")
            if key in seen:
                raise ValueError(f"recursive schema definition {key!r} cannot be inlined")
            if key not in defs:
                raise ValueError(f"schema refers to undefined {ref!r}")
            merged = {**walk(defs[key], (*seen, key)),
                      **{k: walk(v, seen) for k, v in node.items() if k != "$ref"}}
            merged.pop("title", None)
            return merged
        return {k: walk(v, seen) for k, v in node.items() if k not in ("$defs", "title")}

    return dict(walk(dict(schema), ()))
