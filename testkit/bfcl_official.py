"""The official BFCL multi-turn pipeline driven by a scripted model, beside our Inspect
task driven by the same model: the reference verdicts and requests the fidelity tests
(`tests/tasks/test_bfcl_*`) and `benchmarks/bfcl_request_comparison.py` compare against.
Part of the test kit: product code never imports it.

The reference never goes through our code. `official_run` drives bfcl-eval's own
multi-turn inference loop (`BaseHandler.inference_multi_turn_FC`) with its OpenAI
Chat Completions FC handler, whose `_query_FC` (the network call) is replaced by a
scripted model that answers with `openai` `ChatCompletion` objects; the official
`_parse_query_response_FC`, `decode_execute`, executor and step limit do the rest. The
result is scored by the official `eval_runner.multi_turn_runner` (decoding, the
force-termination rule, `multi_turn_checker`), i.e. what `bfcl generate` followed by
`bfcl evaluate` would say. Nothing touches the network or needs an API key; the score
file the runner writes goes to a temporary directory that is removed, and the backend
instances bfcl-eval caches in its module globals (keyed by model name + entry id) are
deleted after each run (each run has its own model name).

A scripted model is `Turns`: per user turn, per step, the calls of one message. A call
is a call string (`"cd(folder='x')"`, Python literals; positional arguments are bound in
the order of the offered tool's parameters, as `envfactory/replay` does) or a pair
`(name, raw arguments string)` sent verbatim, malformed JSON included. A turn whose
steps are exhausted is answered with text ("Done."), which ends it.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import importlib.util
import io
import json
import sys
import tempfile
import types
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

from envs.bfcl import package  # noqa: F401 - sets BFCL_PROJECT_ROOT before bfcl-eval loads
from envs.jsonl import read_objects
from tasks.bfcl_multiturn.bfcl_multiturn import bfcl_multiturn
from testkit.recording_server import Api, Reply, ReplyCall, ReplyReasoning

Call = str | tuple[str, str]
Turns = list[list[list[Any]]]  # turns -> steps -> calls (Call)

FINAL_TEXT = "Done."


# -- our task --------------------------------------------------------------------------


def run_task(model: Any, sample_ids: list[str], log_dir: Path, **kwargs: Any) -> EvalLog:
    """Our Inspect task on `sample_ids`; extra keyword arguments go to `inspect_ai.eval`
    (`model_args=`, `message_limit=`, ...)."""
    categories = sorted({i.removeprefix("multi_turn_").rsplit("_", 1)[0] for i in sample_ids})
    kwargs.setdefault("max_samples", 64)
    # one sample's error must not cancel the others (their errors read as CancelledError)
    kwargs.setdefault("fail_on_error", False)
    (log,) = inspect_eval(
        bfcl_multiturn(category=",".join(categories)), model=model, sample_id=sample_ids,
        log_dir=str(log_dir), display="none", **kwargs,
    )
    return log


def scores(log: EvalLog) -> dict[str, Any]:
    """Sample id -> its Score (every sample must have run without error)."""
    assert log.samples is not None
    out = {}
    for s in log.samples:
        assert s.error is None, f"{s.id}: {s.error}"
        assert s.scores, f"{s.id}: not scored"
        out[str(s.id)] = next(iter(s.scores.values()))
    return out


def verdicts(log: EvalLog) -> dict[str, bool]:
    return {i: s.value == "C" for i, s in scores(log).items()}


def write_replay(path: Path, records: dict[str, Turns]) -> Path:
    """An `envfactory/replay` file of BFCL call-string records."""
    with path.open("w") as f:
        for entry_id, turns in records.items():
            f.write(json.dumps({"id": entry_id, "turns": turns}) + "\n")
    return path


# -- the official pipeline ---------------------------------------------------------------


@cache
def _official() -> types.SimpleNamespace:
    """bfcl-eval's handler, loader and runner, importable under `--no-deps`.

    `base_handler` imports `overrides` (for `@final` only) and `eval_runner` imports
    pandas (for leaderboard tables) and `constants.model_config` (every provider SDK);
    none of them is used on this path. Missing ones are stubbed while importing and
    removed again; `model_config` gets the project's one stub (the single-turn AST
    checker needs its contents, whoever imports it first).
    """
    from tasks._bfcl.singleturn import ensure_model_config

    ensure_model_config()
    temporary = {}
    for name, attrs in (("overrides", {"final": lambda f: f}), ("pandas", {})):
        if name not in sys.modules and importlib.util.find_spec(name) is None:
            module = types.ModuleType(name)
            module.__dict__.update(attrs)
            temporary[name] = module
    sys.modules.update(temporary)
    try:
        from bfcl_eval._llm_response_generation import process_multi_turn_test_case
        from bfcl_eval.constants.category_mapping import TEST_FILE_MAPPING, VERSION_PREFIX
        from bfcl_eval.constants.eval_config import POSSIBLE_ANSWER_PATH, PROMPT_PATH
        from bfcl_eval.eval_checker.eval_runner import multi_turn_runner
        from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
        from bfcl_eval.model_handler.api_inference.openai_completion import (
            OpenAICompletionsHandler,
        )
        from bfcl_eval.model_handler.base_handler import BaseHandler
        from bfcl_eval.utils import load_file
    finally:
        for name in temporary:
            sys.modules.pop(name, None)
    return types.SimpleNamespace(
        process_multi_turn_test_case=process_multi_turn_test_case,
        TEST_FILE_MAPPING=TEST_FILE_MAPPING, VERSION_PREFIX=VERSION_PREFIX,
        POSSIBLE_ANSWER_PATH=POSSIBLE_ANSWER_PATH, PROMPT_PATH=PROMPT_PATH,
        multi_turn_runner=multi_turn_runner, multi_turn_utils=multi_turn_utils,
        OpenAICompletionsHandler=OpenAICompletionsHandler, BaseHandler=BaseHandler,
        load_file=load_file)


@cache
def _official_data(category: str) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    o = _official()
    file = o.TEST_FILE_MAPPING[category]
    prompts = {e["id"]: e for e in o.load_file(o.PROMPT_PATH / file)}
    answers = {a["id"]: a for a in o.load_file(o.POSSIBLE_ANSWER_PATH / file)}
    return prompts, answers


def entry_and_gt(entry_id: str) -> tuple[dict[str, Any], list[list[str]]]:
    """The raw official entry (a copy) and its ground truth."""
    prompts, answers = _official_data(entry_id.rsplit("_", 1)[0])
    return copy.deepcopy(prompts[entry_id]), copy.deepcopy(answers[entry_id]["ground_truth"])


def gold_turns(entry_id: str) -> Turns:
    """The ground truth as a scripted model: each turn's calls in one step."""
    _, gt = entry_and_gt(entry_id)
    return [[list(turn)] if turn else [] for turn in gt]


