"""The held-out task's reward: `strict` by default, `-T reward=release` on request, and the
variant with α and γ recorded in the log (task metadata and every score's metadata)."""

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


def test_strict_is_the_default_and_release_is_an_option(smoke_dir: Path) -> None:
    default = envfactory(data_dir=str(smoke_dir))
    assert (default.metadata or {})["reward"] == {"variant": "strict", "alpha": 0.5,
                                                 "gamma": 0.05}
    release = envfactory(data_dir=str(smoke_dir), reward="release", alpha=0.3, gamma=0.1)
    assert (release.metadata or {})["reward"] == {"variant": "release", "alpha": 0.3,
                                                 "gamma": 0.1}
    with pytest.raises(TaskOptionError, match="reward"):
        envfactory(data_dir=str(smoke_dir), reward="paper")
    with pytest.raises(TaskOptionError, match="gamma"):
        envfactory(data_dir=str(smoke_dir), gamma=-1)


def test_the_log_records_the_variant_that_scored(smoke_dir: Path, tmp_path: Path) -> None:
    (log,) = inspect_eval(envfactory(data_dir=str(smoke_dir), reward="release"),
                          model="envfactory/oracle", log_dir=str(tmp_path), display="none",
                          limit=2)
    assert log.status == "success", log.error
    assert log.eval.metadata and log.eval.metadata["reward"]["variant"] == "release"
    for sample in log.samples or []:
        score = next(iter(sample.scores.values()))  # type: ignore[union-attr]
        assert (score.metadata or {})["reward_settings"] == {
            "variant": "release", "alpha": 0.5, "gamma": 0.05}
        assert "[release α=0.5 γ=0.05]" in (score.explanation or "")
        # the oracle makes the gold calls: the release scores it 1 as strict does
        assert score.value["reward"] == 1.0  # type: ignore[index,call-overload]
