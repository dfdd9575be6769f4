"""The canonical `Trajectory` record: one multi-turn episode over one or more environments.

Everything that carries an episode — held-out tasks, synthesized training data, Inspect
logs converted after a run, LlamaFactory/verl exports, Hub datasets — is a Trajectory
(JSONL, one per line) or is converted from one; nothing builds those formats by hand.

A *task* is a Trajectory whose turns hold the user's words and the gold calls (with
masked arguments) and whose states are the gold ones; a *run* fills `calls` and
`assistant` with what a model did and `final_state` with where it left the world.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from envs.errors import ErrorKind
from envs.jsonl import read_records, write_atomic
from envs.names import qualify

__all__ = [
    "ERROR_KIND_KEY",
    "Call",
    "Message",
    "MessageCall",
    "Provenance",
    "Role",
    "Trajectory",
    "Turn",
    "read_jsonl",
    "write_jsonl",
]

#: who speaks or whose toolkit runs a call: the agent ("assistant") or the (simulated) user
Role = Literal["assistant", "user"]

#: where a tool message's `ErrorKind` rides in Inspect's `ChatMessageTool.metadata` (never
#: sent to a model), beside the `Message.error_kind` of the canonical record
ERROR_KIND_KEY = "error_kind"


class Call(BaseModel):
    """One tool call on one environment (gold or observed)."""

    model_config = ConfigDict(extra="forbid")

    env: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    #: gold only: argument names whose value does not matter (formatting, paging, limits)
    masked_arguments: list[str] = Field(default_factory=list)
    #: observed only: what the environment answered
    ok: bool | None = None
    result: Any = None
    #: observed only: why the call failed (None when it did not, or in records written
    #: before kinds existed)
    error_kind: ErrorKind | None = None

    @property
    def qualified_name(self) -> str:
        return qualify(self.env, self.name)


class MessageCall(BaseModel):
    """One tool call inside a recorded message, as the model wrote it."""

    model_config = ConfigDict(extra="ignore")

    id: str = ""
    #: the name the model used (qualified `env-tool` where the episode has several envs)
    name: str
    #: the decoded arguments that ran (empty when they could not be decoded)
    arguments: dict[str, Any] = Field(default_factory=dict)
    #: the provider's argument string, when it was captured (official decoders read it)
    raw_arguments: str | None = None
    #: why the arguments could not be decoded; such a call was never executed
    parse_error: str | None = None
    #: whose toolkit ran the call (τ²'s solo agent runs phone tools on the user's side)
    requestor: Role = "assistant"


class Message(BaseModel):
    """One message of an episode, in the order it happened: what the agent or the user
    said (with tool calls), or a tool result returned to one of them."""

    model_config = ConfigDict(extra="ignore")

    role: Literal["system", "assistant", "user", "tool"]
    content: str | None = None
    tool_calls: list[MessageCall] | None = None
    #: tool results: the call answered, and whose history received it
    tool_call_id: str | None = None
    requestor: Role | None = None
    error: bool = False
    #: a failed tool result's kind (`envs.errors`); None on success and in records
    #: written before kinds existed, which still load
    error_kind: ErrorKind | None = None
    #: index of the user turn the message belongs to (None before the first user turn)
    turn: int | None = None


class Turn(BaseModel):
    """One user turn: the user's words, the gold calls, and (for runs) what happened."""

    model_config = ConfigDict(extra="forbid")

    user: str
    gold_calls: list[Call] = Field(default_factory=list)
    #: gold state of every environment after this turn's gold calls
    gold_state_after: dict[str, dict[str, Any]] | None = None
    #: observed: the agent's calls and final text answer in this turn
    calls: list[Call] = Field(default_factory=list)
    assistant: str | None = None


class Provenance(BaseModel):
    model_config = ConfigDict(extra="allow")

    source: str = Field(description="who made it: 'hand-written', 'querygen', 'inspect-log', ...")
    split: str | None = Field(default=None, description="'train' or 'heldout' for tasks")
    domain: str | None = None
    #: refinement patterns the user turns use (implicit_reference, action_compression,
    #: reasonable_ambiguity, goal_expansion)
    patterns: list[str] = Field(default_factory=list)
    model: str | None = None


class Trajectory(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    environments: list[str]
    initial_state: dict[str, dict[str, Any]] = Field(
        description="env name -> snapshot before the first turn")
    turns: list[Turn]
    final_state: dict[str, dict[str, Any]] | None = Field(
        default=None, description="env name -> snapshot after the last turn (gold for tasks)")
    #: env name -> dotted state paths the task declares irrelevant to R_state
    ignore_state_paths: dict[str, list[str]] = Field(default_factory=dict)
    #: runs: every message in order (the turns above are a per-user-turn view of it)
    messages: list[Message] = Field(default_factory=list)
    #: runs: why the episode ended (`harness.episode.Termination` values)
    termination: str | None = None
    provenance: Provenance
    metadata: dict[str, Any] = Field(default_factory=dict)

    def gold_calls(self) -> list[Call]:
        return [c for t in self.turns for c in t.gold_calls]

    def observed_calls(self) -> list[Call]:
        return [c for t in self.turns for c in t.calls]


def read_jsonl(path: Path) -> list[Trajectory]:
    """Read trajectories; a bad line is reported with its file and line number."""
    return read_records(path, Trajectory.model_validate_json, "trajectory")


def write_jsonl(path: Path, trajectories: Iterable[Trajectory]) -> None:
    """Write trajectories, one per line as they come, replacing `path` atomically (an
    error while they are produced leaves `path` as it was)."""
    write_atomic(path, (t.model_dump_json(exclude_none=True) + "\n" for t in trajectories))
