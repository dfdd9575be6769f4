"""`--max-tokens` bounds the simulated user as well as the agent.

Inspect applies an eval's generate config to the main model only; a user role on its own
model (a second local model, say) generated to its provider's default instead (2,048
tokens a turn for `hf/`, 15+ minutes for one τ² sample of SmolLM2 on CPU)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)

from tasks.tau2.tau2 import tau2_airline
from tests.shared_data import needs_tau2

pytestmark = [needs_tau2, pytest.mark.usefixtures("use_tau2_data")]
USER = ["I need to change a flight.", "###STOP###"]


def saying(texts: list[str], seen: list[int | None],
           config: GenerateConfig | None = None) -> Model:
    """A model that says `texts` in turn (the last one again after that) and records each
    request's max_tokens."""

    def respond(input: Any, tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
        seen.append(config.max_tokens)
        text = texts[min(len(seen), len(texts)) - 1]
        return ModelOutput(model="mock", choices=[ChatCompletionChoice(
            message=ChatMessageAssistant(content=text))],
            usage=ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2))  # no tiktoken

    return get_model("mockllm/model", custom_outputs=respond, memoize=False,
                     config=config or GenerateConfig())


def run(tmp_path: Path, user: Model, agent_seen: list[int | None], **options: Any) -> None:
    (log,) = inspect_eval(tau2_airline(), model=saying(["How can I help?"], agent_seen),
                          model_roles={"user": user}, sample_id="0", log_dir=str(tmp_path),
                          display="none", **options)
    assert log.status == "success", log.error


def test_the_cli_max_tokens_reaches_the_user_role(tmp_path: Path) -> None:
    agent_seen: list[int | None] = []
    user_seen: list[int | None] = []
    run(tmp_path / "cli", saying(USER, user_seen), agent_seen, max_tokens=64)
    assert agent_seen == [64] and user_seen == [64, 64]


def test_without_it_no_bound_is_sent_and_the_roles_own_wins(tmp_path: Path) -> None:
    agent_seen: list[int | None] = []
    user_seen: list[int | None] = []
    run(tmp_path / "none", saying(USER, user_seen), agent_seen)
    assert agent_seen == [None] and user_seen == [None, None]  # nor does upstream
    user_seen.clear()
    run(tmp_path / "own", saying(USER, user_seen, GenerateConfig(max_tokens=16)),
        agent_seen, max_tokens=64)
    assert user_seen == [16, 16]
