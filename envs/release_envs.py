"""The EnvFactory release's 86 tool servers as environments `release/<Name>`.

A release root (the folder holding `envs/{tools,intermediate,metadata}`: the
`ENVFACTORY_RELEASE_DIR` override, else the cache filled from the pinned commit) has one
single-file server per environment (`envs/tools/<Name>.py`), its description
(`envs/metadata/<Name>_metadata.json`) and, for most, an EnvGen checkpoint
(`envs/intermediate/<Name>_checkpoint.json`) whose `scenarios` are the environment's named
starting states and whose `validation_results` are the release's own LLM verdicts.
`<Name>` is the file stem, which is also the key the release's `configs/mcp_server.json`
gives the server and so the prefix of its datasets' "Server-tool" names (the FastMCP
object's own name differs for 7 servers, e.g. `Calendar` serves as `CalendarAPI`).

Listing imports nothing: the tool count is read from the file's syntax tree (its
`@mcp.tool()` functions other than `load_scenario`/`save_scenario`) and the scenarios from
the checkpoint JSON, read on first use and cached per process by file mtime. A problem is
its own entry's: a file that does not parse or lacks the API class is listed with the
reason (`ReleaseEnv.problem`), a malformed scenario is left out of `scenarios()` and named
by `scenario_problems()`, a server that fails to import fails `create_release` alone.

A starting state `release/<Name>@<scenario_id>` is loaded through the server's own
`load_scenario`, so its Pydantic validation applies; scenarios whose `expected_behavior`
is `validation_error` are checks of the environment (its validation must refuse them),
never starting states. Which environments count as verified is what `envfactory envgen
verify` recorded (`verified_names`), not the release's own LLM verdict (`llm_verdict`),
which is reported beside it.
"""

from __future__ import annotations

import ast
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envs.base import Environment
from envs.envfactory_format import READ_PREFIXES, EnvFactoryFormatEnvironment
from envs.names import RELEASE_PREFIX
from envs.release_registry import ENVFACTORY, RELEASE_VERIFY

__all__ = ["PREFIX", "RELEASE_SOURCE", "ReleaseEnv", "ReleaseEnvError", "ReleaseScenario",
           "create_release", "get_release", "list_release", "release_root", "release_set",
           "split_spec", "verified_names", "verify_record"]

PREFIX = RELEASE_PREFIX
#: what the registry and logs name as these environments' source
RELEASE_SOURCE = f"EnvFactory release {ENVFACTORY.ref}"
_TOOLS, _CHECKPOINTS, _METADATA = "envs/tools", "envs/intermediate", "envs/metadata"
_SCENARIO_METHODS = frozenset({"load_scenario", "save_scenario"})


class ReleaseEnvError(ValueError):
    """A release environment that cannot be listed, read or started; the message names
    the file and the reason."""


# --- checkpoints ----------------------------------------------------------------------

class _ScenarioEntry(BaseModel):
    """One entry of a checkpoint's `scenarios`, as EnvGen writes it (notes §16)."""

    model_config = ConfigDict(extra="forbid")

    scenario_id: str = Field(min_length=1)
    description: str = ""
    complexity_level: str | None = None
    expected_behavior: Literal["pass", "validation_error"]
    scenario_data: dict[str, Any]


@dataclass(frozen=True)
class ReleaseScenario:
    """One named starting state (or, with `expected_behavior` `validation_error`, one
    state the environment's validation must refuse)."""

    scenario_id: str
    description: str
    complexity_level: str | None
    expected_behavior: str  # "pass" | "validation_error"
    data: dict[str, Any]  # `scenario_data`, what load_scenario takes

    @property
    def startable(self) -> bool:
        return self.expected_behavior == "pass"


@dataclass(frozen=True)
class _Checkpoint:
    scenarios: tuple[ReleaseScenario, ...]
    problems: tuple[str, ...]
    verdict: bool | None


_checkpoints: dict[Path, tuple[tuple[int, int], _Checkpoint]] = {}


