"""Claims, the judge's prompt and schema: equal to what upstream's `score_claims.py`
returned (recorded, `official.recorded`)."""

from __future__ import annotations

import ast
import csv
import sys
from pathlib import Path
from typing import Any

import pytest

from tasks._mcp_atlas.claims import (
    extract_claims,
    judge_prompt,
    judge_schema,
    judge_template,
    truncate_response,
)
from tests.shared_data import MCP_ATLAS_DATA, needs_mcp_atlas
from tests.tasks.mcp_atlas.official import (
    SCORER_FILE,
    digest,
    recorded,
)

CLAIMS = recorded("claims")
JUDGE = recorded("judge")


def sample_rows() -> list[dict[str, str]]:
    csv.field_size_limit(sys.maxsize)
    with (MCP_ATLAS_DATA / "sample_tasks.csv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))



@pytest.mark.parametrize("case", CLAIMS["edge_cases"], ids=lambda case: repr(case["blob"])[:40])
def test_extract_claims_as_upstream(case: dict[str, Any]) -> None:
    """Blobs that exercise each rule: bullets, numbering, quotes, dashes, separators, short
    claims, JSON vs Python literals, lists that are not strings."""
    assert extract_claims(case["blob"]) == case["claims"]


def test_extract_claims_as_upstream_on_generated_blobs() -> None:
    """400 random blobs (strings and lists of strings) of the characters the rules look at."""
    cases = CLAIMS["generated"]
    assert len(cases) == 400
    for case in cases:
        assert extract_claims(case["blob"]) == case["claims"], case["blob"]


@needs_mcp_atlas
def test_sample_tasks_claims_as_upstream() -> None:
    rows = sample_rows()
    assert len(rows) == 10
    expected = CLAIMS["sample_tasks"]  # count and sha256 of upstream's claims, per task
    assert sorted(expected) == sorted(row["TASK"] for row in rows)
    for row in rows:
        ours = extract_claims(row["GTFA_CLAIMS"])
        assert {"count": len(ours), "sha256": digest(ours)} == expected[row["TASK"]], row["TASK"]
        assert ours, row["TASK"]


@needs_mcp_atlas
def test_judge_prompt_is_upstreams_rendering(use_mcp_atlas_data: Path) -> None:
    case = JUDGE["sample_task_prompt"]
    (row,) = [r for r in sample_rows() if r["TASK"] == case["task_id"]]
    claim, response = extract_claims(row["GTFA_CLAIMS"])[0], case["response"]
    prompt = judge_prompt(claim, response)
    assert digest(prompt) == case["sha256"]
    assert claim in prompt and response in prompt


def test_braces_and_placeholders_in_the_inputs_are_kept(official_source: Path) -> None:
    (case,) = JUDGE["rendered"]
    assert "{" in case["claim"] and "{" in case["response"]
    assert judge_prompt(case["claim"], case["response"]) == case["prompt"]


def test_schema_is_upstreams(official_source: Path) -> None:
    schema = judge_schema()
    assert schema == JUDGE["schema"]
    schema["required"].clear()  # a copy: the cached template is untouched
    assert judge_schema()["required"]


def test_truncation_as_upstream(official_source: Path) -> None:
    template = judge_template()
    assert template.max_response_chars == 500_000
    assert truncate_response("x" * 500_000) == "x" * 500_000
    cut = truncate_response("y" * 500_001)
    assert cut == "y" * 500_000 + "\n\n[TRUNCATED \u2014 original response was too long]"
    assert (JUDGE["max_response_chars"], JUDGE["truncation_suffix"]) == (
        500_000, "\n\n[TRUNCATED \u2014 original response was too long]")


class _UpperClaim(ast.NodeTransformer):
    """`{claim}` in the prompt's f-string becomes `{claim.upper()}`."""

    def visit_FormattedValue(self, node: ast.FormattedValue) -> ast.FormattedValue:  # noqa: N802
        if isinstance(node.value, ast.Name) and node.value.id == "claim":
            node.value = ast.parse("claim.upper()", mode="eval").body
        return node


def test_a_changed_scorer_is_refused_naming_the_file(official_source: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    source = (official_source / SCORER_FILE).read_text(encoding="utf-8")
    scorer = tmp_path / SCORER_FILE
    scorer.parent.mkdir(parents=True)
    monkeypatch.setenv("MCP_ATLAS_SOURCE_DIR", str(tmp_path))
    scorer.write_text(ast.unparse(_UpperClaim().visit(ast.parse(source))), encoding="utf-8")
    with pytest.raises(ValueError, match="score_claims.py: a plain `{claim}`"):
        judge_prompt("c", "r")
    scorer.write_text(source.replace("def get_single_claim_evaluation_schema", "def renamed"),
                      encoding="utf-8")
    with pytest.raises(ValueError, match="get_single_claim_evaluation_schema"):
        judge_schema()