def keyword_form(entry_id: str, turns: Turns) -> Turns:
    """`turns` with positional arguments written as keywords (parameter order of the
    official function docs); the model's JSON arguments are the same either way."""
    entry, _ = entry_and_gt(entry_id)
    o = _official()
    (entry,) = o.process_multi_turn_test_case([entry])
    docs = entry["function"] + [d for ds in entry.get("missed_function", {}).values()
                                for d in ds]
    tools = [{"name": d["name"], "parameters": d["parameters"]} for d in docs]

    def rewrite(call: Any) -> Any:
        if not isinstance(call, str) or not ast.parse(call, mode="eval").body.args:  # type: ignore[attr-defined]
            return call
        name, raw = _bind(call, tools)
        arguments = json.loads(raw)
        return f"{name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"

    return [[[rewrite(c) for c in step] for step in turn] for turn in turns]


def _bind(call: Any, tools: list[dict[str, Any]]) -> tuple[str, str]:
    """A scripted call as (name, raw JSON arguments) for the tools offered."""
    if not isinstance(call, str):
        name, raw = call
        return str(name), str(raw)
    node = ast.parse(call.strip(), mode="eval").body
    assert isinstance(node, ast.Call), call
    name = ast.unparse(node.func)
    arguments: dict[str, Any] = {}
    if node.args:
        tool = next(t.get("function", t) for t in tools if t.get("function", t)["name"] == name)
        order = list(tool["parameters"].get("properties", {}))
        for pname, arg in zip(order, node.args, strict=False):
            arguments[pname] = ast.literal_eval(arg)
    for kw in node.keywords:
        arguments[str(kw.arg)] = ast.literal_eval(kw.value)
    return name, json.dumps(arguments)


