"""The telecom pair (upstream `tau2/domains/telecom/environment.py`): the agent's and the
user's environments of one episode, synced once on construction as upstream's is.
"""

from __future__ import annotations

from envs.tau2.telecom.tools import TelecomAgent
from envs.tau2.telecom.user_tools import TelecomUser


def telecom_pair() -> tuple[TelecomAgent, TelecomUser]:
    """Fresh agent and user environments on the release databases, synced once (as
    upstream's environment does on construction)."""
    agent, user = TelecomAgent(), TelecomUser()
    agent.sync_tools(user)
    return agent, user
