"""The embedded SmolLM2 default model: its tools chat template, the GGUF conversion, and a real
Inspect `hf/` eval on CPU with a tool offered.

Template tests render the shipped Jinja file directly (no model, instant). The rest share one
session-scoped conversion (~20-30 s on 2 cores) and are marked slow; they still run in CI.
"""

# ruff: noqa: E402 - the imports below need the optional `local` extra checked first
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("transformers", reason="needs the `local` extra (make install)")

import inspect_ai
from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
)
from inspect_ai.model._providers.util.hf_handler import HFHandler
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import Tool, ToolCall, ToolCallError, ToolInfo, tool
from transformers.utils.chat_template_utils import render_jinja_template

from training import local_models

WEATHER = {
    "name": "weather_lookup",
    "description": "Get the current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "Name of the city."}},
        "required": ["city"],
    },
}
TOOL_CALL_BLOCK = (
    '<tool_call>\n{"name": "weather_lookup", "arguments": {"city": "Paris"}}\n</tool_call>'
)


def render(messages: list[dict], tools: list[dict] | None = None, **kwargs: object) -> str:
    """Render the shipped template the way `tokenizer.apply_chat_template` does."""
    [text], _ = render_jinja_template(
        [messages], tools=tools, chat_template=local_models.TEMPLATE_PATH.read_text(), **kwargs
    )
    return text


def inspect_messages() -> list[dict]:
    """A tool round trip as Inspect's hf/ provider hands it to the template (model_dump)."""
    messages = [
        ChatMessageSystem(content="Be brief."),
        ChatMessageUser(content="Weather in Paris?"),
        ChatMessageAssistant(
            content="",
            tool_calls=[ToolCall(id="c1", function="weather_lookup", arguments={"city": "Paris"})],
        ),
        ChatMessageTool(content="sunny", tool_call_id="c1", function="weather_lookup"),
    ]
    return [m.model_dump(exclude_none=True) for m in messages]


def openai_messages(arguments: dict | str) -> list[dict]:
    """The same round trip in the OpenAI / verl shape (`function` is a dict)."""
    call = {"id": "c1", "type": "function",
            "function": {"name": "weather_lookup", "arguments": arguments}}
    return [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": "sunny", "tool_call_id": "c1"},
    ]


def test_template_renders_tools_calls_and_responses() -> None:
    text = render(inspect_messages(), tools=[WEATHER], add_generation_prompt=True)
    wrapped = json.dumps({"type": "function", "function": WEATHER}, ensure_ascii=False)
    assert text.startswith("<|im_start|>system\nBe brief.\n\n# Tools\n")
    assert f"<tools>\n{wrapped}\n</tools>" in text
    assert f"<|im_start|>assistant\n{TOOL_CALL_BLOCK}<|im_end|>\n" in text
    assert "<|im_start|>user\n<tool_response>\nsunny\n</tool_response><|im_end|>\n" in text
    assert text.endswith("<|im_end|>\n<|im_start|>assistant\n")


def test_template_accepts_both_tool_call_and_tool_shapes() -> None:
    expected = render(inspect_messages(), tools=[WEATHER])
    openai_tool = {"type": "function", "function": WEATHER}
    assert render(openai_messages({"city": "Paris"}), tools=[openai_tool]) == expected
    assert render(openai_messages('{"city": "Paris"}'), tools=[WEATHER]) == expected


def test_template_groups_tool_results_and_reports_errors() -> None:
    calls = [ToolCall(id=f"c{i}", function="weather_lookup", arguments={"city": city})
             for i, city in enumerate(["Rome", "Oslo"])]
    messages = [
        ChatMessageUser(content="Rome and Oslo?"),
        ChatMessageAssistant(content="Checking both.", tool_calls=calls),
        ChatMessageTool(content="rain", tool_call_id="c0", function="weather_lookup"),
        ChatMessageTool(content="", tool_call_id="c1", function="weather_lookup",
                        error=ToolCallError("parsing", "bad city")),
    ]
    text = render([m.model_dump(exclude_none=True) for m in messages], tools=[WEATHER])
    assert "<|im_start|>assistant\nChecking both.\n<tool_call>\n" in text
    assert text.count('<tool_call>\n{"name": "weather_lookup"') == 2
    assert ("<|im_start|>user\n<tool_response>\nrain\n</tool_response>\n"
            "<tool_response>\nError: bad city\n</tool_response><|im_end|>\n") in text


