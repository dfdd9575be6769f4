"""Which candidates of a turn pass, and which of them agree (the acceptance rule).

A candidate passes when its episode ended normally (the solver answered in text, or the
simulated user was satisfied), it called every tool the chain asks of the turn, and its
final state is known. A turn is accepted only when at least two passing candidates leave
the world in the same state: agreement is the evidence that the query determines the
outcome. The largest agreeing group wins (ties: the earliest candidate's group).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from synthesis.querygen.rollout import Candidate

__all__ = ["agreeing", "passes"]

ENDED_WELL = ("turns_done", "user_stop")


def passes(c: Candidate, targets: Sequence[tuple[str, str]]) -> bool:
    called = {(call.env, call.name) for call in c.calls}
    return (c.termination in ENDED_WELL and c.final_state is not None
            and all(t in called for t in targets))


def agreeing(candidates: Sequence[Candidate]) -> list[int]:
    """Indices of the largest group of candidates with equal final states (empty when no
    two agree)."""
    groups: dict[str, list[int]] = {}
    for i, c in enumerate(candidates):
        groups.setdefault(json.dumps(c.final_state, sort_keys=True), []).append(i)
    best = max(groups.values(), key=len, default=[])
    return best if len(best) >= 2 else []
