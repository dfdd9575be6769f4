"""Open models on vLLM: the prompt the official Qwen FC handler builds vs the prompt a
Qwen chat template renders from what our task sends.

The official route for an open model (`bfcl generate --model Qwen/Qwen3-8B-FC --backend
vllm`) is bfcl-eval's `QwenFCHandler`: prompting mode, its own `_format_prompt` (a
hand-written copy of the Qwen3 chat template, which it carries in that method's
docstring), sent to vLLM's `/v1/completions`. Our route is Chat Completions
(`--model vllm/Qwen/Qwen3-8B` or `openai-api/...` against `vllm serve`): vLLM parses
each tool call's argument string into a dict and renders the model's chat template over
our messages and tools.

Here both are computed for the same scripted conversations: the official prompts by the
handler's own loop (`inference_multi_turn_prompting`, its `_format_prompt` called where
it would query vLLM), ours by rendering the template from the handler's docstring, as
transformers does (`tojson` = `json.dumps(ensure_ascii=False)`), over the Chat
Completions requests our task sent to the recording server. The expectations are what
the comparison finds: every turn, tool call, tool result and generation prompt renders
identically; the tool list does not and cannot through Chat Completions — the official
handler lists the raw BFCL function docs (`"type": "dict"`, BFCL types, `response`),
the template lists the OpenAI tool objects vLLM hands it (`{"type": "function",
"function": {...}}`, JSON-schema types); and for held-out functions (miss_func) the
prompting handler does not extend the tool list but pastes the docs into the reveal
message (`DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING`).
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import io
import json
import sys
import textwrap
import types
import uuid
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

from testkit.bfcl_official import (
    Script,
    Scripted,
    Turns,
    _bind,
    _forget,
    _official,
    _processed_entry,
    first_user_text,
    gold_turns,
    keyword_form,
    users_per_turn,
)
from testkit.recording_server import RecordingServer

OSS_MODEL = "Qwen/Qwen3-8B-FC"


@contextlib.contextmanager
def _overrides_stub() -> Iterator[None]:
    """`overrides` (decorators only) for importing bfcl-eval's local handlers."""
    if "overrides" in sys.modules:
        yield
        return
    stub = types.ModuleType("overrides")
    stub.override = stub.final = lambda f: f  # type: ignore[attr-defined]
    stub.EnforceOverrides = type("EnforceOverrides", (), {})  # type: ignore[attr-defined]
    sys.modules["overrides"] = stub
    try:
        yield
    finally:
        sys.modules.pop("overrides", None)


@cache
def qwen_handler_class() -> type:
    _official()
    with _overrides_stub():
        from bfcl_eval.model_handler.local_inference.qwen_fc import QwenFCHandler
    return QwenFCHandler


@cache
def qwen_template() -> str:
    """The Qwen3 chat template, as bfcl-eval's QwenFCHandler carries it in the docstring
    of `_format_prompt` (read from the source: the docstring's value has its `\\n` and
    `\\"` escapes already interpreted)."""
    source = inspect.getsource(qwen_handler_class()._format_prompt)
    body = source.split('"chat_template":', 1)[1].split('"""', 1)[0]
    return textwrap.dedent(body).strip("\n").rstrip()


def render(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    """`tokenizer.apply_chat_template(..., add_generation_prompt=True)` as transformers
    renders it (its sandbox, trim/lstrip blocks, `tojson` without ASCII escaping)."""
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])

    def tojson(x: Any, ensure_ascii: bool = False, indent: Any = None,
               separators: Any = None, sort_keys: bool = False) -> str:
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                          separators=separators, sort_keys=sort_keys)

    env.filters["tojson"] = tojson
    return env.from_string(qwen_template()).render(
        messages=messages, tools=tools, add_generation_prompt=True)


def vllm_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """vLLM's `_postprocess_messages`: tool-call argument strings become dicts."""
    out = copy.deepcopy(messages)
    for m in out:
        if m.get("role") == "assistant" and isinstance(m.get("tool_calls"), list):
            for call in m["tool_calls"]:
                raw = call["function"].get("arguments")
                call["function"]["arguments"] = json.loads(raw) if raw else {}
    return out


# -- the two routes ------------------------------------------------------------------------


def official_prompts(entry_id: str, turns: Turns) -> tuple[list[str], list[dict[str, Any]]]:
    """The prompts QwenFCHandler sends to `/v1/completions` for a scripted model, and the
    function docs it lists."""
    base = qwen_handler_class()

    class Scripted(base):  # type: ignore[misc,valid-type]
        def __init__(self) -> None:
            super().__init__(OSS_MODEL, temperature=0.001)
            self.turn, self.step = -1, 0
            self.prompts: list[str] = []
            self.functions: list[dict[str, Any]] = []

        def add_first_turn_message_prompting(self, data: dict, messages: list) -> dict:
            self.turn, self.step = self.turn + 1, 0
            return super().add_first_turn_message_prompting(data, messages)  # type: ignore[no-any-return]

        def _add_next_turn_user_message_prompting(self, data: dict, messages: list) -> dict:
            self.turn, self.step = self.turn + 1, 0
            return super()._add_next_turn_user_message_prompting(data, messages)  # type: ignore[no-any-return]

        def _query_prompting(self, data: dict) -> tuple[Any, float]:
            self.functions = data["function"]
            self.prompts.append(self._format_prompt(data["message"], data["function"]))
            steps = turns[self.turn] if self.turn < len(turns) else []
            step = steps[self.step] if self.step < len(steps) else None
            self.step += 1
            text = "Done." if step is None else "\n".join(
                "<tool_call>\n" + json.dumps({"name": name, "arguments": json.loads(raw)})
                + "\n</tool_call>" for name, raw in (_bind(c, []) for c in step))
            return types.SimpleNamespace(
                choices=[types.SimpleNamespace(text=text)],
                usage=types.SimpleNamespace(prompt_tokens=1, completion_tokens=1)), 0.0

    handler = Scripted()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            handler.inference_multi_turn_prompting(
                _processed_entry(entry_id), include_input_log=False, exclude_state_log=True)
    finally:
        _forget(OSS_MODEL)
    return handler.prompts, handler.functions


