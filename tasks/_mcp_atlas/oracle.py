"""MCP-Atlas's gold path for `envfactory/oracle`: the reference run, replayed.

Each task ships a reference trajectory (`TRAJECTORY`: the calls an annotator's run made,
with the results upstream's servers gave). The oracle makes those calls, one assistant
message each as recorded, through the sample's real servers, then answers. The release
has no reference answer (its trajectories end with a tool result), so the oracle's
answer states the task's claims: with a judge that checks claims against the answer, the
pipeline end to end can reach coverage 1, and what the servers gave can be compared
with what the reference recorded (`reference_results`).
"""

from __future__ import annotations

import json
from typing import Any

from harness.gold import GoldCall, GoldMessage, Script, ScriptPolicy
from tasks._mcp_atlas.claims import extract_claims
from tasks._mcp_atlas.dataset import AtlasTask

__all__ = ["AtlasOracle", "reference_results"]


def _calls(message: dict[str, Any]) -> list[GoldCall]:
    calls = []
    for call in message.get("tool_calls") or []:
        function = call["function"]
        arguments = json.loads(function.get("arguments") or "{}") or {}
        calls.append(GoldCall(function=function["name"], arguments=arguments))
    return calls


class AtlasOracle(ScriptPolicy):
    """The reference run's calls in its order, then the claims as the answer."""

    def __init__(self, task: AtlasTask) -> None:
        steps = [GoldMessage(calls=_calls(m)) for m in task.trajectory
                 if m.get("role") == "assistant" and m.get("tool_calls")]
        super().__init__(Script(assistant=[steps],
                                final_text="\n".join(extract_claims(task.claims))))


def reference_results(task: AtlasTask) -> list[tuple[str, str]]:
    """(tool, result text) for each call of the reference run, in order: the text the
    servers gave upstream's annotator (text items joined), for comparing with ours."""
    names = {call["id"]: call["function"]["name"] for m in task.trajectory
             for call in m.get("tool_calls") or []}
    out = []
    for m in task.trajectory:
        if m.get("role") == "tool":
            content = m.get("content")
            text = ("\n".join(c.get("text", "") for c in content)
                    if isinstance(content, list) else str(content or ""))
            out.append((names.get(m.get("tool_call_id", ""), "?"), text))
    return out
