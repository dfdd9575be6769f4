"""The gold players, Inspect's `envfactory` model API: `envfactory/oracle` and
`envfactory/replay` (the script file's model, `envfactory/script`, is `script.py`; the
scripted test model is `harness/providers/responder.py`).

Both answer one model call at a time from what the episode loop published for it
(`harness.gold.published`): `oracle` plays the published gold message, `replay`
plays the message recorded at the same position (role, user turn, step) in a file of
canonical `Trajectory` records, or of BFCL-style call-string records. Neither knows a
benchmark. They make no network calls and report explicit token usage, so tests and
oracle runs work offline.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

from envs.jsonl import read_records
from harness.gold import GoldCall, GoldMessage, Position, Script, parse_call, published
from harness.inspect_compat import current_sample_id
from harness.trajectory import Trajectory

__all__ = ["GoldPlayerAPI", "load_replay_file", "replay_message", "trajectory_script"]


class GoldPlayerAPI(ModelAPI):
    """`oracle` plays the loop's published gold; `replay` plays a recorded file."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 - Inspect's signature
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_name not in ("oracle", "replay"):
            raise ValueError(
                f"unknown envfactory model {model_name!r}: use envfactory/oracle, "
                "envfactory/replay -M path=FILE or envfactory/script -M path=FILE"
            )
        self.records: dict[str, dict[str, Any]] = {}
        self._scripts: dict[str, Script] = {}
        if model_name == "replay":
            path = model_args.get("path")
            if not path:
                raise ValueError("envfactory/replay needs -M path=FILE (a JSONL of records)")
            self.path = Path(path)
            self.records = load_replay_file(self.path)

    def max_connections(self) -> int:
        return 10_000

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        position, published_gold = published()
        if self.model_name == "oracle":
            if published_gold is None:
                raise RuntimeError(
                    "envfactory/oracle: this task published no gold message for this model "
                    "call (its solver does not support the oracle)")
            gold = published_gold
        else:
            if position is None:
                raise RuntimeError("envfactory/replay: the task's solver published no "
                                   "position for this model call (it does not use the "
                                   "harness episode loop)")
            sample_id, record = self._record()
            if "messages" in record or "environments" in record:  # a Trajectory: parse once
                if sample_id not in self._scripts:
                    self._scripts[sample_id] = trajectory_script(
                        Trajectory.model_validate(record))
                gold = self._scripts[sample_id].at(position)
            else:
                gold = replay_message(record, position, tools)
        if gold.calls:
            message = ChatMessageAssistant(
                content="", tool_calls=[_tool_call(c) for c in gold.calls],
                model=self.model_name, source="generate")
            stop: Literal["tool_calls", "stop"] = "tool_calls"
        else:
            message = ChatMessageAssistant(content=gold.text, model=self.model_name,
                                           source="generate")
            stop = "stop"
        return ModelOutput(
            model=self.model_name,
            choices=[ChatCompletionChoice(message=message, stop_reason=stop)],
            usage=ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2),
        )

    def _record(self) -> tuple[str, dict[str, Any]]:
        current = current_sample_id()
        sample_id = str(current) if current is not None else None
        record = self.records.get(sample_id) if sample_id is not None else None
        if sample_id is None or record is None:
            raise RuntimeError(
                f"envfactory/replay: {self.path} has no record for sample id {sample_id!r}")
        return sample_id, record


def replay_message(record: dict[str, Any], position: Position,
                   tools: Sequence[ToolInfo] = ()) -> GoldMessage:
    """The message a replay record plays at `position`.

    A canonical `Trajectory` plays its recorded messages (greeting excluded: it was never
    generated). A call-string record (`{"id", "turns": [[["cd(folder='x')"], ...]]}`)
    plays one agent message per step, then text; only the step being played is parsed,
    with positional arguments (`sort('a.pdf')`) bound in the order of the parameters of
    the tools offered now (a later turn may call a function not yet revealed).
    """
    if "messages" in record or "environments" in record:
        return trajectory_script(Trajectory.model_validate(record)).at(position)
    turns = record.get("turns", [])
    if (position.role != "assistant" or not 0 <= position.turn < len(turns)
            or position.step >= len(turns[position.turn])):
        return GoldMessage(text=Script().final_text)
    positional = {t.name: list(t.parameters.properties) for t in tools}
    return GoldMessage(calls=[parse_call(c, positional)
                              for c in turns[position.turn][position.step]])


def trajectory_script(trajectory: Trajectory) -> Script:
    script = Script()
    for message in trajectory.messages:
        if message.role not in ("assistant", "user") or message.turn is None:
            continue
        turns = script.assistant if message.role == "assistant" else script.user
        while len(turns) <= message.turn:
            turns.append([])
        turns[message.turn].append(GoldMessage(
            calls=[GoldCall(function=c.name, arguments=c.arguments)
                   for c in message.tool_calls or []],
            text=message.content or ""))
    return script


def load_replay_file(path: Path) -> dict[str, dict[str, Any]]:
    """Records keyed by `id`; malformed lines are reported with their line number."""
    if not path.exists():
        raise FileNotFoundError(f"envfactory/replay: file not found: {path}")
    return {str(record["id"]): record
            for record in read_records(path, _replay_record, "replay record")}


def _replay_record(line: str) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as e:
        raise ValueError(f"not valid JSON ({e.msg})") from e
    if not isinstance(record, dict) or "id" not in record:
        raise ValueError("a record needs an 'id' field")
    if "messages" in record or "environments" in record:
        Trajectory.model_validate(record)
    else:
        turns = record.get("turns", [])
        if not isinstance(turns, list) or not all(
            isinstance(t, list) and all(isinstance(s, list) for s in t) for t in turns
        ):
            raise ValueError("'turns' must be a list (turns) of lists (steps) of call strings")
    return record


def _tool_call(call: GoldCall) -> ToolCall:
    return ToolCall(
        id=f"call_{uuid.uuid4().hex[:12]}",
        function=call.function,
        arguments=call.arguments,
        type="function",
    )
