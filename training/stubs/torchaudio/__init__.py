"""A stand-in for `torchaudio`, put on PYTHONPATH only for LlamaFactory processes and
`make test-train` (never installed, never on the main venv's path).

Why: LlamaFactory 0.9.5 imports torchaudio at module level (llamafactory/data/mm_plugin.py)
but only calls it for audio inputs (`load`, `functional.resample`). PyPI's torchaudio stops
at 2.11.1, a CUDA build whose native library fails to load beside the CPU torch 2.13.0, so
`make install-train` uninstalls it (and torchvision, also a CUDA build that breaks
`transformers`); see ../shared/notes/training.md §1.5. Text SFT never reaches these calls;
if something does, it fails here with a clear message instead of at import time.
"""

from __future__ import annotations

from typing import NoReturn

from . import functional

__version__ = "0.0.0+envfactory.stub"
__all__ = ["__version__", "functional", "load"]

_WHY = (
    "torchaudio is a stub in the envfactory train env (training/stubs/torchaudio): the real "
    "package has no build for the CPU torch 2.13.0, so audio data is not supported here"
)


def load(*args: object, **kwargs: object) -> NoReturn:
    """Always raises: audio loading is not available in the train env."""
    raise RuntimeError(f"torchaudio.load: {_WHY}")
