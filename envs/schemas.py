"""JSON-schema helpers shared by everything that shows a tool to a model.

`inline_refs` is the one place local `$ref`s are expanded: a tool's parameters as the
model and MCP clients see them, a tool's output schema (the tool graph reads nested
`properties` in place), and the response schemas of an OpenAPI document that EnvGen
turns into a tool description. Models are sent a properties map, where a `$ref` would
point nowhere, so references are replaced by what they point at.

The one recursion policy: a reference back into a definition that is being expanded
stays a `$ref` (and, for Pydantic's `#/$defs/...`, the definitions stay beside it under
`$defs`), so a recursive model is described whole and finitely. It is neither cut at an
arbitrary depth (which silently loses fields) nor refused (which would make a recursive
tool unservable). A reference to nothing is an error naming the reference in a schema
of ours or a benchmark's (a bug to fix), and an empty schema in a document written by
others (an OpenAPI file EnvGen reads, an MCP server's schema), where a dangling
reference should cost that field, not the document. `ref_target` is the one step of
following a reference, for readers that walk a document themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["inline_refs", "ref_target", "strip_titles"]

_DEFS = "#/$defs/"


def inline_refs(schema: Mapping[str, Any], *, root: Mapping[str, Any] | None = None,
                titles: bool = False) -> dict[str, Any]:
    """`schema` with every local `$ref` replaced by its target (the module's policy).

    References are resolved in `root` (an OpenAPI document: `#/components/schemas/X`)
    or, by default, in `schema` itself (Pydantic's `#/$defs/X`, whose `$defs` are then
    dropped unless a recursive reference still needs them). Sibling keys of a `$ref` (a
    field's description) are kept over the target's. Schema `title`s are dropped, as
    tools are shown without them, unless `titles`.

    Raises:
        ValueError: without `root`, a reference to a target that does not exist (with
            `root`, such a reference becomes `{}`).
    """
    document: Mapping[str, Any] = schema if root is None else root

    def target(ref: str) -> Any:
        if root is not None:
            return ref_target(root, {"$ref": ref})
        node: Any = document
        for part in ref.removeprefix("#/").split("/"):
            if not isinstance(node, Mapping) or part not in node:
                raise ValueError(f"schema refers to undefined {ref!r}")
            node = node[part]
        return node

    def walk(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(item, seen) for item in node]
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/") and ref not in seen:
            rest = {k: walk(v, seen) for k, v in node.items() if k != "$ref"}
            return {**walk(target(ref), (*seen, ref)), **rest}
        return {k: walk(v, seen) for k, v in node.items() if k != "$defs" or root is not None}

    out = dict(walk(schema, ()))
    defs = schema.get("$defs") if root is None else None
    if isinstance(defs, Mapping) and _refers_to_defs(out):
        out["$defs"] = {name: walk(d, (_DEFS + name,)) for name, d in defs.items()}
    return out if titles else strip_titles(out)


def ref_target(document: Mapping[str, Any], node: Any) -> Any:
    """`node`, or what it points at in `document` when it is a local `$ref` (one step;
    its sibling keys are the caller's to merge); `{}` when `document` has no such target."""
    if not (isinstance(node, Mapping) and isinstance(node.get("$ref"), str)):
        return node
    target: Any = document
    for part in node["$ref"].removeprefix("#/").split("/"):
        target = target.get(part) if isinstance(target, Mapping) else None
    return {} if target is None else target


def strip_titles(node: Any) -> Any:
    """Drop every schema `title` (not a property that happens to be called "title", nor
    anything inside data such as a `default`)."""
    if isinstance(node, list):
        return [strip_titles(item) for item in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "patternProperties") and isinstance(value, Mapping):
            out[key] = {name: strip_titles(sub) for name, sub in value.items()}
        elif key in ("default", "examples", "const", "enum"):
            out[key] = value  # data, not schema
        else:
            out[key] = strip_titles(value)
    return out


def _refers_to_defs(node: Any) -> bool:
    if isinstance(node, list):
        return any(_refers_to_defs(item) for item in node)
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        return ((isinstance(ref, str) and ref.startswith(_DEFS))
                or any(_refers_to_defs(v) for v in node.values()))
    return False