def _read_checkpoint(path: Path) -> _Checkpoint:
    """The checkpoint at `path`, parsed once per process and again when it changes."""
    try:
        stat = path.stat()
    except OSError as e:
        raise ReleaseEnvError(f"{path}: cannot read it: {e.strerror or e}") from None
    key = (stat.st_mtime_ns, stat.st_size)
    cached = _checkpoints.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ReleaseEnvError(f"{path}: cannot read it: {e.strerror or e}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ReleaseEnvError(f"{path}: not JSON: {e}") from None
    if not isinstance(document, dict):
        raise ReleaseEnvError(f"{path}: expected a JSON object, got {type(document).__name__}")
    entries = document.get("scenarios", [])
    if not isinstance(entries, list):
        raise ReleaseEnvError(f"{path}: `scenarios` is {type(entries).__name__}, not a list")
    scenarios: list[ReleaseScenario] = []
    problems: list[str] = []
    seen: set[str] = set()
    for index, raw in enumerate(entries):
        try:
            entry = _ScenarioEntry.model_validate(raw)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "entry"
            label = raw.get("scenario_id") if isinstance(raw, dict) else None
            problems.append(f"{path}: scenarios[{index}]"
                            f"{f' ({label})' if isinstance(label, str) else ''}: "
                            f"{where}: {first['msg']}")
            continue
        if entry.scenario_id in seen:
            problems.append(f"{path}: scenarios[{index}]: scenario_id "
                            f"{entry.scenario_id!r} repeats an earlier one")
            continue
        seen.add(entry.scenario_id)
        scenarios.append(ReleaseScenario(
            scenario_id=entry.scenario_id, description=entry.description,
            complexity_level=entry.complexity_level,
            expected_behavior=entry.expected_behavior, data=entry.scenario_data))
    checkpoint = _Checkpoint(tuple(scenarios), tuple(problems), _last_verdict(document))
    _checkpoints[path] = (key, checkpoint)
    return checkpoint


def _last_verdict(document: dict[str, Any]) -> bool | None:
    """The last validation round's `all_passed` (rounds are written in order: `initial`,
    then each revision), None when the release recorded none."""
    rounds = document.get("validation_results")
    if not isinstance(rounds, dict) or not rounds:
        return None
    last = list(rounds.values())[-1]
    verdict = last.get("all_passed") if isinstance(last, dict) else None
    return verdict if isinstance(verdict, bool) else None


# --- servers, read without importing ---------------------------------------------------

def _is_tool_decorator(node: ast.expr) -> bool:
    """`@mcp.tool()` / `@mcp.tool(...)` / `@mcp.tool` (any FastMCP object's name)."""
    target = node.func if isinstance(node, ast.Call) else node
    return isinstance(target, ast.Attribute) and target.attr == "tool"


_servers: dict[Path, tuple[tuple[int, int], tuple[tuple[str, ...], str | None]]] = {}


def _inspect_server(path: Path) -> tuple[tuple[str, ...], str | None]:
    """(tool names, problem) from the file's syntax tree, parsed once per process and
    again when the file changes."""
    try:
        stat = path.stat()
    except OSError as e:
        return (), f"{path}: cannot read it: {e.strerror or e}"
    key = (stat.st_mtime_ns, stat.st_size)
    cached = _servers.get(path)
    if cached is None or cached[0] != key:
        cached = (key, _parse_server(path))
        _servers[path] = cached
    return cached[1]


def _tool_name(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The MCP name of a module-level function decorated `@mcp.tool(...)` (its own name
    unless the decorator gives `name="..."`), None when it is no tool."""
    for decorator in function.decorator_list:
        if _is_tool_decorator(decorator):
            given = next((k.value.value for k in getattr(decorator, "keywords", [])
                          if k.arg == "name" and isinstance(k.value, ast.Constant)
                          and isinstance(k.value.value, str)), None)
            return given or function.name
    return None


def _parse_server(path: Path) -> tuple[tuple[str, ...], str | None]:
    """The `@mcp.tool()` names other than the scenario tools, and whether a class defines
    load/save_scenario (what the format requires; importing is not needed)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except OSError as e:
        return (), f"{path}: cannot read it: {e.strerror or e}"
    except (SyntaxError, ValueError) as e:
        return (), f"{path}: does not parse: {type(e).__name__}: {e}"
    names = [_tool_name(n) for n in tree.body
             if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    tools = tuple(sorted(n for n in names if n is not None and n not in _SCENARIO_METHODS))
    api = [n for n in tree.body if isinstance(n, ast.ClassDef)
           and _SCENARIO_METHODS <= {f.name for f in n.body if isinstance(f, ast.FunctionDef)}]
    if not api:
        return tools, f"{path}: no class defines both load_scenario() and save_scenario()"
    return tools, None


@dataclass(frozen=True)
class ReleaseEnv:
    """One server of the release, as listed (nothing imported)."""

    name: str  # the server's name as the release names it, e.g. "Airline"
    server: Path
    metadata: Path | None
    checkpoint: Path | None
    tool_count: int  # counted WITHOUT importing the server (AST)
    #: why the entry cannot be used (read from the file, without importing it)
    problem: str | None = None
    #: the tools' names, read the same way
    tools: tuple[str, ...] = ()

    @property
    def write_count(self) -> int:
        """Tools taken for writes, by the importer's own rule (`READ_PREFIXES`)."""
        return sum(not t.startswith(READ_PREFIXES) for t in self.tools)

    @property
    def qualified(self) -> str:
        """The registry name, `release/<Name>`."""
        return PREFIX + self.name

    def scenarios(self) -> list[ReleaseScenario]:
        """Every well-formed scenario of the checkpoint, `validation_error` ones included
        (they are the environment's checks); none without a checkpoint. A checkpoint
        that cannot be read at all raises `ReleaseEnvError`."""
        return [] if self.checkpoint is None else list(_read_checkpoint(self.checkpoint).scenarios)

    def scenario_problems(self) -> list[str]:
        """One line per malformed scenario left out of `scenarios()`."""
        return [] if self.checkpoint is None else list(_read_checkpoint(self.checkpoint).problems)

    def scenario(self, scenario_id: str) -> ReleaseScenario:
        for scenario in self.scenarios():
            if scenario.scenario_id == scenario_id:
                return scenario
        known = ", ".join(s.scenario_id for s in self.scenarios()) or "none"
        where = self.checkpoint or f"{self.server} (no checkpoint)"
        raise ReleaseEnvError(f"{where}: no scenario {scenario_id!r} (known: {known})")

    def llm_verdict(self) -> bool | None:
        """The release's last validation round's `all_passed`, None if none."""
        return None if self.checkpoint is None else _read_checkpoint(self.checkpoint).verdict

    def description(self) -> str:
        """The metadata's `description` ("" without one or when it cannot be read)."""
        if self.metadata is None:
            return ""
        try:
            value = json.loads(self.metadata.read_text(encoding="utf-8")).get("description", "")
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
            return ""
        return " ".join(value.split()) if isinstance(value, str) else ""


# --- the root --------------------------------------------------------------------------

def release_root(*, fetch: bool = False) -> Path | None:
    """The root holding `envs/{tools,intermediate,metadata}`: the `ENVFACTORY_RELEASE_DIR`
    override (which must hold `envs/`, else `FileNotFoundError` naming it), else the cache;
    with `fetch`, a cache without the folders is filled from the pinned commit first.
    None when there is no release here (and `fetch` was not asked)."""
    if ENVFACTORY.override and os.environ.get(ENVFACTORY.override):
        return ENVFACTORY.data_root()
    if not ENVFACTORY.folders_present() and fetch:
        ENVFACTORY.fetch_folders()
    return ENVFACTORY.cache_path if ENVFACTORY.folders_present() else None


def _root(root: Path | None) -> Path | None:
    return Path(root) if root is not None else release_root()


def _entry(root: Path, server: Path) -> ReleaseEnv:
    name = server.stem
    metadata = root / _METADATA / f"{name}_metadata.json"
    checkpoint = root / _CHECKPOINTS / f"{name}_checkpoint.json"
    tools, problem = _inspect_server(server)
    return ReleaseEnv(name=name, server=server,
                      metadata=metadata if metadata.is_file() else None,
                      checkpoint=checkpoint if checkpoint.is_file() else None,
                      tool_count=len(tools), problem=problem, tools=tools)


def list_release(root: Path | None = None) -> list[ReleaseEnv]:
    """Every server of the release root (default `release_root()`), by name; empty when
    there is no release here. Imports nothing."""
    base = _root(root)
    if base is None or not (base / _TOOLS).is_dir():
        return []
    return [_entry(base, p) for p in sorted((base / _TOOLS).glob("*.py"))]


def split_spec(spec: str) -> tuple[str, str | None]:
    """`release/Airline@scenario_001` (or `Airline@...`) -> ("Airline", "scenario_001")."""
    name, _, scenario = spec.removeprefix(PREFIX).partition("@")
    return name, scenario or None


def get_release(name: str, root: Path | None = None) -> ReleaseEnv:
    """The server `Airline` (or `release/Airline`; a `@scenario` suffix is ignored). The
    first one asked for without a release here fetches the release's folders."""
    stem = split_spec(name)[0]
    try:
        base = Path(root) if root is not None else release_root(fetch=True)
    except FileNotFoundError as e:  # offline, no override: one line saying what to do
        raise ReleaseEnvError(
            f"no EnvFactory release here and it could not be fetched ({e})") from None
    if base is None:
        raise ReleaseEnvError(
            f"no EnvFactory release here: set {ENVFACTORY.override} to "
            f"{ENVFACTORY.override_hint}, or run `envfactory data fetch envfactory-release`")
    server = base / _TOOLS / f"{stem}.py"
    if not stem or "/" in stem or not server.is_file():
        raise ReleaseEnvError(f"{base / _TOOLS}: no server {stem}.py")
    return _entry(base, server)


def create_release(spec: str, root: Path | None = None) -> Environment:
    """A fresh, isolated instance of `release/<Name>` in the server's default state, or
    of `release/<Name>@<scenario_id>` with that scenario loaded through the server's own
    `load_scenario`. A `validation_error` scenario is refused; so is a scenario the
    server's validation rejects, naming the checkpoint and the reason."""
    name, scenario_id = split_spec(spec)
    entry = get_release(name, root)
    if entry.problem:
        raise ReleaseEnvError(entry.problem)
    scenario = entry.scenario(scenario_id) if scenario_id else None
    if scenario is not None and not scenario.startable:
        raise ReleaseEnvError(
            f"{entry.checkpoint}: scenario {scenario.scenario_id!r} expects a validation "
            "error (it checks that the environment refuses it); it is not a starting state")
    try:
        env = EnvFactoryFormatEnvironment(entry.server, name=entry.qualified)
    except ValueError as e:  # FormatError: names the file and the import error
        raise ReleaseEnvError(str(e)) from None
    if scenario is not None:
        try:
            env.restore(scenario.data)
        except Exception as e:  # noqa: BLE001 - the server's own validation, any error type
            raise ReleaseEnvError(
                f"{entry.checkpoint}: scenario {scenario.scenario_id!r} is refused by "
                f"{entry.server.name}'s load_scenario: {_reason(e)}") from None
    return env


def _reason(error: Exception) -> str:
    """One line: a Pydantic error's fields and messages, else the error's own text."""
    if isinstance(error, ValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'scenario'}: {e['msg']}"
                         for e in error.errors())
    return f"{type(error).__name__}: {' '.join(str(error).split())}"


# --- what `envgen verify` recorded -----------------------------------------------------

class _Criteria(BaseModel):
    interface: bool
    executability: bool
    behaviour: bool
    state: bool


class _Verified(BaseModel):
    verdict: Literal["passed", "failed"]
    criteria: _Criteria | None = None
    report: str | None = None


class _Summary(BaseModel):
    environments: dict[str, _Verified]


def verify_record(root: Path | None = None) -> dict[str, str] | None:
    """`release/<Name>` -> its recorded `envgen verify` verdict (`passed` | `failed`); None
    when nothing is recorded. The record is `<root>/summary.json` (default
    `RELEASE_VERIFY.path()`); one that cannot be read is a `ReleaseEnvError` naming it."""
    path = (Path(root) if root is not None else RELEASE_VERIFY.path()) / "summary.json"
    if not path.is_file():
        return None
    try:
        summary = _Summary.model_validate_json(path.read_bytes())
    except OSError as e:
        raise ReleaseEnvError(f"{path}: cannot read it: {e.strerror or e}") from None
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "document"
        raise ReleaseEnvError(f"{path}: {where}: {first['msg']}") from None
    return {name: record.verdict for name, record in summary.environments.items()
            if name.startswith(PREFIX)}


def verified_names(root: Path | None = None) -> set[str] | None:
    """Names (`release/Airline`) whose recorded `envgen verify` verdict is `passed`; None
    when nothing is recorded (`verify_record`)."""
    record = verify_record(root)
    return None if record is None else {n for n, v in record.items() if v == "passed"}


def release_set(*, verified_only: bool = True) -> list[str]:
    """What `--envs release` means: every listable `release/<Name>` (without a problem),
    and with `verified_only` (the default) only those `envgen verify` passed, when a
    verify record exists (without one, all). The release is fetched if it is not here."""
    try:
        root = release_root(fetch=True)  # asking for the set is a first use
    except FileNotFoundError as e:
        raise ReleaseEnvError(f"no EnvFactory release here and it could not be fetched ({e})"
                              ) from None
    names = [e.qualified for e in list_release(root) if e.problem is None]
    verified = verified_names() if verified_only else None
    return names if verified is None else [n for n in names if n in verified]
