"""`envfactory leaderboard ...`: build the results table and its page from Inspect logs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from envfactory.cli.errors import CommandError
from envfactory.cli.options import out_dir_option
from envfactory.cli.progress import stage_bars

__all__ = ["leaderboard_app"]

leaderboard_app = typer.Typer(help="Leaderboard: results table, plots and page from "
                              "Inspect logs.", no_args_is_help=True)
#: no wrapping (a path is one line), no markup or highlighting (paths hold brackets)
console = Console(soft_wrap=True, markup=False, highlight=False)


@leaderboard_app.callback()
def _group() -> None:
    """Leaderboard commands (a group, so `build` stays a subcommand on its own too)."""


@leaderboard_app.command("build")
def build_cmd(
    logs: Annotated[list[Path] | None, typer.Argument(
        help="Inspect log files or folders (searched recursively).")] = None,
    out_dir: Annotated[Path, out_dir_option("Output folder (Markdown, CSV, JSON, "
                                            "index.html, plots/).")] = Path("leaderboard-out"),
    from_hub: Annotated[str | None, typer.Option(
        "--from-hub", help="Also read the logs `envfactory hub push-results` pushed to "
        "this Hub repo.")] = None,
    revision: Annotated[str | None, typer.Option(
        help="Revision (branch, tag or commit) of the --from-hub repo, resolved to its "
        "commit now; the commit read is printed. Default: main.")] = None,
    baselines: Annotated[Path | None, typer.Option(
        help="Baselines file (default: the shipped EnvFactory-paper table).")] = None,
    no_baselines: Annotated[bool, typer.Option(
        "--no-baselines", help="Leave the reported rows out.")] = False,
    no_taxonomy: Annotated[bool, typer.Option(
        "--no-taxonomy", help="Skip the failure taxonomy (reads no sample bodies).")]
    = False,
    max_failures_per_log: Annotated[int | None, typer.Option(
        min=1, help="Classify at most this many failed trials per log.")] = None,
    max_concurrency: Annotated[int | None, typer.Option(
        "--max-concurrency", min=1,
        help="Processes classifying failed samples at once (default: CPUs, at most 4).")]
    = None,
) -> None:
    """Build the leaderboard: a row per model or checkpoint, a column per benchmark
    metric with sample counts and 95% intervals, comparability marks, reported
    baselines, checkpoint curves and the failure taxonomy."""
    from leaderboard.baselines import BASELINES_FILE
    from leaderboard.build import build, hub_logs

    paths = list(logs or [])
    if from_hub:
        try:
            hub_folder = hub_logs(from_hub, revision)
        except ImportError:
            raise CommandError("--from-hub needs leaderboard/hub.py (envfactory hub), which "
                               "is not installed here") from None
        except Exception as e:  # noqa: BLE001 - a Hub failure is reported, not a traceback
            raise CommandError(f"--from-hub {from_hub}: {e}") from None
        from leaderboard.hub import snapshot_commit

        commit = snapshot_commit(hub_folder)
        console.print(f"--from-hub {from_hub}: {revision or 'main'}"
                      + (f" is commit {commit}" if commit else "") + f"; read {hub_folder}")
        paths.append(hub_folder)
    if not paths:
        raise typer.BadParameter("give log files/folders, or --from-hub REPO",
                                 param_hint="LOGS")
    with stage_bars() as on_progress:
        result = build(paths, out_dir,
                       baselines=None if no_baselines else (baselines or BASELINES_FILE),
                       with_taxonomy=not no_taxonomy, max_failures_per_log=max_failures_per_log,
                       workers=max_concurrency, on_progress=on_progress)
    board = result.board
    measured = sum(r.kind == "measured" for r in board.rows)
    console.print(f"{result.logs} logs ({len(board.skipped)} left out, "
                  f"{len(board.superseded)} superseded) -> {measured} measured rows, "
                  f"{len(board.rows) - measured} reported, {len(board.columns)} columns "
                  f"in {result.seconds['total']:.2f} s")
    for gap in board.gaps:
        console.print(f"  reproduction gap: {gap.label} ({len(gap.cells)} columns)")
    for kind, path in result.files.items():
        console.print(f"  {kind}: {path}")
    for skipped in board.skipped:
        console.print(f"  left out: {skipped.path}: {skipped.reason}")
