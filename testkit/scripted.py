"""Scripted models for tests: agents, users and judges that answer without a network.

Built on `harness.providers.responder` (a mockllm model that calls a function; its turn
and tool-call id rules are the ones `envfactory/script` uses too), so every
scripted model answers through Inspect's own model API with explicit token usage and the
stop reason a provider would give. A test says *how* its model behaves (the same text
always, replies in turn, an answer keyed to how far the conversation is, a function of
the request) and reads back what the model was sent from `requests`; it never builds
`ModelOutput`s or mockllm output lists by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from inspect_ai.model import ChatMessageAssistant, GenerateConfig, Model, ModelOutput
from inspect_ai.tool import ToolCall

from harness.providers.responder import Request, fresh_ids, new_id, own_turns, reply, request_model

__all__ = ["Answer", "Request", "ScriptedModel", "answers", "by_own_turns", "call", "constant",
           "message", "reply", "scripted"]

#: what a scripted model answers: text, a prepared output, or tool calls (no text)
Answer = str | ModelOutput | ChatMessageAssistant | list[ToolCall]

#: the prefix of the ids the kit makes up (a test's own ids are kept as given)
_AUTO = "scripted_"


def call(function: str, arguments: dict[str, Any] | None = None, *, id: str | None = None,
         parse_error: str | None = None) -> ToolCall:
    """A tool call; ids are unique in the process unless given."""
    return ToolCall(id=id or new_id(_AUTO), function=function,
                    arguments=arguments or {}, parse_error=parse_error)


def message(text: str = "", calls: Sequence[ToolCall] = ()) -> ChatMessageAssistant:
    """An assistant message with `text` and/or `calls` (no calls: None, as providers send)."""
    return ChatMessageAssistant(content=text, tool_calls=list(calls) or None)


def output(answer: Answer) -> ModelOutput:
    """A model output for any `Answer`."""
    if isinstance(answer, ModelOutput):
        return answer
    if isinstance(answer, str):
        return reply(answer)
    if isinstance(answer, list):
        return reply("", answer)
    return reply(answer.text, answer.tool_calls)


class ScriptedModel:
    """A model answering each request with `respond(request)`; it records every request.

    `.model` is the Inspect `Model` to pass to `eval` (or as a role); `.requests` holds
    what it was sent, in order (messages, offered tools, tool choice, generation config).
    `config` is the model's own generation config.
    """

    def __init__(self, respond: Callable[[Request], Answer],
                 config: GenerateConfig | None = None) -> None:
        self.respond = respond
        self.requests: list[Request] = []
        self.model: Model = request_model(self._answer, config)

    def _answer(self, request: Request) -> ModelOutput:
        self.requests.append(request)
        return fresh_ids(output(self.respond(request)), request.messages, prefix=_AUTO)

    @property
    def prompts(self) -> list[str]:
        """The text of each request's last message (a judge's prompt)."""
        return [r.messages[-1].text for r in self.requests]

    @property
    def configs(self) -> list[GenerateConfig]:
        """The generation config of each request."""
        return [r.config for r in self.requests]


def scripted(respond: Callable[[Request], Answer]) -> Model:
    """A model answering each request with `respond(request)`."""
    return ScriptedModel(respond).model


def constant(answer: Answer) -> Model:
    """A model giving the same answer to every request."""
    return scripted(lambda _: answer)


def answers(*replies: Answer, config: GenerateConfig | None = None) -> ScriptedModel:
    """A model giving `replies` in turn, one per request (running out is an error: the
    test expected fewer calls)."""
    left = list(replies)

    def respond(request: Request) -> Answer:
        if not left:
            raise AssertionError(f"scripted model ran out of its {len(replies)} replies")
        return left.pop(0)

    return ScriptedModel(respond, config)


def by_own_turns(script: Sequence[Answer], config: GenerateConfig | None = None) -> ScriptedModel:
    """A speaker whose answer depends on how far its conversation is: entry k answers a
    request holding k of its own (assistant-role) messages; the last entry repeats.

    Keyed to the conversation, not to a call counter, so concurrent samples each get the
    whole script."""

    def respond(request: Request) -> Answer:
        return script[min(own_turns(request.messages), len(script) - 1)]

    return ScriptedModel(respond, config)
