"""The option types every `envfactory` command shares, each defined once.

- Models: `--model` names the default Inspect model, `-M key=value` passes model arguments
  to it (parsed as `inspect eval -M` parses them: see `parse_model_args`), `--model-role
  ROLE=MODEL` binds another model to one role, and `--max-tokens` caps every reply of every
  role (without it a local `hf/` model may generate its full default budget per call,
  which turns a CPU run of a few chains into hours).
- Judges: `--judge MODEL`, `--judge-base-url`, `--judge-model-arg KEY=VALUE` (the same
  parser), `--judge-temperature`.
- Outputs, named by what they are: `--out FILE` (a file written whole, replacing any old
  one), `--results FILE` (a results JSONL appended as records finish and resumed when the
  command is run again), `--out-dir DIR` (a folder of outputs).
- `--max-concurrency N` (the one spelling; the old ones are hidden aliases, see
  `errors.DEPRECATED`) and `--limit N`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from inspect_ai.model import GenerateConfig, Model, get_model

__all__ = ["JudgeArgsOpt", "JudgeBaseUrlOpt", "JudgeOpt", "JudgeTemperatureOpt", "LimitOpt",
           "MaxTokensOpt", "ModelArgsOpt", "ModelOpt", "ModelRoleOpt", "ResultsOpt",
           "judge_model", "max_concurrency_option", "out_dir_option", "out_file_option",
           "pairs", "parse_model_args", "role_models"]

ModelOpt = Annotated[str | None, typer.Option(
    help="Default model of every role (Inspect name, e.g. openai/gpt-4o).")]
ModelRoleOpt = Annotated[list[str] | None, typer.Option(
    "--model-role", help="ROLE=MODEL: another model for one role (repeatable).")]
ModelArgsOpt = Annotated[list[str] | None, typer.Option(
    "-M", "--model-arg", help="KEY=VALUE model argument for --model, a YAML value as in "
                              "`inspect eval -M` (repeatable).")]
MaxTokensOpt = Annotated[int | None, typer.Option(
    min=1, help="Most tokens per reply, for every role (set it for local hf/ models).")]
JudgeOpt = Annotated[str, typer.Option(
    help="Inspect model for the judge (e.g. openai/<name>, with --judge-base-url).")]
JudgeBaseUrlOpt = Annotated[str | None, typer.Option(help="The judge's API base URL.")]
JudgeArgsOpt = Annotated[list[str] | None, typer.Option(
    "--judge-model-arg", help="KEY=VALUE model argument for --judge, a YAML value as in "
                              "`inspect eval -M` (repeatable).")]
JudgeTemperatureOpt = Annotated[float | None, typer.Option(
    help="The judge's temperature (default: the benchmark's).")]
LimitOpt = Annotated[int | None, typer.Option(min=1, help="Only the first N records.")]
ResultsOpt = Annotated[Path | None, typer.Option(
    "--results", metavar="FILE", help="Results JSONL: appended as records finish; run again, "
                                      "it resumes after the results already there "
                                      "(default: stdout).")]


def max_concurrency_option(what: str) -> Any:
    """`--max-concurrency N` (the default is the command's); `what` says what runs at once."""
    return typer.Option("--max-concurrency", min=1, help=f"{what} at once.")


def out_dir_option(help: str) -> Any:
    """`--out-dir DIR`: a folder of outputs (`help` says which)."""
    return typer.Option("--out-dir", metavar="DIR", help=help)


def out_file_option(help: str) -> Any:
    """`--out FILE`: one file written whole, replacing an older one (`help` says which)."""
    return typer.Option("--out", metavar="FILE", help=help)


def pairs(items: Sequence[str], what: str) -> dict[str, str]:
    """`KEY=VALUE` strings as a dict; anything else is a usage error naming the option."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise typer.BadParameter(f"{what} {item!r}: expected KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def parse_model_args(items: Sequence[str], what: str = "-M") -> dict[str, Any]:
    """Model arguments as `inspect eval -M` reads them, so one flag means one thing in both.

    Inspect (`inspect_ai._util.config.parse_cli_args`): the key's dashes become
    underscores, the value is a YAML scalar (`3` an int, `true` a bool, `[a, b]` a list),
    and a plain string with commas is a list of its parts. A pair without `=` is a usage
    error here (Inspect drops it silently).
    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"{what} {item!r}: expected KEY=VALUE")
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError as e:
            raise typer.BadParameter(f"{what} {item!r}: not a YAML value: {e}") from None
        if isinstance(value, str):
            parts = value.split(",")
            value = parts if len(parts) > 1 else parts[0]
        out[key.replace("-", "_")] = value
    return out


def role_models(roles: Sequence[str], model: str | None, model_args: Sequence[str],
                model_roles: Sequence[str], max_tokens: int | None) -> dict[str, Model]:
    """One Inspect model per role: `--model` (with `-M`) unless `--model-role` names another.

    `max_tokens` goes into each model's own GenerateConfig, which Inspect merges into every
    `generate` call, so agents, solver rollouts and graph passes all honour it.
    """
    bound = pairs(model_roles, "--model-role")
    unknown = sorted(set(bound) - set(roles))
    if unknown:
        raise typer.BadParameter(f"unknown roles {unknown}; use {', '.join(roles)}")
    margs = parse_model_args(model_args)
    config = GenerateConfig(max_tokens=max_tokens)
    main = get_model(model, config=config, **margs)
    return {r: get_model(bound[r], config=config) if r in bound else main for r in roles}


def judge_model(judge: str, base_url: str | None, judge_args: Sequence[str],
                temperature: float | None) -> Model:
    """The `--judge` model with its base URL, `--judge-model-arg`s and temperature."""
    return get_model(judge, base_url=base_url, config=GenerateConfig(temperature=temperature),
                     **parse_model_args(judge_args, "--judge-model-arg"))
