"""verl tools for our environments: one `BaseTool` per qualified tool, over `RolloutSessions`.

`envfactory train export` writes the tools YAML that names this class for every tool
(`training.rl_export.tools_config`). The tool's JSON schema travels in its `config`, not in
verl's `tool_schema` field: verl's schema model keeps only each property's `type`,
`description` and `enum` (and refuses a property without `type`, such as an optional
`anyOf`), so nested objects, array items, defaults and unions would vanish from what the
policy is shown. `FullSchema` gives verl's loop the whole schema, exactly as the
evaluation shows it.

Imports verl: use it in the train environment (`make install-train`).
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import PrivateAttr
from verl.tools.base_tool import BaseTool
from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

from training.verl.session import RolloutSessions

__all__ = ["SESSIONS", "EnvTool", "FullSchema"]

#: this worker process's trajectories (verl builds one tool object per name per worker)
SESSIONS = RolloutSessions()


class FullSchema(OpenAIFunctionToolSchema):  # type: ignore[misc]
    """verl's tool-schema type whose dump (what the loop renders) is our full schema."""

    _full: dict[str, Any] = PrivateAttr()

    @classmethod
    def of(cls, function: dict[str, Any]) -> FullSchema:
        schema = cls.model_validate({"type": "function", "function": {
            "name": function["name"], "description": function["description"]}})
        schema._full = {"type": "function", "function": function}
        return schema

    def model_dump(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return copy.deepcopy(self._full)


class EnvTool(BaseTool):  # type: ignore[misc]
    """One environment tool; the trajectory's world comes from `SESSIONS`."""

    def __init__(self, config: dict[str, Any],
                 tool_schema: OpenAIFunctionToolSchema | None = None) -> None:
        # BaseTool.__init__ prints every schema; keep worker logs readable
        self.config = config
        self.tool_schema = FullSchema.of(config["function"])
        self.name = self.tool_schema.function.name

    async def execute(self, instance_id: str, parameters: dict[str, Any],
                      **kwargs: Any) -> tuple[ToolResponse, float, dict[str, Any]]:
        agent_data = kwargs["agent_data"]
        text = SESSIONS.call(agent_data.request_id, self.name, parameters,
                             agent_data.tools_kwargs, agent_data.extra_fields)
        return ToolResponse(text=text), 0.0, {}  # step rewards are 0, as released
