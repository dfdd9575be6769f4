"""One test per Inspect internal that `harness.inspect_compat` touches.

Each checks the symbol is where the pinned Inspect keeps it, with the signature and the
behaviour we rely on, so an Inspect upgrade that moves or changes one fails here, by
name, instead of somewhere downstream (a request that silently differs from the
official harness, a progress store scorers cannot read).
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.event import ToolEvent
from inspect_ai.log import EvalLog, read_eval_log, read_eval_log_sample, write_eval_log
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageUser,
    ContentReasoning,
    ContentText,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    _openai,
    _openai_responses,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolCall, ToolInfo, ToolParams, mcp_server_stdio
from inspect_ai.util import Store, StoreModel

from harness import inspect_compat as compat

#: what the probe solver saw inside its sample
SEEN: dict[str, Any] = {}


@solver
def _probe() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        SEEN["config"] = compat.cli_generate_config()
        SEEN["sample_id"] = compat.current_sample_id()
        compat.record_event(ToolEvent(id="c1", function="probe", arguments={}, result="ok"))
        return state

    return solve


@pytest.fixture(scope="module")
def probe_log(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    """One sample run by `inspect_ai.eval` with `--temperature 0.3`."""
    log_dir = tmp_path_factory.mktemp("logs")
    [log] = eval(Task(dataset=[Sample(id="s1", input="hi")], solver=_probe()),
                 model="mockllm/model", temperature=0.3, log_dir=str(log_dir),
                 display="none", log_format="eval")
    assert log.status == "success", log.error
    return log


def test_prerequisite_error_is_printed_by_inspect_as_its_message_alone(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import rich
    from inspect_ai._util.error import exception_hook

    # an in-process eval(display="none") earlier in the session leaves rich's global
    # console quiet, and Inspect's hook prints through it
    monkeypatch.setattr(rich.get_console(), "quiet", False)

    class OptionError(compat.PrerequisiteError):
        pass

    exception_hook()(OptionError, OptionError("-T x=1: use y"), None)
    assert capsys.readouterr().out.strip() == "-T x=1: use y"


def test_cli_generate_config_is_the_evals_config(probe_log: EvalLog) -> None:
    assert isinstance(SEEN["config"], GenerateConfig)
    assert SEEN["config"].temperature == 0.3
    assert compat.cli_generate_config().temperature is None  # outside an eval


def test_current_sample_id_inside_and_outside_a_sample(probe_log: EvalLog) -> None:
    assert SEEN["sample_id"] == "s1"
    assert compat.current_sample_id() is None


def test_record_event_reaches_the_samples_log(probe_log: EvalLog) -> None:
    assert probe_log.samples is not None
    tools = [e for e in probe_log.samples[0].events if isinstance(e, ToolEvent)]
    assert [(e.function, e.result) for e in tools] == [("probe", "ok")]


def test_store_key_is_where_store_model_keeps_a_field() -> None:
    class Progress(StoreModel):
        steps: int = 0

    s = Store()
    bound = Progress(store=s)
    bound.steps = 3
    assert s.get(compat.store_key(Progress, "steps")) == 3
    s.set(compat.store_key(Progress, "steps"), 5)
    assert Progress(store=s).steps == 5
    named = Progress(store=s, instance="a")
    named.steps = 7
    assert s.get(compat.store_key(Progress, "steps", "a")) == 7


SKIP = {"events", "events_data"}


def test_read_eval_samples_matches_the_public_reader(probe_log: EvalLog,
                                                    tmp_path: Path) -> None:
    public = read_eval_log_sample(probe_log.location, id="s1", epoch=1,
                                  exclude_fields={"events"}).model_dump(exclude=SKIP)
    as_json = tmp_path / "log.json"
    write_eval_log(read_eval_log(probe_log.location), str(as_json))
    for path in (probe_log.location, str(as_json)):  # the fast path, the public one
        [fast] = anyio.run(compat.read_eval_samples, path, [("s1", 1)], sorted(SKIP))
        assert fast.model_dump(exclude=SKIP) == public


async def test_mcp_listed_tools_is_the_raw_tools_list(tmp_path: Path) -> None:
    server_py = tmp_path / "server.py"
    server_py.write_text(textwrap.dedent('''
        from mcp.server.fastmcp import FastMCP
        app = FastMCP("probe")
        @app.tool()
        def echo(text: str) -> str:
            """Echo."""
            return text
        app.run()
    '''))
    server = mcp_server_stdio(command=sys.executable, args=[str(server_py)])
    async with server:
        with pytest.raises(RuntimeError, match="inspect_compat"):
            compat.mcp_listed_tools(server)  # nothing listed yet
        await server.tools()
        [tool] = compat.mcp_listed_tools(server)
    assert tool.name == "echo"
    # the raw schema: Inspect's ToolDef would have added a description to `text`
    assert "description" not in tool.inputSchema["properties"]["text"]


# -- the OpenAI serialisers: where they are, their signatures, who calls them ---------

TOOL = ToolInfo(name="f", description="d", parameters=ToolParams())
CALL = ToolCall(id="call_1", function="f", arguments={})
ASSISTANT = ChatMessageAssistant(content="", tool_calls=[CALL], id="m1")


def _original(module: Any, name: str, params: list[str]) -> Any:
    fn = inspect.unwrap(getattr(module, name))  # ours set __wrapped__
    assert fn.__module__ == module.__name__
    assert list(inspect.signature(fn).parameters)[:len(params)] == params
    return fn


def _spy(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, fn: Any,
         install: Any) -> list[str]:
    """Put a fresh `fn` in place (restored after the test), wrap it through `install`,
    and return the log of calls that reached the wrapper."""
    calls: list[str] = []
    monkeypatch.setattr(module, name, fn)

    def wrap(inner: Any) -> Any:
        def replacement(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return inner(*args, **kwargs)
        return replacement

    install(wrap)
    install(wrap)  # idempotent: wrapped once
    return calls


def test_openai_chat_tool_param(monkeypatch: pytest.MonkeyPatch) -> None:
    fn = _original(_openai, "openai_chat_tool_param", ["tool", "exclude"])
    calls = _spy(monkeypatch, _openai, "openai_chat_tool_param", fn,
                 compat.wrap_openai_chat_tool_param)
    [param] = _openai.openai_chat_tools([TOOL])
    assert param["function"]["name"] == "f" and calls == ["openai_chat_tool_param"]


async def test_openai_chat_message_and_tool_call_param(monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    message = _original(_openai, "openai_chat_message", ["message"])
    call = _original(_openai, "openai_chat_tool_call_param", ["tool_call"])
    calls = _spy(monkeypatch, _openai, "openai_chat_tool_call_param", call,
                 compat.wrap_openai_chat_tool_call_param)

    def wrap_async(inner: Any) -> Any:
        async def replacement(*args: Any, **kwargs: Any) -> Any:
            calls.append("openai_chat_message")
            return await inner(*args, **kwargs)
        return replacement

    monkeypatch.setattr(_openai, "openai_chat_message", message)
    compat.wrap_openai_chat_message(wrap_async)
    [param] = await _openai.messages_to_openai([ASSISTANT])
    assert param["tool_calls"][0]["id"] == "call_1"  # type: ignore[typeddict-item]
    assert calls == ["openai_chat_message", "openai_chat_tool_call_param"]


def test_openai_responses_tool_param(monkeypatch: pytest.MonkeyPatch) -> None:
    fn = _original(_openai_responses, "_tool_param_for_tool_info",
                   ["tool", "model_name", "config", "is_latest"])
    calls = _spy(monkeypatch, _openai_responses, "_tool_param_for_tool_info", fn,
                 compat.wrap_openai_responses_tool_param)
    [param] = _openai_responses.openai_responses_tools([TOOL], "gpt-4o", GenerateConfig())
    assert param["name"] == "f" and calls == ["_tool_param_for_tool_info"]  # type: ignore[typeddict-item]


async def test_openai_responses_tool_call_items(monkeypatch: pytest.MonkeyPatch) -> None:
    fn = _original(_openai_responses, "_tool_call_items_from_assistant_message", ["message"])
    calls = _spy(monkeypatch, _openai_responses, "_tool_call_items_from_assistant_message",
                 fn, compat.wrap_openai_responses_tool_call_items)
    items = await _openai_responses.openai_responses_inputs([ChatMessageUser(content="hi"),
                                                             ASSISTANT])
    assert any(i.get("call_id") == "call_1" for i in items)  # type: ignore[union-attr]
    assert calls == ["_tool_call_items_from_assistant_message"]


async def test_openai_responses_reasoning_item(monkeypatch: pytest.MonkeyPatch) -> None:
    fn = _original(_openai_responses, "responses_reasoning_from_reasoning",
                   ["content", "replay_reasoning_text"])
    calls = _spy(monkeypatch, _openai_responses, "responses_reasoning_from_reasoning", fn,
                 compat.wrap_openai_responses_reasoning_item)
    reasoning = ContentReasoning(reasoning="blob", redacted=True, signature="rs_1")
    items = await _openai_responses.openai_responses_inputs([
        ChatMessageUser(content="hi"),
        ChatMessageAssistant(content=[reasoning, ContentText(text="ok")])])
    assert any(i.get("encrypted_content") == "blob" for i in items)  # type: ignore[union-attr]
    assert calls == ["responses_reasoning_from_reasoning"]


async def test_openai_responses_request_options(monkeypatch: pytest.MonkeyPatch) -> None:
    """`generate_responses` builds each request's options through the module global."""
    from inspect_ai.model._providers import openai_responses

    from testkit.recording_server import RecordingServer, Reply

    fn = _original(openai_responses, "completion_params_responses", ["model_name"])
    assert "model_info" in inspect.signature(fn).parameters
    calls = _spy(monkeypatch, openai_responses, "completion_params_responses", fn,
                 compat.wrap_openai_responses_request_options)
    with RecordingServer(lambda api, body: Reply(content="ok")) as server:
        model = get_model("openai/gpt-4o", base_url=server.url, api_key="recording-server",
                          responses_api=True)
        assert (await model.generate("hi")).completion == "ok"
    assert [r.api for r in server.requests] == ["responses"]
    assert calls == ["completion_params_responses"]


