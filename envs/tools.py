"""`@tool`: how an `Environment` method becomes a tool, and the spec a model is shown.

A tool is a typed method; its docstring is the description, its type hints are the
arguments. From those one `BoundTool` per method (built once per class, when the class
is defined) derives both the JSON schema the model sees and the Pydantic model the call's
arguments are validated with, so the two have one source and cannot drift apart. The
return annotation gives the result's schema (`ToolSpec.output_schema`), which the tool
graph and MCP serving read. The call pipeline that uses them is `envs.base.Environment`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any, TypeVar, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model

from envs.schemas import inline_refs

__all__ = ["TOOL_MARK", "BoundTool", "ToolSpec", "tool"]

F = TypeVar("F", bound=Callable[..., Any])

#: the attribute `@tool` sets on a method: {"write": bool}
TOOL_MARK = "__envfactory_tool__"


class ToolSpec(BaseModel):
    """What a model is shown about one tool (and what the tool graph reads)."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    parameters: dict[str, Any] = Field(description="JSON schema of the arguments object")
    write: bool = Field(description="True if the tool may change the state")
    output_schema: dict[str, Any] | None = Field(
        default=None,
        description="JSON schema of the tool's result (serialisation side of its return "
        "annotation, titles stripped, local $refs inlined); None when the tool returns "
        "nothing or is unannotated",
    )


@overload
def tool(fn: F, *, write: bool = False) -> F: ...


@overload
def tool(fn: None = None, *, write: bool = False) -> Callable[[F], F]: ...


def tool(fn: F | None = None, *, write: bool = False) -> F | Callable[[F], F]:
    """Mark an `Environment` method as a tool.

    `write=True` declares that the tool may change the state: such calls are applied
    atomically (a failure rolls the state back).
    """

    def mark(f: F) -> F:
        setattr(f, TOOL_MARK, {"write": write})
        return f

    return mark(fn) if fn is not None else mark


class BoundTool:
    """A tool method with its argument model and schema, built once per class."""

    def __init__(self, method: Callable[..., Any], write: bool, strict: bool = False) -> None:
        self.method_name = method.__name__
        self.write = write
        summary, arg_docs = _parse_docstring(inspect.getdoc(method) or "")
        hints = get_type_hints(method)
        fields: dict[str, Any] = {}
        for pname, param in inspect.signature(method).parameters.items():
            if pname == "self":
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"tool {method.__qualname__}: *args/**kwargs are not allowed")
            if pname not in hints:
                raise TypeError(f"tool {method.__qualname__}: parameter {pname!r} has no type hint")
            default = ... if param.default is param.empty else param.default
            fields[pname] = (hints[pname], Field(default, description=arg_docs.get(pname)))
        self.arguments_model: type[BaseModel] = create_model(
            f"{method.__name__}_arguments",
            __config__=ConfigDict(extra="forbid", strict=strict),
            **fields,
        )
        schema = self.arguments_model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        schema.setdefault("properties", {})
        schema.setdefault("required", [])
        self.spec = ToolSpec(
            name=method.__name__,
            description=summary,
            parameters=schema,
            write=write,
            output_schema=_output_schema(hints.get("return", inspect.Signature.empty),
                                         _returns_doc(inspect.getdoc(method) or "")),
        )


def _output_schema(ret: Any, description: str | None) -> dict[str, Any] | None:
    """JSON schema of what a tool returns, as a model receives it (serialisation mode).

    None for a tool without a return annotation or one returning None. `title`s are
    dropped (as for the arguments) and local `$ref`s are inlined, so a reader (the tool
    graph) finds nested `properties` in place; a recursive model keeps its `$defs`.
    """
    if ret is inspect.Signature.empty or ret is None or ret is type(None):
        return None
    schema = inline_refs(TypeAdapter(ret).json_schema(mode="serialization"))
    if description:
        schema["description"] = description
    return schema


def _returns_doc(doc: str) -> str | None:
    """The text of a Google-style docstring's `Returns:` section, joined on one line."""
    lines: list[str] = []
    inside = False
    for line in doc.splitlines():
        stripped = line.strip()
        if re.fullmatch(r"(Args|Arguments|Parameters|Returns|Raises|Examples?):", stripped):
            inside = stripped == "Returns:"
            continue
        if inside and stripped:
            lines.append(stripped)
    return " ".join(lines) or None


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {arg: description})."""
    summary_lines: list[str] = []
    args: dict[str, str] = {}
    section = "summary"
    current: str | None = None
    for line in doc.splitlines():
        stripped = line.strip()
        header = re.fullmatch(r"(Args|Arguments|Parameters|Returns|Raises|Examples?):", stripped)
        if header:
            section = header.group(1).lower()
            section = "args" if section in ("args", "arguments", "parameters") else section
            current = None
            if section == "returns":
                summary_lines.append("Returns:")
            continue
        if section == "args":
            m = re.match(r"^(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$", stripped)
            if m and not line.startswith(" " * 8):
                current = m.group(1)
                args[current] = m.group(2)
            elif current and stripped:
                args[current] += " " + stripped
        elif section in ("summary", "returns"):
            summary_lines.append(stripped)
    return "\n".join(summary_lines).strip(), args
