"""Claim-coverage scoring: ours against upstream's `score_claims.py` on the same judge
replies (a local endpoint; upstream's scores, calls and requests were recorded against it
with this module's ROWS), the request each sends, negative controls, and the Inspect
scorer end to end."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import store_as

from harness.episode import EpisodeProgress, Termination
from harness.trajectory import Message, MessageCall
from tasks._mcp_atlas.claims import extract_claims
from tasks._mcp_atlas.scoring import (
    Coverage,
    coverage_metric_values,
    final_response,
    mcp_atlas_scorer,
    score_response,
)
from tests.shared_data import needs_mcp_atlas
from tests.tasks.mcp_atlas.official import (
    JudgeServer,
    ScriptedJudge,
    normalised_request,
    recorded,
    verdict,
)

GARBAGE = "this is not JSON"
FENCED = "```json\n" + verdict("fulfilled") + "\n```"
LONG = "z" * 500_003

#: (claims blob, response, {claim: replies}) — claims are unique across rows, so that the
#: endpoint can tell each claim's requests apart
ROWS: list[tuple[str, str, dict[str, list[str]]]] = [
    ("['Claim alpha holds.', 'Claim beta holds.', 'Claim gamma holds.', "
     "'Claim delta holds.', 'Claim epsilon holds.']", "an answer", {
         "Claim alpha holds.": [verdict("fulfilled", claim_text="alpha")],
         "Claim beta holds.": [verdict("partially_fulfilled", confidence_level=1)],
         "Claim gamma holds.": [verdict("not_fulfilled", justification=["odd", 1])],
         "Claim delta holds.": [verdict("Fulfilled")],
         "Claim epsilon holds.": [json.dumps({"coverage_outcome": "fulfilled"})]}),
    # retried: two bad replies, then a good one; and one that never parses (8 calls)
    ("['Retried claim one.', 'Retried claim two.']", "an answer", {
        "Retried claim one.": [GARBAGE, FENCED, verdict("fulfilled")],
        "Retried claim two.": [GARBAGE]}),
    # a JSON array from the judge fails the row (coverage null)
    ("['Array claim one.', 'Array claim two.']", "an answer", {
        "Array claim one.": [json.dumps([json.loads(verdict("fulfilled"))])],
        "Array claim two.": [verdict("fulfilled")]}),
    # so does a confidence that is not a number, or an outcome that is not a label
    ("['Confidence claim.']", "an answer", {
        "Confidence claim.": [verdict("fulfilled", confidence_level="high")]}),
    ("['Outcome claim.']", "an answer", {
        "Outcome claim.": [verdict("fulfilled", coverage_outcome=["fulfilled"])]}),
    # a bool confidence is a number to upstream
    ("['Bool claim.']", "an answer",
     {"Bool claim.": [verdict("fulfilled", confidence_level=True)]}),
    # skipped: empty, whitespace, `ERROR:`; judged: a leading space, another case
    ("['Skipped claim one.']", "", {}),
    ("['Skipped claim two.']", "  \n\t", {}),
    ("['Skipped claim three.']", "ERROR: timeout after 1800s", {}),
    ("['Spaced error claim.']", " ERROR: x", {"Spaced error claim.": [verdict("fulfilled")]}),
    ("['Cased error claim.']", "Error: x", {"Cased error claim.": [verdict("not_fulfilled")]}),
    # cut to 500,000 characters with upstream's suffix
    ("['Long claim.']", LONG, {"Long claim.": [verdict("fulfilled")]}),
    # no claims: null when judged, 0 when skipped
    ("[]", "an answer", {}),
    ("[]", "", {}),
    # rounding to 3 decimals
    ("['Third claim one.', 'Third claim two.', 'Third claim three.']", "an answer", {
        "Third claim one.": [verdict("fulfilled")],
        "Third claim two.": [verdict("not_fulfilled")],
        "Third claim three.": [verdict("not_fulfilled")]}),
]



def script() -> dict[str, list[str]]:
    return {claim: replies for _, _, claims in ROWS for claim, replies in claims.items()}


def run_ours(base_url: str) -> list[Coverage]:
    judge = get_model("openai-api/judge/judge-x", base_url=f"{base_url}/v1", api_key="key",
                      memoize=False)

    async def score_all() -> list[Coverage]:
        return list(await asyncio.gather(*(score_response(extract_claims(blob), response, judge)
                                           for blob, response, _ in ROWS)))

    return asyncio.run(score_all())


def by_prompt(requests: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for body in requests:
        grouped.setdefault(body["messages"][0]["content"], []).append(body)
    return grouped


def test_scores_and_requests_equal_upstreams(official_source: Path) -> None:
    upstream = recorded("scoring")  # upstream's run against JudgeServer(script())
    ours_server = JudgeServer(script())
    with ours_server.running() as url:
        ours = run_ours(url)
    theirs = upstream["rows"]

    assert [o.coverage for o in ours] == [t["coverage_score"] for t in theirs] == [
        0.5, 0.5, None, None, None, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, None, 0.0, 0.333]
    for our, their in zip(ours, theirs, strict=True):
        if their["coverage_score"] is None:
            assert our.verdicts == [] or their.get("explanation") == "No claims provided"
            continue
        assert [(v.score, v.covered) for v in our.verdicts] == [
            (p["score"], p["covered"]) for p in their["per_claim"]]
        assert (our.total_claims, our.fulfilled, our.partially_fulfilled) == (
            their["total_claims"], their["fully_covered_claims"],
            their["partially_covered_claims"])
        assert our.confidence == pytest.approx(their["confidence"])
        if our.skipped is None:  # the judge's own words, as upstream keeps them
            assert [(v.judge_claim, v.reason) for v in our.verdicts] == [
                (p["claim"], p["reason"]) for p in their["per_claim"]]
    retried = ours[1].verdicts
    assert [v.attempts for v in retried] == [3, 8]
    assert retried[1].reason == "Evaluation failed: Expecting value: line 1 column 1 (char 0)"
    assert retried[1].confidence == 0.1

    # the same calls per claim, and the same prompts
    assert {claim: ours_server.calls(claim) for claim in script()} == upstream["calls"]
    assert ours_server.calls("Retried claim two.") == 8
    ours_sent = by_prompt(ours_server.requests)
    assert any(p.count("z") == 500_000 and "[TRUNCATED" in p for p in ours_sent)
    # the first request for each prompt (a prompt over 4,096 characters kept as its hash)
    theirs_sent = {body["messages"][0]["content"]: body
                   for body in upstream["first_request_per_prompt"]}
    ours_first = {(n := normalised_request(bodies[0]))["messages"][0]["content"]: n
                  for bodies in ours_sent.values()}
    assert ours_first.keys() == theirs_sent.keys()
    # each request: one user message, temperature 0, the schema under `claim_evaluation`;
    # Inspect's openai provider adds `description` and `strict` (both null) beside them
    for prompt, mine in ours_first.items():
        schema = mine["response_format"]["json_schema"]
        assert {k: schema.pop(k) for k in ("description", "strict")} == {
            "description": None, "strict": None}
        assert mine == theirs_sent[prompt]


def test_empty_answer_scores_zero_unjudged(official_source: Path) -> None:
    judge = ScriptedJudge(lambda prompt: pytest.fail("the judge was called"))
    for response in ("", "   "):
        result = asyncio.run(score_response(["Claim one here.", "Claim two here."], response,
                                            judge.model))
        assert (result.coverage, result.passed, result.skipped) == (0.0, False, "empty")
        assert [v.attempts for v in result.verdicts] == [0, 0]


def test_refusal_is_judged_and_scores_zero(official_source: Path) -> None:
    judge = ScriptedJudge(lambda prompt: verdict("not_fulfilled"))
    claims = ["Claim one here.", "Claim two here.", "Claim three here."]
    result = asyncio.run(score_response(claims, "I cannot help with that.", judge.model))
    assert (result.coverage, result.passed, result.skipped) == (0.0, False, None)
    assert len(judge.prompts) == 3
    assert all("I cannot help with that." in p for p in judge.prompts)
    assert {c.temperature for c in judge.configs} == {0.0}
    schemas = {c.response_schema.name for c in judge.configs if c.response_schema}
    assert schemas == {"claim_evaluation"}


def test_final_response_is_the_last_assistant_text() -> None:
    call = MessageCall(id="1", name="calculator_calculate", arguments={"expression": "1+1"})
    messages = [Message(role="user", content="q"),
                Message(role="assistant", content="Let me compute.", tool_calls=[call]),
                Message(role="tool", content="2", tool_call_id="1"),
                Message(role="assistant", content="", tool_calls=[call]),
                Message(role="tool", content="2", tool_call_id="1")]
    assert final_response(messages) == "Let me compute."
    assert final_response([*messages, Message(role="assistant", content="It is 2.")]) == "It is 2."
    assert final_response(messages[:1]) == ""


def test_metric_values() -> None:
    values = [1.0, 0.75, 0.5, 0.333, 0.0, math.nan]
    assert coverage_metric_values(values) == {
        "pass@0.75": 2 / 5, "pass@0.5": 3 / 5, "mean_coverage": pytest.approx(2.583 / 5)}
    assert all(math.isnan(v) for v in coverage_metric_values([math.nan]).values())


TOOLS = ["calculator_calculate", "filesystem_read_file"]


@solver
def replayed(episodes: dict[str, dict[str, Any]]) -> Solver:
    """Puts the sample's episode (EpisodeProgress fields) in the store, as the MCP-Atlas
    solver leaves it. (An EpisodeProgress made outside a sample would write to one
    store shared by all.)"""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        progress = store_as(EpisodeProgress)
        for key, value in episodes[str(state.sample_id)].items():
            setattr(progress, key, value)
        return state

    return solve


@needs_mcp_atlas
def test_scorer_in_an_eval(tmp_path: Path, use_mcp_atlas_data: Path) -> None:
    call = MessageCall(id="c1", name="calculator_calculate", arguments={"expression": "6*7"})
    answered = [Message(role="user", content="What is 6*7?"),
                Message(role="assistant", content="", tool_calls=[call]),
                Message(role="tool", content="42", tool_call_id="c1"),
                Message(role="assistant", content="The answer is 42.")]
    episodes = {
        "good": {"messages": answered, "termination": Termination.AGENT_STOP},
        "cut": {"messages": answered[:3], "termination": Termination.LIMIT,
                "detail": "time limit exceeded"},
        "array": {"messages": [answered[0], answered[-1]],
                  "termination": Termination.AGENT_STOP},
    }
    claims = {"good": "['The answer is 42.', 'The tool was used.']", "cut": "['Cut claim.']",
              "array": "['Array judged claim.']"}
    samples = [Sample(id=i, input="q", metadata={
        "task_id": i, "claims": claims[i], "enabled_tools": TOOLS,
        "required_servers": ["calculator"]}) for i in episodes]
    judge = ScriptedJudge(lambda prompt: "[]" if "Array judged claim." in prompt
                          else verdict("fulfilled"))
    (log,) = inspect_eval(Task(dataset=samples, solver=replayed(episodes),
                               scorer=mcp_atlas_scorer()),
                          model=get_model("mockllm/model"),
                          model_roles={"judge": judge.model}, log_dir=str(tmp_path),
                          display="none")
    assert log.status == "success", log.error
    scores = {str(s.id): next(iter((s.scores or {}).values())) for s in log.samples or []}
    good, cut, array = scores["good"], scores["cut"], scores["array"]
    assert (good.value, good.answer, good.metadata["passed"]) == (1.0, "The answer is 42.", True)
    assert [v["outcome"] for v in good.metadata["verdicts"]] == ["fulfilled", "fulfilled"]
    assert good.metadata["judge_model"] == "mockllm/model"
    assert good.metadata["failure_modes"]["modes"] == []
    assert len(good.metadata["failure_modes"]["not_labelled"]) == 6
    assert good.metadata["mcp_atlas_commit"].startswith("5b6220c")
    assert (cut.value, cut.reason, cut.metadata["skipped"]) == (0.0, "limit", "error")
    assert cut.answer == "ERROR: limit: time limit exceeded"
    assert math.isnan(array.value) and array.reason == "grader_failed"
    assert array.metadata["coverage"] is None
    assert array.metadata["failure_modes"]["modes"] == ["no_tool_use"]
    assert len(judge.prompts) == 3  # two claims of "good", one of "array"; "cut" unjudged
    metrics = {name: m.value for s in log.results.scores for name, m in s.metrics.items()}
    assert metrics == {"pass@0.75": 0.5, "pass@0.5": 0.5, "mean_coverage": 0.5}
