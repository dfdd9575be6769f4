"""τ²-bench telecom domain, the agent's side: customers, lines, plans, devices and bills of
a mobile carrier, plus the coupling that makes the user's phone feel the account.

Split as upstream splits the domain: `data_model` + `tools` (the agent's side:
`TelecomDB`, `TelecomAgent`), `user_data_model` + `user_tools` (the user's phone:
`TelecomUserDB`, `TelecomUser`, over `user_phone`'s simulated phone), and `environment`
(`telecom_pair`).
"""

from envs.tau2.telecom.data_model import TelecomDB
from envs.tau2.telecom.environment import telecom_pair
from envs.tau2.telecom.tools import TelecomAgent
from envs.tau2.telecom.user_data_model import APNSettings, PaymentRequest, TelecomUserDB
from envs.tau2.telecom.user_tools import TelecomUser

__all__ = ["APNSettings", "PaymentRequest", "TelecomAgent", "TelecomDB", "TelecomUser",
           "TelecomUserDB", "telecom_pair"]
