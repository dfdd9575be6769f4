"""BFCL multi-turn on the episode loop against bfcl-eval's own inference loop: decoding by
the official rule on every step (raw provider strings, default logging), every Inspect
limit still scored with the official verdict of the truncated run, and tool calls shown
as Inspect tool events while the model reads the official executor's strings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    Model,
    ModelAPI,
    ModelCall,
    ModelOutput,
    ModelUsage,
    get_model,
    modelapi,
)
from inspect_ai.model._call_tools import parse_tool_call
from inspect_ai.tool import ToolChoice, ToolInfo
from inspect_ai.util import store_as

from harness.gold import ModelCallContext
from harness.inspect_compat import current_sample_id
from testkit.bfcl_official import (
    FINAL_TEXT,
    Turns,
    _bind,
    cached_instances,
    gold_turns,
    official_evaluate,
    official_run,
    result_of_records,
    run_task,
    scores,
)

ENTRY = "multi_turn_base_0"


# a ModelAPI of its own, not testkit.scripted: raw argument strings have to reach Inspect
# as a provider's ModelCall response, which a mockllm model cannot give
class RawScriptAPI(ModelAPI):
    """An OpenAI-like provider playing scripted turns with *raw* argument strings.

    Each call returns `(ModelOutput, ModelCall)` whose `ModelCall.response` is an OpenAI
    chat-completions body, and builds its `ToolCall`s with Inspect's own (lenient)
    `parse_tool_call`, as Inspect's OpenAI provider does.
    """

    def __init__(self, model_name: str, base_url: str | None = None,
                 api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(),  # noqa: B008 - Inspect's
                 records: dict[str, Turns] | None = None, delay: float = 0.0) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        self.records, self.delay = records or {}, delay
        self.calls = 0

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo],
                       tool_choice: ToolChoice, config: GenerateConfig
                       ) -> tuple[ModelOutput, ModelCall]:
        if self.delay:
            await anyio.sleep(self.delay)
        self.calls += 1
        position = store_as(ModelCallContext).position
        assert position is not None
        sample_id = current_sample_id()
        assert sample_id is not None
        turns = self.records[str(sample_id)]
        steps = turns[position.turn] if 0 <= position.turn < len(turns) else []
        step = steps[position.step] if position.step < len(steps) else None
        if step is None:
            message = ChatMessageAssistant(content=FINAL_TEXT, model=self.model_name)
            body: dict[str, Any] = {"role": "assistant", "content": FINAL_TEXT}
        else:
            offered = [{"name": t.name, "parameters": t.parameters.model_dump()} for t in tools]
            bound = [(f"call_{self.calls}_{i}", *_bind(c, offered)) for i, c in enumerate(step)]
            message = ChatMessageAssistant(content="", model=self.model_name, tool_calls=[
                parse_tool_call(i, name, raw, tools) for i, name, raw in bound])
            body = {"role": "assistant", "content": None, "tool_calls": [
                {"id": i, "type": "function", "function": {"name": name, "arguments": raw}}
                for i, name, raw in bound]}
        output = ModelOutput(
            model=self.model_name,
            choices=[ChatCompletionChoice(message=message,
                                          stop_reason="stop" if step is None else "tool_calls")],
            usage=ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2))
        call = ModelCall.create(request={"messages": len(input)},
                                response={"choices": [{"index": 0, "message": body}]})
        return output, call


@modelapi(name="bfcl_raw_script")
def _raw_script_api() -> type:
    return RawScriptAPI


def raw_model(records: dict[str, Turns], delay: float = 0.0) -> Model:
    return get_model("bfcl_raw_script/raw-script", records=records, delay=delay)


# -- (a) the official decoding rule on every step ------------------------------------


MALFORMED = '{"folder": "document"}"'  # a complete object and a stray quote


def test_malformed_arguments_at_step_seven_decode_by_the_official_rule(tmp_path: Path) -> None:
    gold = gold_turns(ENTRY)
    cd, *rest = gold[0][0]
    assert cd == "cd(folder='document')"
    first = [["pwd()"]] * 6 + [[("cd", MALFORMED)]] + [[c] for c in rest]
    turns = [first] + gold[1:]
    official = official_run(ENTRY, turns)
    # official json.loads fails on step 7: it is text, turn 0 ends before cd/mkdir/mv
    assert official.valid is False
    assert official.decoded is not None and official.decoded[0] == [["pwd()"]] * 6
    # with well-formed JSON the same model passes: the rule decides the verdict
    fixed = [[["pwd()"]] * 6 + [[cd]] + [[c] for c in rest]] + gold[1:]
    assert official_run(ENTRY, fixed).valid is True
    # Inspect's lenient parser recovers the malformed call
    assert parse_tool_call("c", "cd", MALFORMED, None).arguments == {"folder": "document"}

    log = run_task(raw_model({ENTRY: turns}), [ENTRY], tmp_path)  # default logging options
    score = scores(log)[ENTRY]
    assert (score.value == "C") is official.valid
    assert score.metadata["error_type"] == official.error_type
    assert json.loads(score.answer or "null") == official.decoded
    sample = (log.samples or [])[0]
    # the same number of model calls as the official loop made, and the malformed call
    # was never executed (only six pwd() in turn 0, then the next turns' gold)
    assert len([e for e in sample.events if e.event == "model"]) == len(official.queries)
    tools = [e.function for e in sample.events if e.event == "tool"]
    assert tools == ["pwd"] * 6 + [c.split("(")[0] for t in gold[1:] for st in t for c in st]
    assert [m.text for m in sample.messages if m.role == "tool"] == official.tool_results
    assert cached_instances() == []


# -- (b) every Inspect limit: still scored, the official verdict of the truncated run -----


def _truncated_verdict(sample: Any) -> tuple[bool, str | None]:
    """`bfcl evaluate` on the model responses the run recorded before the limit."""
    result = result_of_records(sample.store["EpisodeProgress:messages"])
    valid, failure = official_evaluate(str(sample.id), result)
    return valid, None if failure is None else failure["error"]["error_type"]


@pytest.mark.parametrize(("limit", "delay", "finished"), [
    ({"message_limit": 8}, 0.0, False),     # cut in turn 1
    ({"message_limit": 18}, 0.0, True),     # cut before the last turn's closing text
    ({"token_limit": 5}, 0.0, False),       # 2 tokens per call: the third call exceeds
    ({"turn_limit": 3}, 0.0, False),
    ({"time_limit": 1}, 0.4, False),        # 8 calls x 0.4 s needed
    ({"working_limit": 1}, 0.4, False),
], ids=["message", "message_last_turn", "token", "turn", "time", "working"])
def test_every_inspect_limit_is_scored_with_the_official_truncated_verdict(
        tmp_path: Path, limit: dict[str, int], delay: float, finished: bool) -> None:
    log = run_task(raw_model({ENTRY: gold_turns(ENTRY)}, delay), [ENTRY], tmp_path, **limit)
    sample = (log.samples or [])[0]
    assert sample.limit is not None and sample.limit.type == next(iter(limit)).split("_")[0]
    score = scores(log)[ENTRY]
    assert score.metadata["termination"] == "limit"
    valid, error_type = _truncated_verdict(sample)
    assert (score.value == "C") is valid is finished
    assert score.metadata["error_type"] == error_type
    if not finished:
        assert error_type == "multi_turn:force_terminated"
    assert cached_instances() == []


def test_message_limit_keeps_the_conversation_in_the_sample_log(tmp_path: Path) -> None:
    log = run_task(raw_model({ENTRY: gold_turns(ENTRY)}), [ENTRY], tmp_path, message_limit=8)
    sample = (log.samples or [])[0]
    assert len(sample.messages) > 1


# -- (c) tool events in the transcript, official strings in the tool messages ---------


def test_tool_calls_are_tool_events_and_results_are_official_strings(tmp_path: Path) -> None:
    turns = gold_turns(ENTRY)
    turns[0] = [["pwd()"], ["cd(folder='no_such_dir')"]] + turns[0]  # an error result too
    official = official_run(ENTRY, turns)
    log = run_task(raw_model({ENTRY: turns}), [ENTRY], tmp_path)
    sample = (log.samples or [])[0]
    events = [e for e in sample.events if e.event == "tool"]
    called = [c.split("(")[0] for turn in turns for step in turn for c in step]
    assert [e.function for e in events] == called
    assert [e.result for e in events] == official.tool_results
    assert [m.text for m in sample.messages if m.role == "tool"] == official.tool_results
    assert any("No such" in r or "Error" in r for r in official.tool_results)
    assert (scores(log)[ENTRY].value == "C") is official.valid
