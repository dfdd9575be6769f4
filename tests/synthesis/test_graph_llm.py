"""LLM graph passes, scripted models: add-only edges, retries, rejected names, failed batches."""

from __future__ import annotations

from inspect_ai.model import Model

from synthesis.graph_llm import (
    audit_orphans,
    classify_user_provided,
    parse_labels,
    refine_edges,
    resolve_model,
)
from testkit.scripted import answers
from tests.synthesis.graph_builders import Graph, shop


def scripted(*replies: str) -> Model:
    """A model that answers `replies` in turn."""
    return answers(*replies).model


def depends(gr: Graph) -> set[tuple[str, str, str]]:
    return {(a, b, d["source"]) for a, b, d in gr.g.edges(data=True) if d["kind"] == "Tool_Depend"}


async def test_edges_are_added_after_a_malformed_reply_and_a_bad_name() -> None:
    gr = shop()
    model = scripted(
        "I think search comes before buy.",  # no tagged block
        '<new_edges>{"buy": ["cancel"]}</new_edges>',  # cancel is not a shop tool
        # existing link, a self loop and two new ones: only the new ones count
        '<new_edges>{"search": ["buy", "search", "refund"], "buy": ["refund"]}</new_edges>',
    )
    [result] = await refine_edges(gr, model=model, prompts="ours")
    assert result.env == "shop" and result.attempts == 3 and result.error is None
    assert result.added == [("shop-buy", "shop-refund"), ("shop-search", "shop-refund")]
    assert depends(gr) == {
        ("shop-search", "shop-buy", "embedding"),
        ("shop-buy", "shop-refund", "llm"),
        ("shop-search", "shop-refund", "llm"),
    }


async def test_edges_stay_when_every_attempt_fails() -> None:
    gr = shop()
    model = scripted(*['<new_edges>{"buy": ["nope"]}</new_edges>'] * 3)
    [result] = await refine_edges(gr, model=model, prompts="ours")
    assert result.added == [] and result.attempts == 3
    assert result.error is not None and "'nope'" in result.error
    assert depends(gr) == {("shop-search", "shop-buy", "embedding")}


async def test_refinement_is_per_environment() -> None:
    gr = shop()
    gr.tool("mail", "send")
    gr.tool("mail", "read")
    # env order is sorted: mail first, then shop; a mail reply naming a shop tool is rejected
    model = scripted(
        '<new_edges>{"read": ["buy"]}</new_edges>',
        '<new_edges>{"read": ["send"]}</new_edges>',
        "<new_edges>{}</new_edges>",
    )
    results = await refine_edges(gr, model=model, max_concurrency=1, prompts="ours")
    assert [(r.env, r.added, r.attempts) for r in results] == [
        ("mail", [("mail-read", "mail-send")], 2),
        ("shop", [], 1),
    ]


def test_parse_labels_needs_every_index() -> None:
    assert parse_labels('<user_provided>{"0": true, "1": false}</user_provided>', 2) == {
        0: True, 1: False,
    }
    for bad in ('<user_provided>{"0": true}</user_provided>',
                '<user_provided>{"0": true, "1": "no"}</user_provided>',
                '<user_provided>{"0": true, "1": false, "2": true}</user_provided>'):
        try:
            parse_labels(bad, 2)
        except ValueError:
            continue
        raise AssertionError(f"accepted {bad}")


async def test_labels_in_batches_and_a_failed_batch_stays_none() -> None:
    gr = shop()
    for node in gr.g.nodes:
        if gr.g.nodes[node]["kind"] == "param":
            gr.g.nodes[node]["user_provided"] = None
    # params sorted: buy:in:item_id, buy:out:order_id, refund:in:ticket, search:in:query,
    # search:out:item_id -> batches of 2: [item_id, order_id], [ticket, query], [item_id]
    model = scripted(
        '<user_provided>{"0": false, "1": false}</user_provided>',
        "<user_provided>{not json}</user_provided>",  # batch 2, attempt 1
        '<user_provided>{"0": true, "1": true}</user_provided>',  # batch 2, attempt 2
        "nothing", "nothing", "nothing",  # batch 3 fails all three attempts
    )
    reports = await classify_user_provided(gr, model=model, batch_size=2, max_concurrency=1,
                                           prompts="ours")
    assert [(len(r.params), r.attempts, r.error is None) for r in reports] == [
        (2, 1, True), (2, 2, True), (1, 3, False),
    ]
    labels = {n: d["user_provided"] for n, d in gr.g.nodes(data=True) if d["kind"] == "param"}
    assert labels == {
        "shop-buy:in:item_id": False,
        "shop-buy:out:order_id": False,
        "shop-refund:in:ticket": True,
        "shop-search:in:query": True,
        "shop-search:out:item_id": None,
    }
    # a rerun only asks about what is still unknown
    again = await classify_user_provided(
        gr, model=scripted('<user_provided>{"0": false}</user_provided>'), batch_size=2,
        prompts="ours")
    assert [r.params for r in again] == [["shop-search:out:item_id"]]
    assert gr.g.nodes["shop-search:out:item_id"]["user_provided"] is False


def test_orphan_audit_and_patch() -> None:
    gr = shop()
    assert audit_orphans(gr) == ["shop-refund:in:ticket"]
    assert gr.g.nodes["shop-refund:in:ticket"]["user_provided"] is False
    assert audit_orphans(gr, auto_patch=True) == ["shop-refund:in:ticket"]
    assert gr.g.nodes["shop-refund:in:ticket"]["user_provided"] is True
    assert audit_orphans(gr) == []


def test_resolve_model_prefers_a_model_passed_in() -> None:
    model = scripted()
    assert resolve_model(model) is model
    # no "synth" role bound outside an eval: the default spec is used
    assert resolve_model("mockllm/model").name == "model"
