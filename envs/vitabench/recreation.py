"""What a domain's recreators share: a recreator's signature, its `Outcome`, and which
statuses mean "paid" for an agent.

A recreator brings an environment to one required order of a task through `env.call`
(the agent's own path). Each domain module defines its own (`RECREATORS`, by order type)
and the feasibility runner (`envs.vitabench.feasibility`) calls them, so this vocabulary
sits below both: the domains import it, and the runner imports the domains.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from envs.vitabench.base import VitaEnvironment

__all__ = ["AGENT_PAID", "Outcome", "Recreator"]

#: statuses that, for the agent, mean "created and paid"
AGENT_PAID = frozenset({"paid", "processed", "in-progress", "delivered", "unconsumed",
                        "consumed"})


class Outcome(BaseModel):
    """What a recreator found: `problems` (the order was not reached) and `computed`
    (reached, but a computed value differs from the task's)."""

    problems: list[str] = []
    computed: list[str] = []


#: (environment, expected order) -> how close the tools got to it
Recreator = Callable[[VitaEnvironment, Mapping[str, Any]], Outcome]
