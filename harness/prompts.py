"""The system prompt of our own tool-use agent, shared by evaluation and training data.

The held-out EnvFactory tasks send it, QueryGen's solver rollouts run under it, and the
SFT/RL exports put it in every sample, so a model is trained under the words it is
evaluated with. (Benchmarks with an official harness send their own prompts, loaded from
their releases; this one is ours.)
"""

from __future__ import annotations

__all__ = ["AGENT_SYSTEM_PROMPT"]

AGENT_SYSTEM_PROMPT = (
    "You are a helpful assistant that completes the user's requests by calling the "
    "available tools. Tool names are '<service>-<tool>'. Look things up instead of "
    "guessing identifiers, do what the user asks in each message, and reply briefly "
    "when the request is done."
)
