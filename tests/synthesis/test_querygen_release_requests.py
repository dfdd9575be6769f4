"""Request-level check of our QueryGen port against the release's own QueryGen.

The release's QueryGen (LARK-AI-Lab/EnvFactory@eff3b22, run in its own virtual
environment by a driver kept outside this repository) and ours were pointed at one
recording OpenAI-compatible server answering from the scripted `responder` below, on the
same chains (`CHAINS`) for each preset. What the release sent is kept in
`tests/data/querygen_release/<preset>.json` without its text (the release has no
licence): per request, the role sequence, each message's sha256 and length, its keys
and content type, and the request's other fields (model and sampling settings). This test
replays ours on the same chains and script and compares, request for request.

The release's solver rollouts run concurrently, so the order requests arrive in is not
the pipeline's; both sides are put in one canonical order (sorted by a hash of the whole
request) per chain before comparing. Known, explained differences are listed in the data
file's `known_differences` (per chain and request) and checked to be exactly those.

The responder reads the release's prompts (to tell the agents apart) and a checkpoint
scenario (the schema generator's database) from `ENVFACTORY_RELEASE_DIR` at run time.
Ours needs the release's pipeline files too (its fixed inputs and "Error attempt" texts
are read from them), so the comparison skips where the release copy lacks them; the
tests at the end (the recordings' completeness, tool results and tool lists against the
`mcp` package's own code) run without them.

The recordings were made by the release's code, not ours (the driver, outside the repo:
`ENVFACTORY_RELEASE_DIR=<full release> python qg_driver.py [PRESET...]`, which runs
`QueryGen(graph, preset).gen(chain)` in the release's venv on the chain's tools as its
`ToolGraph.build_tool_graph` makes them from `envs/metadata`, and the servers over MCP
stdio as its `MCPManager` does). At present there are no known differences.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from testkit.recording_server import Api, RecordingServer, Reply

DATA = Path(__file__).resolve().parents[1] / "data" / "querygen_release"
PRESETS = ("sft_nonconv", "rl_nonconv", "sft_conv")
PIPELINE_FILE = "src/gen/query_gen/query_gen_non_conv.py"

#: (server, [(tool, arguments)], turns, the tool the classifier calls user-only)
#: arguments hand-picked from the release's checkpoint scenario 0 of each server
CHAINS: list[tuple[str, list[tuple[str, dict[str, Any]]], list[list[int]], str]] = [
    ("Airline", [("list_airports", {}), ("get_user_details", {"user_id": "user_001"})],
     [[0], [1]], "cancel_reservation"),
    ("Weather", [("list_saved_locations", {})], [[0]], "get_alerts"),
    ("Calculator", [("calculate", {"expression": "2 + 3"})], [[0]], "calculate"),
]

DONE = "All done: the requested operations were carried out."


# -- the scripted replies (both sides) --------------------------------------------------

def messages_of(body: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A request's messages as (role, text), for Chat Completions or Responses bodies."""
    def text(content: Any) -> str:
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        return "" if content is None else str(content)

    out: list[tuple[str, str]] = []
    if "messages" in body:
        for m in body["messages"]:
            out.append((str(m.get("role")), text(m.get("content"))))
        return out
    if body.get("instructions"):
        out.append(("system", str(body["instructions"])))
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for m in items or []:
        out.append((str(m.get("role", m.get("type"))), text(m.get("content"))))
    return out


@lru_cache(maxsize=1)
def _prefixes() -> list[tuple[str, str]]:
    """(agent, the literal start of its system prompt), longest first."""
    from synthesis.querygen import release_prompts as rp

    names = {
        "planner": "ScenarioPlanner_System_Prompt", "schema": "SchemaGenerator_System_Prompt",
        "generator": "QueryGenerator_System_Prompt", "refiner": "QueryRefiner_System_Prompt",
        "solver": "Assistant_Prompt", "selector": "SolutionSelector_System_Prompt",
        "classifier": "User_Tools_Classification", "judge": "End_Conversation_Prompt",
        "user": "User_Prompt", "user_tools": "User_with_Tools_Prompt"}
    found = [(agent, rp.text(name).split("{")[0]) for agent, name in names.items()]
    return sorted(found, key=lambda p: -len(p[1]))


