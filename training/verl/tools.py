"""verl tools for our environments: one `BaseTool` per qualified tool, over `RolloutSessions`.

`envfactory train export` writes the tools YAML that names this class for every tool
(`training.rl_export.tools_config`).

Imports verl: use it in the train environment (`make install-train`).
"""

from __future__ import annotations

from typing import Any

from verl.tools.base_tool import BaseTool
from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

from training.verl.session import RolloutSessions

__all__ = ["SESSIONS", "EnvTool"]

#: this worker process's trajectories (verl builds one tool object per name per worker)
SESSIONS = RolloutSessions()


class EnvTool(BaseTool):  # type: ignore[misc]
    """One environment tool; the trajectory's world comes from `SESSIONS`."""

    def __init__(self, config: dict[str, Any], tool_schema: OpenAIFunctionToolSchema) -> None:
        # BaseTool.__init__ prints every schema; keep worker logs readable
        self.config = config
        self.tool_schema = tool_schema
        self.name = tool_schema.function.name

    async def execute(self, instance_id: str, parameters: dict[str, Any],
                      **kwargs: Any) -> tuple[ToolResponse, float, dict[str, Any]]:
        agent_data = kwargs["agent_data"]
        text = SESSIONS.call(agent_data.request_id, self.name, parameters,
                             agent_data.tools_kwargs, agent_data.extra_fields)
        return ToolResponse(text=text), 0.0, {}  # step rewards are 0, as released
