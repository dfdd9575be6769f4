"""A τ² conversation record: the one input of the reward.

The conversation itself is the harness's canonical message list
(`harness.trajectory.Message`, written by the episode loop); `envfactory tau2 grade`
reads the same messages from files, so both entry points feed the same evaluator.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from harness.episode import Termination
from harness.trajectory import Message

__all__ = ["ZEROING", "Conversation"]

#: v0.x zeroes only MAX_STEPS and TOO_MANY_ERRORS (agent/user errors are still graded);
#: a conversation an Inspect limit cut short is unfinished in the same way.
ZEROING = {Termination.MAX_STEPS, Termination.TOO_MANY_ERRORS, Termination.LIMIT}


class Conversation(BaseModel):
    """One record of a `tau2 grade` input file (other fields are ignored)."""

    model_config = ConfigDict(extra="ignore")
    domain: str
    task_id: str
    termination_reason: Termination
    messages: list[Message]
