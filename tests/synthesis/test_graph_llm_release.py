"""`--prompts release`: the tool graph's LLM passes send the release's own requests.

Request-level check. The release's graph code (LARK-AI-Lab/EnvFactory@eff3b22,
`src/graph/tool_graph.py` and `tool_node.py`, run unchanged in its own virtual environment
by a driver kept outside this repository) and ours were pointed at one recording
OpenAI-compatible server answering from `responder` below, on the same four servers of the
release's metadata (`SERVERS`) with the same hand-chosen embedding edges (`EDGES`). The
driver calls the release's `ToolGraph.build_tool_graph` (which runs its label pass, with
`batch_get_user_provided`'s `batch_size` set to `BATCH`) with its LLM edge step off, adds
`EDGES`, then runs `_build_edge_with_llm` per server as the build's last step does; its
embedding calls return orthogonal vectors, so no other edge exists. What the release sent
is kept in `tests/data/graph_release/requests.json` without its text (the release has no
licence): per request its pass, roles and each message's sha256 and length; with the
edges the release added and the labels it set. This test runs ours on the same input and
script and compares request for request, then the resulting edges and labels.

The script makes the model slip: the first replies of each batch and server are unusable
in each way the release's code retries (a missing key, a value that is not a list, an
unknown successor, an unknown source after a valid one, comment-laden JSON, a short dict,
a non-bool, an index out of range), so the retry feedback is compared too.

The release lists a batch's tool-context tools in `set` order (string hashing differs per
process); the driver ran it under a `PYTHONHASHSEED` (recorded) for which that order is
the order of first appearance, which is ours.

Needs `ENVFACTORY_RELEASE_DIR` with the release's metadata and `src/graph` files (the
shared copy lacks `tool_graph.py` and `tool_node.py`; a checkout of eff3b22 has them).
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from testkit.recording_server import Api, RecordingServer, Reply

DATA = Path(__file__).resolve().parents[1] / "data" / "graph_release" / "requests.json"
SERVERS = ("Calculator", "CarPrice", "FruityviceServer", "MemoryKnowledgeGraph")
#: embedding edges present before the LLM edge pass (release tool names)
EDGES = [("CarPrice-get_car_brands", "CarPrice-search_car_price"),
         ("MemoryKnowledgeGraph-create_entities", "MemoryKnowledgeGraph-add_observations"),
         ("MemoryKnowledgeGraph-create_relations", "MemoryKnowledgeGraph-create_entities")]
BATCH = 8
TOOL_GRAPH = "src/graph/tool_graph.py"
TOOL_NODE = "src/graph/tool_node.py"


# -- the script (both sides) --------------------------------------------------------------

@cache
def _pieces() -> dict[str, str]:
    """Fixed pieces of the release's requests, read from the release at run time (the
    responder tells the passes apart and counts retries by them)."""
    from synthesis.querygen import release_prompts as rp

    edge_retry = rp.inline(TOOL_GRAPH, "ToolGraph._build_edge_with_llm", assigned="error_msg",
                           nth=1)
    label_retry = rp.inline(TOOL_NODE, "batch_get_user_provided", assigned="error_msg")
    line = rp.inline(TOOL_NODE, "batch_get_user_provided", assigned="param_line")
    tag = rp.inline(TOOL_NODE, "batch_get_user_provided", assigned="param_line", nth=1)
    return {"edge_error": edge_retry.split("{}")[0], "edge_retry": edge_retry.split("{}")[-1],
            "label_retry": label_retry.split("{}")[0], "line": line, "tag": tag}


def _entity_re() -> re.Pattern[str]:
    """A parameter line of the label request: index, name, type, description, tool."""
    p = _pieces()
    parts = (p["line"] + p["tag"]).split("{}")
    holes = [r"(\d+)", r"(\S+)", r"([^)]*)", r"(.*)", r"(\S+)"]
    body = "".join(re.escape(a) + b for a, b in zip(parts, holes, strict=False)) + re.escape(
        parts[-1])
    return re.compile(rf"^{body}$", re.M)


def _label_reply(text: str) -> str:
    entities = _entity_re().findall(text.split(_pieces()["label_retry"])[0])
    tries = text.count(_pieces()["label_retry"])
    n = len(entities)
    labels = {str(i): (kind == "string" and "id" not in name.lower())
              for i, (_, name, kind, _, _) in enumerate(int_sorted(entities))}
    if tries == 0 and n % 2 == 0:
        labels.pop(str(n - 1))  # one short: the length assertion
    elif tries == 0:
        labels["0"] = "yes"  # type: ignore[assignment]  # not a bool: the type assertion
    elif tries == 1 and n >= 6:
        labels[str(n)] = labels.pop(str(n - 1))  # out of range: the range assertion
    return "Here are the labels: " + json.dumps(labels) + " Hope this helps."


def int_sorted(entities: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    return sorted(entities, key=lambda e: int(e[0]))


def _edge_reply(text: str) -> str:
    tries = text.count(_pieces()["edge_retry"])
    original = text
    for _ in range(tries):  # each retry appends its feedback after the adjacency dict
        original = original[:original.rindex(_pieces()["edge_error"])]
    adjacency = ast.literal_eval(original.strip().splitlines()[-1])
    names = list(adjacency)
    if len(names) == 1:
        return "<analysis>One tool.</analysis>\n<adjacency_map>\n{}\n</adjacency_map>"
    a, b = names[0], names[1]
    if len(names) == 2:
        if tries == 0:
            return f'<adjacency_map>{{"{a}": "{b}"}}</adjacency_map>'  # not a list
        if tries == 1:  # JSON with comments (the template's own style): stays a string
            return f'<adjacency_map>{{"{b}": ["{a}"], // new\n}}</adjacency_map>'
        return f"<analysis>ok</analysis>\n<adjacency_map>{json.dumps({b: [a]})}</adjacency_map>"
    c = names[2]
    if tries == 0:
        return f'<analysis>x</analysis><adjacency_map>{{"{a}": ["{a}-nope"]}}</adjacency_map>'
    if tries == 1:  # a valid source first (its edge is added), then an unknown one
        return f'<adjacency_map>{{"{c}": ["{a}"], "Nobody-x": ["{a}"]}}</adjacency_map>'
    return ("<think>Thinking about it.</think>\n<analysis>Workflow links.</analysis>\n"
            f"<adjacency_map>{json.dumps({a: [b, a], b: [c], names[-1]: [a]})}</adjacency_map>")


def responder(api: Api, body: Mapping[str, Any]) -> Reply:
    """Label requests carry numbered parameter lines; the others are edge requests."""
    text = "".join(str(m.get("content", "")) for m in body.get("messages", []))
    if _entity_re().search(text):
        return Reply(content=_label_reply(text))
    return Reply(content=_edge_reply(text))


# -- requests as hashes -------------------------------------------------------------------

def messages_of(body: Mapping[str, Any]) -> list[tuple[str, str]]:
    def text(content: Any) -> str:
        if isinstance(content, list):
            return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        return "" if content is None else str(content)

    return [(str(m.get("role")), text(m.get("content"))) for m in body.get("messages", [])]


def digest(body: Mapping[str, Any]) -> dict[str, Any]:
    messages = messages_of(body)
    text = "".join(t for _, t in messages)
    return {"pass": "labels" if _entity_re().search(text) else "edges",
            "roles": [r for r, _ in messages],
            "messages": [{"sha256": hashlib.sha256(t.encode()).hexdigest(), "length": len(t)}
                         for _, t in messages]}


# -- ours ---------------------------------------------------------------------------------

class _Orthogonal:
    """Structure only: no cosine reaches the threshold, so no embedding edge is made."""

    name = "no-relations"
    threshold = 2.0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 8), dtype=np.float32)
        out[:, 0] = 1.0
        return out


def run_ours(release: Path) -> tuple[list[dict[str, Any]], Any]:
    """Our release mode on the same servers and script: labels, then edges (the release's
    order), one request at a time."""
    from inspect_ai.model import get_model

    from synthesis.graph import build_graph, specs_from_metadata_dir
    from synthesis.graph_llm import classify_user_provided, refine_edges

    folder = release / "envs" / "metadata"
    sources = specs_from_metadata_dir(folder)
    graph = build_graph({s: sources[s] for s in SERVERS}, _Orthogonal())
    for a, b in EDGES:
        graph.g.add_edge(a, b, kind="Tool_Depend", source="embedding", score=1.0)
    with RecordingServer(responder) as server:
        model = get_model("openai/scripted", base_url=server.url, api_key="sk-scripted",
                          responses_api=False, memoize=False)
        asyncio.run(classify_user_provided(graph, model=model, batch_size=BATCH,
                                           max_concurrency=1))
        asyncio.run(refine_edges(graph, model=model, max_concurrency=1))
        return [digest(r.body) for r in server.requests], graph


def _release_dir() -> Path | None:
    root = os.environ.get("ENVFACTORY_RELEASE_DIR")
    if root and all((Path(root) / f).is_file() for f in (TOOL_GRAPH, TOOL_NODE)) and all(
            (Path(root) / "envs" / "metadata" / f"{s}_metadata.json").is_file() for s in SERVERS):
        return Path(root)
    return None


@pytest.fixture(scope="module")
def ours() -> tuple[list[dict[str, Any]], Any, dict[str, Any]]:
    release = _release_dir()
    if release is None:
        pytest.skip(f"needs ENVFACTORY_RELEASE_DIR with the release's metadata and "
                    f"{TOOL_GRAPH}, {TOOL_NODE} (a checkout of eff3b22)")
    recorded = json.loads(DATA.read_text())
    # the recording was made on exactly this input
    assert (recorded["servers"], recorded["edges"], recorded["batch"]) == (
        list(SERVERS), [list(e) for e in EDGES], BATCH)
    requests, graph = run_ours(release)
    return requests, graph, recorded


def test_every_request_equals_the_releases(ours: Any) -> None:
    requests, _, recorded = ours
    expected = recorded["requests"]
    assert [r["pass"] for r in requests] == [r["pass"] for r in expected]
    for i, (got, want) in enumerate(zip(requests, expected, strict=True)):
        assert got == want, f"request {i} ({want['pass']})"


def test_the_graph_ends_as_the_releases(ours: Any) -> None:
    _, graph, recorded = ours
    g = graph.g
    added = sorted([a, b] for a, b, d in g.edges(data=True) if d.get("source") == "llm")
    assert added == sorted(recorded["added_edges"])
    labels = {n: g.nodes[n]["user_provided"] for n in recorded["labels"]}
    assert labels == recorded["labels"]
    assert g.graph["llm_prompts"] == {"labels": "release", "edges": "release"}


def test_object_nodes_the_release_never_asks_about_follow_their_fields(ours: Any) -> None:
    _, graph, recorded = ours
    g = graph.g
    parents = {n.rsplit(".", 1)[0] for n in recorded["labels"] if "." in n.split(":", 2)[2]}
    checked = 0
    for parent in sorted(parents - set(recorded["labels"])):
        fields = [v for n, v in recorded["labels"].items() if n.startswith(parent + ".")]
        assert g.nodes[parent]["user_provided"] is all(fields), parent
        checked += 1
    assert checked >= 5  # e.g. CarPrice-get_car_brands:out:brands (fields code, name)


def test_graph_refine_cli_runs_the_release_passes_and_records_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release = _release_dir()
    if release is None:
        pytest.skip("needs ENVFACTORY_RELEASE_DIR with the release's src/graph files")
    from inspect_ai.model import Model, get_model
    from typer.testing import CliRunner

    from envfactory.cli import app
    from envfactory.cli import synth_graph as graph_cli
    from synthesis.graph import ToolGraph, build_graph, specs_from_metadata_dir

    sources = specs_from_metadata_dir(release / "envs" / "metadata")
    path = build_graph({s: sources[s] for s in SERVERS}, _Orthogonal()).save(
        tmp_path / "graph.json")
    with RecordingServer(responder) as server:
        def fake(roles: object, *args: object, **kwargs: object) -> dict[str, Model]:
            return {"synth": get_model("openai/scripted", base_url=server.url,
                                       api_key="sk-scripted", responses_api=False)}

        monkeypatch.setattr(graph_cli, "role_models", fake)
        result = CliRunner().invoke(app, ["synth", "graph-refine", str(path),
                                          "--max-concurrency", "1", "--batch-size", "8"])
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 30  # the same script as above: 10 edge, 20 label
    assert "prompts: release" in result.output
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["llm_prompts"] == {"edges": "release", "labels": "release"}
    assert ToolGraph.load(path).g.graph["llm_prompts"] == stats["llm_prompts"]
    # continuing with the other prompts is refused; --redo switches
    again = CliRunner().invoke(app, ["synth", "graph-refine", str(path), "--prompts", "ours",
                                     "--model", "x/y"])
    assert again.exit_code == 2 and "ran with --prompts release" in again.output
