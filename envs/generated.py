"""Environments written by EnvGen, registered beside the pool's once all their tests pass.

A registration is a folder `<generated_dir()>/<name>/` holding the environment file
(`environment.py`: a module of our contract, one `Environment` subclass, or a file in
EnvFactory's single-file format) and the EnvGen report it passed with (`report.json`),
plus `registration.json` (what kind of file it is, its description and tool count) so
listing does not import anything. The registry lists each as `generated/<name>`; loading
is lazy and per file, so one broken file is an error for that entry alone, never for
`envfactory env list` or the other environments.

This module only reads and copies files: it never imports synthesis or Inspect (the
report is a plain mapping that EnvGen writes).
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import json
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_core import to_jsonable_python

from envs.base import Environment, ToolSpec
from envs.envfactory_format import EnvFactoryFormatEnvironment, FormatError
from envs.hashing import file_sha256
from envs.release_registry import GENERATED_ENVS, GENERATED_ENVS_VAR

__all__ = ["ENV_VAR", "PREFIX", "GeneratedEnv", "GeneratedEnvError", "generated_dir",
           "list_generated", "load_generated", "register_generated", "report_problem"]

ENV_VAR = GENERATED_ENVS_VAR
PREFIX = "generated/"
ENV_FILE, REPORT_FILE, REGISTRATION_FILE = "environment.py", "report.json", "registration.json"
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
_counter = itertools.count()


class GeneratedEnvError(ValueError):
    """A generated environment that cannot be registered or loaded; names file and reason."""


def generated_dir() -> Path:
    """`$ENVFACTORY_GENERATED_ENVS`, else `cache_dir("generated_envs")`."""
    return GENERATED_ENVS.path()


@dataclass(frozen=True)
class GeneratedEnv:
    """A loaded generated environment: a factory of fresh instances and its tool specs."""

    path: Path
    kind: str  # "contract" or "envfactory-format"
    description: str
    factory: Callable[[], Environment]
    specs: Callable[[], list[ToolSpec]]


def report_problem(report: Mapping[str, Any]) -> str | None:
    """Why a report does not show a fully passing environment, or None if it does.

    The report (EnvGen's `EnvReport` as JSON) must say `all_passed: true`; if it carries
    per-criterion results (`criteria: {name: bool | {"failed": n, ...}}`,
    `failing_criteria`), none may have failed; if it counts failed tests (`tests_failed`,
    `failed`), the count must be 0.
    """
    if report.get("all_passed") is not True:
        return f"its report says all_passed: {report.get('all_passed')!r}, not true"
    criteria = report.get("criteria") or {}
    if not isinstance(criteria, Mapping):
        return "its report's criteria is not a mapping"
    failing = sorted(str(name) for name, value in criteria.items()
                     if value is False or (isinstance(value, Mapping)
                                           and (value.get("failed") or value.get("passed")
                                                is False)))
    if failing:
        return f"its report has failing criteria: {', '.join(failing)}"
    listed = report.get("failing_criteria") or []
    if listed:
        return f"its report has failing criteria: {', '.join(map(str, listed))}"
    for key in ("failed", "tests_failed"):
        failed = report.get(key)
        if isinstance(failed, int) and not isinstance(failed, bool) and failed > 0:
            return f"its report counts {failed} failed tests ({key})"
    return None


def register_generated(source: Path, name: str, report: Mapping[str, Any], *,
                       root: Path | None = None) -> Path:
    """Copy a passing environment file and its report into `root/<name>/` (replacing an
    earlier registration of that name) and return that folder.

    Refused with `GeneratedEnvError` when the name is not an identifier, the report does
    not show every test passing, or the file does not load as an environment with tools.
    """
    source = Path(source)
    if not _NAME.match(name):
        raise GeneratedEnvError(f"cannot register {name!r}: a name is a letter followed by "
                                "letters, digits or _ (at most 64)")
    problem = report_problem(report)
    if problem is not None:
        raise GeneratedEnvError(f"cannot register {name!r} from {source}: {problem}; only "
                                "an environment whose tests all pass is registered")
    if not source.is_file():
        raise GeneratedEnvError(f"cannot register {name!r}: {source} is not a file")
    loaded = load_generated(source)
    try:
        tools = loaded.specs()
        loaded.factory()
    except Exception as e:  # noqa: BLE001 - any failure of model-written code is a refusal
        raise GeneratedEnvError(f"cannot register {name!r}: {source}: building it failed: "
                                f"{type(e).__name__}: {e}") from e
    if not tools:
        raise GeneratedEnvError(f"cannot register {name!r}: {source} offers no tools")
    root = generated_dir() if root is None else Path(root)
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
    text = source.read_bytes()
    (staging / ENV_FILE).write_bytes(text)
    (staging / REPORT_FILE).write_text(
        json.dumps(to_jsonable_python(report, fallback=str), indent=2, ensure_ascii=False))
    (staging / REGISTRATION_FILE).write_text(json.dumps({
        "name": name, "kind": loaded.kind, "description": loaded.description,
        "tools": len(tools), "source": str(source.resolve()),
        "sha256": file_sha256(staging / ENV_FILE)}, indent=2, ensure_ascii=False))
    target = root / name
    if target.exists():  # swap, so a reader never sees a half-written folder
        old = Path(tempfile.mkdtemp(prefix=f".{name}-old-", dir=root))
        target.rename(old / name)
        staging.rename(target)
        shutil.rmtree(old)
    else:
        staging.rename(target)
    return target


def list_generated(root: Path | None = None) -> list[tuple[str, Path, dict[str, Any]]]:
    """(name, environment file, registration info) per registered folder, by name; the
    info is empty when `registration.json` is missing or unreadable (loading says why)."""
    root = generated_dir() if root is None else Path(root)
    if not root.is_dir():
        return []
    found = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and _NAME.match(p.name)):
        try:
            info = json.loads((folder / REGISTRATION_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            info = {}
        found.append((folder.name, folder / ENV_FILE, info if isinstance(info, dict) else {}))
    return found


def load_generated(path: Path) -> GeneratedEnv:
    """The environment in a generated file: its one `Environment` subclass (our contract),
    else the file read in EnvFactory's single-file format. Cached per file version."""
    path = Path(path)
    try:
        stat = path.stat()
    except OSError as e:
        raise GeneratedEnvError(f"{path}: cannot read it: {e.strerror or e}") from None
    return _load(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=256)
def _load(path_text: str, mtime_ns: int, size: int) -> GeneratedEnv:
    path = Path(path_text)
    stem = re.sub(r"\W", "_", path.parent.name)
    module_name = f"_envfactory_generated_{stem}_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise GeneratedEnvError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # so Pydantic resolves the module's annotations
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as e:  # noqa: BLE001 - a stray main() may exit
        sys.modules.pop(module_name, None)
        raise GeneratedEnvError(f"{path}: importing it failed: {type(e).__name__}: {e}") from e
    classes = [v for v in vars(module).values() if isinstance(v, type)
               and issubclass(v, Environment) and v.__module__ == module_name]
    leaves = [c for c in classes if not any(o is not c and issubclass(o, c) for o in classes)]
    if len(leaves) > 1:
        raise GeneratedEnvError(f"{path}: defines {len(leaves)} environments "
                                f"({', '.join(sorted(c.__name__ for c in leaves))}); one per file")
    if leaves:
        cls = leaves[0]
        if not hasattr(cls, "State"):
            raise GeneratedEnvError(f"{path}: {cls.__name__} has no State model")
        return GeneratedEnv(path=path, kind="contract", description=cls.description,
                            factory=cls, specs=cls.tool_specs)
    sys.modules.pop(module_name, None)
    try:
        probe = EnvFactoryFormatEnvironment(path)
    except FormatError as e:
        raise GeneratedEnvError(f"{path}: no Environment subclass, and not EnvFactory's "
                                f"single-file format either ({e})") from e
    specs = probe.tools()
    description = _class_doc(probe.api) or f"EnvFactory-format server {probe.name}"
    return GeneratedEnv(path=path, kind="envfactory-format", description=description,
                        factory=functools.partial(EnvFactoryFormatEnvironment, path),
                        specs=lambda: list(specs))


def _class_doc(obj: Any) -> str:
    """The first paragraph of an object's class docstring ('' if none)."""
    doc = type(obj).__doc__ or ""
    return doc.strip().split("\n\n")[0].strip()
