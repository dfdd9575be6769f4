"""Tool chains: the ordered tool calls a sampler draws from the tool graph.

A chain is the skeleton QueryGen turns into a conversation, so it is a plain, serialisable
record (Pydantic) that carries its own seed and sampler name: any chain can be redrawn from
those two alone, which is what makes synthesized trajectories reproducible and auditable.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from envs.names import qualify

MAX_TOOLS_PER_TURN = 5


class ChainStep(BaseModel):
    """One tool call of a chain, named by environment and tool."""

    model_config = ConfigDict(frozen=True)

    env: str
    tool: str

    @property
    def qualified(self) -> str:
        """The graph's tool node id: the model-facing qualified name (`envs.names.qualify`)."""
        return qualify(self.env, self.tool)


class ToolChain(BaseModel):
    """A sampled chain and its split into user turns.

    ``turns`` holds indices into ``steps``: in order, every step exactly once, 1..5 tools per turn.
    """

    seed: int
    sampler: str
    steps: list[ChainStep] = Field(min_length=1)
    turns: list[list[int]]

    @model_validator(mode="after")
    def _turns_partition_steps(self) -> ToolChain:
        flat = [i for turn in self.turns for i in turn]
        if flat != list(range(len(self.steps))):
            raise ValueError("turns must list every step index exactly once, in order")
        for turn in self.turns:
            if not 1 <= len(turn) <= MAX_TOOLS_PER_TURN:
                raise ValueError(f"a turn holds 1..{MAX_TOOLS_PER_TURN} tools, got {len(turn)}")
        return self

    @property
    def environments(self) -> list[str]:
        """Environments in order of first use."""
        return list(dict.fromkeys(step.env for step in self.steps))

    def turn_steps(self, turn: int) -> list[ChainStep]:
        """The steps of one turn (0-based)."""
        return [self.steps[i] for i in self.turns[turn]]
