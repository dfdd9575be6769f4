"""Tool backends: whole schemas reach the model, only offered tools run, the unknown-tool
wording is one, a benchmark executor's errors keep their text and gain a kind, and MCP
servers are cleaned up when start-up fails part-way."""

from __future__ import annotations

import sys

import pytest

from envs import registry
from envs.bfcl.world import BfclWorld
from envs.errors import unknown_tool
from envs.schemas import inline_refs
from harness.tool_backends import (
    BfclBackend,
    InProcessBackend,
    McpBackend,
    McpServerSpec,
    tool_info,
)
from tests.shared_data import needs_tau2


def test_inline_refs_keeps_field_descriptions_over_definitions() -> None:
    schema = {"$defs": {"Mode": {"enum": ["a", "b"], "title": "Mode", "type": "string"},
                        "Item": {"type": "object", "title": "Item", "description": "an item",
                                 "properties": {"mode": {"$ref": "#/$defs/Mode"}}}},
              "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
                             "mode": {"$ref": "#/$defs/Mode", "description": "which"}}}
    assert inline_refs(schema) == {"properties": {
        "items": {"type": "array", "items": {
            "type": "object", "description": "an item",
            "properties": {"mode": {"enum": ["a", "b"], "type": "string"}}}},
        "mode": {"enum": ["a", "b"], "type": "string", "description": "which"}}}
    with pytest.raises(ValueError, match="undefined '#/\\$defs/X'"):
        inline_refs({"properties": {"x": {"$ref": "#/$defs/X"}}})


@needs_tau2
@pytest.mark.usefixtures("use_tau2_data")
def test_nested_tau2_arguments_reach_the_model_whole() -> None:
    """`book_reservation`'s item schemas, `set_apn_settings`' object and
    `set_network_mode_preference`'s enum (the release's `$defs`) are inlined."""
    from envs.tau2.airline import Airline
    from envs.tau2.telecom import TelecomUser

    def params(cls: type, name: str) -> dict:
        spec = next(s for s in cls.tool_specs() if s.name == name)  # type: ignore[attr-defined]
        return tool_info(name, spec).parameters.model_dump(exclude_none=True)["properties"]

    def model(union: dict) -> dict:
        return next(option for option in union["anyOf"] if "properties" in option)

    booking = params(Airline, "book_reservation")
    assert set(model(booking["flights"]["items"])["properties"]) == {"flight_number", "date"}
    assert set(model(booking["passengers"]["items"])["properties"]) == {
        "first_name", "last_name", "dob"}
    assert set(model(booking["payment_methods"]["items"])["properties"]) == {
        "payment_id", "amount"}
    apn = model(params(TelecomUser, "set_apn_settings")["apn_settings"])
    assert apn["type"] == "object" and apn["properties"]["apn_name"]["enum"] == ["internet",
                                                                                 "broken"]
    mode = params(TelecomUser, "set_network_mode_preference")["mode"]
    assert {"enum": ["4g_5g_preferred", "4g_only", "3g_only", "2g_only"],
            "type": "string"} in mode["anyOf"]


async def test_inprocess_backend_runs_only_offered_tools() -> None:
    state = registry.create("calendar").snapshot()
    async with InProcessBackend(["calendar"], {"calendar": state}) as backend:
        names = [t.name for t in backend.tools()]
        result = await backend.call("calendar-nope", {})
        assert not result.ok and result.error_kind == "unknown_tool"
        assert result.text == f"Error: {unknown_tool('calendar-nope', names)}"
        assert (await backend.call("calendar-list_calendars", {})).ok
        assert not (await backend.call("calendar-list_calendars", {}, role="user")).ok


async def test_bfcl_backend_keeps_the_executors_text_and_adds_the_kind() -> None:
    backend = BfclBackend(BfclWorld("t", {}, ["MathAPI"]), lambda: [])
    seen = [await backend.call(name, arguments) for name, arguments in (
        ("nope", {}), ("add", {"x": 1}), ("add", {"a": 1, "b": 2}))]
    assert [(o.ok, o.error_kind) for o in seen] == [
        (False, "unknown_tool"), (False, "invalid_arguments"), (True, None)]
    assert seen[0].text == "Error during execution: name 'nope' is not defined"
    assert seen[1].text == ("Error during execution: MathAPI.add() got an unexpected "
                            "keyword argument 'x'")


@pytest.mark.slow
async def test_mcp_backend_hides_scenario_tools_and_keeps_the_world() -> None:
    """With `transport=mcp` the model could call `load_scenario`/`save_scenario` and read
    or wipe the world; now they are neither offered nor callable."""
    state = registry.create("calendar").snapshot()
    async with McpBackend.for_environments(["calendar"], {"calendar": state}) as backend:
        names = [t.name for t in backend.tools()]
        assert names and not any(n.endswith(("load_scenario", "save_scenario")) for n in names)
        wipe = await backend.call("calendar-load_scenario", {"scenario": {}})
        assert not wipe.ok
        assert wipe.text == f"Error: {unknown_tool('calendar-load_scenario', names)}"
        assert not (await backend.call("calendar-save_scenario", {})).ok
        assert await backend.snapshot() == {"calendar": state}
        inprocess = InProcessBackend(["calendar"], {"calendar": state})
        assert (await backend.call("calendar-nope", {})).text == (
            await inprocess.call("calendar-nope", {})).text


@pytest.mark.slow
async def test_mcp_backend_stops_started_servers_when_a_later_one_fails() -> None:
    backend = McpBackend([
        McpServerSpec(name="calendar", command=sys.executable,
                      args=["-m", "envfactory", "env", "serve", "calendar"]),
        McpServerSpec(name="broken", command=sys.executable, args=["-c", "raise SystemExit(3)"]),
    ])
    with pytest.raises(BaseException):  # noqa: B017 - whatever the MCP client raises
        async with backend:
            pass
    # the first server was entered and must have been closed with the stack
    assert backend._stack._exit_callbacks == type(backend._stack._exit_callbacks)()  # type: ignore[attr-defined]


def test_mcp_server_spec_needs_a_command_or_url() -> None:
    with pytest.raises(ValueError, match="give a command or a url"):
        McpServerSpec(name="x").server()


@needs_tau2
@pytest.mark.usefixtures("use_tau2_data")
@pytest.mark.slow
async def test_nested_arguments_survive_mcp_serving() -> None:
    """`envfactory env serve tau2/airline` publishes inlined schemas (Inspect's MCP
    client would drop `$defs`), so MCP and in-process offer the same tool."""
    from envs.tau2.airline import Airline

    spec = next(s for s in Airline.tool_specs() if s.name == "book_reservation")
    async with McpBackend.for_environments(["tau2/airline"], {}) as backend:
        served = next(t for t in backend.tools() if t.name == "tau2/airline-book_reservation")
    local = tool_info(spec.name, spec).parameters.model_dump(exclude_none=True)
    assert served.parameters.model_dump(exclude_none=True)["properties"] == local["properties"]
