"""The environment contract every executable environment follows: `Environment.call`.

One `Environment` instance is one episode's world. Subclasses declare a Pydantic
`State` and mark public methods with `@tool` (`envs.tools`); from those declarations the
base class derives the tool schemas the model sees *and* the argument validation each
call gets, so the two can never drift apart. `call()` is the only way an agent touches
the world: it never raises, a write tool that fails leaves the state exactly as it was,
and a failed call carries its `ErrorKind` with our one wording for it (`envs.errors`).

`tool`, `ToolSpec`, `ToolError` and `StateError` are re-exported here: they are the
contract an environment module imports in one line.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import json
import types
from collections.abc import Iterable, Mapping
from typing import (
    Annotated,
    Any,
    ClassVar,
    NamedTuple,
    Union,
    get_args,
    get_origin,
)

from pydantic import BaseModel, ValidationError, model_validator
from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python

from envs import errors
from envs.errors import ErrorKind, StateError, ToolError
from envs.tools import TOOL_MARK, BoundTool, ToolSpec, tool

__all__ = [
    "Environment",
    "ErrorKind",
    "SnapshotEnvironment",
    "StateError",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "tool",
]


class ToolResult(BaseModel):
    """Outcome of one `Environment.call`: a JSON-able value, or an error for the model
    with its kind (required on a failure, so no producer can leave a failure unnamed)."""

    ok: bool
    content: Any = None
    error: str | None = None
    kind: ErrorKind | None = None

    @model_validator(mode="after")
    def _kind_iff_failed(self) -> ToolResult:
        if self.ok == (self.kind is not None):
            raise ValueError("a failed ToolResult needs an error kind, a success none")
        return self

    @classmethod
    def failure(cls, kind: ErrorKind, error: str) -> ToolResult:
        return cls(ok=False, error=error, kind=kind)

    def text(self) -> str:
        """The string a model sees as the tool message."""
        if not self.ok:
            return f"Error: {self.error}"
        if isinstance(self.content, str):
            return self.content
        return json.dumps(self.content, ensure_ascii=False)


class Environment:
    """Base class of every environment: a Pydantic state plus `@tool` methods.

    Subclasses set `name` and `State`, write tools as typed methods that read and write
    `self.state`, and raise `ToolError` for business-rule failures. Time and randomness
    must come from the state (a `now` field, a seed), never from the clock: tools are
    deterministic functions of (state, arguments), which is what lets a failed write be
    rolled back by replaying the episode's earlier writes instead of copying the state
    before every write, and a restore to the episode's start put back only the top-level
    fields the writes touched (copy-on-write; see `_checkpoint` and `_Baseline`).

    Adapters whose state is not a Pydantic model (BFCL backends, EnvFactory-format
    modules) keep this `call()` and override only the hooks below: `_lookup`,
    `_tool_names`, `_needs_checkpoint`, `_parse`, `_execute`, `_failure_message`,
    `_checkpoint`, `_rollback`, `_commit`, plus `snapshot`/`restore`/`tools`.
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
    #: True: a snapshot given to `restore()` (or the constructor) is read as the JSON it
    #: is, strictly: an unknown field anywhere, or a value whose JSON type is not the
    #: declared one ("5" for an int), is a `StateError`, so a mistyped scenario fails on
    #: load instead of loading as an empty world or breaking later calls. Ports whose
    #: State must load a benchmark's own data exactly as that benchmark's lax Pydantic
    #: models load it (τ²) set False: then the State's own config decides.
    strict_state: ClassVar[bool] = True
    #: False: the state may be changed through references that do not pass the State's
    #: attributes during a write tool (VitaBench's registries index the database's
    #: objects), so the touched-field tracking of `_Baseline` cannot see every change:
    #: such an environment always takes the whole-state paths.
    copy_on_write: ClassVar[bool] = True
    _tools: ClassVar[dict[str, BoundTool]]

    # Bookkeeping of the rollback scheme (class defaults so that adapters, which do not
    # run `Environment.__init__`, still have them).
    _depth: int = 0  # > 0 while a tool of this instance runs
    _exposed: bool = True  # code outside call() may hold a reference into the state
    _base: _Baseline | None = None  # the state before `_journal` (copy-on-write)
    _journal: list[tuple[BoundTool, dict[str, Any]]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        tools: dict[str, BoundTool] = {}
        for attr, value in inspect.getmembers(cls, inspect.isfunction):
            mark = getattr(value, TOOL_MARK, None)
            if mark is not None:
                tools[attr] = BoundTool(value, mark["write"], cls.strict_arguments)
        cls._tools = tools
        state = cls.__dict__.get("State")
        if isinstance(state, type) and issubclass(state, BaseModel):
            _check_json_exact(cls, state)
        state = getattr(cls, "State", None)
        if (cls.copy_on_write and isinstance(state, type) and issubclass(state, BaseModel)
                and _trackable(state)):
            _install_tracer(state)

    def __init__(self, state: BaseModel | Mapping[str, Any] | None = None) -> None:
        if state is None:
            model = self.default_state()
        elif isinstance(state, BaseModel):
            model = self.State.model_validate(state.model_dump())
        else:
            model = self.load_state(state)
        self._adopt(model)

    @classmethod
    def default_state(cls) -> BaseModel:
        """The world a fresh instance starts in (pool environments return seeded data)."""
        return cls.State()

    # -- the state --------------------------------------------------------------------

    @property
    def state(self) -> Any:
        """The live state. Reading it from outside a tool marks it as shared (see
        `_checkpoint`): edits made through such a reference are never lost."""
        if not self._depth:
            self._exposed = True
        return self._state

    @state.setter
    def state(self, value: Any) -> None:
        self._state = value
        if not self._depth:  # the caller keeps a reference to what it assigned
            self._exposed, self._base, self._journal = True, None, []

    def _adopt(self, model: BaseModel) -> None:
        """Make `model`, which no one else references, the live state."""
        self._state = model
        self._exposed, self._base, self._journal = False, None, []

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
        try:
            return self._call(name, arguments)
        except Exception as e:  # noqa: BLE001 - a hook failed outside its guard
            return ToolResult.failure(ErrorKind.FAILED, errors.failed(str(name), e))

    def _call(self, name: Any, arguments: Any) -> ToolResult:
        tool = self._lookup(name) if isinstance(name, str) else None
        if tool is None:
            return ToolResult.failure(ErrorKind.UNKNOWN_TOOL,
                                      errors.unknown_tool(name, self._tool_names()))
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            return ToolResult.failure(ErrorKind.INVALID_ARGUMENTS, errors.invalid_arguments(
                name, [errors.not_an_object(arguments)]))
        try:
            kwargs = self._parse(tool, arguments)
        except ValidationError as e:
            return ToolResult.failure(ErrorKind.INVALID_ARGUMENTS, errors.invalid_arguments(
                name, errors.validation_problems(e)))
        except ToolError as e:  # an adapter's own check of the arguments (τ²'s binding)
            return ToolResult.failure(ErrorKind.INVALID_ARGUMENTS, str(e))
        checkpoint: Any = None
        write = self._needs_checkpoint(tool)
        if write:
            try:
                checkpoint = self._checkpoint(tool, arguments)
            except Exception as e:  # noqa: BLE001 - nothing ran, nothing changed
                return ToolResult.failure(ErrorKind.FAILED, errors.failed(name, e, ran=False))
        failure: ToolResult | None = None
        self._depth += 1
        try:
            content = to_jsonable_python(self._execute_tracked(tool, kwargs))
        except ToolError as e:
            failure = ToolResult.failure(ErrorKind.REFUSED, str(e))
        except (Exception, PydanticSerializationError) as e:  # noqa: BLE001 - never raise
            failure = ToolResult.failure(ErrorKind.FAILED, self._failure_message(name, e))
        finally:
            self._depth -= 1
        if failure is not None:
            if write:
                self._rollback(checkpoint)
            return failure
        if write:
            self._commit(checkpoint)
        return ToolResult(ok=True, content=content)

    def snapshot(self) -> dict[str, Any]:
        """The whole state as plain JSON; `restore(snapshot())` is the identity."""
        return self._state.model_dump(mode="json")

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        """Replace the state with one produced by `snapshot()`; raises `StateError` (and
        keeps the current state) if `snapshot` is not a valid state.

        Copy-on-write: a snapshot whose JSON is byte for byte the episode's start
        (`_Baseline`) puts back only the fields the writes touched since, instead of
        validating the whole state again (the RL and benchmark loop's reset)."""
        if self._restore_touched(snapshot):
            return
        self._adopt(self.load_state(snapshot))

    def _restore_touched(self, snapshot: Mapping[str, Any]) -> bool:
        base = self._base
        if base is None or not base.tracked or self._exposed or self._depth:
            return False
        try:
            text = to_json(snapshot)
        except PydanticSerializationError:
            return False
        if text != base.text():
            return False
        self._journal = []
        return base.put_back(self._state)

    @classmethod
    def load_state(cls, snapshot: Any) -> BaseModel:
        """`snapshot` validated as a `State` (see `strict_state`); raises `StateError`."""
        try:
            if not cls.strict_state:
                return cls.State.model_validate(snapshot)
            # Fast path (restore is on every episode's reset): pydantic-core's serialiser
            # is ~3x faster than json.dumps on these 25-60 KB states.
            try:
                text: bytes | None = to_json(snapshot, inf_nan_mode="constants")
            except PydanticSerializationError:
                text = None
            # (NaN/Infinity come out as bare constants, which pydantic would read into float
            # fields; any such token, even inside a string, takes the careful path below.)
            if text is not None and b"NaN" not in text and b"Infinity" not in text:
                try:
                    return cls.State.model_validate_json(text, strict=True, extra="forbid")
                except ValidationError as e:
                    if all(err["type"] != "json_invalid" for err in e.errors()):
                        raise
            # Rare: not plain JSON as pydantic reads it. The stdlib decides what is JSON
            # (NaN and objects are not); a lone surrogate ("\ud800") is, though pydantic's
            # parser refuses it (a model may send one, so a state may hold one): such a
            # snapshot is checked as Python data, unknown fields still refused.
            try:
                json.dumps(snapshot, allow_nan=False)
            except (TypeError, ValueError) as e:
                raise StateError(f"Invalid {cls._state_label()}: not JSON ({e}).") from None
            return cls.State.model_validate(snapshot, extra="forbid")
        except ValidationError as e:
            raise StateError(errors.state_error(cls._state_label(), e)) from None

    @classmethod
    def _state_label(cls) -> str:
        return f"state of {cls.name or cls.__name__}"

    # -- hooks: how to find, validate and execute a tool ---------------------------

    def _lookup(self, name: str) -> Any:
        """The tool called `name`, or None (then the call is an unknown-tool error)."""
        return self._tools.get(name)

    def _tool_names(self) -> Iterable[str]:
        """Names listed in the unknown-tool error."""
        return self._tools

    def _needs_checkpoint(self, tool: Any) -> bool:
        """Whether the tool may change the state (then it runs atomically)."""
        return bool(tool.write)

    def _parse(self, tool: Any, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Keyword arguments for `_execute`; raises ValidationError or ToolError."""
        parsed = tool.arguments_model.model_validate(dict(arguments))
        return {field: getattr(parsed, field) for field in type(parsed).model_fields}

    def _execute(self, tool: Any, kwargs: dict[str, Any]) -> Any:
        """Run the tool; raise ToolError (message for the model) or any exception."""
        return getattr(self, tool.method_name)(**kwargs)

    def _failure_message(self, name: str, error: BaseException) -> str:
        """What the model reads when a tool raised something other than ToolError (kind
        `failed`; ports override it with their benchmark's text)."""
        return errors.failed(name, error)

    # -- hooks: atomic writes ------------------------------------------------------------
    #
    # Fast path (the state was only ever touched by this instance's tools since it was
    # restored or created): no copy per write. The first write keeps a `_Baseline` (a
    # JSON dump of the state, private to this instance); while a write tool runs, the
    # State's top-level fields it reads are recorded as touched. Each successful write is
    # journaled (tool and a private copy of its arguments). A failed write puts the
    # touched fields back from the baseline and replays the journal, which is exact
    # because tools are deterministic; `restore()` of the baseline's own snapshot puts
    # the touched fields back and drops the journal.
    #
    # Shared path (someone read or assigned `env.state` from outside a tool, so edits may
    # have been made that the journal does not know about, or the environment cannot be
    # tracked, `copy_on_write`): a dump of the state before every write, as an undo
    # record taken at the moment of the call.

    def _checkpoint(self, tool: Any, arguments: Mapping[str, Any]) -> Any:
        if not self._exposed:
            if self._base is None:
                self._base = _Baseline(self._state)
            try:
                return _JournalEntry(tool, _private_copy(arguments))
            except Exception:  # noqa: BLE001 - arguments that cannot be copied: dump
                pass
        self._base, self._journal = None, []
        self._exposed = True  # the journal is void until the next restore()
        return self._state.model_dump()

    def _execute_tracked(self, tool: Any, kwargs: dict[str, Any]) -> Any:
        """`_execute`, recording the top-level fields a write reads (see `_Baseline`)."""
        base = self._base
        if base is None or not base.tracked or not getattr(tool, "write", False):
            return self._execute(tool, kwargs)
        key = id(self._state)
        _TOUCHED[key] = base.touched
        try:
            return self._execute(tool, kwargs)
        finally:
            _TOUCHED.pop(key, None)

    def _rollback(self, checkpoint: Any) -> None:
        if isinstance(checkpoint, _JournalEntry):
            assert self._base is not None
            if not self._base.put_back(self._state):
                self._state = _revive(self.State, self._base.values)
                self._base.touched.clear()
            self._depth += 1
            try:
                for tool, arguments in self._journal:
                    with contextlib.suppress(Exception):  # cannot happen: deterministic
                        self._execute_tracked(tool, self._parse(tool, copy.deepcopy(arguments)))
            finally:
                self._depth -= 1
        else:
            self._state = _revive(self.State, checkpoint)

    def _commit(self, checkpoint: Any) -> None:
        if isinstance(checkpoint, _JournalEntry):
            self._journal.append((checkpoint.tool, checkpoint.arguments))


class SnapshotEnvironment(Environment):
    """An adapter whose state lives outside a Pydantic `State` (a BFCL backend, an
    EnvFactory-format module): a write's undo record is its full `snapshot()`."""

    def _checkpoint(self, tool: Any, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return self.snapshot()

    def _rollback(self, checkpoint: dict[str, Any]) -> None:
        self.restore(checkpoint)

    def _commit(self, checkpoint: dict[str, Any]) -> None:
        pass


class _JournalEntry(NamedTuple):
    tool: Any
    arguments: dict[str, Any]


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _private_copy(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a call's arguments no caller can change (most are flat: a dict copy)."""
    if all(type(v) in _SCALARS for v in arguments.values()):
        return dict(arguments)
    return copy.deepcopy(dict(arguments))


#: id(state) -> the set its write tool's top-level field reads go to (while it runs)
_TOUCHED: dict[int, set[str]] = {}


class _Baseline:
    """Copy-on-write bookkeeping of one instance: its state at the episode's start, as a
    private JSON dump, and the top-level fields write tools have read since.

    A field no write tool read is unchanged (read tools do not write; the contract tests
    check it), so it is shared with the start as is: putting the start back re-validates
    only the touched fields, and never hands this dump's objects to the state
    (validation builds new containers). Valid only while nothing outside the tools holds
    a reference into the state (`Environment._exposed`)."""

    __slots__ = ("model", "touched", "tracked", "values", "_fields", "_text")

    def __init__(self, state: BaseModel) -> None:
        self.model = type(state)
        #: False where the State's class cannot be tracked (`_trackable`): then nothing
        #: is put back field by field, a rollback rebuilds the whole state from `values`
        self.tracked = self.model.__dict__.get("__getattribute__") is _traced_getattribute
        self.values: dict[str, Any] = state.model_dump(mode="json")
        self.touched: set[str] = set()
        self._text: bytes | None = None
        self._fields: dict[str, bytes] = {}  # per field: `{"name": value}` as JSON

    def text(self) -> bytes:
        """The start's JSON text (what a snapshot must equal to be put back cheaply)."""
        if self._text is None:
            self._text = to_json(self.values)
        return self._text

    def _field_text(self, name: str) -> bytes:
        text = self._fields.get(name)
        if text is None:
            text = self._fields[name] = to_json({name: self.values[name]})
        return text

    def put_back(self, state: BaseModel) -> bool:
        """Give `state`'s touched fields their start values; False (then the caller
        rebuilds the state) where that cannot be done field by field."""
        if not self.tracked:
            return False
        fields = self.model.__pydantic_fields__
        # a write that reached the instance dict directly may have changed any field
        names = fields if "__dict__" in self.touched else self.touched.intersection(fields)
        validator = self.model.__pydantic_validator__
        serializer = self.model.__pydantic_serializer__
        try:
            for name in sorted(names):
                # a field read but left as it was keeps its objects (no reference to
                # them can have left the state: tool results are JSON copies)
                if serializer.to_json(state, include={name}) == self._field_text(name):
                    continue
                validator.validate_assignment(state, name, self.values[name])
        except ValidationError:
            return False
        self.touched.clear()
        return True


def _trackable(state: type[BaseModel]) -> bool:
    """Whether putting single fields back is the same as validating the whole state: no
    model-level validators or serialisers, no frozen or validate-assignment config."""
    deco = state.__pydantic_decorators__
    config = state.model_config
    return not (deco.validators or deco.field_validators or deco.root_validators
                or deco.model_validators or deco.model_serializers or deco.computed_fields
                or config.get("frozen") or config.get("validate_assignment")
                or any(f.frozen for f in state.__pydantic_fields__.values())
                or any(vars(k).get(hook) not in (None, traced)
                       for k in state.__mro__ if k not in (BaseModel, object)
                       for hook, traced in _TRACERS))


def _traced_getattribute(self: BaseModel, name: str) -> Any:
    if _TOUCHED:
        touched = _TOUCHED.get(id(self))
        if touched is not None:
            touched.add(name)
    return object.__getattribute__(self, name)


def _traced_setattr(self: BaseModel, name: str, value: Any) -> None:
    if _TOUCHED:
        touched = _TOUCHED.get(id(self))
        if touched is not None:
            touched.add(name)
    BaseModel.__setattr__(self, name, value)


def _traced_delattr(self: BaseModel, name: str) -> None:
    if _TOUCHED:
        touched = _TOUCHED.get(id(self))
        if touched is not None:
            touched.add(name)
    BaseModel.__delattr__(self, name)


_TRACERS = (("__getattribute__", _traced_getattribute), ("__setattr__", _traced_setattr),
            ("__delattr__", _traced_delattr))


def _install_tracer(state: type[BaseModel]) -> None:
    """Route `state`'s attribute reads, writes and deletions through the tracers (a dict
    test while nothing is tracked; only an instance a write tool runs on is recorded)."""
    for hook, traced in _TRACERS:
        type.__setattr__(state, hook, traced)


def _revive(model: type[BaseModel], dump: dict[str, Any]) -> BaseModel:
    """The model a python-mode dump came from. Validation first; a state that no longer
    validates (a tool stored 2.5 in an `int` field) is rebuilt without validation, so a
    rollback never fails because of what an earlier write left."""
    try:
        return model.model_validate(dump)
    except ValidationError:
        return _construct(model, dump)


def _construct(model: type[BaseModel], data: Any) -> Any:
    if not isinstance(data, Mapping):
        return data
    values = {name: _construct_as(field.annotation, data[name])
              for name, field in model.model_fields.items() if name in data}
    return model.model_construct(**values)


def _construct_as(annotation: Any, value: Any) -> Any:
    origin, args = get_origin(annotation), get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _construct(annotation, value)
    if origin is Annotated:
        return _construct_as(args[0], value)
    if origin in (Union, types.UnionType):
        models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
        if isinstance(value, Mapping) and len(models) == 1:
            return _construct(models[0], value)
        containers = [a for a in args if get_origin(a) in (dict, list)]
        return _construct_as(containers[0], value) if len(containers) == 1 else value
    if origin is dict and isinstance(value, dict) and len(args) == 2:
        return {k: _construct_as(args[1], v) for k, v in value.items()}
    if origin is list and isinstance(value, list) and args:
        return [_construct_as(args[0], v) for v in value]
    return value


def _check_json_exact(env: type, state: type[BaseModel]) -> None:
    """Refuse a State whose snapshot could not round-trip exactly.

    `snapshot()` is JSON; a field typed `Any`, `object`, a bare `dict`/`list` or an
    arbitrary class keeps whatever Python value a tool put there, and JSON loses what
    it cannot say (int dict keys come back as str, tuples as lists, objects not at all).
    Typed fields are brought back to their types by validation, so they are exact.
    """
    bad = _untyped_path(state.__pydantic_core_schema__, ())
    if bad is not None:
        raise TypeError(
            f"{env.__name__}.State ({state.__name__}): field {'.'.join(bad) or '?'} is "
            "untyped (Any, object, bare dict/list or an arbitrary class), so snapshots "
            "would not round-trip exactly. Give it a JSON type (a model, dict[str, X], "
            "pydantic.JsonValue)."
        )


def _untyped_path(schema: Any, path: tuple[str, ...]) -> tuple[str, ...] | None:
    if isinstance(schema, list):
        for item in schema:
            found = _untyped_path(item, path)
            if found is not None:
                return found
        return None
    if not isinstance(schema, dict):
        return None
    if schema.get("type") in ("any", "is-instance"):
        return path
    for key, value in schema.items():
        if key in ("serialization", "metadata", "ref", "json_schema"):
            continue  # json_schema: the JSON side of json-or-python (JsonValue) is any
        if key == "fields" and isinstance(value, dict):
            for fname, fschema in value.items():
                found = _untyped_path(fschema, (*path, fname))
                if found is not None:
                    return found
            continue
        found = _untyped_path(value, path)
        if found is not None:
            return found
    return None
