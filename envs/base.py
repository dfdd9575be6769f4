"""The environment contract every executable environment follows.

One `Environment` instance is one episode's world. Subclasses declare a Pydantic
`State` and mark public methods with `@tool`; from those declarations the base class
derives the tool schemas the model sees *and* the argument validation each call gets,
so the two can never drift apart. `call()` is the only way an agent touches the world:
it never raises, and a write tool that fails leaves the state exactly as it was.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic_core import PydanticSerializationError, to_jsonable_python

__all__ = ["Environment", "ToolError", "ToolResult", "ToolSpec", "tool"]

F = TypeVar("F", bound=Callable[..., Any])

_TOOL_MARK = "__envfactory_tool__"


class ToolSpec(BaseModel):
    """What a model is shown about one tool (and what the tool graph reads)."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    parameters: dict[str, Any] = Field(description="JSON schema of the arguments object")
    write: bool = Field(description="True if the tool may change the state")


class ToolResult(BaseModel):
    """Outcome of one `Environment.call`: a JSON-able value or an error for the model."""

    ok: bool
    content: Any = None
    error: str | None = None

    def text(self) -> str:
        """The string a model sees as the tool message."""
        if not self.ok:
            return f"Error: {self.error}"
        if isinstance(self.content, str):
            return self.content
        return json.dumps(self.content, ensure_ascii=False)


class ToolError(Exception):
    """Raised by a tool for a business-rule failure; its message is shown to the model."""


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
        setattr(f, _TOOL_MARK, {"write": write})
        return f

    return mark(fn) if fn is not None else mark


class _BoundTool:
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
            name=method.__name__, description=summary, parameters=schema, write=write
        )


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


class Environment:
    """Base class of every environment: a Pydantic state plus `@tool` methods.

    Subclasses set `name` and `State`, write tools as typed methods that read and write
    `self.state`, and raise `ToolError` for business-rule failures. Time and randomness
    must come from the state (a `now` field, a seed), never from the clock.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    #: one of the seven domains of the pool (commerce, finance, travel, office,
    #: communication, health, developer); empty for benchmark ports.
    domain: ClassVar[str] = ""
    State: ClassVar[type[BaseModel]]
    #: True: arguments must already have the declared types ("2" is not an int). Ports of
    #: benchmarks that pass arguments to tools uncoerced set it, so a wrongly typed call
    #: fails instead of silently succeeding where the benchmark's own code would not.
    strict_arguments: ClassVar[bool] = False
    _tools: ClassVar[dict[str, _BoundTool]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        tools: dict[str, _BoundTool] = {}
        for attr, value in inspect.getmembers(cls, inspect.isfunction):
            mark = getattr(value, _TOOL_MARK, None)
            if mark is not None:
                tools[attr] = _BoundTool(value, mark["write"], cls.strict_arguments)
        cls._tools = tools

    def __init__(self, state: BaseModel | Mapping[str, Any] | None = None) -> None:
        if state is None:
            self.state = self.default_state()
        elif isinstance(state, BaseModel):
            self.state = self.State.model_validate(state.model_dump())
        else:
            self.state = self.State.model_validate(state)

    @classmethod
    def default_state(cls) -> BaseModel:
        """The world a fresh instance starts in (pool environments return seeded data)."""
        return cls.State()

    # -- the contract -------------------------------------------------------------

    @classmethod
    def tool_specs(cls) -> list[ToolSpec]:
        """Schemas of every tool, in name order (no instance needed: metadata only)."""
        return [cls._tools[n].spec for n in sorted(cls._tools)]

    def tools(self) -> list[ToolSpec]:
        """Schemas of the tools this instance offers."""
        return self.tool_specs()

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Validate and run one tool call. Never raises; a failed write changes nothing."""
        bound = self._tools.get(name) if isinstance(name, str) else None
        if bound is None:
            available = ", ".join(sorted(self._tools))
            return ToolResult(
                ok=False, error=f"Unknown tool {name!r}. Available tools: {available}."
            )
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            return ToolResult(
                ok=False,
                error=f"Arguments for tool {name!r} must be an object, "
                f"got {type(arguments).__name__}.",
            )
        try:
            parsed = bound.arguments_model.model_validate(dict(arguments))
        except ValidationError as e:
            return ToolResult(ok=False, error=_format_validation_error(name, e))
        kwargs = {field: getattr(parsed, field) for field in type(parsed).model_fields}
        # A plain dump (pydantic-core, ~50x faster than a deep copy) is the undo record;
        # it is only turned back into a model when a write actually fails.
        backup = self.state.model_dump() if bound.write else None
        try:
            value = getattr(self, bound.method_name)(**kwargs)
            content = to_jsonable_python(value)
        except ToolError as e:
            self._rollback(backup)
            return ToolResult(ok=False, error=str(e))
        except (Exception, PydanticSerializationError) as e:  # noqa: BLE001 - never raise
            self._rollback(backup)
            return ToolResult(
                ok=False, error=f"Tool {name!r} failed: {type(e).__name__}: {e}"
            )
        return ToolResult(ok=True, content=content)

    def snapshot(self) -> dict[str, Any]:
        """The whole state as plain JSON; `restore(snapshot())` is the identity."""
        return self.state.model_dump(mode="json")

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        """Replace the state with one produced by `snapshot()`."""
        self.state = self.State.model_validate(snapshot)

    # -- helpers ------------------------------------------------------------------

    def _rollback(self, backup: dict[str, Any] | None) -> None:
        if backup is not None:
            self.state = self.State.model_validate(backup)


def _format_validation_error(tool_name: str, error: ValidationError) -> str:
    problems = []
    for err in error.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        if err["type"] == "extra_forbidden":
            problems.append(f"unexpected argument {where!r}")
        elif err["type"] == "missing":
            problems.append(f"missing required argument {where!r}")
        else:
            problems.append(f"argument {where!r}: {err['msg']}")
    return f"Invalid arguments for tool {tool_name!r}: " + "; ".join(problems) + "."
