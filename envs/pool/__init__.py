"""Our own environment pool: stateful, seeded, clock-free environments across seven
domains (commerce, finance, travel, office, communication, health, developer).

Each module defines one `Environment` subclass with a Pydantic state, realistic
seeded data (`default_state()`), and `@tool` methods whose business rules can fail.
Modules are discovered automatically: adding `envs/pool/<name>.py` registers it.
They deliberately do not clone BFCL's or τ²'s APIs (evaluation targets).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from functools import cache

from envs.base import Environment

__all__ = ["pool_classes"]


@cache
def pool_classes() -> dict[str, type[Environment]]:
    """name -> class for every environment module in this package."""
    found: dict[str, type[Environment]] = {}
    for module_info in pkgutil.iter_modules(__path__):
        if module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Environment) and cls.__module__ == module.__name__ and cls.name:
                if cls.name in found:
                    raise ValueError(f"duplicate pool environment name {cls.name!r}")
                found[cls.name] = cls
    return dict(sorted(found.items()))
