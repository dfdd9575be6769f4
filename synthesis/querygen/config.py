"""QueryGen's knobs and the three released presets (envfactory.md §9).

A preset is only a named `QueryGenConfig`; every field can be overridden per run, so the
runner can record exactly what produced a trajectory (the config is kept in provenance).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PRESETS", "QueryGenConfig", "preset"]

PresetName = Literal["sft_conv", "sft_nonconv", "rl_nonconv"]


class QueryGenConfig(BaseModel):
    """How one chain becomes a trajectory."""

    model_config = ConfigDict(extra="forbid")

    preset: str = "sft_nonconv"
    #: candidate solver rollouts per turn (the release's pass_k)
    pass_k: int = Field(default=4, ge=1)
    #: tool-calling steps a rollout may take in one turn (the release's max_solve)
    max_solve: int = Field(default=15, ge=1)
    #: rewrite queries with the four refinement patterns
    refine: bool = False
    #: a simulated user talks to the solver (conversational data) and a judge grades it
    user_interaction: bool = False
    #: the step filter decides per turn whether to keep it and which arguments are masked
    filter_steps: bool = False
    #: "default": each env's seeded state; "llm": written by the synth model for the scenario
    initial_state: Literal["default", "llm"] = "default"
    #: retries after a malformed reply (or an invalid written state), with feedback
    retries: int = Field(default=2, ge=0)
    #: user messages the simulated user may send in one turn (conversational presets)
    max_user_messages: int = Field(default=4, ge=1)
    #: the split trajectories are written for (provenance)
    split: str = "train"
    #: "release": the release's prompts and per-turn state machine (release_pipeline);
    #: "ours": our rewritten prompts, seeded start states and state agreement (synthesize)
    pipeline: Literal["release", "ours"] = "release"
    #: release pipeline: how a turn's candidate is chosen: "llm" the release's
    #: SolutionSelector; "state" our agreement rule (largest group of >= 2 equal final
    #: states, its first); "both" the selector among that group
    select: Literal["llm", "state", "both"] = "llm"
    #: release pipeline: attempts per agent reply (the release's max_retry)
    max_retry: int = Field(default=4, ge=1)
    #: release pipeline: state-machine steps per turn (the release's max_iterations)
    max_iterations: int = Field(default=10, ge=1)
    #: release pipeline: simulated-user replies per assistant message
    #: (the release's max_interaction_iterations)
    max_interaction: int = Field(default=5, ge=1)


PRESETS: dict[str, QueryGenConfig] = {
    "sft_conv": QueryGenConfig(preset="sft_conv", refine=True, user_interaction=True),
    "sft_nonconv": QueryGenConfig(preset="sft_nonconv"),
    "rl_nonconv": QueryGenConfig(preset="rl_nonconv", filter_steps=True),
}


def preset(name: str, **overrides: object) -> QueryGenConfig:
    """A preset's config, with any field overridden."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; use {', '.join(PRESETS)}")
    return QueryGenConfig.model_validate({**PRESETS[name].model_dump(), **overrides})
