"""The edited oracle: gold play with one deliberate change, for negative controls.

The episode loop publishes, before every model call, where the call happens and what the
gold next message is (`harness.gold.publish`). `envfactory/oracle` plays it as it is; the
edited oracle plays `edit(gold, position)` instead, so a test states only the mistake (a
wrong argument, a skipped turn, an extra call, an unparseable call) and everything else
stays gold. Whatever the benchmark, the gold comes from its own policy, never from a copy
of the script in the test.
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai.model import Model

from harness.gold import GoldMessage, Position, published
from testkit.scripted import Answer, Request, call, message, scripted

__all__ = ["Edit", "edited_oracle", "gold_answer"]

#: (the gold message a copy, where the call is) -> what to play instead; a GoldMessage is
#: played as gold would be, any other answer (say, a call with a parse error) as it is
Edit = Callable[[GoldMessage, Position], GoldMessage | Answer]


def gold_answer(gold: GoldMessage, position: Position) -> Answer:
    """The assistant message that plays `gold` at `position` (ids unique per position)."""
    prefix = f"gold_{position.role}_{position.turn}_{position.step}"
    return message(gold.text, [call(c.function, c.arguments, id=f"{prefix}_{i}")
                               for i, c in enumerate(gold.calls)])


def edited_oracle(edit: Edit) -> Model:
    """A model that plays, at every call, `edit` of the gold the loop published."""

    def respond(request: Request) -> Answer:
        position, gold = published()
        assert position is not None and gold is not None, (
            "the edited oracle needs a benchmark that publishes its gold (a GoldPolicy)")
        edited = edit(gold.model_copy(deep=True), position)
        return gold_answer(edited, position) if isinstance(edited, GoldMessage) else edited

    return scripted(respond)
