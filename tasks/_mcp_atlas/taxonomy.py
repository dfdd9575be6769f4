"""MCP-Atlas failure modes read from the transcript alone.

Upstream (`services/diagnostics/mcp_failure_taxonomy.py`, 5b6220c) defines 11 modes in two
families — 4 tool-call, 7 cognitive — and labels failed runs with an LLM judge
(`single_model_diagnostic.py`). Five of them can be read from what happened, without a
judge: the canonical messages, how the episode ended, the task's enabled tools and the
servers its reference trajectory needed. `diagnose` labels those, each with its evidence:

- `no_tool_use`: no tool call at all, though the reference needed servers.
- `malformed_call`: a call whose arguments could not be decoded (never executed), or a tool
  error whose text reports bad or missing arguments (validation errors).
- `wrong_tool`: a call to a tool the task did not offer, or calls only to servers the
  reference never needed.
- `err_recovery`: a tool error followed by the identical call again (same tool, same
  arguments), or the run ending right after errors (its last tool result is an error).
- `early_termination`: the run stopped at the tool-call limit, or answered having called
  some but not all of the servers the reference needed.

The other six (`task_misunderstanding`, `faulty_synthesis`, `response_misparsing`,
`hallucinated_fact`, `logical_error`, `constraint_violation`) need a judge that reads the
prompt, the tool outputs and the answer; they are listed as not labelled, never guessed.
The labels are diagnostics for the leaderboard: they do not change the score, and a run
that passes can still show a mode (e.g. an error it recovered from in another way).

A tool result counts as an error when the harness flagged it (`Message.error`) or its text
starts with `Error:` (how upstream's harness words a failed call).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, Field, computed_field

from harness.episode import Termination
from harness.trajectory import Message, MessageCall
from tasks._mcp_atlas.dataset import server_of

__all__ = ["ALL_MODES", "COGNITIVE_MODES", "JUDGE_ONLY", "LABELLED", "MAX_TOOL_CALLS",
           "TOOL_CALL_MODES", "Diagnosis", "Failure", "diagnose"]

#: upstream's modes, in its order (identifiers of `TOOL_CALL_MODES` / `COGNITIVE_MODES`)
TOOL_CALL_MODES = ("malformed_call", "wrong_tool", "no_tool_use", "err_recovery")
COGNITIVE_MODES = ("task_misunderstanding", "faulty_synthesis", "response_misparsing",
                   "early_termination", "hallucinated_fact", "logical_error",
                   "constraint_violation")
ALL_MODES = TOOL_CALL_MODES + COGNITIVE_MODES
#: the modes `diagnose` reads from the transcript
LABELLED = ("malformed_call", "wrong_tool", "no_tool_use", "err_recovery", "early_termination")
#: the modes only a judge can label
JUDGE_ONLY = tuple(m for m in ALL_MODES if m not in LABELLED)
#: upstream's harness stops after this many tool calls (`DEFAULT_MAX_TOOL_CALLS`)
MAX_TOOL_CALLS = 100
#: endings at the tool-call limit (or another step limit)
_LIMIT_ENDINGS = frozenset({Termination.MAX_TOOL_CALLS, Termination.MAX_STEPS,
                            Termination.TURN_STEP_LIMIT})

#: tool-error texts that report the arguments, not the tool or its data, as the problem
_ARGUMENT_ERROR = re.compile(
    r"invalid (?:argument|param|input|type|value)|validation error|input validation"
    r"|missing (?:required )?(?:argument|param|field|property|key)|required (?:argument|param"
    r"|field|property)|field required|is a required property|invalid_type|unexpected keyword"
    r"|unrecognized (?:argument|key|field|param)|expected [\w\s]+, (?:got|received)"
    r"|must be (?:a|an|of type) ", re.IGNORECASE)


class Failure(BaseModel):
    """One failure mode seen in a run."""

    mode: Literal["malformed_call", "wrong_tool", "no_tool_use", "err_recovery",
                  "early_termination"]
    category: Literal["tool_call", "cognitive"]
    #: what in the transcript shows it
    evidence: str


class Diagnosis(BaseModel):
    """The failure modes of one run that the transcript shows (score metadata)."""

    failures: list[Failure] = Field(default_factory=list)
    #: the modes a judge would have to label (not looked at here)
    not_labelled: list[str] = Field(default_factory=lambda: list(JUDGE_ONLY))
    tool_calls: int = 0
    tool_errors: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def modes(self) -> list[str]:
        """The modes seen, in upstream's order (what the leaderboard counts)."""
        return [f.mode for f in self.failures]


