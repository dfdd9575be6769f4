"""Import environments written in EnvFactory's single-file tool-server format.

An EnvFactory tool server is one Python file: Pydantic scenario models, an API class
with `load_scenario(scenario)` / `save_scenario()`, a `FastMCP` object (`mcp`, from
`mcp.server.fastmcp`) whose `@mcp.tool()` wrappers call a **module-global** `api`
instance. Used as is, every client of one process shares that global. Here each
`EnvFactoryFormatEnvironment` executes the file as its own module object, so every
instance has its own `api` — isolation without a process per episode.

Schemas come from the FastMCP wrappers (what an MCP client would see); arguments are
validated by the wrappers' own Pydantic argument models; state is the API's
`save_scenario()`, set with `load_scenario()`; a failed call is rolled back by putting the
API object's attributes back (through `Environment.call`, whose hooks this adapter fills
in).
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import inspect
import itertools
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python

from envs.base import SnapshotEnvironment, ToolError, ToolSpec

__all__ = ["EnvFactoryFormatEnvironment", "FormatError", "load_directory"]

#: Tool-name prefixes treated as reads: the format declares no read/write flag.
READ_PREFIXES = ("get", "list", "search", "find", "check", "view", "read", "count",
                 "lookup", "query", "fetch", "describe", "show", "validate", "calculate")
_SCENARIO_METHODS = ("load_scenario", "save_scenario")
#: scenarios remembered per instance as loaded before (an episode has one start)
_KNOWN_SCENARIOS = 8
_counter = itertools.count()


class FormatError(ValueError):
    """The file does not follow the EnvFactory single-file format; says what is missing."""


def _load_module(path: Path) -> ModuleType:
    stem = re.sub(r"\W", "_", path.stem)
    name = f"_envfactory_import_{stem}_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise FormatError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise FormatError(f"{path}: importing it failed: {type(e).__name__}: {e}") from e
    return module


def _find(module: ModuleType, path: Path) -> tuple[Any, Any]:
    """The module's FastMCP server and its API instance (the one with load/save)."""
    from mcp.server.fastmcp import FastMCP

    servers = [v for v in vars(module).values() if isinstance(v, FastMCP)]
    if len(servers) != 1:
        raise FormatError(f"{path}: expected exactly one FastMCP object, found {len(servers)}")
    apis = [v for v in vars(module).values()
            if not inspect.isclass(v) and all(callable(getattr(v, m, None))
                                              for m in _SCENARIO_METHODS)]
    if len(apis) != 1:
        raise FormatError(
            f"{path}: expected one module-level API instance with load_scenario() and "
            f"save_scenario(), found {len(apis)}")
    return servers[0], apis[0]