def our_requests(entry_id: str, turns: Turns, log_dir: Path,
                 monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The Chat Completions requests our task sends for the same scripted model."""
    from inspect_ai import eval as inspect_eval

    from tasks.bfcl_multiturn.bfcl_multiturn import bfcl_multiturn

    monkeypatch.setenv("OPENAI_API_KEY", "recording-server")
    scripted = Scripted()
    scripted.add(Script(entry_id, turns, users_per_turn(entry_id)), first_user_text(entry_id))
    category = entry_id.removeprefix("multi_turn_").rsplit("_", 1)[0]
    with RecordingServer(scripted) as server:
        (log,) = inspect_eval(
            bfcl_multiturn(category=category), model="openai/Qwen/Qwen3-8B",
            model_base_url=server.url, model_args={"responses_api": False},
            sample_id=[entry_id], log_dir=str(log_dir / uuid.uuid4().hex[:8]),
            display="none")
    assert log.status == "success"
    return [r.body for r in server.requests]


def _split(prompt: str) -> tuple[list[str], str]:
    """(the lines inside <tools></tools>, the prompt with that block taken out)."""
    head, rest = prompt.split("<tools>\n", 1)
    block, tail = rest.split("\n</tools>", 1)
    return block.split("\n"), head + "<tools>\n…\n</tools>" + tail


ENTRIES = ["multi_turn_base_0"] + [
    pytest.param(i, marks=pytest.mark.slow)
    for i in ("multi_turn_base_105", "multi_turn_long_context_7", "multi_turn_miss_param_3")]


@pytest.mark.parametrize("entry_id", ENTRIES)
def test_the_template_renders_our_requests_as_the_official_handler_but_the_tool_list(
        entry_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    turns = keyword_form(entry_id, gold_turns(entry_id))
    official, functions = official_prompts(entry_id, turns)
    requests = our_requests(entry_id, turns, tmp_path, monkeypatch)
    assert len(requests) == len(official) > 1
    for body, theirs in zip(requests, official, strict=True):
        ours = render(vllm_messages(body["messages"]), body["tools"])
        our_lines, our_rest = _split(ours)
        their_lines, their_rest = _split(theirs)
        # everything but the tool list: the same prompt text
        assert our_rest == their_rest
        # the tool list: the official handler's raw docs vs the OpenAI tool objects
        assert their_lines == [json.dumps(f) for f in functions]
        assert our_lines == [json.dumps(t, ensure_ascii=False) for t in body["tools"]]
        assert our_lines != their_lines
        assert [json.loads(line)["function"]["name"] for line in our_lines] == [
            json.loads(line)["name"] for line in their_lines]


def test_held_out_functions_are_pasted_into_the_reveal_message_by_the_official_handler(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bfcl_eval.constants.default_prompts import (
        DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC as FC_REVEAL,
    )

    entry_id = "multi_turn_miss_func_0"
    turns = keyword_form(entry_id, gold_turns(entry_id))
    official, _ = official_prompts(entry_id, turns)
    requests = our_requests(entry_id, turns, tmp_path, monkeypatch)
    entry = _processed_entry(entry_id)
    reveal_turn = int(next(iter(entry["missed_function"])))
    held_out = [d["name"] for d in next(iter(entry["missed_function"].values()))]
    ours = [render(vllm_messages(b["messages"]), b["tools"]) for b in requests]
    # before the reveal: the same prompts but the tool list
    first_reveal = next(i for i, b in enumerate(requests)
                        if any(m.get("content") == FC_REVEAL for m in b["messages"]))
    assert first_reveal > 0
    for i in range(first_reveal):
        assert _split(ours[i])[1] == _split(official[i])[1]
    # at the reveal: we offer the held-out tools (as the FC handlers do); the prompting
    # handler keeps its tool list and pastes the docs into the user message
    our_tools = [json.loads(line)["function"]["name"] for line in _split(ours[first_reveal])[0]]
    their_tools = [json.loads(line)["name"] for line in _split(official[first_reveal])[0]]
    assert set(held_out) <= set(our_tools) and not set(held_out) & set(their_tools)
    assert FC_REVEAL in official[first_reveal] and str(held_out[0]) in official[
        first_reveal].split("</tools>", 1)[1]
    assert reveal_turn > 0
