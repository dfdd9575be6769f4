"""QueryGen: a sampled tool chain becomes a checked multi-turn trajectory (contract 5).

`synthesize(chain, config, traj_id=...)` returns `Kept` or `Rejected`; `preset(name)`
gives the released configurations (sft_conv, sft_nonconv, rl_nonconv). `config.pipeline`
picks the release's prompts and state machine (`release_pipeline`, the default) or ours.
"""

from synthesis.querygen.config import PRESETS, QueryGenConfig, preset
from synthesis.querygen.synthesize import ROLES, Kept, Outcome, Rejected, resolve_models, synthesize

__all__ = ["PRESETS", "ROLES", "Kept", "Outcome", "QueryGenConfig", "Rejected", "preset",
           "resolve_models", "synthesize"]
