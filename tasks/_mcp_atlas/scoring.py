"""MCP-Atlas scoring: claim coverage by an LLM judge, as upstream's `score_claims.py` (5b6220c).

One implementation for both entry points (the Inspect scorer below and `envfactory
mcp-atlas grade`). What upstream does, and `score_response` reproduces:

- A response that is empty, whitespace only, or starts with exactly `ERROR:` (no strip,
  case-sensitive) is not judged: every claim scores 0 and coverage is 0 (even with no
  claims). A response longer than the release's limit (500,000 characters) is cut and the
  release's suffix appended (`claims.truncate_response`).
- Otherwise each claim is judged on its own: one user message, the release's prompt
  (`claims.judge_prompt`), temperature 0, structured output with the release's schema under
  the name `claim_evaluation`. All claims of a response are sent at once.
- The reply's text is decoded with `json.loads`, nothing else: no schema check, no fence
  stripping. Any failure (the call raising, text that is not JSON) is retried, 8 attempts in
  all; then the claim counts as `not_fulfilled` with justification `Evaluation failed: ...`
  and confidence 0.1, and stays in the average. Upstream waits 60–120 s between attempts;
  here they follow at once, because Inspect's model layer already retries transport and
  rate-limit errors (with back-off) inside each call.
- A decoded object scores by its `coverage_outcome`: `fulfilled` 1, `partially_fulfilled`
  0.5, `not_fulfilled` 0, anything else (absent, another spelling) 0; a reply holding only
  `coverage_outcome` is fine.
- A decoded reply that is not an object (a JSON array, string, number, null), a
  `coverage_outcome` that is an array or object, or a `confidence_level` that is not a
  number fails the whole response as in upstream (there, `.get` or `+=` raises in the
  aggregation): coverage is None, and the Inspect score is unscored (NaN: excluded from
  the metrics, as upstream's pass rates and mean skip null rows).
- coverage = round(mean claim score, 3); no claims (and a judged response): None. Passing
  is coverage ≥ 0.75 (upstream has it only as an aggregate rate).

The metrics are upstream's `pass_rate_0.75`, `pass_rate_0.50` and `mean_coverage`, as
fractions rather than percentages.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Sequence
from typing import Any, Literal

from inspect_ai.model import (
    ChatMessageUser,
    GenerateConfig,
    Model,
    ResponseSchema,
    model_roles,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import JSONSchema, store_as
from pydantic import BaseModel, JsonValue, computed_field

from harness.episode import EpisodeProgress, Termination
from harness.generation_config import role_config
from harness.inspect_compat import PrerequisiteError
from harness.judge import JUDGE_ROLE, judge_model
from harness.trajectory import Message
from tasks._mcp_atlas.claims import extract_claims, judge_prompt, judge_schema, truncate_response
from tasks._mcp_atlas.release import release
from tasks._mcp_atlas.taxonomy import diagnose

__all__ = ["ATTEMPTS", "ERROR_ENDINGS", "JUDGE_TEMPERATURE", "LABEL_SCORES", "PASS_THRESHOLD",
           "SCHEMA_NAME", "ClaimVerdict", "Coverage", "coverage_metric_values",
           "JudgeRoleMissing", "coverage_metrics", "final_response", "judge_config",
           "mcp_atlas_scorer", "require_judge", "score_response"]

LABEL_SCORES = {"fulfilled": 1.0, "partially_fulfilled": 0.5, "not_fulfilled": 0.0}
PASS_THRESHOLD = 0.75
#: judge calls per claim before it counts as not fulfilled (upstream's `stop_after_attempt(8)`)
ATTEMPTS = 8
SCHEMA_NAME = "claim_evaluation"
JUDGE_TEMPERATURE = 0.0
#: what a claim whose judging failed gets (upstream's fallback verdict)
FAILED_OUTCOME, FAILED_CONFIDENCE = "not_fulfilled", 0.1
#: the explanation of a judged response without claims (coverage None, as upstream)
NO_CLAIMS = "no claims"
#: the confidence upstream assumes when a reply gives none
DEFAULT_CONFIDENCE = 0.5
#: episode endings that upstream's `run_eval.py` records as an `ERROR: ...` response (its
#: harness call timing out or failing): an Inspect limit or an exception cut the episode
ERROR_ENDINGS = frozenset({Termination.LIMIT, Termination.ERROR})

logger = logging.getLogger(__name__)


class ClaimVerdict(BaseModel):
    """One claim's verdict. The judge's fields are kept as it gave them (any JSON)."""

    #: the claim that was judged
    claim: str
    #: the judge's `claim_text` (what upstream's per-claim record calls `claim`)
    judge_claim: JsonValue = ""
    #: the judge's `coverage_outcome` (`not_fulfilled` when absent)
    outcome: JsonValue
    score: float
    #: upstream's `covered`: True (score 1), "partial" (0.5), False
    covered: bool | Literal["partial"]
    #: the judge's `justification`
    reason: JsonValue
    #: the judge's `confidence_level` (0.5 when absent)
    confidence: JsonValue
    #: judge calls made for the claim (0: not judged)
    attempts: int


class Coverage(BaseModel):
    """A response's claim coverage."""

    #: round(mean claim score, 3); None: no claims, or the judge's replies failed the row
    coverage: float | None
    verdicts: list[ClaimVerdict]
    fulfilled: int = 0
    partially_fulfilled: int = 0
    #: mean judge confidence (1.0 when nothing was judged; None when the row failed)
    confidence: float | None
    explanation: str
    #: why the response was not judged ("empty" or "error"), None when it was
    skipped: Literal["empty", "error"] | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total_claims(self) -> int:
        return len(self.verdicts)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool | None:
        """coverage >= 0.75 (None when coverage is)."""
        return None if self.coverage is None else self.coverage >= PASS_THRESHOLD


