"""τ²-bench airline domain: flights, users and reservations of a fictional airline.

Split as upstream splits the domain: `data_model` (the `FlightDB` records) and `tools`
(`Airline`, the agent's toolkit).
"""

from envs.tau2.airline.data_model import FlightDB
from envs.tau2.airline.tools import Airline

__all__ = ["Airline", "FlightDB"]
