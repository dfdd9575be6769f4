"""Tool graph: flattening, hand-checked small graphs, save/load, stats, the metadata files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from envs.base import ToolSpec
from synthesis.graph import (
    ToolGraph,
    build_graph,
    calibrate_threshold,
    flatten_schema,
    relation_counts,
    specs_from_metadata_dir,
)
from tests.shared_data import SHARED_DATA

METADATA = SHARED_DATA / "envfactory_metadata"


class AxisEmbedder:
    """Each parameter name (the text before " (") is its own axis, except that names listed
    in `alias` share an axis: hand-checkable cosines of exactly 1 or 0 (while there are
    fewer names than axes; beyond that axes wrap around)."""

    name = "axis"
    threshold = 0.5

    def __init__(self, alias: dict[str, str] | None = None) -> None:
        self.alias = alias or {}
        self.axes: dict[str, int] = {}
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), 32), dtype=np.float32)
        for row, text in enumerate(texts):
            key = text.split(" (")[0].split(".")[-1]
            key = self.alias.get(key, key)
            out[row, self.axes.setdefault(key, len(self.axes)) % 32] = 1.0
        return out


def obj(props: dict, required: Sequence[str] = ()) -> dict:
    return {"type": "object", "properties": props, "required": list(required)}


S = {"type": "string"}

SHOP = [
    ToolSpec(name="create_order", description="Place an order.", write=True,
             parameters=obj({"item": S, "quantity": {"type": "integer"}}, ["item"]),
             output_schema=obj({"order_id": {"type": "string", "description": "new order"},
                                "total": {"type": "number"}})),
    # takes and returns order_id: no edge from a tool to itself
    ToolSpec(name="get_order", description="Read an order.", write=False,
             parameters=obj({"order_id": S}, ["order_id"]),
             output_schema=obj({"order_id": S, "status": S})),
]
SHIPPING = [
    ToolSpec(name="ship_order", description="Ship an order.", write=True,
             parameters=obj({"order_id": S, "carrier": S}, ["order_id"]),
             output_schema=None),  # untyped result: no outputs
]


def test_flatten_nested_objects_arrays_refs_and_optional() -> None:
    schema = {
        "type": "object",
        "$defs": {"Addr": {"type": "object", "properties": {"city": S, "zip": S}}},
        "properties": {
            "address": {"$ref": "#/$defs/Addr", "description": "where"},
            "lines": {"type": "array", "items": obj({"sku": S, "qty": {"type": "integer"}})},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "n"},
            "tags": {"type": "array", "items": S},
        },
        "required": ["lines"],
    }
    got = [(p.path, p.type, p.required) for p in flatten_schema(schema)]
    assert got == [("address", "object", False), ("address.city", "string", False),
                   ("address.zip", "string", False), ("lines", "array", True),
                   ("lines.sku", "string", True), ("lines.qty", "integer", True),
                   ("note", "string", False), ("tags", "array", False)]
    assert flatten_schema(schema)[0].description == "where"


def test_flatten_outputs_that_are_not_objects_become_result() -> None:
    listing = {"type": "array", "description": "rows",
               "items": obj({"id": S, "payload": obj({"deep": S})})}
    got = [(p.path, p.type) for p in flatten_schema(listing, output=True)]
    assert got == [("result", "array"), ("result.id", "string"), ("result.payload", "object")]
    assert [p.path for p in flatten_schema({"type": "object", "additionalProperties": True},
                                           output=True)] == ["result"]
    assert flatten_schema(None, output=True) == [] and flatten_schema({}) == []
    assert flatten_schema(obj({})) == []  # a tool without arguments


def test_order_id_links_across_environments_not_within_a_tool() -> None:
    graph = build_graph({"shop": SHOP, "shipping": SHIPPING}, AxisEmbedder())
    g = graph.g
    assert graph.tools() == ["shipping-ship_order", "shop-create_order", "shop-get_order"]
    assert graph.env_of("shipping-ship_order") == "shipping"
    assert graph.inputs("shop-create_order") == ["shop-create_order:in:item",
                                                  "shop-create_order:in:quantity"]
    assert graph.outputs("shipping-ship_order") == []
    node = g.nodes["shop-create_order:out:order_id"]
    assert (node["kind"], node["direction"], node["name"], node["type"], node["description"],
            node["user_provided"]) == ("param", "output", "order_id", "string", "new order", None)
    assert g.edges["shop-create_order:in:item", "shop-create_order"] == {
        "kind": "Tool_Input", "required": True}
    assert g.edges["shop-create_order:in:quantity", "shop-create_order"]["required"] is False

    relate = sorted((a, b) for a, b, k in g.edges(data="kind") if k == "Parameter_Relate")
    # create_order's and get_order's order_id outputs each feed the other tools' inputs
    assert relate == [
        ("shop-create_order:out:order_id", "shipping-ship_order:in:order_id"),
        ("shop-create_order:out:order_id", "shop-get_order:in:order_id"),
        ("shop-get_order:out:order_id", "shipping-ship_order:in:order_id"),
    ]
    assert g.edges[relate[0]]["score"] == pytest.approx(1.0)
    assert g.edges[relate[0]]["source"] == "embedding"
    assert graph.successors("shop-create_order") == ["shipping-ship_order", "shop-get_order"]
    assert graph.successors("shop-get_order") == ["shipping-ship_order"]
    assert graph.successors("shipping-ship_order") == []
    assert graph.producers("shipping-ship_order:in:order_id") == ["shop-create_order",
                                                                  "shop-get_order"]
    assert graph.producers("shop-create_order:out:total") == ["shop-create_order"]

    s = graph.stats()
    assert (s.environments, s.tools, s.params, s.input_params, s.output_params) == (2, 3, 9, 5, 4)
    assert s.edges_by_kind == {"Tool_Input": 5, "Tool_Output": 4, "Parameter_Relate": 3,
                               "Tool_Depend": 3}
    assert (s.cross_env_tool_depend, s.cross_env_parameter_relate) == (2, 2)
    # required inputs: create_order.item (orphan), get_order.order_id and
    # ship_order.order_id (both produced)
    assert s.orphan_required_inputs == 1
    g.nodes["shop-create_order:in:item"]["user_provided"] = True
    assert graph.stats().orphan_required_inputs == 0


def test_threshold_override_and_aliases() -> None:
    # carrier shares status's axis: get_order.status now feeds ship_order.carrier
    graph = build_graph({"shop": SHOP, "shipping": SHIPPING},
                        AxisEmbedder(alias={"carrier": "status"}))
    assert ("shop-get_order:out:status", "shipping-ship_order:in:carrier") in graph.g.edges
    none = build_graph({"shop": SHOP, "shipping": SHIPPING}, AxisEmbedder(), threshold=1.0)
    assert none.stats().edges_by_kind["Parameter_Relate"] == 0  # strict ">" at cosine 1
    assert none.g.graph["threshold"] == 1.0


def test_save_load_round_trip(tmp_path: Path) -> None:
    graph = build_graph({"shop": SHOP, "shipping": SHIPPING}, AxisEmbedder())
    path = graph.save(tmp_path / "g" / "graph.json")
    assert (tmp_path / "g" / "graph.embeddings.npz").exists()
    back = ToolGraph.load(path)
    assert sorted(back.g.nodes(data=True)) == sorted(graph.g.nodes(data=True))
    assert sorted(back.g.edges(data=True)) == sorted(graph.g.edges(data=True))
    assert back.g.graph == graph.g.graph == {"embedder": "axis", "threshold": 0.5}
    assert back.embeddings is not None and graph.embeddings is not None
    assert back.embeddings[0] == graph.embeddings[0]
    np.testing.assert_array_equal(back.embeddings[1], graph.embeddings[1])
    assert back.stats() == graph.stats()


def test_relation_counts_and_calibration() -> None:
    graph = build_graph({"shop": SHOP, "shipping": SHIPPING}, AxisEmbedder())
    assert relation_counts(graph, [0.5, 1.0]) == {0.5: (3, 3), 1.0: (0, 0)}
    # 9 params; density at 0.5 = 6/9, at 1.0 = 0; the release's is 6462/4158 = 1.55
    best, density = calibrate_threshold(graph, [0.5, 1.0])
    assert best == 0.5 and density == {0.5: pytest.approx(6 / 9), 1.0: 0.0}


def test_subgraph_keeps_tools_their_params_and_edges_between() -> None:
    graph = build_graph({"shop": SHOP, "shipping": SHIPPING}, AxisEmbedder())
    sub = graph.subgraph(["shop-create_order", "shipping-ship_order"])
    assert sub.tools() == ["shipping-ship_order", "shop-create_order"]
    assert sub.successors("shop-create_order") == ["shipping-ship_order"]


@pytest.mark.skipif(not METADATA.is_dir(), reason=f"no metadata files at {METADATA}")
def test_metadata_files_structure() -> None:
    sources = specs_from_metadata_dir(METADATA)
    assert len(sources) == 88 and sum(len(v) for v in sources.values()) == 683
    embedder = AxisEmbedder()
    graph = build_graph(sources, embedder, threshold=2.0)  # structure only, no relations
    s = graph.stats()
    assert (s.environments, s.tools) == (88, 683)
    assert s.edges_by_kind["Tool_Input"] == s.input_params
    assert s.edges_by_kind["Tool_Output"] == s.output_params
    airline = graph.outputs("Airline-list_airports")
    assert airline == ["Airline-list_airports:out:airports",
                       "Airline-list_airports:out:airports.city",
                       "Airline-list_airports:out:airports.iata"]


def test_view_and_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import typer
    from typer.testing import CliRunner

    from envfactory.cli import synth_graph as graph_cli
    from synthesis.graph_view import neighbourhood, render_html

    graph = build_graph({"shop": SHOP, "shipping": SHIPPING}, AxisEmbedder())
    assert neighbourhood(graph, "shipping-ship_order") == [
        "shipping-ship_order", "shop-create_order", "shop-get_order"]
    page = render_html(graph, graph.tools_of("shop"))
    assert page.count("<circle") == 2 and page.count("<line") == 1  # create -> get only

    # the CLI over a stand-in embedder: stats.json and graph.json land in --out-dir
    monkeypatch.setattr(graph_cli, "get_embedder", lambda spec, threshold: AxisEmbedder())
    monkeypatch.setattr(graph_cli.tg, "specs_from_registry",
                        lambda names: {"shop": SHOP, "shipping": SHIPPING})
    app = typer.Typer()
    app.command("graph")(graph_cli.graph)
    app.command("graph-view")(graph_cli.graph_view)
    result = CliRunner().invoke(app, ["graph", "--envs", "shop,shipping",
                                      "--out-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "Tool_Depend" in result.output
    assert ToolGraph.load(tmp_path / "graph.json").stats().edges_by_kind["Tool_Depend"] == 3
    result = CliRunner().invoke(app, ["graph-view", str(tmp_path / "graph.json"), "--tool",
                                      "shop-get_order", "--out", str(tmp_path / "v.html")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "v.html").read_text().count("<circle") == 3


PAIRS = Path(__file__).resolve().parents[1] / "data" / "graph_pairs.json"


@pytest.mark.slow
@pytest.mark.skipif(not METADATA.is_dir(), reason=f"no metadata files at {METADATA}")
def test_minilm_threshold_on_hand_labelled_pairs() -> None:
    """At MiniLM's calibrated threshold, the hand-labelled true pairs mostly link and the
    false ones mostly do not (the bar: recall >= 0.9, precision >= 0.8)."""
    import json

    from synthesis.embedders import MiniLMEmbedder
    from synthesis.graph import embedding_text

    pairs = json.loads(PAIRS.read_text())["pairs"]
    sources = specs_from_metadata_dir(METADATA)
    envs = {p.split("-")[0] for o, i, _ in pairs for p in (o, i)}
    structure = build_graph({e: sources[e] for e in envs}, AxisEmbedder(), threshold=2.0)
    nodes = structure.g.nodes
    embedder = MiniLMEmbedder(cache_dir=None)
    ids = sorted({p for o, i, _ in pairs for p in (o, i)})
    vectors = embedder.embed([embedding_text(nodes[p]["name"], nodes[p]["type"],
                                             nodes[p]["description"]) for p in ids])
    row = {p: k for k, p in enumerate(ids)}
    linked = [(float(vectors[row[o]] @ vectors[row[i]]) > embedder.threshold, label)
              for o, i, label in pairs]
    tp = sum(1 for hit, label in linked if hit and label)
    fp = sum(1 for hit, label in linked if hit and not label)
    positives = sum(1 for _, label in linked if label)
    assert tp / positives >= 0.9 and tp / (tp + fp) >= 0.8


def test_envfactory_format_servers_give_inputs_even_without_result_schemas() -> None:
    from synthesis.graph import specs_from_envfactory_dir

    fixtures = Path(__file__).resolve().parents[1] / "data" / "envfactory_format"
    graph = build_graph(specs_from_envfactory_dir(fixtures), AxisEmbedder())
    assert graph.tools() == ["NotesAPI-create_note", "NotesAPI-get_note", "NotesAPI-tag_note"]
    assert graph.inputs("NotesAPI-tag_note") == ["NotesAPI-tag_note:in:note_id",
                                                  "NotesAPI-tag_note:in:tags"]
    assert graph.outputs("NotesAPI-create_note") == []  # the tools return a bare dict
    assert graph.stats().edges_by_kind["Tool_Depend"] == 0
