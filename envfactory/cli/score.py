"""`envfactory score run` / `score reproduce` / `score watch`: the commands over
`training.autoscore` (a `ScoreError` is printed in one line by the package's handler,
`errors.py`), with a bar per task that counts its samples as they finish
(`progress.stage_bars`). Each task is built here first (`score_preflight`), so one that
cannot run is listed as skipped before anything starts; `score reproduce` finds a reported
row's released checkpoint in `leaderboard.checkpoints`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, cast

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from envfactory.cli.errors import CommandError
from envfactory.cli.progress import stage_bars
from envfactory.cli.score_preflight import check_roles, task_preflight
from training.autoscore.scoring import ScoreResult, require_roles, score_model
from training.autoscore.suites import SUITES, Suite
from training.autoscore.watching import watch
from training.reporting import say_on

__all__ = ["check_suite", "print_score", "score_app"]

score_app = typer.Typer(help="Score checkpoints on the benchmark suites (inspect eval-set).",
                        no_args_is_help=True)

_SuiteOpt = Annotated[str, typer.Option(help="quick (envfactory held-out + BFCL multi-turn, "
                                             "5 samples each), full, demo (one held-out "
                                             "task, 3 steps a turn + BFCL single-turn "
                                             "simple: minutes on a CPU), or paper (the "
                                             "paper's table; needs --user and --judge).")]
_ServeOpt = Annotated[str, typer.Option(help="hf (in-process, default), vllm (start `vllm "
                                             "serve`), the base URL of a running "
                                             "OpenAI-compatible server, or inspect (MODEL "
                                             "is an Inspect model name, run as is).")]
_UserOpt = Annotated[str | None, typer.Option(
    "--user", help="The simulated user's model (role `user`: τ², VitaBench); required by "
                   "--suite paper, the same for every checkpoint compared.")]
_JudgeOpt = Annotated[str | None, typer.Option(
    "--judge", help="The judge's model (role `judge`: VitaBench, MCP-Atlas, τ²'s NL "
                    "assertions); required by --suite paper.")]
_EpochsOpt = Annotated[int | None, typer.Option(
    min=1, help="Runs of each sample (pass^k for k up to it; the paper: 4).")]
_InstallOpt = Annotated[bool, typer.Option(
    "--install-mcp-servers", help="Install MCP-Atlas's keyless local servers at their "
                                  "pinned versions first (as `envfactory mcp-atlas "
                                  "install`).")]
_LimitOpt = Annotated[int | None, typer.Option(min=1, help="Samples per task (default: 5 "
                                                           "for quick, all for full).")]
_LogDirOpt = Annotated[Path, typer.Option(help="Results root: "
                                               "<log-dir>/<run_id>/<checkpoint>/.")]
_MaxTokensOpt = Annotated[int | None, typer.Option(min=1, help="Tokens per generation (hf "
                                                               "without it: up to 2048).")]
_ModelNameOpt = Annotated[str | None, typer.Option(
    help="The served model's name (URL: default the server's one model; vllm: "
         "<run_id>/<checkpoint>).")]
_DeviceOpt = Annotated[str, typer.Option(help="--serve hf: torch device.")]
_InspectArgOpt = Annotated[list[str] | None, typer.Option(
    "--inspect-arg", help="Passed on to inspect eval-set as is; repeatable "
                          "(e.g. --inspect-arg=--max-samples --inspect-arg=2).")]
_VllmArgOpt = Annotated[list[str] | None, typer.Option(
    "--vllm-arg", help="Passed on to `vllm serve`; repeatable.")]
_WaitOpt = Annotated[bool, typer.Option(
    "--wait", help="When another scoring holds a checkpoint's results folder, wait for it "
                   "(default: fail at once, naming its pid).")]


def check_suite(suite: str, option: str = "--suite") -> Suite:
    """A suite name from the command line (`option` names the flag in the error)."""
    if suite not in SUITES:
        raise typer.BadParameter(f"{suite!r}: use one of {', '.join(SUITES)}",
                                 param_hint=option)
    return cast(Suite, suite)


def print_score(result: ScoreResult, console: Console) -> None:
    """A scoring's table: a row per task with its status, samples and headline metrics."""
    table = Table(title=f"{escape(result.checkpoint)}: {result.status} "
                        f"({result.seconds:.0f} s)")
    for column in ("task", "status", "samples", "metrics", "seconds"):
        table.add_column(column, overflow="fold")
    for task in result.tasks:
        # a skipped task's reason up to its first clause (the whole is in --json and in
        # the results folder's .envfactory_skipped.json)
        metrics = (", ".join(f"{k} {v:.3f}" for k, v in task.headline.items())
                   if task.status != "skipped" else task.reason.split("; ", 1)[0])
        table.add_row(escape(task.task.rsplit("@", 1)[-1]), task.status, str(task.samples),
                      escape(metrics), f"{task.seconds:.0f}")
    console.print(table)
    if result.roles:
        console.print("roles: " + escape(", ".join(f"{k} {v}" for k, v in result.roles.items())))
    prov = result.provenance
    if prov is not None and prov.hub_id:
        console.print(f"Hub: {escape(prov.hub_id)}@{escape(prov.hub_requested or '')} = "
                      f"commit {prov.hub_revision}")
    if result.log_dir:
        console.print(f"logs: {escape(result.log_dir)}")
    if result.message:
        console.print(f"[yellow]{escape(result.message)}[/yellow]")


