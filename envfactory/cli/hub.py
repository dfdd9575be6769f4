"""`envfactory hub ...`: push trajectory datasets, models and results to the Hugging Face Hub
(the `hub` group). The work is in `leaderboard/hub.py`, imported only
when a command runs (it pulls in `datasets` and `huggingface_hub`, which every other
`envfactory` command would otherwise pay for); its errors (`HubError`) are printed in one
line by the package's handler (`errors.py`); this module prints where each push landed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from leaderboard.hub import PushResult

__all__ = ["hub_app"]

hub_app = typer.Typer(help="Publish datasets, models and results to the Hugging Face Hub "
                           "(token: HF_TOKEN or `hf auth login`; server: HF_ENDPOINT).",
                      no_args_is_help=True)

_RepoOpt = Annotated[str, typer.Option("--repo", help="Target repo, NAMESPACE/NAME.")]
_PrivateOpt = Annotated[bool | None, typer.Option(
    "--private/--public", help="Visibility (default: a new repo is the Hub's default, an "
                               "existing one keeps its own).")]
_RevisionOpt = Annotated[str | None, typer.Option(
    help="Branch to commit to (created from main if missing; default main).")]
_MessageOpt = Annotated[str | None, typer.Option(help="Commit message.")]
_JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]


def _run(what: str, push: Callable[[], PushResult], as_json: bool) -> None:
    err = Console(stderr=True, soft_wrap=True)
    with err.status(f"{what}..."):
        result = push()
    if as_json:
        print(result.model_dump_json(indent=2))
        return
    out = Console(soft_wrap=True)
    state = "committed" if result.changed else "unchanged (nothing new to commit)"
    out.print(f"{escape(result.url)}")
    out.print(f"revision {escape(result.revision)}, commit {result.commit}: {state}; "
              f"{len(result.files)} file(s) pushed"
              + (f", {len(result.deleted)} deleted" if result.deleted else ""))


@hub_app.command("push-dataset")
def push_dataset_cmd(
    sources: Annotated[list[Path], typer.Argument(
        help="Trajectory JSONL files, or directories of them (a QueryGen output directory, "
             "tasks data): splits from file names (train/validation/test/heldout) or each "
             "record's provenance.split.")],
    repo: _RepoOpt, private: _PrivateOpt = None, revision: _RevisionOpt = None,
    license: Annotated[str, typer.Option(help="Licence id for the card.")] = "mit",
    message: _MessageOpt = None, as_json: _JsonOpt = False,
) -> None:
    """Trajectories -> a dataset repo: parquet splits and a dataset card."""
    from leaderboard.hub import push_dataset

    _run(f"pushing dataset {repo}", lambda: push_dataset(
        sources, repo, private=private, revision=revision, license=license, message=message),
        as_json)


@hub_app.command("push-model")
def push_model_cmd(
    checkpoint: Annotated[Path, typer.Argument(
        help="A model directory (config.json) or LoRA adapter directory, e.g. the output "
             "of `envfactory train sft`.")],
    repo: _RepoOpt,
    logs: Annotated[list[Path] | None, typer.Option(
        "--logs", help="Inspect logs (files or directories) for the card's model-index; "
                       "repeatable (default: the `score run` folder under --log-root).")]
    = None,
    log_root: Annotated[Path, typer.Option(
        help="Where `envfactory score run` wrote results: <log-root>/<run_id>/<checkpoint>/.")]
    = Path("scores"),
    dataset: Annotated[list[str] | None, typer.Option(
        "--dataset", help="A Hub dataset the model was trained on (NAMESPACE/NAME); "
                          "repeatable.")] = None,
    private: _PrivateOpt = None, revision: _RevisionOpt = None,
    license: Annotated[str, typer.Option(help="Licence id for the card.")] = "apache-2.0",
    message: _MessageOpt = None, as_json: _JsonOpt = False,
) -> None:
    """A checkpoint -> a model repo: its files and a model card (provenance, training
    config, datasets, model-index from its auto-scored logs)."""
    from leaderboard.hub import push_model

    _run(f"pushing model {repo}", lambda: push_model(
        checkpoint, repo, logs=logs, log_root=log_root, datasets=dataset or (),
        private=private, revision=revision, license=license, message=message), as_json)


@hub_app.command("push-results")
def push_results_cmd(
    logs: Annotated[list[Path], typer.Argument(
        help="Inspect log files (.eval / .json) or directories (searched recursively).")],
    repo: _RepoOpt, private: _PrivateOpt = None, revision: _RevisionOpt = None,
    license: Annotated[str, typer.Option(help="Licence id for the card.")] = "mit",
    message: _MessageOpt = None, as_json: _JsonOpt = False,
) -> None:
    """Inspect logs -> a results dataset repo (logs/, index.jsonl, card); logs pushed
    earlier stay."""
    from leaderboard.hub import push_results

    _run(f"pushing results {repo}", lambda: push_results(
        logs, repo, private=private, revision=revision, license=license, message=message),
        as_json)
