"""Why a tool call failed, and the one wording the model reads for each reason.

A failed call's text is what a model learns from, so the same mistake must read the same
everywhere it can be made: in an evaluation episode, in a QueryGen rollout and in a verl
rollout (train/eval skew otherwise). Every producer of a failed result (`Environment.call`,
`World`, the harness's tool backends, the verl session, MCP serving) therefore sets an
`ErrorKind` and, where the words are ours, takes them from the functions below. Ports of
benchmarks (τ², VitaBench, BFCL's executor, MCP-Atlas) keep their upstream text byte for
byte and only add the kind, so the failure taxonomy reads kinds instead of matching text.

The exceptions of the environment contract (`ToolError`, `StateError`) live here too,
with the formatting of the validation errors they carry.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Any

from pydantic import ValidationError

__all__ = [
    "ErrorKind",
    "StateError",
    "ToolError",
    "failed",
    "invalid_arguments",
    "not_an_object",
    "state_error",
    "timeout",
    "unknown_tool",
    "validation_problems",
]


class ErrorKind(StrEnum):
    """The reason a tool call failed, as every layer records it."""

    #: the caller was not offered a tool of that name (or it is another requestor's)
    UNKNOWN_TOOL = "unknown_tool"
    #: the arguments could not be decoded, are not an object, or break the tool's schema
    INVALID_ARGUMENTS = "invalid_arguments"
    #: the tool ran and refused by its own rules (a `ToolError`: "insufficient funds")
    REFUSED = "refused"
    #: the tool (or the machinery around it) raised something it did not mean to
    FAILED = "failed"
    #: the call did not answer in time
    TIMEOUT = "timeout"


class ToolError(Exception):
    """Raised by a tool for a business-rule failure; its message is shown to the model
    (kind `refused`; raised while parsing arguments, `invalid_arguments`)."""


class StateError(ValueError):
    """A snapshot that is not a state of this environment; the message names each bad
    field (a path such as `accounts.AC1001.balance_cents`) on one line."""


# -- the wordings (ours; benchmark ports keep their own) ----------------------------------


def unknown_tool(name: object, available: Iterable[str]) -> str:
    """`unknown_tool`: the name as the model wrote it and the names it was offered."""
    return f"Unknown tool {name!r}. Available tools: {', '.join(sorted(available))}."


def invalid_arguments(name: str, problems: Sequence[str]) -> str:
    """`invalid_arguments`: every problem found, on one line."""
    return f"Invalid arguments for tool {name!r}: " + "; ".join(problems) + "."


def not_an_object(arguments: object) -> str:
    """The problem of an arguments value that is not a JSON object."""
    return f"the arguments must be an object, got {type(arguments).__name__}"


def validation_problems(error: ValidationError) -> list[str]:
    """Pydantic's errors for an arguments model, one short phrase each."""
    problems = []
    for err in error.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        if err["type"] == "extra_forbidden":
            problems.append(f"unexpected argument {where!r}")
        elif err["type"] == "missing":
            problems.append(f"missing required argument {where!r}")
        else:
            problems.append(f"argument {where!r}: {err['msg']}")
    return problems


def failed(name: str, error: BaseException, *, ran: bool = True) -> str:
    """`failed`: the exception's type and message. `ran=False`: nothing ran (the write's
    undo record could not be taken), which the model may want to know before retrying."""
    if not ran:
        return (f"Tool {name!r} was not run: taking its undo record failed: "
                f"{type(error).__name__}: {error}")
    return f"Tool {name!r} failed: {type(error).__name__}: {error}"


def timeout(name: str, seconds: float) -> str:
    """`timeout`: how long the call was given."""
    return f"Tool {name!r} timed out after {seconds:g}s."


# -- StateError's message -------------------------------------------------------------

#: problems listed in a StateError before "and N more"
_MAX_STATE_PROBLEMS = 5


def state_error(label: str, error: ValidationError) -> str:
    """One line naming each bad field of a snapshot (the first few, then a count)."""
    problems = []
    for err in error.errors()[:_MAX_STATE_PROBLEMS]:
        where = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            problems.append(f"unknown field {where!r}")
        elif err["type"] == "missing":
            problems.append(f"missing field {where!r}")
        elif where:
            problems.append(f"field {where!r}: {_message(err['msg'])} "
                            f"(got {_preview(err['input'])})")
        else:
            problems.append(f"{_message(err['msg'])} (got {_preview(err['input'])})")
    more = error.error_count() - len(problems)
    tail = f"; and {more} more" if more > 0 else ""
    return f"Invalid {label}: " + "; ".join(problems) + tail + "."


def _message(msg: str) -> str:
    return msg.removeprefix("Value error, ")  # pydantic's prefix for a validator's ValueError


def _preview(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
