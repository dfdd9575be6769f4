"""A real metadata file (UUPaoTui, 5 tools) through EnvGen with a scripted coder that writes a
real implementation: every test passes, the environment is registered, served over MCP
and used by a QueryGen chain like any pool environment."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai.model import ChatMessage, ChatMessageUser, Model, ModelOutput
from inspect_ai.tool import ToolCall
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from harness.providers.responder import reply, responder_model
from synthesis.chain import ChainStep, ToolChain
from synthesis.envgen.pipeline import BuildConfig, build
from synthesis.querygen import Kept, preset, synthesize
from synthesis.task_specs import check
from tests.shared_data import SHARED_DATA
from tests.synthesis.envgen import scripted

METADATA = SHARED_DATA / "envfactory_metadata" / "UUPaoTui_metadata.json"
ENV = "generated/uu_pao_tui"
ROOT = Path(__file__).resolve().parents[3]
ENVFACTORY = str(Path(sys.executable).parent / "envfactory")
QUERY = ("请帮我下一个 instant 即时配送的单：从北京市朝阳区建国路88号"
         "送到北京市东城区王府井大街1号，区划代码 110100，"
         "收件人电话 13912345678，我的电话 13812345678。")
QUOTE_ARGS = {"fromAddress": "北京市朝阳区建国路88号",
              "toAddress": "北京市东城区王府井大街1号",
              "adCode": "110100", "sendType": "instant"}
ORDER_ARGS = {"priceToken": "PT0001", "receiverPhone": "13912345678",
              "senderPhone": "13812345678"}

pytestmark = pytest.mark.skipif(not METADATA.is_file(),
                                reason=f"EnvFactory metadata not found at {METADATA}")


@pytest.fixture
def registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """UUPaoTui built and registered into a private generated-envs folder."""
    root = tmp_path / "generated"
    monkeypatch.setenv("ENVFACTORY_GENERATED_ENVS", str(root))
    (report,) = asyncio.run(build([METADATA], tmp_path / "out", scripted.models(),
                                  BuildConfig()))
    assert report.verdict == "passed", report.failures
    assert report.registered_as == ENV
    return root


def test_built_from_metadata_with_every_criterion_passing(registered: Path,
                                                          tmp_path: Path) -> None:
    report = json.loads((tmp_path / "out" / "uu_pao_tui" / "report.json").read_text())
    # built-in checks: 1 names + 5 parameters + 1 flags + 1 default state; 1 import + 5
    # tools; 4 bad-argument checks (the tools with required parameters); 2 round trips + 2
    # read tools (list_, query_) + 2 must-change writes (create_order, cancel_order) + 5
    # refused-call checks; the tester's 12 tests on top
    assert report["criteria"] == {"interface": {"passed": 10, "failed": 0},
                                  "executability": {"passed": 7, "failed": 0},
                                  "behaviour": {"passed": 10, "failed": 0},
                                  "state": {"passed": 14, "failed": 0}}
    assert report["revisions_used"] == 0 and report["all_passed"] is True
    assert (registered / "uu_pao_tui" / "environment.py").read_text() == \
        scripted.UUPAOTUI_CODE


def test_registered_env_is_listed_and_served_over_mcp(registered: Path) -> None:
    from envs import registry

    entry = registry.get(ENV)
    assert sorted(s.name for s in entry.specs()) == [
        "cancel_order", "create_order", "estimate_price", "list_orders", "query_order"]

    async def session() -> None:
        params = StdioServerParameters(
            command=ENVFACTORY, args=["env", "serve", ENV], cwd=str(ROOT),
            env={**os.environ, "ENVFACTORY_GENERATED_ENVS": str(registered)})
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            tools = {t.name for t in (await s.list_tools()).tools}
            assert {"estimate_price", "create_order", "save_scenario"} <= tools
            quote = await s.call_tool("estimate_price", QUOTE_ARGS)
            assert not quote.isError
            token = json.loads(_text(quote))["priceToken"]
            assert token == "PT0001"
            order = await s.call_tool("create_order", {**ORDER_ARGS, "priceToken": token})
            assert json.loads(_text(order)) == {"orderCode": "UU000004"}
            again = await s.call_tool("create_order", {**ORDER_ARGS, "priceToken": token})
            assert again.isError and "already used" in _text(again)
            saved = json.loads(_text(await s.call_tool("save_scenario", {})))
            assert saved["orders"]["UU000004"]["state"] == "待接单"

    anyio.run(session)


def _text(result: Any) -> str:
    return str(result.content[0].text)


def _synth() -> Model:
    def respond(input: list[ChatMessage]) -> ModelOutput:
        prompt = input[0].text
        if "Invent the person" in prompt:
            return reply("<persona>王女士，在北京上班</persona>"
                         "<scenario>她要把合同快速送到王府井的客户手里。</scenario>")
        if "best solution" in prompt:
            return reply("<choice>1</choice>")
        if f"{ENV}-estimate_price" in prompt:
            return reply(f"<intent>下单即时配送</intent><query>{QUERY}</query>")
        raise AssertionError(f"unexpected synth prompt: {prompt[:200]}")

    return responder_model(respond)


def _solver() -> Model:
    plan: list[tuple[str, dict[str, Any]]] = [(f"{ENV}-estimate_price", QUOTE_ARGS),
                                              (f"{ENV}-create_order", ORDER_ARGS)]

    def respond(input: list[ChatMessage]) -> ModelOutput:
        last = max(i for i, m in enumerate(input) if isinstance(m, ChatMessageUser))
        step = sum(m.role == "assistant" for m in input[last:])
        if step < len(plan):
            name, args = plan[step]
            return reply(calls=[ToolCall(id=f"c{step}", function=name, arguments=args)])
        return reply("已下单，订单号 UU000004。")

    return responder_model(respond)


def test_registered_env_in_a_querygen_chain(registered: Path) -> None:
    chain = ToolChain(seed=3, sampler="topology", steps=[
        ChainStep(env=ENV, tool="estimate_price"), ChainStep(env=ENV, tool="create_order")],
        turns=[[0, 1]])
    out = anyio.run(lambda: synthesize(chain, preset("sft_nonconv", pass_k=2, pipeline="ours"),
                                       traj_id="qg-envgen", models={"synth": _synth(),
                                                                    "solver": _solver()}))
    assert isinstance(out, Kept), out
    t = out.trajectory
    assert t.environments == [ENV] and check(t) == []
    assert [c.qualified_name for c in t.turns[0].gold_calls] == [
        f"{ENV}-estimate_price", f"{ENV}-create_order"]
    orders = t.final_state[ENV]["orders"]  # type: ignore[index]
    assert orders["UU000004"]["receiver_phone"] == "13912345678"
    assert set(t.initial_state[ENV]["orders"]) == {"UU000001", "UU000002", "UU000003"}  # type: ignore[index]
