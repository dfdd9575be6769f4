"""`--prompts release`: replies read and schemas flattened as the release's code does.

Expected values are worked out by hand from the release's functions as written at eff3b22
(`src/utils/utils.py` `parse_structured_output` and `to_JSON`, `src/graph/tool_node.py`
`Tool._parse_schema` and `batch_get_user_provided`'s checks), never from our code. The
tests of the label checks read the release's messages and so need its `tool_node.py`
(`ENVFACTORY_RELEASE_DIR` pointing at a checkout of eff3b22).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from synthesis import graph_llm_release as rel
from synthesis.graph_llm import PROMPTS_KEY, classify_user_provided, refine_edges
from testkit.scripted import answers
from tests.synthesis.graph_builders import shop


def test_structured_output_after_think_with_json_and_text_tags() -> None:
    got = rel.parse_structured_output(
        ' <think>plan</think>\n<analysis>why</analysis>\n<adjacency_map>{"A": ["B"]}'
        "</adjacency_map> ")
    # the release cuts at "</think>" and keeps what precedes it, opening tag included
    assert got == {"think": "<think>plan", "non_think": '<analysis>why</analysis>\n<adjacency_map>'
                   '{"A": ["B"]}</adjacency_map>', "analysis": "why",
                   "adjacency_map": {"A": ["B"]}}


def test_structured_output_closes_a_last_open_tag_and_lists_repeats() -> None:
    assert rel.parse_structured_output('<adjacency_map>{"A": []}')["adjacency_map"] == {"A": []}
    twice = rel.parse_structured_output("<x>1</x><x>two</x><x>[3]</x>")
    assert twice["x"] == [1, "two", [3]]
    # JSON with comments stays text (the release then fails on `.items()` and retries)
    assert rel.parse_structured_output('<m>{"A": ["B"], // c\n}</m>')["m"] == \
        '{"A": ["B"], // c\n}'


def test_to_json_tries_whole_text_then_outer_object_then_outer_list() -> None:
    assert rel.to_json('{"0": true}') == {"0": True}
    assert rel.to_json('Sure: {"0": true, "1": false} done') == {"0": True, "1": False}
    assert rel.to_json("{bad} but [1, 2] works") == [1, 2]
    assert rel.to_json("no json here") == "no json here"
    assert rel.to_json("} backwards {") == "} backwards {"


def test_schema_flattening_replaces_objects_by_their_fields() -> None:
    schema = {"type": "object", "required": ["q", "filter"], "properties": {
        "q": {"type": "string", "description": "query"},
        "filter": {"type": "object", "properties": {"city": {"type": "string"},
                                                    "zip": {"description": "code"}}},
        "empty": {"type": "object", "properties": {}, "description": "no fields"},
        "rows": {"type": "array", "items": {"type": "object", "properties": {
            "id": {"type": "integer", "description": "row id"}}}},
        "tags": {"type": "array", "items": {"type": "string"}},
        "loose": {"items": {"type": "object", "properties": {"a": {}}}},
        "ref": {"$ref": "#/$defs/X"},
    }}
    params, required = rel._parse_schema(schema)
    assert required == ["q", "filter"]
    assert [(p.name, p.data_type, p.description) for p in params] == [
        ("q", "string", "query"), ("filter.city", "string", ""), ("filter.zip", "unknown", "code"),
        ("empty", "object", "no fields"), ("rows.id", "integer", "row id"),
        ("tags", "array", ""), ("loose", "unknown", ""), ("ref", "unknown", "")]
    assert rel._parse_schema(None) == ([], [])
    assert rel._parse_schema({"type": "object"}) == ([], [])


async def test_a_pass_does_not_continue_what_the_other_prompts_started() -> None:
    gr = shop()
    gr.g.graph[PROMPTS_KEY] = {"edges": "ours", "labels": "ours"}
    with pytest.raises(ValueError, match="ran with --prompts ours"):
        await refine_edges(gr, model=answers().model)
    with pytest.raises(ValueError, match="ran with --prompts ours"):
        await classify_user_provided(gr, model=answers().model)
    with pytest.raises(ValueError, match="must be one of release, ours"):
        await refine_edges(gr, model=answers().model, prompts="mine")  # type: ignore[arg-type]


def test_a_graph_built_before_release_mode_is_refused_with_the_remedy() -> None:
    with pytest.raises(ValueError, match="rebuild it with `envfactory synth graph"):
        rel.release_tools(shop().g)  # hand-built nodes: no schemas, no build order


# -- the label checks (their messages are the release's) ----------------------------------

def _has_tool_node() -> bool:
    root = os.environ.get("ENVFACTORY_RELEASE_DIR")
    return bool(root) and (Path(str(root)) / rel.TOOL_NODE).is_file()


needs_tool_node = pytest.mark.skipif(
    not _has_tool_node(), reason=f"needs ENVFACTORY_RELEASE_DIR with {rel.TOOL_NODE}")


@needs_tool_node
def test_label_replies_the_release_retries_and_those_it_stops_on() -> None:
    assert rel.label_reply('ok: {"1": false, "0": true}', 2) == {1: False, 0: True}
    # an index given twice ("0" and "00") passes the release's checks; 1 stays unlabelled
    assert rel.label_reply('{"0": true, "00": false}', 2) == {0: False}
    for retried in ('{"0": true}', '{"0": true, "2": false}', '{"0": 1, "1": true}'):
        with pytest.raises(AssertionError):
            rel.label_reply(retried, 2)
    for fatal in ("[true, false]", "no labels", '{"a": true, "1": false}'):
        with pytest.raises(rel.FatalReply):
            rel.label_reply(fatal, 2)


@needs_tool_node
async def test_a_reply_the_release_stops_on_ends_its_batch_after_one_request() -> None:
    from envs.base import ToolSpec
    from synthesis.graph import build_graph
    from tests.synthesis.test_graph_llm_release import _Orthogonal

    spec = ToolSpec(name="find", description="Find.", write=False,
                    parameters={"type": "object", "properties": {"q": {"type": "string"}}})
    graph = build_graph({"shop": [spec]}, _Orthogonal())
    script = answers("I cannot answer that.")
    [report] = await classify_user_provided(graph, model=script.model)
    assert report.attempts == 1 and report.error and "stops its build" in report.error
    assert graph.g.nodes["shop-find:in:q"]["user_provided"] is None


def test_synth_graph_takes_the_releases_servers_in_its_config_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The release builds its graph from configs/mcp_server.json's servers in that order
    (examples/load_tool_graph.ipynb): at eff3b22 85 servers and 672 tools (counted from
    the files by hand)."""
    import json

    from typer.testing import CliRunner

    from envfactory.cli import app
    from envfactory.cli import synth_graph as graph_cli
    from synthesis.graph import ToolGraph
    from tests.shared_data import SHARED_DATA
    from tests.synthesis.test_graph_llm_release import _Orthogonal

    release = SHARED_DATA / "envfactory_release"
    config = release / "configs" / "mcp_server.json"
    if not config.is_file():
        pytest.skip(f"no EnvFactory release copy at {release}")
    monkeypatch.setattr(graph_cli, "get_embedder", lambda spec, threshold: _Orthogonal())
    result = CliRunner().invoke(app, ["synth", "graph", "--metadata",
                                      str(release / "envs" / "metadata"), "--mcp-config",
                                      str(config), "--out-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    g = ToolGraph.load(tmp_path / "graph.json").g
    tools = sorted((d["order"], d["env"]) for _, d in g.nodes(data=True) if d["kind"] == "tool")
    assert len(tools) == 672
    assert list(dict.fromkeys(env for _, env in tools)) == list(
        json.loads(config.read_text())["mcpServers"])
    bad = tmp_path / "bad.json"
    bad.write_text('{"mcpServers": {"NoSuchServer": {}}}')
    result = CliRunner().invoke(app, ["synth", "graph", "--metadata",
                                      str(release / "envs" / "metadata"), "--mcp-config",
                                      str(bad), "--out-dir", str(tmp_path / "b")])
    assert result.exit_code == 2 and "no metadata for NoSuchServer" in " ".join(
        result.output.split())
