"""`torchaudio.functional` stub: see the package docstring for why it exists."""

from __future__ import annotations

from typing import NoReturn


def resample(*args: object, **kwargs: object) -> NoReturn:
    """Always raises: audio resampling is not available in the train env."""
    raise RuntimeError(
        "torchaudio.functional.resample: torchaudio is a stub in the envfactory train env "
        "(training/stubs/torchaudio), so audio data is not supported here"
    )
