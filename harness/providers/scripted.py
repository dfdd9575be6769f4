"""The `envfactory` Inspect model API: `envfactory/oracle` and `envfactory/replay`.

Both play a `Script` of tool calls one assistant message at a time and answer with
plain text once the current user turn's steps are exhausted. They make no network
calls and report explicit token usage, so tests and oracle runs work offline.
"""

from __future__ import annotations

import json
import uuid
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
from inspect_ai.solver._task_state import sample_state
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo
from inspect_ai.util import store

from harness.providers.script import (
    NEXT_KEY,
    POSITIONAL_KEY,
    GoldMessage,
    SCRIPT_KEY,
    TURN_KEY,
    Script,
    ScriptedCall,
    next_step,
    parse_call,
    steps_in_current_turn,
)

__all__ = ["ScriptedModelAPI"]


class ScriptedModelAPI(ModelAPI):
    """`oracle` reads the gold script its solver published; `replay` reads a file."""

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
                f"unknown envfactory model {model_name!r}: use envfactory/oracle or "
                "envfactory/replay -M path=FILE"
            )
        self.records: dict[str, dict[str, Any]] = {}
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
        published = store().get(NEXT_KEY) if self.model_name == "oracle" else None
        if published is not None:
            store().delete(NEXT_KEY)
            gold = GoldMessage.model_validate(published)
            calls, final_text = gold.calls, gold.text
        else:
            script = self._script()
            turn = int(store().get(TURN_KEY, 0))
            calls = next_step(script, turn, steps_in_current_turn(input)) or []
            final_text = script.final_text
        if calls:
            message = ChatMessageAssistant(
                content="",
                tool_calls=[_tool_call(c) for c in calls],
                model=self.model_name,
                source="generate",
            )
            stop: Literal["tool_calls", "stop"] = "tool_calls"
        else:
            message = ChatMessageAssistant(
                content=final_text, model=self.model_name, source="generate"
            )
            stop = "stop"
        return ModelOutput(
            model=self.model_name,
            choices=[ChatCompletionChoice(message=message, stop_reason=stop)],
            usage=ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2),
        )

    def _script(self) -> Script:
        if self.model_name == "oracle":
            data = store().get(SCRIPT_KEY)
            if data is None:
                raise RuntimeError(
                    "envfactory/oracle: this task's solver published no gold script "
                    f"(store key {SCRIPT_KEY!r}); the task does not support the oracle"
                )
            return Script.model_validate(data)
        state = sample_state()
        sample_id = str(state.sample_id) if state is not None else None
        record = self.records.get(sample_id) if sample_id is not None else None
        if record is None:
            raise RuntimeError(
                f"envfactory/replay: {self.path} has no record for sample id {sample_id!r}"
            )
        positional = store().get(POSITIONAL_KEY) or {}
        return Script(
            turns=[
                [[parse_call(c, positional) for c in step] for step in turn]
                for turn in record.get("turns", [])
            ]
        )


def load_replay_file(path: Path) -> dict[str, dict[str, Any]]:
    """Records keyed by `id`; malformed lines are reported with their line number."""
    if not path.exists():
        raise FileNotFoundError(f"envfactory/replay: file not found: {path}")
    records: dict[str, dict[str, Any]] = {}
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{lineno}: not valid JSON ({e.msg})") from e
            if not isinstance(record, dict) or "id" not in record:
                raise ValueError(f"{path}:{lineno}: a record needs an 'id' field")
            turns = record.get("turns", [])
            if not isinstance(turns, list) or not all(
                isinstance(t, list) and all(isinstance(s, list) for s in t) for t in turns
            ):
                raise ValueError(
                    f"{path}:{lineno}: 'turns' must be a list (turns) of lists (steps) "
                    "of call strings"
                )
            records[str(record["id"])] = record
    return records


def _tool_call(call: ScriptedCall) -> ToolCall:
    return ToolCall(
        id=f"call_{uuid.uuid4().hex[:12]}",
        function=call.function,
        arguments=call.arguments,
        type="function",
    )
