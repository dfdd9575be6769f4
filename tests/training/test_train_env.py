"""The train venv (.venv-train, `make install-train`): LlamaFactory, verl, Inspect and this
project import side by side, on the CPU torch build, with no CUDA package installed.

Marked `train`: `make test-train` runs it in .venv-train with training/stubs on PYTHONPATH;
the main venv's selections exclude it. Imports happen inside the tests so that the module
still collects in the main venv, where the train stack is absent.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.train

REPO = Path(__file__).resolve().parents[2]
STUBS = REPO / "training" / "stubs"


@pytest.fixture(autouse=True)
def _train_env() -> None:
    # `make test-train` sets ENVFACTORY_TRAIN_ENV=1, so a broken train venv fails there;
    # a bare `pytest tests/training` in the main venv skips instead
    if (
        os.environ.get("ENVFACTORY_TRAIN_ENV") != "1"
        and importlib.util.find_spec("llamafactory") is None
    ):
        pytest.skip("needs the train stack (.venv-train): run `make test-train`")


def _distributions() -> dict[str, str]:
    return {
        (dist.metadata["Name"] or "").lower().replace("_", "-"): dist.version
        for dist in importlib.metadata.distributions()
    }


def test_torch_is_the_cpu_build_and_no_cuda_package_is_installed() -> None:
    import torch

    assert torch.__version__.endswith("+cpu"), torch.__version__
    assert torch.version.cuda is None
    dists = _distributions()
    assert dists["torch"].endswith("+cpu")
    assert [name for name in dists if name.startswith("nvidia")] == []
    # CUDA builds from PyPI that break transformers / fail to load (notes §1.5): the
    # install removes them again after the lock brings them in
    assert "torchvision" not in dists
    assert "torchaudio" not in dists


def test_llamafactory_data_loader_imports_with_the_torchaudio_stub() -> None:
    import llamafactory.data
    from llamafactory.data import get_dataset
    from transformers import PreTrainedModel

    assert callable(get_dataset)
    assert llamafactory.data.__file__
    # transformers imports torchvision whenever it is installed; with the CUDA build from
    # PyPI this import is where the env breaks
    assert isinstance(PreTrainedModel, type)

    import torchaudio

    assert Path(torchaudio.__file__).resolve().is_relative_to(STUBS), torchaudio.__file__
    assert torchaudio.__version__
    with pytest.raises(RuntimeError, match="stub"):
        torchaudio.load("speech.wav")
    with pytest.raises(RuntimeError, match="stub"):
        torchaudio.functional.resample(None, 16000, 8000)


def test_verl_rl_dataset_imports() -> None:
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    assert isinstance(RLHFDataset, type)
    assert callable(collate_fn)


def test_inspect_and_this_project_import() -> None:
    import inspect_ai

    import envs
    import harness

    assert importlib.metadata.version("inspect-ai") == inspect_ai.__version__
    for package in (envs, harness):
        assert Path(str(package.__file__)).resolve().is_relative_to(REPO), package.__file__
