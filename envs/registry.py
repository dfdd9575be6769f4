"""The catalogue of environments by name: what `envfactory env list/show` prints.

Entries are factories, not instances, so listing never builds a world; each call to
`create(name)` returns a fresh, isolated instance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.base import Environment, ToolSpec
from envs.bfcl import package
from envs.bfcl.environment import BfclEnvironment
from envs.names import RELEASE_PREFIX

__all__ = ["BENCHMARK_PREFIXES", "EnvEntry", "all_entries", "benchmark_of", "create", "get"]

#: name prefix -> the benchmark whose own environments these are. They are registered so
#: that `env serve`/`env show` and the benchmarks' episodes can use them, but they are
#: never training data: synthesizing or training on a benchmark's environments makes its
#: scores meaningless (QueryGen excludes them, `train export` refuses them).
BENCHMARK_PREFIXES = {"bfcl/": "BFCL v3", "tau2/": "τ²-bench", "vitabench/": "VitaBench",
                      "mcp_atlas/": "MCP-Atlas"}


def benchmark_of(name: str) -> str | None:
    """The benchmark an environment (or qualified tool) name belongs to, or None."""
    return next((bench for prefix, bench in BENCHMARK_PREFIXES.items()
                 if name.startswith(prefix)), None)


@dataclass(frozen=True)
class EnvEntry:
    name: str
    source: str  # "bfcl-eval <version>", "pool", ...
    description: str
    factory: Callable[[], Environment]
    specs: Callable[[], list[ToolSpec]]


def _bfcl_entries() -> list[EnvEntry]:
    try:
        classes = package.backend_classes()
        version = package.bfcl_version()
    except package.BfclNotInstalled:
        return []
    return [
        EnvEntry(
            name=f"bfcl/{c}",
            source=f"bfcl-eval {version}",
            description=f"BFCL multi-turn backend {c} (official executor)",
            factory=lambda c=c: BfclEnvironment(c),  # type: ignore[misc]
            specs=lambda c=c: BfclEnvironment.specs_for(c),  # type: ignore[misc]
        )
        for c in classes
    ]


def _pool_entries() -> list[EnvEntry]:
    from envs.pool import pool_classes

    return [
        EnvEntry(
            name=name,
            source=f"pool ({cls.domain})",
            description=cls.description,
            factory=cls,
            specs=cls.tool_specs,
        )
        for name, cls in pool_classes().items()
    ]


def _tau2_entries() -> list[EnvEntry]:
    """τ²'s toolkits, each alone on the release database (`tau2/telecom` without the
    phone it is synced with in an episode: that coupling lives in `Tau2World`)."""
    from envs.tau2.airline import Airline
    from envs.tau2.retail import Retail
    from envs.tau2.telecom import TelecomAgent, TelecomUser

    return [
        EnvEntry(name=cls.name, source="tau2 (release data)",
                 description=cls.description or f"τ² {cls.name.removeprefix('tau2/')} "
                 f"toolkit ({cls.requestor})", factory=cls, specs=cls.tool_specs)
        for cls in (Airline, Retail, TelecomAgent, TelecomUser)
    ]


def _generated_entries() -> list[EnvEntry]:
    """EnvGen's registered environments (`envs.generated`), as `generated/<name>`. Each is
    loaded on first use, so a broken file fails its own entry (its specs and factory raise
    `GeneratedEnvError`), never the listing."""
    from envs.generated import PREFIX, list_generated, load_generated

    def lazy(path: Path, attribute: str) -> Callable[[], Any]:
        return lambda: getattr(load_generated(path), attribute)()

    return [
        EnvEntry(name=PREFIX + name, source=f"generated ({info.get('kind', 'unregistered')})",
                 description=str(info.get("description", "")),
                 factory=lazy(path, "factory"), specs=lazy(path, "specs"))
        for name, path, info in list_generated()
    ]


def _release_entry(entry: Any, scenario: str | None = None) -> EnvEntry:
    """`release/<Name>` (or `release/<Name>@<scenario>`) of an `envs.release_envs.ReleaseEnv`.
    Its factory imports the server (each call a fresh module, so a fresh world); its specs
    come from one instance made on first use and kept (the schemas never change)."""
    from envs.release_envs import RELEASE_SOURCE, create_release

    spec = entry.qualified + (f"@{scenario}" if scenario else "")
    specs: list[list[ToolSpec]] = []

    def tool_specs() -> list[ToolSpec]:
        if not specs:
            specs.append(create_release(entry.qualified, entry.server.parents[2]).tools())
        return list(specs[0])

    return EnvEntry(name=spec, source=RELEASE_SOURCE, description=entry.description(),
                    factory=lambda: create_release(spec, entry.server.parents[2]),
                    specs=tool_specs)


def _release_entries() -> list[EnvEntry]:
    """The EnvFactory release's servers (`envs.release_envs`), when a release root is
    here; listing imports none of them."""
    from envs.release_envs import list_release

    return [_release_entry(e) for e in list_release()]


def _own_entries() -> list[EnvEntry]:
    """Everything but the release's (which `get` finds by name alone)."""
    return _pool_entries() + _tau2_entries() + _bfcl_entries() + _generated_entries()


def all_entries() -> list[EnvEntry]:
    return sorted(_own_entries() + _release_entries(), key=lambda e: e.name)


def _get_release(name: str) -> EnvEntry:
    """`release/<Name>[@<scenario>]`, found without listing anything else. The scenario
    is checked here (it exists, it is a starting state), so a bad name fails now."""
    from envs.release_envs import ReleaseEnvError, get_release, split_spec

    stem, scenario = split_spec(name)
    try:
        entry = get_release(stem)
        if entry.problem:
            raise ReleaseEnvError(entry.problem)
        if scenario is not None and not entry.scenario(scenario).startable:
            raise ReleaseEnvError(
                f"{entry.checkpoint}: scenario {scenario!r} expects a validation error; "
                "it is not a starting state")
    except ReleaseEnvError as e:
        raise KeyError(f"environment {name!r} cannot be loaded: {e}") from e
    return _release_entry(entry, scenario)


def _import_entry(spec: str) -> EnvEntry:
    """`package.module:ClassName` -> an entry for a user's own Environment subclass."""
    import importlib
    import os
    import sys

    if os.getcwd() not in sys.path:  # like `uvicorn module:app`: the user's own modules
        sys.path.insert(0, os.getcwd())
    module_name, _, class_name = spec.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as e:
        raise KeyError(f"cannot import environment {spec!r}: {e}") from e
    if not (isinstance(cls, type) and issubclass(cls, Environment)):
        raise KeyError(f"{spec!r} is not an Environment subclass")
    return EnvEntry(name=cls.name or spec, source=spec, description=cls.description,
                    factory=cls, specs=cls.tool_specs)


def get(name: str) -> EnvEntry:
    """A registered environment by name, or `module:Class` for any Environment subclass."""
    if ":" in name:
        return _import_entry(name)
    if name.startswith(RELEASE_PREFIX):
        return _get_release(name)
    entries = {e.name: e for e in _own_entries()}
    if name not in entries:
        raise KeyError(
            f"unknown environment {name!r}; known: {', '.join(sorted(entries)) or '(none)'}"
            f", and the EnvFactory release's as {RELEASE_PREFIX}<Name>")
    if name.startswith("generated/"):  # a broken file: say why here, not at first use
        from envs.generated import GeneratedEnvError

        try:
            entries[name].specs()
        except GeneratedEnvError as e:
            raise KeyError(f"environment {name!r} cannot be loaded: {e}") from e
    return entries[name]


def create(name: str) -> Environment:
    return get(name).factory()