def chat_completion(calls: list[tuple[str, str]] | None, text: str = FINAL_TEXT) -> Any:
    """An OpenAI `ChatCompletion`: tool calls with these raw argument strings, or text."""
    from openai.types.chat import ChatCompletion

    if calls is None:
        message: dict[str, Any] = {"role": "assistant", "content": text}
    else:
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
             "function": {"name": name, "arguments": raw}} for name, raw in calls]}
    return ChatCompletion.model_validate({
        "id": "chatcmpl-scripted", "object": "chat.completion", "created": 0,
        "model": "scripted",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if calls is not None else "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    })


@dataclass
class Query:
    """What the official loop sent at one `_query_FC`."""

    turn: int
    step: int
    last_message: Any
    tool_names: list[str]


@dataclass
class OfficialResult:
    valid: bool
    error_type: str | None
    #: per turn, per step, the model responses the loop recorded (its result file)
    result: list[list[Any]]
    #: per turn, the decoded steps the runner scored (None when it did not get that far)
    decoded: list[list[list[str]]] | None
    queries: list[Query] = field(default_factory=list)
    #: every execution result, in order (the tool messages the model was sent)
    tool_results: list[str] = field(default_factory=list)


@cache
def _scripted_handler_class() -> type:
    o = _official()

    class ScriptedHandler(o.OpenAICompletionsHandler):  # type: ignore[misc,name-defined]
        """The official OpenAI Chat Completions FC handler with a scripted model
        behind `_query_FC`; everything else is the handler's own code."""

        def __init__(self, model_name: str, script: Turns) -> None:
            o.BaseHandler.__init__(self, model_name, temperature=0.001)
            # OpenAICompletionsHandler.__init__ also builds an OpenAI client (needs an
            # API key); the scripted model needs none
            self.model_style = _openai_completions_style()
            self.script = script
            self.turn, self.step = -1, 0
            self.queries: list[Query] = []
            self.tool_results: list[str] = []

        def add_first_turn_message_FC(self, inference_data: dict, messages: list) -> dict:
            self.turn, self.step = self.turn + 1, 0
            return super().add_first_turn_message_FC(inference_data, messages)  # type: ignore[no-any-return]

        def _add_next_turn_user_message_FC(self, inference_data: dict, messages: list) -> dict:
            self.turn, self.step = self.turn + 1, 0
            return super()._add_next_turn_user_message_FC(inference_data, messages)  # type: ignore[no-any-return]

        def _add_execution_results_FC(self, inference_data: dict, results: list,
                                      response_data: dict) -> dict:
            self.tool_results.extend(results)
            return super()._add_execution_results_FC(inference_data, results, response_data)  # type: ignore[no-any-return]

        def _query_FC(self, inference_data: dict) -> tuple[Any, float]:
            tools = inference_data["tools"]
            self.queries.append(Query(
                turn=self.turn, step=self.step, last_message=inference_data["message"][-1],
                tool_names=[t.get("function", t)["name"] for t in tools]))
            steps = self.script[self.turn] if self.turn < len(self.script) else []
            step = steps[self.step] if self.step < len(steps) else None
            self.step += 1
            if step is None:
                return chat_completion(None), 0.0
            return chat_completion([_bind(c, tools) for c in step]), 0.0

    return ScriptedHandler


def _openai_completions_style() -> Any:
    try:
        from bfcl_eval.model_handler.model_style import ModelStyle

        return ModelStyle.OpenAI_Completions
    except ImportError:  # V4
        from bfcl_eval.constants.enums import ModelStyle

        return ModelStyle.OPENAI_COMPLETIONS


def _forget(model_name: str) -> None:
    """Delete every backend instance bfcl-eval cached for this model name."""
    g = vars(_official().multi_turn_utils)
    prefix = model_name.replace("-", "_").replace(".", "_").replace("/", "_").replace(":", "_")
    for key in [k for k in g if k.startswith(prefix) and k.endswith("_instance")]:
        del g[key]


def cached_instances() -> list[str]:
    return [k for k in vars(_official().multi_turn_utils) if k.endswith("_instance")]


def _processed_entry(entry_id: str) -> dict[str, Any]:
    """The entry as `bfcl generate` hands it to a handler (function docs added,
    held-out docs moved to `missed_function`)."""
    prompts, _ = _official_data(entry_id.rsplit("_", 1)[0])
    (entry,) = _official().process_multi_turn_test_case([copy.deepcopy(prompts[entry_id])])
    return entry  # type: ignore[no-any-return]


def official_evaluate(entry_id: str, result: Any, handler: Any = None,
                      model_name: str | None = None) -> tuple[bool, dict[str, Any] | None]:
    """`bfcl evaluate` (eval_runner.multi_turn_runner) on one entry's result: whether it
    is valid, and the score-file row of a failure."""
    o = _official()
    category = entry_id.rsplit("_", 1)[0]
    _, answers = _official_data(category)
    model_name = model_name or f"scripted-{uuid.uuid4().hex[:16]}-FC"
    handler = handler or _scripted_handler_class()(model_name, [])
    try:
        with tempfile.TemporaryDirectory() as score_dir, \
                contextlib.redirect_stdout(io.StringIO()):
            accuracy, _ = o.multi_turn_runner(
                handler, [{"id": entry_id, "result": result}], [_processed_entry(entry_id)],
                [copy.deepcopy(answers[entry_id])], model_name, category, Path(score_dir))
            score_file = Path(score_dir) / model_name / (
                f"{o.VERSION_PREFIX}_{category}_score.json")
            rows = read_objects(score_file)
    finally:
        _forget(model_name)
    failure = next((r for r in rows[1:] if r.get("id") == entry_id), None)
    assert (accuracy == 1.0) == (failure is None)
    return failure is None, failure


def result_of_records(messages: list[dict[str, Any]]) -> list[list[Any]]:
    """A run's model responses in the official result format (per turn, per step:
    `[{name: arguments JSON}]` or the text), from the canonical message records of a
    log sample's store (`EpisodeProgress:messages`)."""
    result: list[list[Any]] = []
    for m in messages:
        if m.get("turn") is None:
            continue
        while len(result) <= m["turn"]:
            result.append([])
        if m["role"] == "assistant":
            calls = m.get("tool_calls")
            result[m["turn"]].append(
                [{c["name"]: c.get("raw_arguments") or json.dumps(c.get("arguments", {}))}
                 for c in calls] if calls else (m.get("content") or ""))
    return result


def official_run(entry_id: str, turns: Turns) -> OfficialResult:
    """`bfcl generate` + `bfcl evaluate` for one entry and a scripted model."""
    entry = _processed_entry(entry_id)
    model_name = f"scripted-{uuid.uuid4().hex[:16]}-FC"
    handler = _scripted_handler_class()(model_name, turns)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # the loop prints every step
            result, _ = handler.inference_multi_turn_FC(
                entry, include_input_log=False, exclude_state_log=True)
        valid, failure = official_evaluate(entry_id, result, handler, model_name)
    finally:
        _forget(model_name)
    return OfficialResult(
        valid=valid,
        error_type=None if failure is None else failure["error"].get("error_type"),
        result=result,
        decoded=None if failure is None else failure.get("model_result_decoded"),
        queries=handler.queries, tool_results=handler.tool_results,
    )


def official_verdict(entry_id: str, turns: Turns) -> bool:
    return official_run(entry_id, turns).valid


# -- a scripted model behind an OpenAI-compatible server (testkit.recording_server) ----


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _conversation(api: Api, body: Mapping[str, Any]) -> tuple[list[str], int]:
    """(user message texts, tool calls made since the last user message)."""
    items = list((body.get("messages") if api == "chat" else body.get("input")) or [])
    users = [i for i, m in enumerate(items) if isinstance(m, dict) and m.get("role") == "user"]
    after = items[users[-1] + 1:] if users else items
    if api == "chat":
        calls = sum(len(m.get("tool_calls") or []) for m in after
                    if isinstance(m, dict) and m.get("role") == "assistant")
    else:
        calls = sum(1 for m in after if isinstance(m, dict) and m.get("type") == "function_call")
    return [_text(items[i].get("content")) for i in users], calls


@dataclass
class Script:
    entry_id: str
    turns: Turns
    #: user messages the harness sends per turn (a held-out turn: the reveal message)
    users_per_turn: list[int]


class Scripted:
    """Answers a request with the scripted step its conversation is at; with `reasoning`,
    every reply starts with a reasoning item named after that position (entry, turn,
    calls made in the turn), so both harnesses get the same blob at the same step."""

    def __init__(self, reasoning: bool = False) -> None:
        self.scripts: dict[str, Script] = {}
        self.reasoning = reasoning

    def add(self, script: Script, key: str) -> None:
        assert key not in self.scripts, f"two scripted entries start with {key[:60]!r}"
        self.scripts[key] = script

    def script_for(self, api: Api, body: Mapping[str, Any]) -> Script:
        users, _ = _conversation(api, body)
        return self.scripts[users[0]]

    def __call__(self, api: Api, body: Mapping[str, Any]) -> Reply:
        script = self.script_for(api, body)
        users, calls = _conversation(api, body)
        seen, turn = 0, -1
        for turn, n in enumerate(script.users_per_turn):  # noqa: B007
            seen += n
            if seen >= len(users):
                break
        assert seen == len(users), (script.entry_id, len(users))
        steps = script.turns[turn] if turn < len(script.turns) else []
        reasoning = ReplyReasoning(
            summary=f"Turn {turn}, {calls} call(s) made: next step.",
            encrypted_content=f"encrypted:{script.entry_id}:{turn}:{calls}",
        ) if self.reasoning else None
        done = 0
        for step in steps:
            if done == calls:
                return Reply(tool_calls=[ReplyCall(name=n, arguments=a)
                                         for n, a in (_bind(c, []) for c in step)],
                             reasoning=reasoning)
            done += len(step)
        assert done == calls, (script.entry_id, turn, calls)
        return Reply(content=FINAL_TEXT, reasoning=reasoning)


def first_user_text(entry_id: str) -> str:
    entry, _ = entry_and_gt(entry_id)
    return next(m["content"] for m in entry["question"][0] if m["role"] == "user")


def users_per_turn(entry_id: str) -> list[int]:
    entry, _ = entry_and_gt(entry_id)
    return [max(1, sum(1 for m in t if m["role"] == "user")) for t in entry["question"]]