def final_response(messages: Sequence[Message]) -> str:
    """The answer as upstream's `run_eval.py` takes it: the content of the last assistant
    message that has any (a tool-calling message's text counts), else ""."""
    for message in reversed(messages):
        if message.role == "assistant" and message.content:
            return message.content
    return ""


def judge_config(judge: Model) -> GenerateConfig:
    """Temperature 0 (unless the judge's own config or the command line sets one) and the
    release's schema as structured output."""
    schema = ResponseSchema(name=SCHEMA_NAME, json_schema=JSONSchema.model_validate(judge_schema()))
    return role_config(judge, JUDGE_TEMPERATURE).merge(GenerateConfig(response_schema=schema))


async def _judge_claim(claim: str, response: str, judge: Model, config: GenerateConfig
                       ) -> tuple[Any, int]:
    """The decoded reply for one claim and the calls it took, or upstream's fallback."""
    prompt = judge_prompt(claim, response)
    error: Exception | None = None
    for attempt in range(1, ATTEMPTS + 1):
        try:
            output = await judge.generate([ChatMessageUser(content=prompt)], config=config)
            return json.loads(output.completion), attempt
        except Exception as e:  # upstream retries whatever goes wrong, then gives up
            error = e
    # as upstream, a judge that cannot answer (a wrong key, no network) scores the claim 0
    # rather than stopping the run; say so where it is seen
    logger.warning("claim judged not fulfilled after %d failed judge calls: %s", ATTEMPTS, error)
    return {"claim_text": claim, "coverage_outcome": FAILED_OUTCOME,
            "justification": f"Evaluation failed: {error}",
            "confidence_level": FAILED_CONFIDENCE}, ATTEMPTS


def _covered(score: float) -> bool | Literal["partial"]:
    return True if score >= 1.0 else "partial" if score >= 0.5 else False


def _verdict(number: int, claim: str, reply: Any, attempts: int) -> ClaimVerdict | str:
    """The verdict a decoded reply gives, or why upstream's aggregation would raise on it."""
    if not isinstance(reply, dict):
        return f"the judge's reply for claim {number} is {type(reply).__name__}, not an object"
    outcome = reply.get("coverage_outcome", FAILED_OUTCOME)
    if isinstance(outcome, list | dict):
        return f"the judge's coverage_outcome for claim {number} is not a label"
    confidence = reply.get("confidence_level", DEFAULT_CONFIDENCE)
    if not isinstance(confidence, int | float):
        return f"the judge's confidence_level for claim {number} is not a number"
    score = LABEL_SCORES.get(outcome, 0.0) if isinstance(outcome, str) else 0.0
    return ClaimVerdict(claim=claim, judge_claim=reply.get("claim_text", ""), outcome=outcome,
                        score=score, covered=_covered(score),
                        reason=reply.get("justification", ""), confidence=confidence,
                        attempts=attempts)


def _aggregate(claims: list[str], replies: list[tuple[Any, int]]) -> Coverage:
    verdicts = []
    for number, (claim, (reply, attempts)) in enumerate(zip(claims, replies, strict=True), 1):
        verdict = _verdict(number, claim, reply, attempts)
        if isinstance(verdict, str):
            return Coverage(coverage=None, verdicts=[], confidence=None,
                            explanation=f"Failed: {verdict}")
        verdicts.append(verdict)
    total = sum(v.score for v in verdicts)
    # every judged verdict's confidence is a number (`_verdict` checked)
    confidence = sum(c for v in verdicts if isinstance(c := v.confidence, int | float))
    return Coverage(coverage=round(total / len(claims), 3), verdicts=verdicts,
                    fulfilled=sum(v.score >= 1.0 for v in verdicts),
                    partially_fulfilled=sum(0.5 <= v.score < 1.0 for v in verdicts),
                    confidence=confidence / len(claims), explanation="judged")


