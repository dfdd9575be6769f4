"""Every τ² tool carries an output schema (from its return annotation) for the tool
graph, while what a model is shown stays the release's tool object.

Expected shapes are read off the domain models and upstream's tool bodies by hand: an
airline reservation has its flights as objects with number, route, date and price;
telecom's data usage prints every number as a string; the phone's tools answer in text.
"""

from __future__ import annotations

from typing import Any

import pytest

from envs.tau2.airline import Airline
from envs.tau2.base import Tau2Environment
from envs.tau2.retail import Retail
from envs.tau2.telecom import TelecomAgent, TelecomUser
from envs.tau2.tool_objects import official_tools

TOOLKITS: list[type[Tau2Environment]] = [Airline, Retail, TelecomAgent, TelecomUser]


def _schemas(env: type[Tau2Environment]) -> dict[str, dict[str, Any]]:
    specs = {spec.name: spec.output_schema for spec in env.tool_specs()}
    missing = sorted(name for name, schema in specs.items() if schema is None)
    assert not missing, f"{env.__name__} tools without an output schema: {missing}"
    return {name: schema for name, schema in specs.items() if schema is not None}


def _typed(schema: dict[str, Any], where: str) -> None:
    """Each node names a JSON type (directly or through its alternatives), and objects
    spell their properties out: no bare `dict[str, Any]`, `object` or `list[dict]`."""
    options = schema.get("anyOf", schema.get("oneOf"))
    if options is not None:
        for option in options:
            _typed(option, where)
        return
    assert "type" in schema, f"{where}: untyped {schema}"
    if schema["type"] == "array":
        _typed(schema["items"], f"{where}[]")
    if schema["type"] == "object":
        properties = schema.get("properties")
        values = schema.get("additionalProperties")
        assert properties or isinstance(values, dict), f"{where}: object without properties"
        for name, sub in (properties or {}).items():
            _typed(sub, f"{where}.{name}")
        if isinstance(values, dict):
            _typed(values, f"{where}.*")


@pytest.mark.parametrize("env", TOOLKITS, ids=lambda env: env.toolkit)
def test_every_tool_has_a_typed_output_schema(env: type[Tau2Environment]) -> None:
    for name, schema in _schemas(env).items():
        _typed(schema, f"{env.toolkit}.{name}")


@pytest.mark.parametrize("env", TOOLKITS, ids=lambda env: env.toolkit)
def test_what_a_model_sees_is_still_the_release_object(env: type[Tau2Environment]) -> None:
    official = {o["function"]["name"]: o["function"] for o in official_tools(env.toolkit)}
    for spec in env.tool_specs():
        shown = spec.model_dump(exclude={"write", "output_schema"})
        assert shown == {key: official[spec.name][key]
                         for key in ("name", "description", "parameters")}
        assert "output_schema" not in official[spec.name]


def test_airline_reservation_schema() -> None:
    schema = _schemas(Airline)["get_reservation_details"]
    assert schema["type"] == "object"
    properties = schema["properties"]
    assert {"reservation_id", "user_id", "origin", "destination", "flight_type", "cabin",
            "flights", "passengers", "payment_history", "created_at", "total_baggages",
            "nonfree_baggages", "insurance", "status"} == set(properties)
    assert properties["reservation_id"] == {"type": "string"}
    assert properties["cabin"]["enum"] == ["business", "economy", "basic_economy"]
    flight = properties["flights"]["items"]
    assert flight["type"] == "object"
    assert {name: sub["type"] for name, sub in flight["properties"].items()} == {
        "flight_number": "string", "origin": "string", "destination": "string",
        "date": "string", "price": "integer"}
    assert _schemas(Airline)["book_reservation"]["properties"] == properties


def test_retail_and_telecom_shapes() -> None:
    order = _schemas(Retail)["cancel_pending_order"]["properties"]
    assert {"order_id", "items", "status", "payment_history"} <= set(order)
    assert _schemas(Retail)["find_user_id_by_email"] == {"type": "string"}

    telecom = _schemas(TelecomAgent)
    usage = telecom["get_data_usage"]["properties"]
    assert {name: sub["type"] for name, sub in usage.items()} == {
        "line_id": "string", "data_used_gb": "string", "data_limit_gb": "string",
        "data_refueling_gb": "string", "cycle_end_date": "string"}
    line = telecom["suspend_line"]["properties"]["line"]["properties"]
    assert line["status"]["enum"] == ["Active", "Suspended", "Pending Activation", "Closed"]
    assert telecom["get_bills_for_customer"]["items"]["properties"]["total_due"] == \
        {"type": "number"}
    assert len(telecom["get_details_by_id"]["anyOf"]) == 5  # line, device, bill, customer, plan
    assert _schemas(TelecomUser)["check_status_bar"] == {"type": "string"}
