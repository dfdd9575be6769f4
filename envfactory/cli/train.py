"""`envfactory train ...`: exports, SFT and GRPO (optionally scoring checkpoints beside)."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from envfactory.cli.errors import CommandError
from envfactory.cli.options import out_dir_option
from envfactory.cli.progress import stage_bars

__all__ = ["train_app"]

train_app = typer.Typer(help="Training: exports for LlamaFactory (SFT) and verl (GRPO).",
                        no_args_is_help=True)

_ScoreOpt = Annotated[str | None, typer.Option(
    "--score", help="Score every checkpoint on this suite (quick, full, demo) as it is "
                    "saved, beside training (`envfactory score watch`), and the last one "
                    "after it.")]
_ScoreLimitOpt = Annotated[int | None, typer.Option(min=1, help="--score: samples per task.")]
_ScoreLogDirOpt = Annotated[Path, typer.Option(help="--score: results root.")]


def _scoring(output_dir: Path, suite: str | None, limit: int | None, log_dir: Path,
             console: Console) -> AbstractContextManager[object]:
    """Auto-scoring beside a training run (`training.autoscore.scoring_beside`), or nothing."""
    from envfactory.cli.score import check_suite
    from training.autoscore import scoring_beside
    from training.reporting import say_on

    if suite is None:
        return nullcontext()
    return scoring_beside(output_dir, suite=check_suite(suite, "--score"), limit=limit,
                          log_root=log_dir, say=say_on(console))


@train_app.command("export")
def export_cmd(
    out_dir: Annotated[Path, out_dir_option("Output folder (sft/, rl/, manifest.json), "
                                            "written whole or not at all.")],
    data: Annotated[list[Path] | None, typer.Argument(
        help="Trajectory JSONL files (synth queries output, tasks, converted logs).",
        exists=True, dir_okay=False, show_default=False)] = None,
    hub: Annotated[str | None, typer.Option(
        help="Export a dataset of the EnvFactory release instead: "
             "LARK-Lab/EnvFactory-SFT-FILTERED, -SFT-ALL or -RL, at a commit (ID@REV).",
        show_default=False)] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="SFT layout: sharegpt | alpaca "
                                                             "(the release's; --hub always "
                                                             "alpaca).",
                                            show_default="sharegpt")] = None,
    val_ratio: Annotated[float, typer.Option(help="Share of conversations held out for "
                                                  "validation (--hub RL: unless the "
                                                  "dataset has a validation file).")] = 0.05,
    seed: Annotated[int, typer.Option(help="Seed of the validation draw.")] = 42,
    tools: Annotated[str, typer.Option(help="Tools listed in SFT samples: all (of the "
                                            "environments, as evaluated) | used.")] = "all",
    think: Annotated[str | None, typer.Option(
        help="--hub SFT: keep | strip the targets' <think>...</think> prefixes.",
        show_default="keep")] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace an --out-dir that already holds "
                                                 "files (once the new export is "
                                                 "complete).")] = False,
    allow_benchmark_data: Annotated[bool, typer.Option(
        help="Export benchmark trajectories (BFCL, τ², VitaBench, MCP-Atlas) too, which "
             "are refused otherwise; recorded in manifest.json.")] = False,
) -> None:
    """Export trajectories (or a release dataset, --hub) as LlamaFactory SFT data and verl
    RL parquet."""
    from training.export import OutputInUse, export

    if (hub is None) == (not data):
        raise typer.BadParameter("give trajectory files or --hub ID@REV (one of the two)")
    if fmt not in (None, "sharegpt", "alpaca"):
        raise typer.BadParameter(f"--format {fmt!r}: use sharegpt or alpaca")
    if tools not in ("all", "used"):
        raise typer.BadParameter(f"--tools {tools!r}: use all or used")
    if think not in (None, "keep", "strip"):
        raise typer.BadParameter(f"--think {think!r}: use keep or strip")
    if not 0 <= val_ratio < 1:
        raise typer.BadParameter(f"--val-ratio {val_ratio}: use a share in [0, 1)")
    console = Console()
    if hub is not None:
        refused = [flag for flag, given in (("--format sharegpt", fmt == "sharegpt"),
                                            ("--tools", tools != "all"),
                                            ("--allow-benchmark-data", allow_benchmark_data))
                   if given]
        if refused:
            raise typer.BadParameter(f"--hub exports the release's rows as they are: "
                                     f"{', '.join(refused)} does not apply")
        _export_hub(hub, out_dir, think or "keep", val_ratio, seed, overwrite, console)
        return
    if think is not None:
        raise typer.BadParameter("--think applies to --hub SFT datasets only")
    try:
        summary = export(data or [], out_dir, fmt=fmt or "sharegpt",  # type: ignore[arg-type]
                         val_ratio=val_ratio, seed=seed, tools=tools,  # type: ignore[arg-type]
                         overwrite=overwrite, allow_benchmark_data=allow_benchmark_data)
    except OutputInUse as e:  # the folder named cannot be used as asked: a usage error
        raise typer.BadParameter(f"--out-dir {e}") from None
    table = Table(title=f"Exports in {escape(str(out_dir))}")
    table.add_column("figure")
    table.add_column("count", justify="right")
    for name, value in [
        ("conversations (train / val)", f"{summary.conversations} "
                                        f"({summary.train_conversations} / "
                                        f"{summary.val_conversations})"),
        (f"SFT samples ({summary.sft_format}, train conversations)", summary.sft_samples),
        ("  history-only closing replies", summary.sft_history_closings),
        ("RL rows train / val", f"{summary.rl_train_rows} / {summary.rl_val_rows}"),
        ("environments", len(summary.environments)),
        *[(f"benchmark data allowed: {escape(bench)}", count)
          for bench, count in summary.benchmark_trajectories.items()]]:
        table.add_row(name, str(value))
    console.print(table)


def _export_hub(spec: str, out_dir: Path, think: str, val_ratio: float, seed: int,
                overwrite: bool, console: Console) -> None:
    """`train export --hub`: each row left out is one line on stderr as it is found, then
    the counts."""
    from training.export import OutputInUse, export_hub
    from training.release_datasets import HubUsageError, RowReport

    report = RowReport(on_problem=lambda line: typer.echo(f"skipped: {line}", err=True))
    try:
        summary = export_hub(spec, out_dir, think=think,  # type: ignore[arg-type]
                             val_ratio=val_ratio, seed=seed, overwrite=overwrite,
                             report=report)
    except HubUsageError as e:
        raise typer.BadParameter(str(e)) from None
    except OutputInUse as e:
        raise typer.BadParameter(f"--out-dir {e}") from None
    source = summary.hub
    assert source is not None  # export_hub always records its source
    table = Table(title=f"{escape(source.dataset)} @ {source.commit[:12]} -> "
                        f"{escape(str(out_dir))}")
    table.add_column("figure")
    table.add_column("count", justify="right")
    rows: list[tuple[str, object]] = [("rows read", source.rows_read),
                                      ("rows exported", source.rows_kept)]
    rows += [(f"  left out: {escape(reason)}", n) for reason, n in source.skipped.items()]
    if source.kind == "sft":
        rows.append((f"SFT samples (alpaca, <think> {summary.think})", summary.sft_samples))
    else:
        rows += [("conversations (train / val)", f"{summary.conversations} "
                                                 f"({summary.train_conversations} / "
                                                 f"{summary.val_conversations})"),
                 ("RL rows train / val", f"{summary.rl_train_rows} / {summary.rl_val_rows}"),
                 ("environments", len(summary.environments)),
                 ("reward", summary.reward.label())]
    for name, value in rows:
        table.add_row(name, str(value))
    console.print(table)


@train_app.command("sft")
def sft_cmd(
    config: Annotated[Path, typer.Argument(help="SFT config YAML (training/sft.py's "
                                                "SftConfig).", exists=True, dir_okay=False)],
    dry_run: Annotated[bool, typer.Option(help="Print the LlamaFactory YAML and stop "
                                               "(needs no train stack, writes "
                                               "nothing).")] = False,
    score: _ScoreOpt = None, score_limit: _ScoreLimitOpt = None,
    score_log_dir: _ScoreLogDirOpt = Path("scores"),
) -> None:
    """Fine-tune with LlamaFactory from our config; stamps provenance on every checkpoint."""
    import yaml
    from pydantic import ValidationError

    from training.sft import SftConfig, run_sft
    from training.sft import dry_run as sft_dry_run

    console = Console()
    try:
        raw = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
        base = config.parent
        for key in ("data", "output_dir"):  # paths in the file are relative to it
            if key in raw:
                value = raw[key]
                raw[key] = ([str(base / v) for v in value] if isinstance(value, list)
                            else str(base / value))
        cfg = SftConfig.model_validate(raw)
    except (yaml.YAMLError, ValidationError) as e:
        raise CommandError(f"{config}: {e}") from None
    if dry_run:
        print(yaml.safe_dump(sft_dry_run(cfg), sort_keys=True), end="")
        return
    try:
        with (_scoring(cfg.output_dir, score, score_limit, score_log_dir, console),
              stage_bars(console, transient=False) as on_progress):
            result = run_sft(cfg, on_progress)
    except (FileNotFoundError, RuntimeError, ValueError) as e:
        raise CommandError(str(e)) from None
    loss = (f"loss {result.first_loss:.4f} -> {result.last_loss:.4f}"
            if result.first_loss is not None and result.last_loss is not None else "no loss logged")
    console.print(f"SFT done in {result.wall_s:.0f} s: {result.steps} steps, {loss}; "
                  f"checkpoints {[p.name for p in result.checkpoints]}"
                  + (f"; merged model {escape(str(result.merged))}" if result.merged else ""))


@train_app.command("grpo")
def grpo_cmd(
    config: Annotated[Path, typer.Argument(help="GRPO config YAML (training/grpo.py's "
                                                "GrpoConfig).", exists=True, dir_okay=False)],
    dry_run: Annotated[bool, typer.Option(help="Print the verl command and stop.")] = False,
    score: _ScoreOpt = None, score_limit: _ScoreLimitOpt = None,
    score_log_dir: _ScoreLogDirOpt = Path("scores"),
) -> None:
    """GRPO with verl (GPUs): our tools, our reward, the released hyperparameters."""
    import shlex

    import yaml
    from pydantic import ValidationError

    from training.grpo import GrpoConfig, command, run_grpo

    console = Console()
    try:
        raw = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
        for key in ("data", "output_dir"):  # paths in the file are relative to it
            if key in raw:
                raw[key] = str(config.parent / raw[key])
        cfg = GrpoConfig.model_validate(raw)
        if dry_run:
            print(shlex.join(command(cfg)))
            return
        with _scoring(cfg.output_dir, score, score_limit, score_log_dir, console):
            stamped = run_grpo(cfg)
    except (yaml.YAMLError, ValidationError, FileNotFoundError, RuntimeError) as e:
        raise CommandError(str(e)) from None
    console.print(f"GRPO done: {len(stamped)} checkpoints stamped with provenance")