def test_template_without_tools_is_plain_chatml() -> None:
    text = render([{"role": "user", "content": "hi"}])
    assert text == (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
        "Face<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n"
    )
    # verl derives the system prefix it strips from tool-response encodings this way.
    assert text.startswith(render([{}]))
    assert render([{}]).count("<|im_start|>") == 1


def test_rendered_tool_call_is_what_inspect_parses() -> None:
    """The layout the template teaches is the one Inspect's hf/ handler reads back."""
    message = HFHandler("local").parse_assistant_response(TOOL_CALL_BLOCK, [ToolInfo(**WEATHER)])
    assert message.tool_calls is not None
    [call] = message.tool_calls
    assert (call.function, call.arguments, call.parse_error) == (
        "weather_lookup", {"city": "Paris"}, None
    )


def test_unknown_model_lists_known_ones() -> None:
    with pytest.raises(KeyError, match="known: smollm2"):
        local_models.prepare("gpt-17")


@pytest.fixture(scope="session")
def smollm2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SmolLM2 converted once per session into a temporary models dir."""
    out_dir = tmp_path_factory.mktemp("models") / local_models.SMOLLM2_DIRNAME
    try:
        return local_models.prepare_smollm2(out_dir)
    except local_models.LocalModelUnavailable as e:
        pytest.skip(str(e))


@pytest.mark.slow
def test_prepared_tokenizer_is_chatml_with_tools_template(smollm2_dir: Path) -> None:
    from transformers import AutoTokenizer, GenerationConfig

    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    assert tokenizer.eos_token == tokenizer.pad_token == "<|im_end|>"
    assert GenerationConfig.from_pretrained(smollm2_dir).eos_token_id == tokenizer.eos_token_id
    # Nothing is prepended: the chat template already opens every turn with <|im_start|>.
    assert tokenizer.decode(tokenizer("Hello world").input_ids) == "Hello world"
    assert len(tokenizer) == 49152
    assert tokenizer.apply_chat_template(
        inspect_messages(), tools=[WEATHER], tokenize=False
    ) == render(inspect_messages(), tools=[WEATHER])


@pytest.mark.slow
def test_prepare_is_idempotent_and_reported(
    smollm2_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weights = {p.name: p.stat().st_mtime_ns for p in smollm2_dir.iterdir()}
    assert local_models.prepare_smollm2(smollm2_dir) == smollm2_dir
    # nothing was converted again: every file is the one already there
    assert {p.name: p.stat().st_mtime_ns for p in smollm2_dir.iterdir()} == weights
    monkeypatch.setenv("ENVFACTORY_MODELS_DIR", str(smollm2_dir.parent))
    assert local_models.prepared_models()["smollm2"] == smollm2_dir


@tool
def weather_lookup() -> Tool:
    async def execute(city: str) -> str:
        """Get the current weather for a city.

        Args:
            city: Name of the city.
        """
        return f"It is sunny in {city}."

    return execute


@pytest.mark.slow
def test_inspect_hf_eval_with_a_tool_succeeds(
    smollm2_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real greedy CPU run through Inspect's hf/ provider; answer quality is not judged."""
    import huggingface_hub.constants

    # Inspect's model-info lookup re-creates `hf/local` without model_args, i.e. asks the Hub
    # for a repo called "local" (~60 s of retries when online is unreachable). huggingface_hub
    # reads HF_HUB_OFFLINE at import, which has happened by now, so patch the constant too.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    task = Task(
        dataset=[Sample(input="What is the weather in Paris?", target="sunny")],
        solver=[use_tools(weather_lookup()), generate()],
        scorer=includes(),
        message_limit=4,  # bounds a model that keeps calling the tool
    )
    [log] = inspect_ai.eval(
        task,
        model="hf/local",
        model_args={"model_path": str(smollm2_dir), "device": "cpu", "do_sample": False},
        max_tokens=32,
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    assert log.stats.model_usage["hf/local"].output_tokens > 0
    assert log.samples is not None
    [first_call, *_] = [e for e in log.samples[0].events if e.event == "model"]
    assert [t.name for t in first_call.tools] == ["weather_lookup"]