@lru_cache(maxsize=1)
def _filter_prefix() -> str:
    from synthesis.querygen import release_prompts as rp

    return rp.text("SolutionSelector_Filter_Prompt").split("{")[0]


@lru_cache(maxsize=8)
def _database(server: str) -> str:
    from envs.release_envs import get_release

    return json.dumps(get_release(server).scenarios()[0].data)


def _qualified() -> dict[str, dict[str, Any]]:
    return {f"{s}-{t}": a for s, steps, _, _ in CHAINS for t, a in steps}


def _named(text: str) -> list[str]:
    """Chain tool names in `text`, in order of appearance (each once)."""
    known = _qualified()
    hits = sorted((m.start(), m.group(0)) for name in known
                  for m in re.finditer(rf"\b{re.escape(name)}\b", text))
    return list(dict.fromkeys(name for _, name in hits))


def _chain_of(text: str) -> tuple[str, list[tuple[str, dict[str, Any]]], list[list[int]], str]:
    for chain in CHAINS:
        if f"{chain[0]}-{chain[1][0][0]}" in text:
            return chain
    raise ValueError("no scripted chain is named in the request")


def responder(api: Api, body: Mapping[str, Any]) -> Reply:
    """The script: a reply chosen from which agent asks (its system prompt) and its input."""
    messages = messages_of(body)
    system = messages[0][1] if messages and messages[0][0] in ("system", "developer") else ""
    last = messages[-1][1] if messages else ""
    everything = "\n".join(t for _, t in messages)
    agent = agent_of(messages)
    if agent == "planner":
        chain = _chain_of(everything)
        return Reply(content=f"<scenario>A scripted day with {chain[0]}.</scenario>"
                             f"<turn>{json.dumps(chain[2])}</turn>")
    if agent == "schema":
        server = next(s for s, *_ in CHAINS if f"## MCP Server: {s}\n" in everything)
        return Reply(content=f"<schema>{_database(server)}</schema>")
    if agent in ("generator", "refiner"):
        tools = _named(last) or _named(everything)
        word = "Refined: please" if agent == "refiner" else "Please"
        return Reply(content=f"<user_intent>Intent: {', '.join(tools)}.</user_intent>"
                             f"<query>{word} run {', '.join(tools)}.</query>")
    if agent == "classifier":
        server, _, _, user_tool = _chain_of(system)
        entry = {"name": f"{server}-{user_tool}", "description": "Only the user can do this."}
        return Reply(content=f"<user_tools>[{json.dumps(entry)}]</user_tools>")
    if agent == "solver":
        if "<tool_response>" in last:
            return Reply(content=DONE)
        known = _qualified()
        calls = "".join(f"<tool_call>\n{json.dumps({'name': n, 'arguments': known[n]})}"
                        "\n</tool_call>\n" for n in _named(last))
        return Reply(content=calls or DONE)
    if agent == "judge":
        return Reply(content="###STOP###")
    if agent in ("user", "user_tools"):
        return Reply(content="Thanks, that is all.")
    if agent == "selector":
        if last.startswith(_filter_prefix()):
            known = _qualified()
            steps = []
            for i, role, content in re.findall(r"^- Step (\d+)\[(\w+)\]: (.*)$", last, re.M):
                if role == "tool_call":
                    steps.append({"index": int(i), "role": role, "content": [
                        {"name": n, "arguments": known[n], "masked_arguments": list(known[n])}
                        for n in _named(content)]})
                elif role == "assistant":
                    steps.append({"index": int(i), "role": role})
            return Reply(content=f"<steps>{json.dumps(steps)}</steps>")
        shown = re.findall(r"^## Solution (\d+):", last, re.M)
        decision = {k: True for k in shown}
        return Reply(content=f"<decision>{json.dumps(decision)}</decision>"
                             f"<selection>{shown[0] if shown else 'none'}</selection>")
    raise ValueError(f"unscripted request (system starts {system[:60]!r})")


