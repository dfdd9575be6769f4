"""The library folders render nothing for commands: none imports typer, and none imports
rich except the modules named below, each for a reason that is not a command's output.
Commands (`envfactory/cli/`) render what the libraries report through callbacks
(`training.reporting`, `envfactory.cli.progress`) and the values they return."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARIES = ("envs", "harness", "tasks", "synthesis", "training", "leaderboard")

RICH_ALLOWED = {
    "harness/judge.py": "reads Inspect's PrerequisiteError text, which Inspect writes in "
                        "rich markup, back as plain text (rich's parser, not a rendering)",
}


def _top_packages(path: Path) -> set[str]:
    """The top-level packages a module imports, at any depth (function-level imports and
    TYPE_CHECKING blocks count too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def _importers(package: str) -> set[str]:
    return {path.relative_to(ROOT).as_posix()
            for folder in LIBRARIES for path in sorted((ROOT / folder).rglob("*.py"))
            if package in _top_packages(path)}


def test_the_import_scan_sees_function_level_imports(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from rich.console import Console\n    import typer.main\n")
    assert _top_packages(module) == {"rich", "typer"}


def test_no_library_module_imports_typer() -> None:
    assert _importers("typer") == set(), "commands live in envfactory/cli/"


def test_library_modules_import_rich_only_for_the_named_reasons() -> None:
    assert _importers("rich") == set(RICH_ALLOWED), (
        "report through a callback (training.reporting.Say, an on_progress) or return rows, "
        "and render in the envfactory/cli/ command; or name the module and its reason here")