def _roles(user: str | None, judge: str | None) -> dict[str, str]:
    return {role: model for role, model in (("user", user), ("judge", judge)) if model}


def _install_mcp_servers() -> None:
    from envfactory.cli.mcp_atlas import install

    install(servers=None, repos=False)


def _score(model: str, suite: str, console: Console, install_mcp_servers: bool,
           **options: Any) -> ScoreResult:
    """One scoring with the preflight and the progress bars; MCP-Atlas servers installed
    first when asked (a suite with MCP-Atlas only: others need none)."""
    chosen = check_suite(suite)
    roles = options.get("roles") or {}
    require_roles(chosen, roles)  # what is missing before what is given but broken
    check_roles(roles)
    if install_mcp_servers:
        if not any("mcp_atlas" in task.task for task in SUITES[chosen]):
            raise typer.BadParameter(f"--suite {suite} has no MCP-Atlas task",
                                     param_hint="--install-mcp-servers")
        _install_mcp_servers()
    say = say_on(console)
    with stage_bars(console) as on_progress:
        return score_model(model, suite=chosen, say=say, on_progress=on_progress,
                           preflight=task_preflight(say),
                           on_result=lambda r: print_score(r, console), **options)


def _finish(result: ScoreResult, as_json: bool) -> None:
    if as_json:
        print(result.model_dump_json(indent=2))
    if result.status != "scored":
        raise typer.Exit(1)


@score_app.command("run")
def score_run(
    model: Annotated[str, typer.Argument(
        metavar="MODEL", help="A model directory (config.json) or LoRA adapter directory; "
                              "a Hub model id OWNER/NAME[@REVISION] (downloaded at that "
                              "revision's commit, default main); or with --serve inspect an "
                              "Inspect model name (envfactory/oracle, openai/gpt-4.1).")],
    suite: _SuiteOpt = "quick", serve: _ServeOpt = "hf", limit: _LimitOpt = None,
    log_dir: _LogDirOpt = Path("scores"), max_tokens: _MaxTokensOpt = None,
    model_name: _ModelNameOpt = None, device: _DeviceOpt = "cpu",
    inspect_arg: _InspectArgOpt = None, vllm_arg: _VllmArgOpt = None, wait: _WaitOpt = False,
    user: _UserOpt = None, judge: _JudgeOpt = None, epochs: _EpochsOpt = None,
    install_mcp_servers: _InstallOpt = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON on "
                                                         "stdout.")] = False,
) -> None:
    """Score one model on a suite.

    A rerun resumes and skips finished tasks; a task that cannot run here is listed as
    skipped with the reason. Exits 1 unless every other task finished, and at once if
    another scoring holds the results folder (unless --wait).
    """
    console = Console(stderr=True)
    result = _score(model, suite, console, install_mcp_servers, serve=serve, limit=limit,
                    log_root=log_dir, max_tokens=max_tokens, model_name=model_name,
                    device=device, extra_args=inspect_arg or (), vllm_args=vllm_arg or (),
                    wait=wait, roles=_roles(user, judge), epochs=epochs)
    _finish(result, as_json)


