"""The environment of a VitaBench task, chosen by the task's `domain`.

Upstream picks the environment by the `--domain` of the run (a comma-separated list builds
the cross-domain merge); the task files carry the same choice in each task's `domain`,
where three in-store tasks spell it "in-store consumption" or "in-store".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envs.vitabench.base import VitaEnvironment
from envs.vitabench.cross import CROSS_DOMAIN, CrossEnvironment
from envs.vitabench.delivery import DeliveryEnvironment
from envs.vitabench.instore import InStoreEnvironment
from envs.vitabench.ota import OTAEnvironment
from envs.vitabench.release import DEFAULT_REVISION, Language

__all__ = ["ENVIRONMENTS", "environment_class", "environment_for"]

#: a task's `domain` -> the environment class that runs it
ENVIRONMENTS: dict[str, type[VitaEnvironment]] = {
    "delivery": DeliveryEnvironment,
    "instore": InStoreEnvironment,
    "in-store consumption": InStoreEnvironment,
    "in-store": InStoreEnvironment,
    "ota": OTAEnvironment,
    CROSS_DOMAIN: CrossEnvironment,
}


def environment_class(domain: str) -> type[VitaEnvironment]:
    """The environment class of a task `domain` string."""
    try:
        return ENVIRONMENTS[domain]
    except KeyError:
        raise ValueError(f"unknown VitaBench domain {domain!r}; "
                         f"expected one of {sorted(ENVIRONMENTS)}") from None


def environment_for(task: Mapping[str, Any], language: Language,
                    revision: str = DEFAULT_REVISION) -> VitaEnvironment:
    """A fresh environment over `task["environment"]` (upstream's `get_environment` of the
    task's domain, or `get_cross_environment` for the cross-domain set)."""
    cls = environment_class(task["domain"])
    return cls.from_environment(task["environment"], language, revision)
