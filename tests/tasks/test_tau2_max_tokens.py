"""`--max-tokens` bounds the simulated user as well as the agent.

Inspect applies an eval's generate config to the main model only; a user role on its own
model (a second local model, say) generated to its provider's default instead (2,048
tokens a turn for `hf/`, 15+ minutes for one τ² sample of SmolLM2 on CPU)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import GenerateConfig

from tasks.tau2.tau2 import tau2_airline
from testkit.scripted import ScriptedModel, by_own_turns
from tests.shared_data import needs_tau2

pytestmark = [needs_tau2, pytest.mark.usefixtures("use_tau2_data")]
USER = ["I need to change a flight.", "###STOP###"]


def run(tmp_path: Path, user: ScriptedModel, **options: Any) -> list[int | None]:
    """Run sample 0 with a scripted agent; the max_tokens of each agent request."""
    agent = by_own_turns(["How can I help?"])
    (log,) = inspect_eval(tau2_airline(), model=agent.model,
                          model_roles={"user": user.model}, sample_id="0",
                          log_dir=str(tmp_path), display="none", **options)
    assert log.status == "success", log.error
    return max_tokens(agent)


def max_tokens(model: ScriptedModel) -> list[int | None]:
    return [r.config.max_tokens for r in model.requests]


def test_the_cli_max_tokens_reaches_the_user_role(tmp_path: Path) -> None:
    user = by_own_turns(USER)
    assert run(tmp_path / "cli", user, max_tokens=64) == [64]
    assert max_tokens(user) == [64, 64]


def test_without_it_no_bound_is_sent_and_the_roles_own_wins(tmp_path: Path) -> None:
    user = by_own_turns(USER)
    assert run(tmp_path / "none", user) == [None]
    assert max_tokens(user) == [None, None]  # nor does upstream
    own = by_own_turns(USER, GenerateConfig(max_tokens=16))
    run(tmp_path / "own", own, max_tokens=64)
    assert max_tokens(own) == [16, 16]
