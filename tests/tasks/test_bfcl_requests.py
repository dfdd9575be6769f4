"""Request-level fidelity on a few entries: bfcl-eval's OpenAI handlers and our task,
against the same recording server, send the same prompts (benchmarks/
bfcl_request_comparison.py; its full run covers 40 gold + 40 perturbed entries)."""

from __future__ import annotations

import importlib.util
import random
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

from tests.tasks.bfcl_helpers import gold_turns, keyword_form

ROOT = Path(__file__).resolve().parents[2]

#: request options (not prompt) that still differ, and why they may
ALLOWED_OPTIONS = {
    "chat": {"store", "tool_choice"},  # store: false not sent; tool_choice "auto" = default
    "responses": {"include<length>", "reasoning"},  # what the API returns, not what it reads
}


@cache
def comparison() -> ModuleType:
    path = ROOT / "benchmarks" / "bfcl_request_comparison.py"
    spec = importlib.util.spec_from_file_location("bfcl_request_comparison", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


CASES = {"multi_turn_base_0": "gold", "multi_turn_base_1": "malformed_json",
         "multi_turn_long_context_2": "compact_json", "multi_turn_miss_func_3": "non_ascii_raw",
         "multi_turn_miss_param_4": "unknown_tool"}


@pytest.mark.parametrize("api", ["chat", pytest.param("responses", marks=pytest.mark.slow)])
def test_official_handlers_and_our_task_send_the_same_prompts(api: str, tmp_path: Path) -> None:
    module = comparison()
    rng = random.Random(0)
    scripts = {}
    for entry_id, kind in CASES.items():
        gold = keyword_form(entry_id, gold_turns(entry_id))
        turns = gold if kind == "gold" else module.perturb(kind, gold, rng)
        assert turns is not None
        scripts[entry_id] = turns
    report = module.compare(scripts, CASES, api, tmp_path)
    assert report.entries == len(CASES) and report.requests > 2 * len(CASES)
    assert dict(report.prompt_differences) == {}
    assert report.verdicts_equal == len(CASES), report.verdict_disagreements
    assert set(report.option_differences) <= ALLOWED_OPTIONS[api]
    assert 0 < report.valid < len(CASES)  # a perturbation fails, gold passes
