"""τ²-bench retail domain: products, users and orders of an online store.

Split as upstream splits the domain: `data_model` (the `RetailDB` records) and `tools`
(`Retail`, the agent's toolkit).
"""

from envs.tau2.retail.data_model import RetailDB
from envs.tau2.retail.tools import Retail

__all__ = ["Retail", "RetailDB"]