async def test_model_api_generate_is_what_model_generate_calls() -> None:
    output = ModelOutput.from_content("mockllm/model", "hello")
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    model = get_model("mockllm/model", custom_outputs=[output, output])
    seen: list[Any] = []

    def wrap(inner: Any) -> Any:
        async def generate(*args: Any, **kwargs: Any) -> Any:
            result = await inner(*args, **kwargs)
            seen.append(result)
            return result
        return generate

    compat.wrap_model_api_generate(model, wrap)
    compat.wrap_model_api_generate(model, wrap)  # idempotent per model object
    assert (await model.generate("hi")).completion == "hello"
    assert len(seen) == 1


# -- the fence itself -------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("envs", "harness", "tasks", "synthesis", "training", "leaderboard", "envfactory",
           "testkit", "benchmarks")
#: runs in the τ² peer harness's own interpreter, which cannot import this project
PEER_SIDE = {"benchmarks/tau2_peer_driver.py"}


def _private_inspect_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module is not None \
                and node.module.split(".")[0] == "inspect_ai":
            names = [a.name for a in node.names]
            if any(part.startswith("_") for part in node.module.split(".")) \
                    or any(n.startswith("_") for n in names):
                found.append(f"{node.lineno}: from {node.module} import {', '.join(names)}")
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names
                      if a.name.startswith("inspect_ai")
                      and any(p.startswith("_") for p in a.name.split("."))]
    return found


def test_no_private_inspect_import_outside_the_compat_module() -> None:
    offenders = {}
    for folder in PRODUCT:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == "harness/inspect_compat.py" or rel in PEER_SIDE:
                continue
            if found := _private_inspect_imports(path):
                offenders[rel] = found
    assert offenders == {}, "use harness.inspect_compat (or a public API) instead"