class EnvFactoryFormatEnvironment(SnapshotEnvironment):
    """One isolated instance of an EnvFactory-format tool server file."""

    def __init__(self, path: Path, scenario: Mapping[str, Any] | None = None, *,
                 name: str | None = None) -> None:
        self.path = Path(path)
        #: the catalogue's name for it (`release/Calendar`) when that is not the server's own
        self._registry_name = name
        self.module = _load_module(self.path)
        server, self.api = _find(self.module, self.path)
        self.server_name = str(server.name)
        self._mcp_tools = {t.name: t for t in server._tool_manager.list_tools()
                           if t.name not in _SCENARIO_METHODS}
        #: JSON of the scenarios this instance has loaded without error (see `restore`)
        self._loaded: set[bytes] = set()
        if scenario is not None:
            self.restore(scenario)

    @property
    def name(self) -> str:  # type: ignore[override]  # per file, not per class
        return self._registry_name or self.server_name

    def tools(self) -> list[ToolSpec]:
        specs = []
        for t in self._mcp_tools.values():
            params = {k: v for k, v in t.parameters.items() if k != "title"}
            params["properties"] = {k: {f: x for f, x in v.items() if f != "title"}
                                    for k, v in params.get("properties", {}).items()}
            params.setdefault("required", [])
            specs.append(ToolSpec(name=t.name, description=inspect.cleandoc(t.description),
                                  parameters=params, write=not t.name.startswith(READ_PREFIXES)))
        return sorted(specs, key=lambda s: s.name)

    def mcp_listing(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(name, description, input schema) per tool exactly as an MCP client lists them:
        the raw docstring, the argument model's schema with its titles, in registration
        order. `tools()` tidies these for models; the EnvFactory release's QueryGen
        prompts show this raw form (its `MCPManager` lists `inputSchema`)."""
        return [(t.name, t.description, t.parameters) for t in self._mcp_tools.values()]

    # -- Environment hooks: the contract's call() over the FastMCP wrappers -----------

    def _lookup(self, name: str) -> Any:
        return self._mcp_tools.get(name)

    def _tool_names(self) -> Iterable[str]:
        return self._mcp_tools

    def _needs_checkpoint(self, tool: Any) -> bool:
        return True  # the format declares no read/write: every call runs atomically

    def _parse(self, tool: Any, arguments: Mapping[str, Any]) -> dict[str, Any]:
        if tool.is_async:
            raise ToolError(f"Tool {tool.name!r} is async; only sync tools are supported "
                            "in-process (serve it over MCP instead)")
        parsed = tool.fn_metadata.arg_model.model_validate(dict(arguments))
        return dict(parsed.model_dump_one_level())

    def _execute(self, tool: Any, kwargs: dict[str, Any]) -> Any:
        return tool.fn(**kwargs)

    def _failure_message(self, name: str, error: BaseException) -> str:
        return str(error) or type(error).__name__  # the wrapper's own reason, as MCP shows

    # A failed write is undone by putting the API object's attributes back, not through
    # `load_scenario`: many release servers' default state does not pass their own
    # scenario model (an empty `current_time` against its pattern), so a rollback that
    # validated would fail exactly where it is needed. An attribute that cannot be deep-
    # copied (a live HTTP client) makes the undo record the `save_scenario()` snapshot.

    def _checkpoint(self, tool: Any, arguments: Mapping[str, Any]) -> Any:
        self.snapshot()  # a server that cannot save its state is not written to at all
        return self._attributes()

    def _rollback(self, checkpoint: Any) -> None:
        self._put_back(checkpoint)

    def _attributes(self) -> tuple[str, Any]:
        try:
            return "attributes", copy.deepcopy(vars(self.api))
        except Exception:  # noqa: BLE001 - any attribute may refuse to be copied
            return "snapshot", self.snapshot()

    def _put_back(self, saved: tuple[str, Any]) -> None:
        kind, value = saved
        if kind in ("attributes", "shallow"):
            vars(self.api).clear()
            vars(self.api).update(value)
        else:
            self.api.load_scenario(dict(value))

    def snapshot(self) -> dict[str, Any]:
        data = to_jsonable_python(self.api.save_scenario())
        if not isinstance(data, dict):
            raise FormatError(f"{self.path}: save_scenario() returned {type(data).__name__}")
        return data

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        """`load_scenario(snapshot)`; if the server refuses it, the state stays as it was
        (a `load_scenario` may assign some attributes before its validation fails).

        The undo record of a restore is a deep copy of the API's attributes, unless this
        instance has already loaded the very same JSON (an episode's reset to its start):
        such a load succeeded before, so it is undone, should it fail after all, by
        putting the attributes' bindings back (a shallow copy)."""
        try:
            key: bytes | None = to_json(snapshot)
        except PydanticSerializationError:
            key = None
        known = key is not None and key in self._loaded
        before = ("shallow", dict(vars(self.api))) if known else self._attributes()
        try:
            self.api.load_scenario(dict(snapshot))
        except Exception:
            self._put_back(before)
            raise
        if key is not None and not known:
            if len(self._loaded) >= _KNOWN_SCENARIOS:
                self._loaded.clear()
            self._loaded.add(key)


def load_directory(directory: Path) -> dict[str, Callable[[], EnvFactoryFormatEnvironment]]:
    """Factories (one isolated instance per call) for every `*.py` server in a directory."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FormatError(f"{directory}: not a directory")
    factories: dict[str, Callable[[], EnvFactoryFormatEnvironment]] = {}
    for path in sorted(directory.glob("*.py")):
        probe = EnvFactoryFormatEnvironment(path)  # validates the format now, not later
        factories[probe.name] = functools.partial(EnvFactoryFormatEnvironment, path)
    return factories
