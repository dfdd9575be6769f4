"""The `conftest.py` of a validation run (copied into the sandbox; never imported here).

It loads the generated environment `generated_env.py` from the sandbox directory, the
way a registered one is loaded: the `Environment` subclass the module defines (our
contract), else the module as an EnvFactory single-file tool server; or, when `target.json`
names a registered environment (`{"registry": "pool/x"}`, what `envgen verify` runs on a
pool environment), that one through `envs.registry`. Tests — ours and the test agent's —
get a fresh instance from the `env` fixture, a factory from `make_env`, and the API
description (`description.json`) from `description`. Each test runs under a wall-clock
alarm, so one looping tool fails its own test instead of the whole run, and each tool call
of the built-in checks under `call_limit()` (`call_seconds` of `states.json`).
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
MODULE_FILE = HERE / "generated_env.py"
#: seconds one test may run
TEST_SECONDS = 20
_STATES = HERE / "states.json"
#: seconds one tool call of the built-in checks may run
CALL_SECONDS = float(json.loads(_STATES.read_text(encoding="utf-8")).get("call_seconds", 5)
                      if _STATES.exists() else 5)
_TARGET = HERE / "target.json"


class CallTimeout(TimeoutError):
    """A tool call ran past `CALL_SECONDS`."""


@contextmanager
def call_limit(seconds: float = CALL_SECONDS) -> Iterator[None]:
    """Run the body under a per-call wall-clock limit (raises `CallTimeout`), then give the
    test's own alarm back what is left of it."""
    left, _ = signal.getitimer(signal.ITIMER_REAL)
    began = time.monotonic()

    def expired(signum: int, frame: Any) -> None:
        raise CallTimeout(f"the call ran longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, min(seconds, left) if left else seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if left:
            signal.setitimer(signal.ITIMER_REAL, max(left - (time.monotonic() - began), 0.01))


def load_factory() -> Callable[[], Any]:
    """A factory of fresh instances of the generated environment (raises on import errors)."""
    from envs.base import Environment

    if _TARGET.exists():
        name = json.loads(_TARGET.read_text(encoding="utf-8"))["registry"]
        from envs.registry import get

        entry = get(name)
        return entry.factory  # type: ignore[no-any-return]
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