def _is_error(message: Message) -> bool:
    return message.error or (message.content or "").startswith("Error:")


def _first_line(text: str | None, limit: int = 160) -> str:
    line = (text or "").strip().split("\n", 1)[0]
    return line if len(line) <= limit else line[:limit] + "..."


def _signature(call: MessageCall) -> tuple[str, str]:
    arguments = call.raw_arguments if call.parse_error else json.dumps(call.arguments,
                                                                        sort_keys=True)
    return call.name, arguments or ""


def _listed(names: Iterable[str]) -> str:
    return ", ".join(sorted(set(names)))


def _malformed(calls: list[MessageCall], results: dict[str, Message]) -> str | None:
    undecodable = [c for c in calls if c.parse_error]
    rejected = [(c, r) for c in calls if (r := results.get(c.id)) is not None
                and _is_error(r) and _ARGUMENT_ERROR.search(r.content or "")]
    if not undecodable and not rejected:
        return None
    shown = [f"{c.name}: undecodable arguments ({_first_line(c.parse_error)})"
             for c in undecodable[:3]]
    shown += [f"{c.name}: {_first_line(r.content)}" for c, r in rejected[:3]]
    return (f"{len(undecodable)} undecodable, {len(rejected)} rejected for their arguments: "
            + "; ".join(shown))


def _wrong_tool(calls: list[MessageCall], offered: set[str], used: set[str],
                required: set[str]) -> str | None:
    if not_offered := [c.name for c in calls if c.name not in offered]:
        return f"called tools not offered: {_listed(not_offered)}"
    if used and required and not used & required:
        return f"called only {_listed(used)}; the reference needed {_listed(required)}"
    return None


def _err_recovery(calls: list[MessageCall], results: dict[str, Message],
                  tool_messages: list[Message]) -> str | None:
    evidence = []
    repeated = [call.name for i, call in enumerate(calls)
                if (r := results.get(call.id)) is not None and _is_error(r)
                and _signature(call) in {_signature(c) for c in calls[i + 1:]}]
    if repeated:
        evidence.append(f"repeated a failed call unchanged: {_listed(repeated)}")
    if tool_messages and _is_error(tool_messages[-1]):
        evidence.append(f"ended right after a tool error "
                        f"({_first_line(tool_messages[-1].content)})")
    return "; ".join(evidence) or None


def _early_termination(calls: list[MessageCall], termination: Termination | None,
                       used: set[str], required: set[str], max_tool_calls: int) -> str | None:
    if termination in _LIMIT_ENDINGS or len(calls) >= max_tool_calls:
        return f"stopped at the tool-call limit ({len(calls)} calls, ending {termination})"
    if used & required and (missing := required - used):
        return f"answered without calling {_listed(missing)}, which the reference needed"
    return None


def diagnose(messages: Sequence[Message], termination: Termination | None, *,
             enabled_tools: Collection[str], required_servers: Collection[str],
             servers: Iterable[str], max_tool_calls: int = MAX_TOOL_CALLS) -> Diagnosis:
    """The transcript-readable failure modes of one run (see the module docstring).

    `servers` are every server's name (the release template's), used to tell which server
    a tool belongs to; `required_servers` those the task's reference trajectory called.
    """
    known, required = list(servers), set(required_servers)
    calls = [c for m in messages if m.role == "assistant" for c in m.tool_calls or []]
    tool_messages = [m for m in messages if m.role == "tool"]
    results = {m.tool_call_id: m for m in tool_messages if m.tool_call_id is not None}
    used = {s for c in calls if (s := server_of(c.name, known)) is not None}
    found = {
        "malformed_call": _malformed(calls, results),
        "wrong_tool": _wrong_tool(calls, set(enabled_tools), used, required),
        "no_tool_use": (f"no tool call; the reference needed {_listed(required)}"
                        if not calls and required else None),
        "err_recovery": _err_recovery(calls, results, tool_messages),
        "early_termination": _early_termination(calls, termination, used, required,
                                                max_tool_calls),
    }
    failures = [Failure.model_validate({
        "mode": mode, "evidence": found[mode],
        "category": "tool_call" if mode in TOOL_CALL_MODES else "cognitive"})
        for mode in ALL_MODES if found.get(mode)]
    return Diagnosis(failures=failures, tool_calls=len(calls),
                     tool_errors=sum(_is_error(m) for m in tool_messages))
