"""Our prompts for the QueryGen agents, and the tagged-reply parser they share.

Every agent answers inside XML-like tags (`<query>...</query>`), which survive chatty
models better than bare JSON; `parse_tags` takes the last occurrence of each tag so a
model that drafts before answering is still read correctly.
"""

from __future__ import annotations

import re

from harness.prompts import AGENT_SYSTEM_PROMPT

__all__ = ["SOLVER_SYSTEM", "USER_STOP", "parse_tags"]

USER_STOP = "###DONE###"

#: the solver runs under the prompt the held-out tasks send and the exports train on
SOLVER_SYSTEM = AGENT_SYSTEM_PROMPT

PLANNER = """You are designing a realistic situation in which someone asks an assistant for help.
The assistant can use these services:
{services}

Across the conversation the person will need the following capabilities, in this order:
{capabilities}

Invent the person and their situation. Do not mention tool or function names; describe needs
in everyday words. Reply with:
<persona>who the person is, in one or two sentences</persona>
<scenario>what they want to get done and why, in a short paragraph</scenario>"""

STATE_WRITER = """Write the starting data of the service "{env}" for this situation.
Situation: {scenario}

The data must be a JSON object that validates against this JSON schema:
{schema}

Here is the service's default data, for the format and typical values:
{default}

Keep every record the situation needs, consistent with each other. Reply with the whole object:
<state>{{...}}</state>"""

QUERY = """You write what a user says to an assistant in one turn of a conversation.
Persona: {persona}
Situation: {scenario}

The conversation so far:
{history}

The services' current data:
{state}

In this turn the request must need exactly these operations (the assistant sees their schemas):
{tools}

Write the user's message. It must be solvable: every value the operations require is either stated
in the message or can be looked up by the assistant (in the data above or the conversation so far).
Use real names and identifiers from the data. Do not name the tools. Reply with:
<intent>what the user wants done in this turn, one sentence</intent>
<query>the user's message</query>"""

REFINE = """Rewrite a user's message so it sounds like a real person, applying these patterns
in order where they fit, without ever making the request impossible to carry out:
1. implicit_reference: refer to things already mentioned ("that account", "him") and leave out
   parameters the assistant can recover from the conversation;
2. action_compression: fold several steps into one natural request;
3. reasonable_ambiguity: leave small details open that have an obvious sensible choice;
4. goal_expansion: state the goal behind the request, not only the steps.
Every value the assistant needs must stay stated or retrievable.

The conversation so far:
{history}

The message: {query}

Reply with:
<query>the rewritten message</query>
<patterns>comma-separated names of the patterns you applied (may be empty)</patterns>"""

SELECTOR = """Several assistants handled the same user request and reached the same result. Pick the
cleanest solution: the fewest needless calls, the right arguments, a correct final answer.

User request: {query}

{candidates}

Reply with the number of the best solution: <choice>N</choice>"""

STEP_FILTER = """A user's request was solved with these tool calls (numbered):
User request: {query}
{calls}

For training data we keep a turn only if its calls are what the request needs, and we mask
arguments whose exact value does not matter (formatting, paging, limits, free-text notes).
Reply with:
<keep>yes or no</keep>
<masked>a JSON object mapping call numbers (as strings) to lists of argument names to
mask</masked>"""

USER_SIMULATOR = """You are playing a person talking to an assistant. Stay in character.
Persona: {persona}
Situation: {scenario}
What you want in this part of the conversation: {intent}
Things you know (use them only when the assistant asks): {hidden}

Start with exactly this message: {query}

Then answer the assistant's questions briefly and truthfully. Do not volunteer steps or
identifiers it did not ask for, and do not do its work for it. When your request has been
handled (or clearly cannot be), reply with {stop} alone."""

JUDGE = """Judge whether the assistant fully handled the user's request in this conversation.
What the user wanted: {intent}

Conversation:
{conversation}

Reply with <verdict>pass</verdict> or <verdict>fail</verdict>, then
<reason>one sentence</reason>."""

_TAG = "<{0}>(.*?)</{0}>"


def parse_tags(text: str, tags: list[str]) -> dict[str, str]:
    """The last `<tag>...</tag>` of each tag (stripped); raises ValueError naming the
    missing ones, which is the feedback a retried agent gets."""
    found: dict[str, str] = {}
    missing = []
    for tag in tags:
        matches = re.findall(_TAG.format(re.escape(tag)), text, flags=re.DOTALL | re.IGNORECASE)
        if matches:
            found[tag] = matches[-1].strip()
        else:
            missing.append(tag)
    if missing:
        raise ValueError("your reply is missing " + ", ".join(f"<{t}>...</{t}>" for t in missing))
    return found
