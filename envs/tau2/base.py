"""What every τ² domain environment adds to the contract.

State is the domain database as Pydantic models (faithful to upstream's data model, so
the DB hash compares what upstream compares). Besides `@tool`s, domains define plain
methods that task files name in `initialization_actions` and `env_assertions`; those
are run by name with `run_function`, which — unlike `call` — raises on failure.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from envs.base import Environment, ToolResult

__all__ = ["Tau2Environment", "tau2_text"]


class Tau2Environment(Environment):
    """A τ² toolkit; `requestor` says whose tools these are (agent or user side)."""

    requestor: ClassVar[Literal["assistant", "user"]] = "assistant"
    strict_arguments = True  # upstream passes the model's arguments to tools unconverted
    strict_state = False  # a DB loads as upstream's (lax) Pydantic models load it

    def db_hash(self) -> str:
        """sha256 of the database as upstream hashes it (sorted keys, `default=str`)."""
        dumped = json.dumps(self._state.model_dump(), sort_keys=True, default=str)
        return hashlib.sha256(dumped.encode()).hexdigest()

    def run_function(self, name: str, arguments: Mapping[str, Any] | None = None) -> Any:
        """Run a tool or a task function (init / assertion) by name; raises on failure."""
        if name in self._tools:
            result = self.call(name, arguments)
            if not result.ok:
                raise ValueError(result.error)
            return result.content
        function = getattr(self, name, None)
        if name.startswith("_") or not callable(function):
            raise ValueError(f"{type(self).__name__} has no function {name!r}")
        return function(**dict(arguments or {}))


def tau2_text(result: ToolResult) -> str:
    """A tool result as upstream's ToolMessage content: "Error: <msg>" on failure; str
    unchanged; bool/int/float via str(); models and containers via json.dumps."""
    if not result.ok:
        return f"Error: {result.error}"
    content = result.content
    if isinstance(content, str):
        return content
    if isinstance(content, bool | int | float):
        return str(content)
    return json.dumps(content)
