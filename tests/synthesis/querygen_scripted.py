"""Scripted, offline models for the QueryGen tests: each answers from what its prompt says."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageUser, Model, ModelOutput
from inspect_ai.tool import ToolCall

from harness.providers.responder import reply as output
from harness.providers.responder import responder_model as model
from synthesis.querygen.config import QueryGenConfig, preset
from synthesis.querygen.prompts import USER_STOP

PLUMBER = "Did the plumber send me an invoice?"
PAYEE = ("I'm Priya Nair at the credit union. Add the plumber as a payee on my account, with the "
         "account holder name and bank details from the email.")
PAYEE_ARGS = {"customer_id": "C1001", "name": "Brightline Plumbing LLC",
              "account_number": "40021877", "routing_number": "121000358"}


def synth(states: list[str] | None = None) -> Model:
    """Planner, query generator, selector and (given `states`) the state writer, in turn."""
    written = iter(states or [])

    def respond(input: list[ChatMessage]) -> ModelOutput:
        prompt = input[0].text
        if "Invent the person" in prompt:
            return output("<persona>Priya Nair, a homeowner</persona>"
                          "<scenario>Her plumber sent an invoice she wants to pay.</scenario>")
        if "starting data" in prompt:
            return output(f"<state>{next(written)}</state>")
        if "best solution" in prompt:
            return output("<choice>2</choice>")
        if "Rewrite a user's message" in prompt:
            message = prompt.partition("The message: ")[2].partition("\n\nReply")[0]
            return output(f"<query>{message}</query><patterns>implicit_reference</patterns>")
        if "For training data" in prompt:
            masked = '{"1": ["query"]}' if "search_messages" in prompt else "{}"
            return output(f"<keep>yes</keep><masked>{masked}</masked>")
        wanted = prompt.partition("exactly these operations")[2]
        if "email-search_messages" in wanted:
            return output(f"<intent>find the invoice</intent><query>{PLUMBER}</query>")
        if "bank_ledger-add_payee" in wanted:
            return output(f"<intent>add the payee</intent><query>{PAYEE}</query>")
        raise AssertionError(f"unexpected synth prompt: {prompt[:200]}")

    return model(respond)


def solver(payee_names: Callable[[], str] | None = None) -> Model:
    """Solves both turns; `payee_names` (if given) varies the payee's name per call."""
    ids = itertools.count()

    def call(name: str, arguments: dict[str, Any]) -> ModelOutput:
        return output(calls=[ToolCall(id=f"t{next(ids)}", function=name, arguments=arguments)])

    def respond(input: list[ChatMessage]) -> ModelOutput:
        last = max(i for i, m in enumerate(input) if isinstance(m, ChatMessageUser))
        query, step = input[last].text, sum(m.role == "assistant" for m in input[last:])
        if query == PLUMBER:
            plan = [("email-search_messages", {"query": "invoice"}),
                    ("email-get_message", {"message_id": "msg-0036"})]
        else:
            args = dict(PAYEE_ARGS)
            if payee_names is not None:
                args["name"] = payee_names()
            plan = [("bank_ledger-find_customer", {"query": "Priya Nair"}),
                    ("bank_ledger-add_payee", args)]
        if step < len(plan):
            return call(*plan[step])
        return output("Done.")

    return model(respond)


def state_json(data: Any) -> str:
    return json.dumps(data)


def user() -> Model:
    """Opens with the message its prompt names, and is satisfied by the first answer."""

    def respond(input: list[ChatMessage]) -> ModelOutput:
        if len(input) == 2:
            opening = input[0].text.partition("Start with exactly this message: ")[2]
            return output(opening.partition("\n\n")[0])
        return output(USER_STOP)

    return model(respond)


def judge() -> Model:
    return model(lambda input: output("<verdict>pass</verdict><reason>all done</reason>"))


def ours(name: str, **overrides: object) -> QueryGenConfig:
    """Preset `name` on our pipeline (`pipeline="ours"`), which these models answer."""
    return preset(name, pipeline="ours", **overrides)
