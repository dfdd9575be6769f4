"""Every use of Inspect internals, fenced in one module.

The project runs on a pinned `inspect-ai` (pyproject.toml). Where Inspect has a public
API we use it (`inspect_ai.util.Store`, `inspect_ai.scorer.ScoreReducer`, usage hooks,
`anyio.run`); what is left is here, one small function per touchpoint, each saying why
no public API serves. `tests/harness/test_inspect_compat.py` has one test per
touchpoint that fails when the pinned Inspect moves the symbol or changes what we rely
on, so an Inspect upgrade is a matter of running that file and fixing this module.
Nothing else in the project's packages imports a private Inspect module or member (tests
compare against Inspect's internals on purpose; `benchmarks/tau2_peer_driver.py` runs in
the peer harness's own interpreter, which cannot import this project).

Internal modules are imported inside the functions that need them (except the one
base class, `PrerequisiteError`), so a missing symbol fails the feature that uses it,
with its name in the traceback, rather than every import of `harness`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from inspect_ai._util.error import PrerequisiteError
from inspect_ai.event import Event
from inspect_ai.log import EvalSample
from inspect_ai.model import GenerateConfig, Model
from inspect_ai.tool import MCPServer
from inspect_ai.util import StoreModel

__all__ = [
    "PrerequisiteError",
    "Wrapper",
    "cli_generate_config",
    "current_sample_id",
    "mcp_listed_tools",
    "read_eval_samples",
    "record_event",
    "store_key",
    "wrap_model_api_generate",
    "wrap_openai_chat_message",
    "wrap_openai_chat_tool_call_param",
    "wrap_openai_chat_tool_param",
    "wrap_openai_responses_reasoning_item",
    "wrap_openai_responses_request_options",
    "wrap_openai_responses_tool_call_items",
    "wrap_openai_responses_tool_param",
]

#: `wrap(inner) -> replacement`, for the `wrap_*` functions below
Wrapper = Callable[[Callable[..., Any]], Callable[..., Any]]
#: attribute set on every function this module installed, so each wrap happens once
_WRAPPED = "__envfactory_inspect_compat__"

# `PrerequisiteError` (imported above): Inspect's CLI prints one raised while a task is
# built as its message alone and exits 1; any other exception is a long traceback. It is
# the only way to give `-T` option errors one line (harness/task_options.py), and Inspect
# exports it from no public module.


def cli_generate_config() -> GenerateConfig:
    """The generation config of the running eval (`--temperature`, `--seed`,
    `--max-tokens`, ...), as Inspect resolved it.

    Inspect applies it to the main model only; a benchmark's user or judge role must see
    the same options (harness/generation_config.py). Public API gives a `Model`'s own
    config, never the eval's."""
    from inspect_ai.model._generate_config import active_generate_config

    return active_generate_config()


def current_sample_id() -> str | int | None:
    """The id of the sample whose solver is running (None outside a sample).

    A model provider is handed messages and tools, not the sample; the replay provider
    needs the id to find its recorded trajectory. Inspect keeps the running `TaskState`
    in a context variable with no public accessor."""
    from inspect_ai.solver._task_state import sample_state

    state = sample_state()
    return None if state is None else state.sample_id


def store_key(model: type[StoreModel], field: str, instance: str | None = None) -> str:
    """The `Store` key under which a `StoreModel` of class `model` keeps `field`.

    Writing a field through a bound `StoreModel` re-validates every field (the whole
    message list of an episode) on each assignment; the episode loop writes after every
    step, so it sets the store entries directly. The key format is Inspect's
    (`StoreModel._ns_name`), which no public API exposes."""
    namespace = f"{instance}:" if instance is not None else ""
    return f"{model.__name__}:{namespace}{field}"


def record_event(event: Event) -> None:
    """Append `event` to the running sample's transcript (what `inspect view` shows).

    The episode loop executes tool calls itself (each benchmark's exact error text and
    decoding), not through Inspect's `execute_tools`, so Inspect records no `ToolEvent`
    for them; `Transcript` has no public method to add one."""
    from inspect_ai.log import transcript

    transcript()._event(event)


def mcp_listed_tools(server: MCPServer) -> list[Any]:
    """The server's `tools/list` answer as the MCP SDK parsed it (`mcp.types.Tool`), for
    the connection of the running task (call it in the task that entered the server and
    called `tools()`).

    MCP-Atlas validates arguments against each tool's raw `inputSchema`, which Inspect's
    `ToolDef` rewrites (it fills in missing parameter descriptions). Inspect keeps the
    raw list after `tools()` on the task's session of a local (stdio, HTTP, sandbox)
    server, in private attributes. A version without it is an error here, not a
    silently different schema."""
    from inspect_ai.tool._mcp._local import MCPServerLocal

    session: Any = server._task_session() if isinstance(server, MCPServerLocal) else server
    listed = getattr(session, "_cached_tool_list", None)
    if listed is None:
        raise RuntimeError(f"{type(server).__name__} keeps no raw tool list (list its tools "
                           "first; else inspect-ai changed: update "
                           "harness.inspect_compat.mcp_listed_tools)")
    return list(listed)


