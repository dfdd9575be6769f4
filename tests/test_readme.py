"""The README stays true as features land: every environment variable the code reads is
documented, every task folder is in the layout, and the test command is the one CI runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CODE = ["envs", "harness", "tasks", "synthesis", "training", "leaderboard", "envfactory",
        "benchmarks"]
#: `os.environ.get("X"`, `os.environ["X"]`, `os.environ.setdefault("X"`, `os.getenv("X"`
READS = re.compile(r"""(?:environ(?:\.get|\.setdefault)?\s*[(\[]|getenv\()\s*["']([A-Z0-9_]+)""")
#: set for child processes, not read; or set by a tool for its own run, not a user's setting
#: (pytest names the running test in PYTEST_CURRENT_TEST, which EnvGen's sandboxed checks read)
NOT_SETTINGS = {"OPENAI_API_KEY", "COLUMNS", "LINES", "PYTHONPATH", "VIRTUAL_ENV", "PATH",
                "PYTEST_CURRENT_TEST"}


def variables_read(folders: list[str]) -> set[str]:
    names: set[str] = set()
    for folder in folders:
        for path in (ROOT / folder).rglob("*.py"):
            if path == Path(__file__).resolve():  # its own patterns
                continue
            names |= set(READS.findall(path.read_text(encoding="utf-8")))
    return names - NOT_SETTINGS


def release_variables() -> set[str]:
    """The variables the pinned releases and cache folders read (named by their
    definitions, so the pattern above cannot see them)."""
    from envs import releases
    from envs.release_registry import registered_releases

    names = {releases.CACHE_VAR, releases.GITHUB_RAW_VAR}
    for entry in registered_releases():
        names |= {entry.override} if entry.override else set()
        if isinstance(entry, releases.PinnedRelease) and entry.source_override:
            names.add(entry.source_override)
    return names


def test_every_environment_variable_read_is_documented() -> None:
    found = variables_read(CODE) | variables_read(["tests"]) | release_variables()
    assert {"TAU2_DATA_DIR", "ENVFACTORY_CACHE", "ENVFACTORY_MODELS_DIR"} <= found
    assert sorted(n for n in found if f"`{n}" not in README) == []


def test_every_task_folder_is_in_the_layout() -> None:
    folders = [p.name for p in (ROOT / "tasks").iterdir()
               if p.is_dir() and not p.name.startswith((".", "__"))]
    assert {"bfcl_multiturn", "envfactory", "tau2"} <= set(folders)
    assert sorted(f for f in folders if f"`tasks/{f}/`" not in README) == []


def test_the_readme_test_command_is_what_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert "make test" in ci and "make test    # install, then the test suite" in README
