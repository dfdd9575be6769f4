"""Shared helpers for the BFCL multi-turn tests: running the task in-process and the
reference verdict the official pipeline gives for a recorded trajectory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
from bfcl_eval.model_handler.utils import convert_to_function_call
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

from envs.bfcl import package
from envs.bfcl.environment import forget_instances, new_run_key
from harness.providers.script import parse_call
from tasks._bfcl.multiturn import MAXIMUM_STEP_LIMIT, _positional_order
from tasks.bfcl_multiturn.bfcl_multiturn import bfcl_multiturn

Turns = list[list[list[str]]]  # turns -> steps -> call strings


def entry_and_gt(entry_id: str) -> tuple[dict[str, Any], list[list[str]]]:
    category = entry_id.rsplit("_", 1)[0]
    entry = next(e for e in package.load_jsonl(package.data_file(category))
                 if e["id"] == entry_id)
    gt = next(g["ground_truth"] for g in package.load_jsonl(
        package.data_file(category, possible_answer=True)) if g["id"] == entry_id)
    return entry, gt


def run_task(model: Any, sample_ids: list[str], log_dir: Path, **model_args: Any) -> EvalLog:
    categories = sorted({i.removeprefix("multi_turn_").rsplit("_", 1)[0] for i in sample_ids})
    (log,) = inspect_eval(
        bfcl_multiturn(category=",".join(categories)), model=model, model_args=model_args,
        sample_id=sample_ids, log_dir=str(log_dir), display="none", max_samples=64,
    )
    return log


def verdicts(log: EvalLog) -> dict[str, bool]:
    assert log.samples is not None
    out = {}
    for s in log.samples:
        assert s.error is None, f"{s.id}: {s.error}"
        out[str(s.id)] = next(iter(s.scores.values())).value == "C"  # type: ignore[union-attr]
    return out


def write_replay(path: Path, records: dict[str, Turns]) -> Path:
    with path.open("w") as f:
        for entry_id, turns in records.items():
            f.write(json.dumps({"id": entry_id, "turns": turns}) + "\n")
    return path


def official_verdict(entry_id: str, turns: Turns) -> bool:
    """What bfcl-eval's runner + checker say about a model that emitted `turns`.

    Independent of Inspect: decode each step with the official FC decoder (as the
    runner does), apply the runner's 20-step force-quit and turn-count rule, then call
    `multi_turn_checker` directly.
    """
    entry, gt = entry_and_gt(entry_id)
    positional: dict[str, list[str]] = {}
    for c in entry["involved_classes"]:
        positional.update(_positional_order(c))
    decoded: Turns = []
    for t in range(len(entry["question"])):
        steps = turns[t] if t < len(turns) else []
        turn_decoded = []
        for step in steps:
            calls = [parse_call(s, positional) for s in step]
            turn_decoded.append(convert_to_function_call(
                [{c.function: c.arguments} for c in calls]))
            if len(turn_decoded) > MAXIMUM_STEP_LIMIT:
                break
        decoded.append(turn_decoded)
        if len(turn_decoded) > MAXIMUM_STEP_LIMIT:
            break
    if len(decoded) != len(gt):
        return False
    run_key = new_run_key()
    try:
        return bool(multi_turn_checker(decoded, gt, entry, entry_id.rsplit("_", 1)[0],
                                       run_key)["valid"])
    finally:
        forget_instances(run_key)