# -- recordings as hashes ------------------------------------------------------------------

def digest(messages: list[tuple[str, str]]) -> dict[str, Any]:
    """One request without its text: roles, and per message its sha256 and length."""
    return {"roles": [r for r, _ in messages],
            "messages": [{"sha256": hashlib.sha256(t.encode()).hexdigest(), "length": len(t)}
                         for _, t in messages]}


def agent_of(messages: list[tuple[str, str]]) -> str | None:
    """Which scripted agent a request comes from (by its system prompt)."""
    system = messages[0][1] if messages and messages[0][0] in ("system", "developer") else ""
    return next((a for a, prefix in _prefixes() if system.startswith(prefix)), None)


ROLLOUT = {"solver", "judge", "user", "user_tools"}


def shape(body: Mapping[str, Any]) -> dict[str, Any]:
    """What a request holds besides its messages' text (no release text in it): its
    other fields (model, sampling settings, tools...) and, per Chat Completions message,
    its keys and the type of its content."""
    return {"settings": {k: v for k, v in body.items() if k != "messages"},
            "forms": [[*sorted(m), type(m.get("content")).__name__]
                      for m in body.get("messages") or []]}


def canonical(bodies: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Digests (with each request's `shape`) in an order independent of how the k
    concurrent rollouts interleave: in arrival order, except that each run of rollout
    requests (solver, judge, user) is sorted by agent, then length, then digest."""
    keyed = []
    block, previous = 0, None
    for n, body in enumerate(bodies):
        messages = messages_of(body)
        agent = agent_of(messages)
        rollout = agent in ROLLOUT
        if not (rollout and previous):
            block += 1
        previous = rollout
        d = digest(messages) | shape(body)
        keyed.append(((block, str(agent) if rollout else "", len(messages) if rollout else n,
                       json.dumps(d, sort_keys=True)), d))
    return [d for _, d in sorted(keyed, key=lambda kd: kd[0])]


# -- ours ----------------------------------------------------------------------------------

def run_ours(preset_name: str) -> list[list[dict[str, Any]]]:
    """Our release pipeline on every chain; per chain, the request bodies it sent."""
    from inspect_ai.model import get_model

    from synthesis.chain import ChainStep, ToolChain
    from synthesis.querygen import preset
    from synthesis.querygen.release_pipeline import release_synthesize

    per_chain: list[list[dict[str, Any]]] = []
    with RecordingServer(responder) as server:
        # an OpenAI-compatible server, as the release's vLLM/SGLang models are reached
        model = get_model("openai-api/scripted/scripted", base_url=server.url,
                          api_key="sk-scripted", memoize=False)
        models = {role: model for role in ("synth", "solver", "user", "judge")}
        for seed, (name, steps, turns, _) in enumerate(CHAINS):
            before = len(server.requests)
            chain = ToolChain(seed=seed, sampler="script", turns=turns,
                              steps=[ChainStep(env=f"release/{name}", tool=t) for t, _ in steps])
            asyncio.run(release_synthesize(chain, preset(preset_name), traj_id=f"c{seed}",
                                           models=models))
            per_chain.append([r.body for r in server.requests[before:]])
    return per_chain


def differences(expected: list[dict[str, Any]], got: list[dict[str, Any]]) -> list[str]:
    """Each request/message that differs, as 'request i message j (role)', and each
    request whose settings or message forms differ."""
    found = []
    if len(expected) != len(got):
        found.append(f"{len(got)} requests, expected {len(expected)}")
    for i, (e, g) in enumerate(zip(expected, got, strict=False)):
        if e["roles"] != g["roles"]:
            found.append(f"request {i}: roles {g['roles']}, expected {e['roles']}")
            continue
        for j, (em, gm) in enumerate(zip(e["messages"], g["messages"], strict=True)):
            if em != gm:
                found.append(f"request {i} message {j} ({e['roles'][j]})")
        if e["settings"] != g["settings"]:
            found.append(f"request {i}: settings {g['settings']}, expected {e['settings']}")
        if e["forms"] != g["forms"]:
            found.append(f"request {i}: message forms {g['forms']}, expected {e['forms']}")
    return found


def _release_dir() -> Path | None:
    root = os.environ.get("ENVFACTORY_RELEASE_DIR")
    if root and (Path(root) / PIPELINE_FILE).is_file():
        return Path(root)
    return None


@pytest.mark.parametrize("preset_name", PRESETS)
def test_requests_match_the_release(preset_name: str) -> None:
    if _release_dir() is None:
        pytest.skip(f"needs ENVFACTORY_RELEASE_DIR with the release's pipeline ({PIPELINE_FILE})")
    recorded = json.loads((DATA / f"{preset_name}.json").read_text())
    ours = run_ours(preset_name)
    assert len(ours) == len(recorded["chains"])
    for c, (chain, requests) in enumerate(zip(recorded["chains"], ours, strict=True)):
        found = differences(chain["requests"], canonical(requests))
        known = [k["where"] for k in chain.get("known_differences", [])]
        assert found == known, f"chain {c} ({chain['server']})"


# -- without the release's pipeline files ----------------------------------------------

def test_the_recordings_cover_every_preset_and_chain() -> None:
    """The recorded expectations are complete: every preset, every chain of `CHAINS`, each
    known difference with its reason (the comparison above skips without the pipeline)."""
    for preset_name in PRESETS:
        recorded = json.loads((DATA / f"{preset_name}.json").read_text())
        assert recorded["preset"] == preset_name
        assert [c["server"] for c in recorded["chains"]] == [s for s, *_ in CHAINS]
        for chain in recorded["chains"]:
            assert chain["requests"], f"{preset_name} {chain['server']}: no requests"
            for request in chain["requests"]:
                assert len(request["roles"]) == len(request["messages"]) \
                    == len(request["forms"])
                assert request["settings"]["model"] == "scripted"
                assert all(len(m["sha256"]) == 64 for m in request["messages"])
            assert all(k["where"] and k["why"] for k in chain["known_differences"])


@pytest.mark.parametrize("value", [
    {"airports": [{"iata": "JFK", "city": "New York"}]}, [{"a": 1}, "two", 3.5], "plain",
    None, [], {"nested": {"x": [1, 2]}, "unicode": "Zürich", "float": 0.1}, 7, True])
def test_a_tool_result_reads_as_fastmcp_sends_it(value: Any) -> None:
    """Expected: the `mcp` package's own FastMCP content conversion, texts joined by ","
    as the release's `MCPManager._call_tool_async` joins them."""
    from mcp.server.fastmcp.utilities.func_metadata import _convert_to_content

    from synthesis.querygen.release_context import mcp_text

    expected = ",".join(c.text for c in _convert_to_content(value) if hasattr(c, "text"))
    assert mcp_text(value) == expected


def test_the_tool_list_is_what_the_servers_mcp_list_tools_answers() -> None:
    """Expected: the server file's own FastMCP `list_tools` (what the release's MCP client
    receives), as `str()` of the release's function dicts, without load/save_scenario."""
    import importlib.util

    from envs.release_envs import get_release
    from synthesis.querygen.release_context import tool_list

    try:
        path = get_release("Airline").server
    except Exception as e:  # noqa: BLE001 - no release here
        pytest.skip(f"needs the release's envs/tools: {e}")
    spec = importlib.util.spec_from_file_location("_qg_listing_probe", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    listed = asyncio.run(module.mcp.list_tools())
    expected = "".join(
        f"{ {'name': f'Airline-{t.name}', 'description': t.description, 'parameters': t.inputSchema} }\n"  # noqa: E501
        for t in listed if t.name not in ("load_scenario", "save_scenario"))
    assert tool_list(["release/Airline"]) == expected