async def read_eval_samples(path: str, wanted: Sequence[tuple[str | int, int]],
                            drop: Sequence[str]) -> list[EvalSample]:
    """The samples `(id, epoch)` of the log at `path`, in order, without their `drop`
    fields.

    An `.eval` log's members are parsed with `json.loads`, `drop` removed, and the rest
    validated as an `EvalSample`: the public `read_eval_log_samples_by_id` validates
    every event (most of a sample's bytes and time) or, with `exclude_fields`, streams
    through ijson, no faster; this is ~2.5x faster for the leaderboard's taxonomy. The
    member layout (`samples/<id>_epoch_<n>.json`), the zip reader (which handles
    Inspect's compression) and the deserialising context are internal. Other formats go
    to the public reader, which needs a shared `AsyncFilesystem` to be open (internal
    too: its sync wrapper opens one through the internal `run_coroutine`)."""
    from inspect_ai._util.async_zip import AsyncZipReader
    from inspect_ai._util.asyncfiles import AsyncFilesystem
    from inspect_ai._util.constants import get_deserializing_context
    from inspect_ai.log import read_eval_log_samples_by_id_async

    async with AsyncFilesystem() as fs:  # reuses one the caller opened
        if not path.endswith(".eval"):
            return await read_eval_log_samples_by_id_async(path, wanted,
                                                           exclude_fields=set(drop))
        reader = AsyncZipReader(fs, path)
        out = []
        for sample_id, epoch in wanted:
            data = json.loads(await reader.read_member_fully(
                f"samples/{sample_id}_epoch_{epoch}.json"))
            for key in drop:
                data.pop(key, None)
            out.append(EvalSample.model_validate(data, context=get_deserializing_context()))
        return out


# -- OpenAI-style request serialisers ---------------------------------------------------
# Official harnesses send their own tool objects and re-send the provider's raw tool-call
# arguments (harness/verbatim_tools.py, harness/raw_arguments.py); Inspect rebuilds both
# from its own models. Its OpenAI serialisers are module functions that their callers
# look up through the module's globals, with no hook or option to change what they
# build, so the only way in is to replace them. Each `wrap_*` takes `wrap(inner) ->
# replacement` and installs it once (later calls are no-ops, so each function has one
# owner: raw_arguments or verbatim_tools); the replacement must delegate to `inner` for
# everything it does not own.


def _wrap_once(module: Any, name: str, wrap: Wrapper) -> None:
    inner = getattr(module, name)
    if getattr(inner, _WRAPPED, False):
        return
    replacement = wrap(inner)
    setattr(replacement, _WRAPPED, True)
    replacement.__wrapped__ = inner  # type: ignore[attr-defined]  # inspect.unwrap finds Inspect's
    setattr(module, name, replacement)


def wrap_openai_chat_message(wrap: Wrapper) -> None:
    """`openai_chat_message(message, *args, **kwargs)` (async): one `ChatMessage` as a
    Chat Completions message param, for the `openai/` chat path and every
    OpenAI-compatible provider (`messages_to_openai` calls it per message)."""
    from inspect_ai.model import _openai

    _wrap_once(_openai, "openai_chat_message", wrap)


def wrap_openai_chat_tool_call_param(wrap: Wrapper) -> None:
    """`openai_chat_tool_call_param(tool_call)`: one `ToolCall` of an assistant message
    as a Chat Completions tool-call param (called by `openai_chat_message`)."""
    from inspect_ai.model import _openai

    _wrap_once(_openai, "openai_chat_tool_call_param", wrap)


def wrap_openai_chat_tool_param(wrap: Wrapper) -> None:
    """`openai_chat_tool_param(tool, exclude=None)`: one `ToolInfo` as a Chat
    Completions tool (called by `openai_chat_tools`)."""
    from inspect_ai.model import _openai

    _wrap_once(_openai, "openai_chat_tool_param", wrap)


def wrap_openai_responses_tool_call_items(wrap: Wrapper) -> None:
    """`_tool_call_items_from_assistant_message(message, *args, **kwargs)`: an assistant
    message's tool calls as Responses API `function_call` input items."""
    from inspect_ai.model import _openai_responses

    _wrap_once(_openai_responses, "_tool_call_items_from_assistant_message", wrap)


def wrap_openai_responses_reasoning_item(wrap: Wrapper) -> None:
    """`responses_reasoning_from_reasoning(content, replay_reasoning_text=False)`: one
    `ContentReasoning` of an assistant message as a Responses API `reasoning` input item
    (called by `_openai_input_items_from_chat_message_assistant`)."""
    from inspect_ai.model import _openai_responses

    _wrap_once(_openai_responses, "responses_reasoning_from_reasoning", wrap)


def wrap_openai_responses_request_options(wrap: Wrapper) -> None:
    """`completion_params_responses(model_name, *, model_info, config, ...)`: a Responses
    request's options (`store`, `include`, `reasoning`, sampling), which
    `generate_responses` builds for each request; `model_info.has_reasoning_options()`
    decides whether `include` and `reasoning` are sent."""
    from inspect_ai.model._providers import openai_responses

    _wrap_once(openai_responses, "completion_params_responses", wrap)


def wrap_openai_responses_tool_param(wrap: Wrapper) -> None:
    """`_tool_param_for_tool_info(tool, model_name, config, is_latest=False)`: one
    `ToolInfo` as a Responses API tool (called by `openai_responses_tools`)."""
    from inspect_ai.model import _openai_responses

    _wrap_once(_openai_responses, "_tool_param_for_tool_info", wrap)


def wrap_model_api_generate(model: Model, wrap: Wrapper) -> None:
    """Replace `model.api.generate` (once per model object) with `wrap(inner)`.

    The provider's raw response (`ModelCall.response`, the exact argument strings BFCL
    decodes) reaches Inspect as the second item of `ModelAPI.generate`'s result, and
    Inspect keeps it in the transcript only for the first calls of a sample; no hook
    sees it. `Model.generate` calls `self.api.generate` on each request."""
    _wrap_once(model.api, "generate", wrap)
