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

from testkit.bfcl_official import _text, gold_turns, keyword_form

ROOT = Path(__file__).resolve().parents[2]

#: request options (not prompt) that still differ, and why they may
ALLOWED_OPTIONS = {
    "chat": {"store", "tool_choice"},  # store: false not sent; tool_choice "auto" = default
    "responses": set(),  # store, include, reasoning: as the official handler sends them
}
#: a reasoning model bfcl-eval lists (handler: OpenAIResponsesHandler), and Inspect knows
REASONING_MODEL = "o4-mini-2025-04-16-FC"


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


@pytest.mark.slow
def test_reasoning_round_trip_on_the_responses_api_is_the_official_handlers(
        tmp_path: Path) -> None:
    """A reasoning model on the Responses API, every scripted reply led by a reasoning item
    with encrypted content: ours asks for what the official handler asks for (`store:
    false`, `include: ["reasoning.encrypted_content"]`, `reasoning: {"summary": "auto"}`,
    no temperature), sends no request of its own (Inspect's summary probe), and sends every
    reasoning item back in the later requests with its id and encrypted content."""
    module = comparison()
    cases = {"multi_turn_base_0": "gold", "multi_turn_miss_func_3": "gold"}
    scripts = {i: keyword_form(i, gold_turns(i)) for i in cases}
    report = module.compare(scripts, cases, "responses", tmp_path, REASONING_MODEL,
                            reasoning=True)
    assert report.verdicts_equal == len(cases) == report.valid
    assert dict(report.option_differences) == {}
    # request n carries the n-1 replies before it in its conversation, each led by one
    # reasoning item: 13 requests (2 entries) -> 38 items re-sent, all encrypted
    assert report.requests == 13
    assert dict(report.reasoning_items) == {
        "official": 38, "official with encrypted content": 38,
        "ours": 38, "ours with encrypted content": 38}
    # Inspect alone would re-send an encrypted item without its summary (38 differences)
    assert dict(report.prompt_differences) == {}


@pytest.mark.slow
def test_a_model_inspect_does_not_know_reasons_gets_the_reasoning_options_too(
        tmp_path: Path) -> None:
    """gpt-4o: the official handler asks it for reasoning as any model (Inspect, on its
    own, sends `include: []` and no `reasoning` to a model it does not know reasons)."""
    module = comparison()
    cases = {"multi_turn_base_0": "gold"}
    report = module.compare({i: keyword_form(i, gold_turns(i)) for i in cases}, cases,
                            "responses", tmp_path, reasoning=True)
    assert report.verdicts_equal == 1 and report.requests > 2
    assert dict(report.option_differences) == {} == dict(report.prompt_differences)
    assert report.reasoning_items["ours with encrypted content"] > 0


def test_a_reasoning_reply_leads_the_responses_output() -> None:
    """The recording server's reasoning item, as OpenAI returns one for `include:
    ["reasoning.encrypted_content"]`; Chat Completions has no such item."""
    import json
    from urllib.request import Request, urlopen

    from testkit.recording_server import RecordingServer, Reply, ReplyCall, ReplyReasoning

    reply = Reply(tool_calls=[ReplyCall(name="ls", arguments="{}")],
                  reasoning=ReplyReasoning(summary="Look first.", encrypted_content="blob"))

    def post(url: str, path: str) -> dict:
        request = Request(url + path, data=b'{"model": "m"}',
                          headers={"Content-Type": "application/json"})
        with urlopen(request) as response:
            return dict(json.loads(response.read()))

    with RecordingServer(lambda a, b: reply) as server:
        output = post(server.url, "/responses")["output"]
        chat = post(server.url, "/chat/completions")["choices"][0]["message"]
    assert [i["type"] for i in output] == ["reasoning", "function_call"]
    assert {k: v for k, v in output[0].items() if k != "id"} == {
        "type": "reasoning", "summary": [{"type": "summary_text", "text": "Look first."}],
        "encrypted_content": "blob"}
    assert output[0]["id"].startswith("rs_")
    assert set(chat) == {"role", "content", "tool_calls"}


SINGLE_TURN = ["simple", "java", "javascript", "multiple", "parallel", "parallel_multiple",
               "irrelevance", "live_simple", "live_multiple", "live_parallel",
               "live_parallel_multiple", "live_irrelevance", "live_relevance"]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_single_turn_requests_equal_the_official_handlers(api: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """One entry per single-turn category (Java/JavaScript hints, dotted names, system
    prompts in live data): the official handler's `inference_single_turn_FC` and our
    task send the same request but for the known request options."""
    import copy
    import json

    from inspect_ai import eval as inspect_eval
    from openai import OpenAI

    from envs.bfcl import package
    from envs.jsonl import read_objects
    from tasks.bfcl_singleturn.bfcl_singleturn import bfcl_singleturn
    from testkit.bfcl_official import _official
    from testkit.recording_server import RecordingServer, Reply

    module = comparison()
    entries = {}
    for category in SINGLE_TURN:
        rows = read_objects(package.data_file(category))
        # the entry with the most tools (dotted names and nested schemas come with them)
        entries[category] = max(rows[:40], key=lambda e: (len(e["function"]), e["id"]))

    def key(body: dict) -> str:
        items = body.get("messages") if api == "chat" else body.get("input")
        return json.dumps([_text(m.get("content")) for m in items or []
                           if m.get("role") == "user"])

    monkeypatch.setenv("OPENAI_API_KEY", "recording-server")
    o = _official()
    from bfcl_eval.model_handler.api_inference.openai_response import OpenAIResponsesHandler

    handler_class = o.OpenAICompletionsHandler if api == "chat" else OpenAIResponsesHandler
    official: dict[str, dict] = {}
    with RecordingServer(lambda a, b: Reply(content="Done.")) as server:
        handler = handler_class(module.OFFICIAL_MODEL, temperature=0.001)
        handler.client = OpenAI(api_key="recording-server", base_url=server.url,
                                max_retries=0)
        for entry in entries.values():
            handler.inference_single_turn_FC(copy.deepcopy(entry), include_input_log=False)
    for r in server.requests:
        official[key(r.body)] = r.body
    assert len(official) == len(entries)

    with RecordingServer(lambda a, b: Reply(content="Done.")) as server:
        (log,) = inspect_eval(
            bfcl_singleturn(category=",".join(SINGLE_TURN)),
            model=f"openai/{module.OFFICIAL_MODEL.removesuffix('-FC')}",
            model_base_url=server.url, model_args={"responses_api": api == "responses"},
            sample_id=[e["id"] for e in entries.values()], log_dir=str(tmp_path),
            display="none")
    assert log.status == "success"
    ours = {key(r.body): r.body for r in server.requests}
    assert set(ours) == set(official)
    differences = []
    for k, theirs in official.items():
        theirs_c, _ = module.canonical_request(theirs)
        ours_c, _ = module.canonical_request(ours[k])
        differences += [d.pattern for d in module.diff(theirs_c, ours_c)]
    assert set(differences) <= ALLOWED_OPTIONS[api], sorted(set(differences))
    # the tools went out as the official objects (a "." name became "_" in both)
    assert any("." in f["name"] for e in entries.values() for f in e["function"])
