"""What QueryGen makes of one chain: a kept trajectory or a rejection with a stable reason.

Both pipelines (ours in `synthesize`, the release's in `release_pipeline`) return these, so
the runner, its files and the exports do not depend on which ran.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from harness.trajectory import Trajectory

__all__ = ["Kept", "Outcome", "Rejected"]


class Kept(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    kind: Literal["kept"] = "kept"
    trajectory: Trajectory
    #: mean over turns of accepted candidates / k (difficulty)
    accept_rate: float


class Rejected(BaseModel):
    kind: Literal["rejected"] = "rejected"
    #: stable key: no_candidate_passed, candidates_disagree, judge_failed, filtered,
    #: check_failed, initial_state_invalid, malformed_reply, model_error
    reason: str
    detail: str
    turn: int | None = None


Outcome = Kept | Rejected
