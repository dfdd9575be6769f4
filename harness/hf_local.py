"""`--model hf/local -M model_path=DIR`: keep Inspect from asking the Hub about "local".

After each model call Inspect looks the model's context window up (`get_model_info`).
For an `hf/` name it does not know, that lookup builds a second provider from the name
alone, so transformers asks the Hub for a repository called `local`; offline, that is
two rounds of five retries (about 50 s of a tiny sample's 6 s, unless the user knew to
set `HF_HUB_OFFLINE=1`). Registering the label's model info answers the lookup
locally. The label is the one the README, `make demo` and `envfactory models prepare`
use; the model itself always comes from `model_path`.
"""

from __future__ import annotations

from inspect_ai.model import ModelInfo, set_model_info

__all__ = ["LOCAL_LABEL", "register"]

#: the model name our recipes give a local directory (`hf/<label>`)
LOCAL_LABEL = "hf/local"


def register() -> None:
    """Known to Inspect without a Hub lookup (no context window: Inspect then simply
    skips its usage display)."""
    set_model_info(LOCAL_LABEL, ModelInfo(organization="local directory (model_path)"))
