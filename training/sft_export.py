"""Trajectories -> LlamaFactory SFT samples, with the released sample rules.

One sample per *target*: an assistant step (its tool calls, or its text reply) together
with everything before it, so LlamaFactory trains on the last step only (`mask_history:
true` in our configs, as in the release). The rules (notes/envfactory.md §10):

- turns without any tool call are dropped entirely (neither targets nor history);
- a step whose call failed stays in the history of later samples but is never a target;
- tool names are the qualified `env-tool` names the evaluation shows;
- parallel calls of one step form one target.

Two layouts:

- ``sharegpt`` (default): `conversations` of `human` / `function_call` / `observation` /
  `gpt` turns, `tools` (JSON list of `{name, description, parameters}`), `system`.
  ShareGPT must alternate user-side and assistant-side turns, so a turn that ends on a tool
  result (a task's gold calls carry no closing text) gets `HISTORY_CLOSING` as its reply in
  the *history* of later samples; it is never a target.
- ``alpaca`` (the release's layout, for paper parity): `instruction` (the user's words or
  `<tool_response>` blocks), `input` "", `output` (text or `<tool_call>` blocks), `history`
  of earlier [instruction, output] pairs, `system` and `tools` (the release writes the tools
  into the system text; LlamaFactory's template renders the `tools` column the same way);
  consecutive inputs (tool results, then the next user message) merge into one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel

from envs.base import ToolSpec
from harness.prompts import AGENT_SYSTEM_PROMPT
from harness.trajectory import Trajectory
from training.conversation import Step, TurnExchange, exchange, tool_specs

__all__ = ["HISTORY_CLOSING", "SftFormat", "ToolsShown", "dataset_info_entry", "sft_samples",
           "tools_json"]

SftFormat = Literal["sharegpt", "alpaca"]
ToolsShown = Literal["all", "used"]

#: the history-only reply after a turn that ends on a tool result (sharegpt alternation)
HISTORY_CLOSING = "Done."


class _Target(BaseModel):
    """A sample to emit: the target step and the turns/steps before it."""

    turn: int
    step: int


def tools_json(specs: list[tuple[str, ToolSpec]]) -> str:
    """LlamaFactory's `tools` column: a JSON list of {name, description, parameters}."""
    return json.dumps([{"name": name, "description": spec.description,
                        "parameters": spec.parameters} for name, spec in specs],
                      ensure_ascii=False)


def _targets(turns: list[TurnExchange]) -> Iterator[_Target]:
    for t, turn in enumerate(turns):
        for s, step in enumerate(turn.steps):
            if not step.failed and (step.calls or step.text):
                yield _Target(turn=t, step=s)


def _call_json(step: Step) -> str:
    calls = [{"name": c.name, "arguments": c.arguments} for c in step.calls]
    return json.dumps(calls[0] if len(calls) == 1 else calls, ensure_ascii=False)


def _sharegpt(turns: list[TurnExchange], target: _Target) -> list[dict[str, str]]:
    conv: list[dict[str, str]] = []
    for t, turn in enumerate(turns[:target.turn + 1]):
        conv.append({"from": "human", "value": turn.user})
        last = target.step if t == target.turn else len(turn.steps) - 1
        for step in turn.steps[:last + 1]:
            if step.calls:
                conv.append({"from": "function_call", "value": _call_json(step)})
                if t < target.turn or step is not turn.steps[last]:
                    conv.append({"from": "observation",
                                 "value": "\n".join(c.result for c in step.calls)})
            else:
                conv.append({"from": "gpt", "value": step.text or ""})
        if t < target.turn and conv[-1]["from"] == "observation":
            conv.append({"from": "gpt", "value": HISTORY_CLOSING})
    return conv


def _alpaca(turns: list[TurnExchange], target: _Target) -> tuple[str, str, list[list[str]]]:
    """(instruction, output, history) of one target."""
    pairs: list[list[str]] = []
    pending = ""
    for t, turn in enumerate(turns[:target.turn + 1]):
        pending += turn.user
        last = target.step if t == target.turn else len(turn.steps) - 1
        for s, step in enumerate(turn.steps[:last + 1]):
            output = step.call_xml() if step.calls else step.text or ""
            if t == target.turn and s == target.step:
                return pending, output, pairs
            pairs.append([pending, output])
            pending = step.response_xml() if step.calls else ""
    raise AssertionError("target outside the turns")


def sft_samples(trajectory: Trajectory, fmt: SftFormat = "sharegpt",
                tools: ToolsShown = "all") -> list[dict[str, Any]]:
    """Every SFT sample of one trajectory, in order; each carries `id` = `<traj id>#<k>`.

    `tools="all"` shows every tool of the trajectory's environments (what the evaluation
    shows); `"used"` only those the trajectory calls, for short CPU runs where a few
    thousand tokens of tool schemas per sample would dominate the cost.
    """
    turns = [t for t in exchange(trajectory) if t.has_calls]
    specs = tool_specs(trajectory)
    if tools == "used":
        called = {c.name for t in turns for s in t.steps for c in s.calls}
        specs = [(name, spec) for name, spec in specs if name in called]
    out: list[dict[str, Any]] = []
    for k, target in enumerate(_targets(turns)):
        sample_id = f"{trajectory.id}#{k}"
        if fmt == "sharegpt":
            out.append({"id": sample_id, "conversations": _sharegpt(turns, target),
                        "system": AGENT_SYSTEM_PROMPT, "tools": tools_json(specs)})
        else:
            instruction, output, history = _alpaca(turns, target)
            out.append({"id": sample_id, "instruction": instruction, "input": "",
                        "output": output, "system": AGENT_SYSTEM_PROMPT,
                        "tools": tools_json(specs), "history": history})
    return out


def dataset_info_entry(file_name: str, fmt: SftFormat) -> dict[str, Any]:
    """The `dataset_info.json` entry LlamaFactory needs to read `file_name`."""
    if fmt == "sharegpt":
        return {"file_name": file_name, "formatting": "sharegpt",
                "columns": {"messages": "conversations", "system": "system",
                            "tools": "tools"}}
    return {"file_name": file_name,
            "columns": {"prompt": "instruction", "query": "input", "response": "output",
                        "history": "history", "system": "system", "tools": "tools"}}