@score_app.command("reproduce")
def score_reproduce(
    row: Annotated[str, typer.Argument(
        help="A reported leaderboard row with a released checkpoint (envfactory-4b, "
             "qwen3-8b, awm-8b, ...: leaderboard/checkpoints.json).")],
    suite: _SuiteOpt = "paper", serve: _ServeOpt = "hf", limit: _LimitOpt = None,
    log_dir: _LogDirOpt = Path("scores"), max_tokens: _MaxTokensOpt = None,
    model_name: _ModelNameOpt = None, device: _DeviceOpt = "cpu",
    inspect_arg: _InspectArgOpt = None, vllm_arg: _VllmArgOpt = None, wait: _WaitOpt = False,
    user: _UserOpt = None, judge: _JudgeOpt = None, epochs: _EpochsOpt = None,
    install_mcp_servers: _InstallOpt = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON on "
                                                         "stdout.")] = False,
) -> None:
    """Score the released checkpoint behind a reported row by its Hub id, so the
    leaderboard shows the reproduction gap (measured - reported) beside the row."""
    from leaderboard.checkpoints import released

    if serve == "inspect":
        raise typer.BadParameter("a released checkpoint is weights: use hf, vllm or a URL",
                                 param_hint="--serve")
    try:
        entry = released(row)
    except ValueError as e:
        raise CommandError(str(e)) from None
    assert entry.hub_id is not None  # released() refuses a row without public weights
    spec = entry.hub_id + (f"@{entry.revision}" if entry.revision else "")
    console = Console(stderr=True)
    console.print(f"{escape(entry.label)}: {escape(spec)} (named by {escape(entry.source or '')})")
    result = _score(spec, suite, console, install_mcp_servers, serve=serve, limit=limit,
                    log_root=log_dir, max_tokens=max_tokens, model_name=model_name,
                    device=device, extra_args=inspect_arg or (), vllm_args=vllm_arg or (),
                    wait=wait, roles=_roles(user, judge), epochs=epochs,
                    metadata={"envfactory_reproduce_row": entry.row})
    _finish(result, as_json)


@score_app.command("watch")
def score_watch(
    run_dir: Annotated[Path, typer.Argument(help="A training output directory "
                                                 "(checkpoint-N subdirectories).")],
    interval: Annotated[float, typer.Option(min=1.0, help="Seconds between looks.")] = 60.0,
    once: Annotated[bool, typer.Option("--once", help="Score what is there, then exit.")]
    = False,
    suite: _SuiteOpt = "quick", serve: _ServeOpt = "hf", limit: _LimitOpt = None,
    log_dir: _LogDirOpt = Path("scores"), max_tokens: _MaxTokensOpt = None,
    model_name: _ModelNameOpt = None, device: _DeviceOpt = "cpu",
    inspect_arg: _InspectArgOpt = None, vllm_arg: _VllmArgOpt = None, wait: _WaitOpt = False,
    user: _UserOpt = None, judge: _JudgeOpt = None, epochs: _EpochsOpt = None,
) -> None:
    """Score each new complete checkpoint-* of a training run once.

    What was scored is kept in RUN_DIR/.envfactory_scored.json. Runs beside training until
    Ctrl-C, or one pass with --once (exit 1 if a checkpoint failed in that pass, or was
    being scored by another process).
    """
    console = Console(stderr=True)
    try:
        with stage_bars(console, most=2 * max(len(tasks) for tasks in SUITES.values())
                        ) as on_progress:
            results = watch(run_dir, interval=interval, once=once, suite=check_suite(suite),
                            limit=limit, serve=serve, log_root=log_dir,
                            max_tokens=max_tokens, model_name=model_name, device=device,
                            extra_args=inspect_arg or (), vllm_args=vllm_arg or (),
                            wait=wait, say=say_on(console), on_progress=on_progress,
                            on_result=lambda r: print_score(r, console),
                            roles=_roles(user, judge), epochs=epochs,
                            preflight=task_preflight(say_on(console)))
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    console.print(f"{len(results)} checkpoint(s) handled: "
                  + (", ".join(f"{Path(r.checkpoint).name} {r.status}" for r in results)
                     or "nothing new"))
    if any(r.status == "failed" for r in results):
        raise typer.Exit(1)
