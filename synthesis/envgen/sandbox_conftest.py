"""The `conftest.py` of a validation run (copied into the sandbox; never imported here).

It loads the generated environment `generated_env.py` from the sandbox directory, the
way a registered one is loaded: the `Environment` subclass the module defines (our
contract), else the module as an EnvFactory single-file tool server. Tests — ours and the
test agent's — get a fresh instance from the `env` fixture, a factory from `make_env`,
and the API description (`description.json`) from `description`. Each test runs under a
wall-clock alarm, so one looping tool fails its own test instead of the whole run.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
MODULE_FILE = HERE / "generated_env.py"
#: seconds one test may run
TEST_SECONDS = 20


def load_factory() -> Callable[[], Any]:
    """A factory of fresh instances of the generated environment (raises on import errors)."""
    from envs.base import Environment

    spec = importlib.util.spec_from_file_location("generated_env", MODULE_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["generated_env"] = module
    spec.loader.exec_module(module)
    classes = [v for v in vars(module).values()
               if inspect.isclass(v) and issubclass(v, Environment)
               and v.__module__ == module.__name__ and getattr(v, "_tools", None)]
    if len(classes) > 1:
        raise TypeError(f"generated_env.py defines {len(classes)} Environment subclasses "
                        f"({', '.join(c.__name__ for c in classes)}); write exactly one")
    if classes:
        return classes[0]
    from envs.envfactory_format import EnvFactoryFormatEnvironment

    EnvFactoryFormatEnvironment(MODULE_FILE)  # raises FormatError saying what is missing
    return lambda: EnvFactoryFormatEnvironment(MODULE_FILE)


@pytest.fixture(scope="session")
def description() -> dict[str, Any]:
    return json.loads((HERE / "description.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def make_env() -> Callable[[], Any]:
    return load_factory()


@pytest.fixture
def env(make_env: Callable[[], Any]) -> Any:
    return make_env()


def _timeout(signum: int, frame: Any) -> None:
    raise TimeoutError(f"test ran longer than {TEST_SECONDS} s (an endless loop?)")


@pytest.fixture(autouse=True)
def _alarm() -> Iterator[None]:
    previous = signal.signal(signal.SIGALRM, _timeout)
    signal.setitimer(signal.ITIMER_REAL, TEST_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
