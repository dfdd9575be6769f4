"""`envfactory synth graph-refine`: the LLM passes on a saved graph, resumed after a crash.

The scripted synth model answers from its prompt: the edge pass links shop's search to
refund, the label pass calls only `query` user-provided. A run that dies in the label pass
and is rerun must leave the same file, byte for byte, as a run that never stopped, and the
rerun must not ask again about what the first run already saved.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from inspect_ai.model import ChatMessage, Model, ModelOutput
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.cli import synth_graph as graph_cli
from harness.providers.responder import reply, responder_model
from synthesis.graph import ToolGraph
from synthesis.graph_llm import REFINED_KEY, refine_edges
from tests.synthesis.graph_builders import shop

LABEL_LINE = re.compile(r"^(\d+)\. (\S+) \(", re.MULTILINE)


class Synth:
    """Scripted synth role; `crash_after` label replies, it raises (a killed run)."""

    def __init__(self, crash_after: int | None = None) -> None:
        self.crash_after = crash_after
        self.prompts: list[str] = []

    def respond(self, input: list[ChatMessage]) -> ModelOutput:
        prompt = input[-1].text
        self.prompts.append(prompt)
        if prompt.startswith("Environment: shop"):
            return reply('<new_edges>{"search": ["refund"]}</new_edges>')
        if prompt.startswith("Environment: "):
            return reply("<new_edges>{}</new_edges>")
        labels = sum(p.startswith("Parameters:") for p in self.prompts)
        if self.crash_after is not None and labels > self.crash_after:
            raise RuntimeError("killed")
        found = LABEL_LINE.findall(prompt)
        body = ", ".join(f'"{i}": {"true" if name == "query" else "false"}'
                         for i, name in found)
        return reply(f"<user_provided>{{{body}}}</user_provided>")

    def model(self) -> Model:
        return responder_model(self.respond)


def saved_shop(path: Path) -> Path:
    gr = shop()
    gr.tool("mail", "read")
    for _, data in gr.g.nodes(data=True):
        if data["kind"] == "param":
            data["user_provided"] = None
    return ToolGraph(gr.g).save(path)


def invoke(path: Path, synth: Synth, monkeypatch: pytest.MonkeyPatch,
           *extra: str) -> tuple[int, str]:
    def fake(roles: object, *args: object, **kwargs: object) -> dict[str, Model]:
        return {"synth": synth.model()}

    monkeypatch.setattr(graph_cli, "role_models", fake)
    result = CliRunner().invoke(app, ["synth", "graph-refine", str(path), "--max-concurrency",
                                      "1", "--batch-size", "2", "--patch-orphans",
                                      "--prompts", "ours", *extra])
    return result.exit_code, " ".join(result.output.split())  # rich wraps lines


def test_a_crashed_pass_resumes_to_the_uninterrupted_graph(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = saved_shop(tmp_path / "whole" / "graph.json")
    code, out = invoke(whole, Synth(), monkeypatch, "--model", "x/y")
    assert code == 0, out
    assert "1 edges added" in out and "3 batches asked (0 failed)" in out
    assert "user-provided 1, not 4, unlabelled 0" in out

    cut = saved_shop(tmp_path / "cut" / "graph.json")
    first = Synth(crash_after=1)
    code, _ = invoke(cut, first, monkeypatch, "--model", "x/y")
    assert code != 0  # died in the label pass, after the edges were saved
    saved = ToolGraph.load(cut)
    assert saved.g.graph[REFINED_KEY] == ["mail", "shop"]
    assert saved.g.has_edge("shop-search", "shop-refund")
    labelled = [n for n, d in saved.g.nodes(data=True) if d.get("user_provided") is not None]
    assert labelled == ["shop-buy:in:item_id", "shop-buy:out:order_id"]  # batch 1 saved

    second = Synth()
    code, out = invoke(cut, second, monkeypatch, "--model", "x/y")
    assert code == 0, out
    assert not any(p.startswith("Environment: ") for p in second.prompts)  # edges not re-asked
    asked = " ".join(second.prompts)
    assert "order_id" not in asked and "ticket" in asked  # nor batch 1's parameters
    assert cut.read_bytes() == whole.read_bytes()
    # the patch marked refund's ticket (required, produced by nothing) user-provided
    assert ToolGraph.load(cut).g.nodes["shop-refund:in:ticket"]["user_provided"] is True


async def test_edge_pass_skips_refined_envs_and_retries_failed_ones() -> None:
    gr = shop()
    gr.tool("mail", "read")
    failing = responder_model(lambda _: reply("no block"))
    [mail, shop_env] = await refine_edges(gr, model=failing, prompts="ours")
    assert mail.error and shop_env.error and gr.g.graph[REFINED_KEY] == []
    synth = Synth()
    refined = await refine_edges(gr, model=synth.model(), prompts="ours")
    assert [r.env for r in refined] == ["mail", "shop"]
    assert [r.env for r in await refine_edges(gr, model=synth.model(), prompts="ours")] == []
    again = await refine_edges(gr, model=synth.model(), redo=True, prompts="ours")
    assert [r.env for r in again] == ["mail", "shop"] and again[1].added == []
