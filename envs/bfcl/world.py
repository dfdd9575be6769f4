"""One BFCL entry's world: its backends, executed together as the official runner does.

It sits beside `envs.bfcl.environment` rather than in it so that the dependencies go one
way: the registry lists the backends (`BfclEnvironment`) and `envs.world.World` builds
worlds from the registry, while this subclass of `World` builds on both. (As
`envs.tau2.world.Tau2World` does for τ².)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envs.bfcl.environment import BfclEnvironment, execute_official
from envs.world import World

__all__ = ["BfclWorld"]


class BfclWorld(World):
    """The backends of one BFCL entry (named by class), executed together as the
    official runner does: `execute` runs decoded call strings on all of them at once;
    `call`/`call_qualified` (from `World`) run one call through the contract."""

    def __init__(
        self,
        entry_id: str,
        initial_config: Mapping[str, Any],
        involved_classes: list[str],
        long_context: bool = False,
    ) -> None:
        self.entry_id = entry_id
        self.long_context = long_context
        self.envs: dict[str, BfclEnvironment]  # type: ignore[assignment]
        super().__init__(envs={
            c: BfclEnvironment(c, initial_config.get(c, {}), long_context=long_context)
            for c in involved_classes
        })

    def execute(self, calls: list[str]) -> list[str]:
        """Run decoded call strings (`name(k=v)`) exactly as bfcl-eval's runner does."""
        instances = {c: env.backend for c, env in self.envs.items()}
        return execute_official(instances, calls, self.entry_id, self.long_context)

    def public_state(self) -> dict[str, dict[str, Any]]:
        """What the official state checker compares: public attributes per class."""
        return {c: env.public_state() for c, env in self.envs.items()}
