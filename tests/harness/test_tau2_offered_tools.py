"""τ²'s roles are offered the official tool objects: on the wire (Inspect's `openai/`
provider against a recording server) each request's `tools` equals, key order included,
what the official v0.2.0 harness sent (`shared/data/tau2/tools/*.json`); the `ToolInfo`s
carry the same names, order and descriptions with inlined schemas for other providers."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

from envs.tau2.tool_objects import official_tools
from envs.tau2.world import Tau2World
from harness.tool_backends import tau2_tools
from harness.verbatim_tools import responses_form
from testkit.recording_server import Api, RecordingServer, Reply
from tests.shared_data import TAU2_DATA, needs_tau2

TOOLKITS = [("airline", "agent"), ("retail", "agent"), ("telecom", "agent"),
            ("telecom", "user")]


def recorded(toolkit: str) -> list[dict[str, Any]]:
    path = TAU2_DATA / "tools" / f"{toolkit}.json"
    if not path.exists():
        pytest.skip(f"recorded tool objects not found at {path}")
    return list(json.loads(path.read_text()))


@pytest.fixture(autouse=True)
def fresh_objects(use_tau2_data: Path) -> Iterator[None]:
    official_tools.cache_clear()
    yield
    official_tools.cache_clear()


def offered(domain: str, side: str) -> tuple[str, list[Any]]:
    world = Tau2World(domain)
    if side == "agent":
        return domain, tau2_tools(domain, world.agent)
    assert world.user is not None
    return f"{domain}_user", tau2_tools(f"{domain}_user", world.user)


def responder(api: Api, body: Mapping[str, Any]) -> Reply:
    return Reply(content="ok")


@needs_tau2
@pytest.mark.parametrize("responses_api", [False, True])
@pytest.mark.parametrize(("domain", "side"), TOOLKITS)
async def test_requests_carry_the_official_tool_objects(
        domain: str, side: str, responses_api: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chat Completions (what the official harness uses, through LiteLLM): the recorded
    objects byte for byte; Responses API: the same function, flattened, no `strict`."""
    toolkit, infos = offered(domain, side)
    with RecordingServer(responder) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        model = get_model("openai/scripted", base_url=server.url, responses_api=responses_api,
                          config=GenerateConfig(max_retries=1))
        await model.generate([ChatMessageUser(content="hi")], tools=infos)
    (request,) = [r for r in server.requests if "tools" in r.body]
    expected = recorded(toolkit)
    if responses_api:
        expected = [responses_form(o) for o in expected]
    assert json.dumps(request.body["tools"]) == json.dumps(expected)  # key order too


@needs_tau2
@pytest.mark.parametrize(("domain", "side"), TOOLKITS)
def test_tool_infos_follow_the_official_objects(domain: str, side: str) -> None:
    toolkit, infos = offered(domain, side)
    objects = [o["function"] for o in recorded(toolkit)]
    assert [i.name for i in infos] == [o["name"] for o in objects]
    assert [i.description for i in infos] == [o["description"] for o in objects]
    for info, official in zip(infos, objects, strict=True):
        params = info.parameters.model_dump(exclude_none=True)
        assert "$ref" not in json.dumps(params)
        assert list(params["properties"]) == list(official["parameters"]["properties"])
        assert params["required"] == official["parameters"].get("required", [])


@needs_tau2
def test_nested_models_are_inlined_for_other_providers() -> None:
    _, infos = offered("airline", "agent")
    booking = next(i for i in infos if i.name == "book_reservation")
    flights = booking.parameters.properties["flights"].model_dump(exclude_none=True)
    (model, other) = flights["items"]["anyOf"]
    assert model["properties"]["date"]["description"] == (
        "The date for the flight in the format 'YYYY-MM-DD', such as '2024-05-01'.")
    assert model["required"] == ["flight_number", "date"]
    assert other == {"type": "object", "additionalProperties": True}


@needs_tau2
def test_a_toolkit_that_cannot_run_an_offered_tool_is_refused() -> None:
    world = Tau2World("retail")
    with pytest.raises(ValueError, match="the release offers .*book_reservation"):
        tau2_tools("airline", world.agent)


@needs_tau2
def test_a_telecom_conversation_offers_each_role_its_official_tools(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end through `tasks/tau2` and Inspect's `openai/` Chat Completions provider:
    the agent's requests carry `telecom.json`, the simulated user's `telecom_user.json`."""
    from inspect_ai import eval as inspect_eval

    from tasks.tau2.tau2 import tau2_telecom

    user_turns = iter(["My phone shows no service.", "###STOP###"])

    def respond(api: Api, body: Mapping[str, Any]) -> Reply:
        is_user = body["tools"][0]["function"]["name"] == "check_status_bar"
        return Reply(content=next(user_turns) if is_user else "Let me check that.")

    with RecordingServer(respond) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        model = get_model("openai/gpt-4.1", base_url=server.url,
                          config=GenerateConfig(max_retries=1))
        first = tau2_telecom().dataset[0].id
        (log,) = inspect_eval(tau2_telecom(), model=model, model_roles={"user": model},
                              sample_id=[re.sub(r"([\[\]*?])", r"[\1]", str(first))],
                              log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    sent = {json.dumps(r.body["tools"]) for r in server.requests}
    assert sent == {json.dumps(recorded("telecom")), json.dumps(recorded("telecom_user"))}
    assert len(server.requests) == 3  # user, agent, user (who stops)
