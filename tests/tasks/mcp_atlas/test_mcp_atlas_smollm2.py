"""A real model on MCP-Atlas: the embedded SmolLM2-135M through Inspect's `hf/` provider,
on two runnable sample tasks, against the real servers. What is checked is that the run
completes and is scored (a 135M model is not expected to solve them); the judge is
scripted so that only the agent's model runs on the CPU."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from tasks.mcp_atlas.mcp_atlas import mcp_atlas
from tests.shared_data import needs_mcp_atlas
from tests.tasks.mcp_atlas.test_mcp_atlas_task import _needs, claim_judge
from training import local_models

pytestmark = [needs_mcp_atlas, pytest.mark.usefixtures("use_mcp_atlas_data"),
              pytest.mark.slow]


def test_smollm2_completes_two_tasks_on_the_real_servers(tmp_path: Path) -> None:
    _needs("calculator", "filesystem")
    try:
        model_dir = local_models.prepare_smollm2(tmp_path / local_models.SMOLLM2_DIRNAME)
    except local_models.LocalModelUnavailable as e:
        pytest.skip(str(e))
    (log,) = inspect_eval(
        mcp_atlas(judge=claim_judge()), model="hf/local",
        model_args={"model_path": str(model_dir), "device": "cpu", "do_sample": False},
        sample_id=["4b5c6d7e8f", "5c6d7e8f9a"],
        max_tokens=64, log_dir=str(tmp_path / "logs"), display="none", max_samples=1)
    assert log.status == "success", log.error
    assert len(log.samples or []) == 2
    for sample in log.samples or []:
        score = sample.scores["mcp_atlas_scorer"]
        assert score.value is not None and 0.0 <= float(score.value) <= 1.0
        assert score.metadata["termination"] in ("turns_done", "max_tool_calls")
        assert sample.metadata["servers_started"]
        assert sample.messages[0].role == "user"
