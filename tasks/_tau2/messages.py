"""A τ² conversation as upstream records it: the one input of the reward.

The Inspect solver builds these as the conversation runs, and `envfactory tau2 grade`
reads them from files, so both entry points feed the same evaluator.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Conversation", "T2Message", "T2ToolCall", "TerminationReason"]

Requestor = Literal["assistant", "user"]


class TerminationReason(StrEnum):
    USER_STOP = "user_stop"
    AGENT_STOP = "agent_stop"
    MAX_STEPS = "max_steps"
    TOO_MANY_ERRORS = "too_many_errors"
    AGENT_ERROR = "agent_error"
    USER_ERROR = "user_error"


#: v0.x: only these zero the reward (agent/user errors are still graded)
ZEROING = {TerminationReason.MAX_STEPS, TerminationReason.TOO_MANY_ERRORS}


class T2ToolCall(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str = ""
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    requestor: Requestor = "assistant"


class T2Message(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["assistant", "user", "tool"]
    content: str | None = None
    tool_calls: list[T2ToolCall] | None = None
    tool_call_id: str | None = None
    requestor: Requestor | None = None
    error: bool = False


class Conversation(BaseModel):
    """One record of a `tau2 grade` input file (other fields are ignored)."""

    model_config = ConfigDict(extra="ignore")
    domain: str
    task_id: str
    termination_reason: TerminationReason
    messages: list[T2Message]
