"""What every τ² domain environment adds to the contract.

State is the domain database as Pydantic models (faithful to upstream's data model, so
the DB hash compares what upstream compares). Besides `@tool`s, domains define plain
methods that task files name in `initialization_actions` and `env_assertions`; those
are run by name with `run_function`, which — unlike `call` — raises on failure.

Calls behave as upstream's `toolkit.use_tool(name, **arguments)`: the model's arguments
reach the tool unconverted (a float where an int is declared runs on as a float; the
bodies convert nested dicts where upstream's do), a call that does not bind fails with
the `TypeError` Python raises for upstream's method (named after upstream's toolkit
class), and any exception a tool raises reads `Error: <exception>`.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import BaseModel

from envs.base import Environment, ToolError, ToolResult, ToolSpec
from envs.binding import binding_error
from envs.tau2.tool_objects import official_tools

__all__ = ["Tau2Environment", "as_models", "binding_error", "tau2_text"]


class Tau2Environment(Environment):
    """A τ² toolkit; `requestor` says whose tools these are (agent or user side)."""

    requestor: ClassVar[Literal["assistant", "user"]] = "assistant"
    #: the release's name for this toolkit (`airline`, ..., `telecom_user`): its tools
    toolkit: ClassVar[str]
    #: upstream's toolkit class (`AirlineTools`, ...): the qualifier of its Python errors
    toolkit_class: ClassVar[str]
    strict_state = False  # a DB loads as upstream's (lax) Pydantic models load it

    @classmethod
    def tool_specs(cls) -> list[ToolSpec]:
        """The release's own tool objects (`envs.tau2.tool_objects`), in its order: what
        a model is shown is the benchmark's text, never our docstrings. `write` (whether
        a call runs atomically) and `output_schema` (the result's shape, from our return
        annotation: metadata for the tool graph, never sent to a model) are ours."""
        ours = {name: bound.spec for name, bound in cls._tools.items()}
        functions = [o["function"] for o in official_tools(cls.toolkit)]
        offered = [f["name"] for f in functions]
        if set(offered) != set(ours):
            raise ValueError(f"{cls.__name__}: the release's {cls.toolkit} tools "
                             f"{sorted(set(offered) - set(ours))} are not implemented, "
                             f"{sorted(set(ours) - set(offered))} are not the release's")
        return [ToolSpec(name=f["name"], description=f["description"],
                         parameters=f["parameters"], write=ours[f["name"]].write,
                         output_schema=ours[f["name"]].output_schema)
                for f in functions]

    @classmethod
    def has_tool(cls, name: str) -> bool:
        return name in cls._tools

    def _parse(self, tool: Any, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments as given, once they bind to the tool's signature (upstream calls
        the method with `**arguments` and converts nothing)."""
        method = getattr(type(self), tool.method_name)
        problem = binding_error(f"{self.toolkit_class}.{tool.method_name}",
                                inspect.signature(method), arguments)
        if problem is not None:
            raise ToolError(problem)
        return dict(arguments)

    def _failure_message(self, name: str, error: BaseException) -> str:
        """Upstream's environment shows any exception as `Error: {e}`."""
        return str(error)

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


def as_models(items: Any, model: type[BaseModel]) -> Any:
    """Upstream's conversion of a list argument of nested objects: when every item is a
    dict, each becomes `model(**item)` (validated, lax); otherwise nothing is converted
    and the items are used as they are."""
    if all(isinstance(item, dict) for item in items):
        return [model(**item) for item in items]
    return items


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
