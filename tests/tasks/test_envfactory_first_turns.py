"""`-T turns=first`: each held-out task's first user turn alone, scored against that turn's
gold (its calls and `gold_state_after`), interleaved by first environment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from harness.task_options import TaskOptionError
from tasks.envfactory.envfactory import envfactory

HELDOUT = Path(__file__).parents[2] / "tasks" / "envfactory" / "data" / "heldout.jsonl"


def test_the_oracle_scores_every_first_turn_in_full(tmp_path: Path) -> None:
    """The oracle plays the first turn's gold calls and nothing else, so it reaches that
    turn's gold state: reward 1.0 only if the gold is the first turn's, not the task's
    (whose final state needs every turn's calls)."""
    (log,) = inspect_eval(envfactory(turns="first"), model="envfactory/oracle", limit=8,
                          log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    samples = log.samples or []
    assert len(samples) == 8
    for sample in samples:
        score = next(iter(sample.scores.values()))  # type: ignore[union-attr]
        assert score.value["reward"] == 1.0, (sample.id, score.explanation)  # type: ignore[index]
        assert len(sample.metadata["trajectory"]["turns"]) == 1
    assert log.eval.task_args["turns"] == "first"


def test_first_turns_interleave_the_first_environments() -> None:
    """The shipped file lists tasks environment by environment; the first four first turns
    come from four different first environments, in the order they first appear there,
    and within each its single-environment tasks come first: the first 4 × (fewest such
    tasks of one environment) are all single-environment."""
    tasks = [json.loads(line) for line in HELDOUT.read_text().splitlines() if line.strip()]
    firsts = list(dict.fromkeys(t["environments"][0] for t in tasks))
    assert len(firsts) == 4  # the four held-out environments of splits.json
    dataset = list(envfactory(turns="first").dataset)
    assert len(dataset) == len(tasks)
    assert [s.metadata["environments"][0] for s in dataset[:4]] == firsts  # type: ignore[index]
    # within a first environment, its single-environment tasks come first (shorter prompts)
    fewest = min(sum(t["environments"] == [env] for t in tasks) for env in firsts)
    head = dataset[:4 * fewest]
    assert all(len(s.metadata["environments"]) == 1 for s in head)  # type: ignore[index]


def test_turns_accepts_all_or_first() -> None:
    assert len(envfactory().dataset[0].metadata["trajectory"]["turns"]) > 1  # type: ignore[index]
    with pytest.raises(TaskOptionError, match="turns"):
        envfactory(turns="last")
