"""Claims, the judge's prompt and schema: equal to upstream's `score_claims.py`, run."""

from __future__ import annotations

import csv
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasks._mcp_atlas.claims import (
    extract_claims,
    judge_prompt,
    judge_schema,
    judge_template,
    truncate_response,
)
from tests.shared_data import MCP_ATLAS_DATA, MCP_ATLAS_OFFICIAL, needs_mcp_atlas
from tests.tasks.mcp_atlas.official import SCORE_CLAIMS, upstream, upstream_prompt

UPSTREAM = upstream("clean_claim_text", "extract_claims", "get_single_claim_evaluation_schema")

#: blobs that exercise each rule (bullets, numbering, quotes, dashes, separators, short
#: claims, JSON vs Python literals, lists that are not strings)
EDGE_CASES: list[Any] = [
    None, "", "   ", "[]", [], ["abc", "abcd", "  - • 1. x  "], [1234, 12, None, {"a": 1}],
    '["The answer is 42.", "ok", "Paris is the capital"]',
    "['It\\'s \u201cquoted\u201d \u2014 with \u2018marks\u2019\u2026', 'abc']",
    "['unterminated', 'list'", "[not a list at all]", "[1, 2, 3456]", '[{"claim": "x"}]',
    "- first claim here\n- second claim here\n- no",
    "• bullet one\n• bullet two", "* star one\n* star two",
    "1. numbered one\n2. numbered two\n3. numbered three",
    "1) paren one\n2) paren two", "a claim; another claim; x",
    "left || right side || r", "single line claim", "line one\nline two\nab",
    '"quoted claim".', "claim ending in quotes\"'..", "claim with trailing quote ' ",
    "   12. padded numbered claim   ", "-no space bullet", "\u00b7 middle dot claim",
    "\u25e6 white bullet\n\u2023 triangle bullet\n\u2043 hyphen bullet",
    "[\"json\", \"with; semicolons\"]; trailing", "3.14 is pi", "1.\n2.\nabcd",
    "tab\tseparated\nclaims\r\nwith CRLF", 12345, "['a', 'b']", "[\"x\" , \"yyyy\"]",
]


def sample_rows() -> list[dict[str, str]]:
    csv.field_size_limit(sys.maxsize)
    with (MCP_ATLAS_DATA / "sample_tasks.csv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture
def official_source(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MCP_ATLAS_SOURCE_DIR", str(MCP_ATLAS_OFFICIAL / "source"))
    return MCP_ATLAS_OFFICIAL / "source"


@pytest.mark.parametrize("blob", EDGE_CASES)
def test_extract_claims_as_upstream(blob: Any) -> None:
    assert extract_claims(blob) == UPSTREAM["extract_claims"](blob)


#: characters the cleaning and splitting rules look at
_ALPHABET = st.sampled_from(list("ab1 .\n\t\r;|-*[]'\",)") + ["\u2022", "\u00b7", "\u201c",
                                                              "\u201d", "\u2019", "\u2014",
                                                              "\u2026", "\u25e6"])


@settings(max_examples=300, deadline=None)
@given(st.text(_ALPHABET, max_size=40) | st.lists(st.text(_ALPHABET, max_size=12), max_size=4))
def test_extract_claims_as_upstream_on_generated_blobs(blob: Any) -> None:
    assert extract_claims(blob) == UPSTREAM["extract_claims"](blob)


@needs_mcp_atlas
def test_sample_tasks_claims_as_upstream() -> None:
    rows = sample_rows()
    assert len(rows) == 10
    for row in rows:
        ours = extract_claims(row["GTFA_CLAIMS"])
        assert ours == UPSTREAM["extract_claims"](row["GTFA_CLAIMS"]), row["TASK"]
        assert ours, row["TASK"]


@needs_mcp_atlas
def test_judge_prompt_is_upstreams_rendering(use_mcp_atlas_data: Path) -> None:
    row = sample_rows()[0]
    claim = extract_claims(row["GTFA_CLAIMS"])[0]
    response = "The average profit for the first five weeks was $6,446.20."
    expected = upstream_prompt(claim, response)
    assert judge_prompt(claim, response) == expected
    assert claim in expected and response in expected


def test_braces_and_placeholders_in_the_inputs_are_kept(official_source: Path) -> None:
    claim, response = "A {claim} with {braces}", "{response} {0} }{"
    assert judge_prompt(claim, response) == upstream_prompt(claim, response)


def test_schema_is_upstreams(official_source: Path) -> None:
    schema = judge_schema()
    assert schema == UPSTREAM["get_single_claim_evaluation_schema"]()
    schema["required"].clear()  # a copy: the cached template is untouched
    assert judge_schema()["required"]


def test_truncation_as_upstream(official_source: Path) -> None:
    template = judge_template()
    assert template.max_response_chars == 500_000
    assert truncate_response("x" * 500_000) == "x" * 500_000
    cut = truncate_response("y" * 500_001)
    assert cut == "y" * 500_000 + "\n\n[TRUNCATED \u2014 original response was too long]"


def test_a_changed_scorer_is_refused_naming_the_file(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    source = SCORE_CLAIMS.read_text(encoding="utf-8")
    scoring = tmp_path / "services" / "scoring"
    scoring.mkdir(parents=True)
    monkeypatch.setenv("MCP_ATLAS_SOURCE_DIR", str(tmp_path))
    (scoring / "score_claims.py").write_text(
        source.replace("{claim}\nMODEL RESPONSE", "{claim.upper()}\nMODEL RESPONSE"),
        encoding="utf-8")
    with pytest.raises(ValueError, match="score_claims.py: a plain `{claim}`"):
        judge_prompt("c", "r")
    (scoring / "score_claims.py").write_text(
        source.replace("def get_single_claim_evaluation_schema", "def renamed"),
        encoding="utf-8")
    with pytest.raises(ValueError, match="get_single_claim_evaluation_schema"):
        judge_schema()
