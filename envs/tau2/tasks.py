"""τ² task records (v0.2.0 schema): scenario for the user, initial state, and the
evaluation criteria the reward reads."""

from __future__ import annotations

import textwrap
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Action", "EnvAssertion", "EvaluationCriteria", "RewardType", "Task"]

TAB = "\t"


class RewardType(StrEnum):
    DB = "DB"
    ENV_ASSERTION = "ENV_ASSERTION"
    NL_ASSERTION = "NL_ASSERTION"
    ACTION = "ACTION"
    COMMUNICATE = "COMMUNICATE"


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Description(_Model):
    purpose: str | None = None
    relevant_policies: str | None = None
    notes: str | None = None


class Instructions(_Model):
    domain: str
    reason_for_call: str
    known_info: str | None = None
    unknown_info: str | None = None
    task_instructions: str


class UserScenario(_Model):
    persona: str | None = None
    instructions: Instructions | str

    def render(self) -> str:
        """The scenario text the user simulator reads (upstream's `str(user_scenario)`:
        tab-indented sections, optional ones only when present)."""
        lines = []
        if self.persona is not None:
            lines += ["Persona:", textwrap.indent(self.persona, "\t")]
        ins = self.instructions
        if isinstance(ins, str):
            body = ins
        else:
            parts = [f"Domain: {ins.domain}",
                     f"Reason for call:\n{textwrap.indent(ins.reason_for_call, TAB)}"]
            if ins.known_info is not None:
                parts.append(f"Known info:\n{textwrap.indent(ins.known_info, TAB)}")
            if ins.unknown_info is not None:
                parts.append(f"Unknown info:\n{textwrap.indent(ins.unknown_info, TAB)}")
            parts.append(f"Task instructions:\n{textwrap.indent(ins.task_instructions, TAB)}")
            body = "\n".join(parts)
        lines += ["Instructions:", textwrap.indent(body, TAB)]
        return "\n".join(lines)


class EnvFunctionCall(_Model):
    env_type: Literal["assistant", "user"]
    func_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class EnvAssertion(EnvFunctionCall):
    assert_value: bool = True
    message: str | None = None


class InitializationData(_Model):
    agent_data: dict[str, Any] | None = None
    user_data: dict[str, Any] | None = None


class InitialState(_Model):
    initialization_data: InitializationData | None = None
    initialization_actions: list[EnvFunctionCall] | None = None
    message_history: list[dict[str, Any]] | None = None


class Action(_Model):
    action_id: str
    requestor: Literal["assistant", "user"] = "assistant"
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    info: str | None = None
    compare_args: list[str] | None = None

    def matches(self, name: str, arguments: dict[str, Any]) -> bool:
        """Upstream `compare_with_tool_call` (v0.2): same name, then the two argument
        dicts restricted to `compare_args` (None: the call's own keys; []: name only)
        must be equal, with plain equality."""
        if name != self.name:
            return False
        keys = set(arguments) if self.compare_args is None else set(self.compare_args)
        if not keys:
            return True
        return ({k: v for k, v in arguments.items() if k in keys}
                == {k: v for k, v in self.arguments.items() if k in keys})


class EvaluationCriteria(_Model):
    actions: list[Action] | None = None
    env_assertions: list[EnvAssertion] | None = None
    communicate_info: list[str] | None = None
    nl_assertions: list[str] | None = None
    reward_basis: list[RewardType] = Field(
        default_factory=lambda: [RewardType.DB, RewardType.COMMUNICATE])


class Task(_Model):
    id: str
    description: Description | None = None
    user_scenario: UserScenario
    ticket: str | None = None
    initial_state: InitialState | None = None
    evaluation_criteria: EvaluationCriteria | None = None
