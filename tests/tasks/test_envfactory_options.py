"""`-T max_steps` means one thing in every task: the episode's hop limit (τ², VitaBench and
the held-out task); the held-out task's per-user-turn limit is `-T max_turn_steps`."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from harness.task_options import TaskOptionError
from synthesis.task_specs import build_all
from tasks.envfactory.envfactory import envfactory

DATA = Path(__file__).parents[1] / "data"


@pytest.fixture(scope="module")
def smoke_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("envfactory_data")
    build_all(DATA / "envfactory_specs", DATA / "envfactory_splits.json", out)
    return out


def test_max_steps_is_the_episode_hop_limit(smoke_dir: Path, tmp_path: Path) -> None:
    (log,) = inspect_eval(envfactory(data_dir=str(smoke_dir), max_steps=1),
                          model="envfactory/oracle", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    score = next(iter((log.samples or [])[0].scores.values()))
    assert score.metadata["termination"] == "max_steps"  # type: ignore[index]
    assert score.value["reward"] < 1.0  # type: ignore[index]


def test_the_per_turn_limit_is_max_turn_steps(smoke_dir: Path) -> None:
    assert envfactory(data_dir=str(smoke_dir), max_turn_steps=3) is not None
    with pytest.raises(TaskOptionError, match="max_turn_steps"):
        envfactory(data_dir=str(smoke_dir), max_turn_steps=0)
    with pytest.raises(TaskOptionError, match="max_steps"):
        envfactory(data_dir=str(smoke_dir), max_steps=0)