async def score_response(claims: Sequence[str], response: str, judge: Model,
                         config: GenerateConfig | None = None) -> Coverage:
    """`claims`' coverage by `response`, judged by `judge` (see the module docstring).

    `config` defaults to `judge_config(judge)`.
    """
    claims = list(claims)
    skipped: Literal["empty", "error"] | None = (
        "empty" if not response.strip() else "error" if response.startswith("ERROR:") else None)
    if skipped is not None:
        return Coverage(
            coverage=0.0, confidence=1.0, skipped=skipped,
            explanation=f"not judged: {skipped} response",
            verdicts=[ClaimVerdict(claim=c, outcome=None, score=0.0, covered=False,
                                   reason=f"{skipped} response", confidence=None, attempts=0)
                      for c in claims])
    if not claims:
        return Coverage(coverage=None, verdicts=[], confidence=1.0, explanation=NO_CLAIMS)
    response = truncate_response(response)
    config = config or judge_config(judge)
    replies = await asyncio.gather(*(_judge_claim(c, response, judge, config) for c in claims))
    return _aggregate(claims, list(replies))


def coverage_metric_values(values: Sequence[float]) -> dict[str, float]:
    """pass@0.75 and pass@0.5 (the share of responses whose coverage reaches the threshold)
    and mean_coverage, over the scored responses (NaN values, upstream's null rows, are
    left out; all NaN when none is scored)."""
    scored = [v for v in values if not math.isnan(v)]
    if not scored:
        return {"pass@0.75": math.nan, "pass@0.5": math.nan, "mean_coverage": math.nan}
    return {"pass@0.75": sum(v >= PASS_THRESHOLD for v in scored) / len(scored),
            "pass@0.5": sum(v >= 0.5 for v in scored) / len(scored),
            "mean_coverage": sum(scored) / len(scored)}


@metric
def coverage_metrics() -> Metric:
    """`coverage_metric_values` of the sample scores (coverage values)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return coverage_metric_values([s.score.as_float() for s in scores])

    return compute


def _response(progress: EpisodeProgress) -> tuple[str, Termination]:
    # an episode that never saved a reason was cut before its first step
    ending = progress.termination or Termination.LIMIT
    if ending in ERROR_ENDINGS:
        return f"ERROR: {ending.value}: {progress.detail or 'no detail'}", ending
    return final_response(progress.messages), ending


class JudgeRoleMissing(PrerequisiteError, RuntimeError):
    """The task was built with no judge: Inspect prints it in one line and exits 1."""


def require_judge(judge: str | Model | None) -> None:
    """Refuse to build the task without a judge, before any server starts.

    Inspect binds `--model-role` before it calls a task function (0.3.285,
    `eval_resolve_tasks`), so the role is visible here; a task built in Python before
    `eval()` names its judge itself (`judge=`). Without this check the agent runs every
    sample against real servers and each score then fails on `JudgeNotSetError`, in a
    run that exits 0."""
    if judge is None and not model_roles().get(JUDGE_ROLE):
        raise JudgeRoleMissing(
            f"MCP-Atlas is scored by a '{JUDGE_ROLE}' model, and none is set: add "
            f"`--model-role {JUDGE_ROLE}=<model>` to `inspect eval` (Python: "
            f"`mcp_atlas({JUDGE_ROLE}=<model>)`)")


@scorer(metrics=[coverage_metrics()])
def mcp_atlas_scorer() -> Scorer:
    """Claim coverage of the episode's final answer by the `judge` role; the verdicts, the
    judge model, pass, the episode's ending and the failure modes read from the transcript
    (`taxonomy.diagnose`) in the score metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        progress = store_as(EpisodeProgress)
        response, ending = _response(progress)
        judge = judge_model()
        result = await score_response(extract_claims(state.metadata.get("claims")), response,
                                      judge)
        diagnosis = diagnose(progress.messages, ending,
                             enabled_tools=state.metadata.get("enabled_tools") or [],
                             required_servers=state.metadata.get("required_servers") or [],
                             servers=release().template())
        metadata = {**result.model_dump(mode="json"), "judge_model": str(judge),
                    "termination": ending.value, "detail": progress.detail,
                    "failure_modes": diagnosis.model_dump(mode="json"),
                    **release().provenance()}
        if result.coverage is None:
            return Score.unscored(reason="scoring_failed" if result.explanation == NO_CLAIMS
                                  else "grader_failed", answer=response,
                                  explanation=result.explanation, metadata=metadata)
        reason = (None if result.skipped is None else "no_response" if result.skipped == "empty"
                  else ending.value if ending in ERROR_ENDINGS else "error_response")
        passed = "pass" if result.passed else "fail"
        return Score(value=result.coverage, answer=response, reason=reason, metadata=metadata,
                     explanation=f"coverage {result.coverage} ({passed}); {result.explanation}")

    return score
