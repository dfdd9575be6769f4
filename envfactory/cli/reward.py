"""`envfactory reward FILE.jsonl --variant release|strict`: re-score recorded rollouts.

Each non-blank input line is one `harness.rewards.RecordedEpisode` (`calls`, `gold_calls`,
`final_states`, `gold_states`, `format_failures`, optional `alpha` and `initial_states`);
each gets one JSON line on stdout, in order: `{reward, r_traj, r_state, p_length,
p_format}`, or `{"error": "FILE:LINE: ..."}` for a line that cannot be scored (the same
text goes to stderr). The settings go to stderr at the end with the counts; exit 1 when
any line failed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from envfactory.cli.errors import CommandError

__all__ = ["reward"]

PARTS = ("reward", "r_traj", "r_state", "p_length", "p_format")


def _problem(error: ValueError) -> str:
    """One line: pydantic's errors as `field: message`, anything else as its text."""
    if isinstance(error, ValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'line'}: {e['msg']}"
                         for e in error.errors())
    return str(error).splitlines()[0]


def reward(
    file: Annotated[Path, typer.Argument(help="JSONL of recorded episodes, one a line.",
                                         exists=True, dir_okay=False)],
    variant: Annotated[str, typer.Option(help="release (the reward the paper trained "
                                              "with) | strict (ours, hardened).")],
    alpha: Annotated[float, typer.Option(help="Weight of R_traj (a line's `alpha` "
                                              "replaces it).")] = 0.5,
    gamma: Annotated[float, typer.Option(help="P_length per extra call.")] = 0.05,
) -> None:
    """Re-score recorded rollouts offline with the composite reward (harness.rewards)."""
    from envs.jsonl import numbered_records
    from harness.rewards import VARIANTS, RecordedEpisode, RewardSettings, score_recorded

    if variant not in VARIANTS:
        raise typer.BadParameter(f"--variant {variant!r}: use one of {', '.join(VARIANTS)}")
    try:
        settings = RewardSettings(variant=variant, alpha=alpha, gamma=gamma)  # type: ignore[arg-type]
    except ValidationError as e:
        raise typer.BadParameter(f"--alpha/--gamma: {_problem(e)}") from None

    def parse(line: str) -> dict[str, float] | str:
        try:
            episode = RecordedEpisode.model_validate_json(line)
            parts = score_recorded(episode, settings)
        except ValueError as e:
            return _problem(e)
        return {k: getattr(parts, k) for k in PARTS}

    scored = failed = 0
    for lineno, result in numbered_records(file, parse, "episode"):
        if isinstance(result, str):
            failed += 1
            message = f"{file}:{lineno}: {result}"
            print(f"error: {message}", file=sys.stderr)
            print(json.dumps({"error": message}, ensure_ascii=False), flush=True)
        else:
            scored += 1
            print(json.dumps(result), flush=True)
    print(f"{scored} scored, {failed} failed ({settings.label()})", file=sys.stderr)
    if failed:
        raise CommandError(f"{failed} of {scored + failed} lines of {file} could not be scored")
