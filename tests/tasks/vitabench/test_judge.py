"""The sliding-window rubric judge (`tasks._vitabench.judge`) against hand-checked
mechanics and against the official code's recordings.

Fixtures `tests/data/vitabench/official/judge_<set>_<lang>.json` were recorded by running
upstream 96f3b85's `TrajectoryEvaluator.calculate_reward` with its HTTP call monkeypatched
(/work/vita-compare/judge_record.py, json_repair 0.64.6): the conversation, the scripted
replies, every request it sent (system and user prompt, temperature) and its result. They
hold the judge's view of the task (time, instructions, rubrics), so most checks run without
the release; those that need the real prompt template skip without the shared data.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import GenerateConfig

from harness.judge import JudgeNotSetError
from harness.trajectory import Message
from tasks._vitabench.judge import (
    JSON_REPAIR_VERSION,
    PREMATURE,
    JudgeResult,
    judge_conversation,
    rubrics,
    windows,
)
from testkit.scripted import ScriptedModel, answers
from tests.shared_data import VITABENCH_DATA, needs_vitabench

OFFICIAL = Path(__file__).parents[2] / "data" / "vitabench" / "official"
FIXTURES = ["judge_delivery_zh.json", "judge_delivery_en.json", "judge_instore_en.json"]
#: our own stand-in for the release's template: shows what the judge fills in
TEMPLATE = {"chinese": "ZH {env_info} | {user_instruction} | {window_idx}/{total_windows}",
            "english": "EN {env_info} | {user_instruction} | {window_idx}/{total_windows}"}


@pytest.fixture
def template_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "sliding_window_eval_template.yaml").write_text(
        json.dumps(TEMPLATE), encoding="utf-8")
    monkeypatch.setenv("VITABENCH_DATA_DIR", str(tmp_path))
    return tmp_path


def official(name: str) -> dict[str, Any]:
    return json.loads((OFFICIAL / name).read_text(encoding="utf-8"))


def task(*state_rubrics: list[str], overall: list[str] | None = None,
         time: str = "2025-11-01 13:57:55") -> dict[str, Any]:
    return {"id": "t1", "environment": {"time": time}, "instructions": "Order mochi.",
            "evaluation_criteria": {
                "expected_states": [{"state_rubrics": r} for r in state_rubrics],
                "overall_rubrics": overall or []}}


def chat(n: int) -> list[Message]:
    return [Message(role="assistant" if i % 2 == 0 else "user", content=f"m{i + 1}")
            for i in range(n)]


def verdicts(*pairs: tuple[int, Any]) -> str:
    return json.dumps([{"rubric_idx": f"rubric_{i}", "rubric": "r",
                        "justification": f"j{i}={met}", "meetExpectation": met}
                       for i, met in pairs])


def judge(messages: list[Message], the_task: dict[str, Any], scripted: ScriptedModel,
          termination: str = "agent_stop", language: str = "en") -> JudgeResult:
    return asyncio.run(judge_conversation(messages, the_task, language,  # type: ignore[arg-type]
                                          scripted.model, termination))


def labels(prompt: str) -> list[int]:
    return [int(i) for i in re.findall(r"^\[(\d+)\] ", prompt, re.MULTILINE)]


def current(prompt: str) -> list[dict[str, Any]]:
    return json.loads(prompt.split("<current_rubrics>\n")[1].split("\n</current_rubrics>")[0])


# --- windows ----------------------------------------------------------------------------

WINDOWS = {  # 1-based inclusive (first, last) of each window: stride 8, size 10
    9: [(1, 9)],
    10: [(1, 10)],
    11: [(1, 10), (9, 11)],
    18: [(1, 10), (9, 18)],
    50: [(1, 10), (9, 18), (17, 26), (25, 34), (33, 42), (41, 50)],
}


@pytest.mark.parametrize("n", sorted(WINDOWS))
def test_window_boundaries_and_global_indices(n: int, template_dir: Path) -> None:
    expected = WINDOWS[n]
    scripted = answers(*["[]"] * len(expected))
    result = judge(chat(n), task(["a"]), scripted)
    assert [(w.start, w.end) for w in result.windows] == expected
    assert [w.index for w in result.windows] == list(range(1, len(expected) + 1))
    assert [labels(p) for p in scripted.prompts] == [
        list(range(first, last + 1)) for first, last in expected]
    assert [m[0].text.rsplit(" | ", 1)[1] for m in (r.messages for r in scripted.requests)] == [
        f"{i}/{len(expected)}" for i in range(1, len(expected) + 1)]
    assert windows(n) == [(first - 1, last) for first, last in expected]


@pytest.mark.parametrize("n", sorted(WINDOWS))
def test_window_prompts_equal_official(n: int, template_dir: Path) -> None:
    record = official("judge_delivery_zh.json")
    scripted = answers(*["[]"] * len(WINDOWS[n]))
    judge(chat(n), record["task"], scripted, language="zh")
    assert scripted.prompts == record["window_user_prompts"][str(n)]


def test_empty_text_keeps_its_index_and_slot(template_dir: Path) -> None:
    messages = chat(11)
    messages[2] = Message(role="assistant", content="")
    messages[9] = Message(role="user", content=None)
    scripted = answers("[]", "[]")
    judge(messages, task(["a"]), scripted)
    assert [labels(p) for p in scripted.prompts] == [
        [1, 2, 4, 5, 6, 7, 8, 9], [9, 11]]


def test_system_messages_are_not_part_of_the_trajectory(template_dir: Path) -> None:
    scripted = answers("[]")
    judge([Message(role="system", content="sys"), *chat(3)], task(["a"]), scripted)
    assert "sys" not in scripted.prompts[0]
    assert labels(scripted.prompts[0]) == [1, 2, 3]


# --- states across windows --------------------------------------------------------------

def test_carry_over_and_overturn(template_dir: Path) -> None:
    scripted = answers(verdicts((0, True), (1, True)), verdicts((1, False)))
    result = judge(chat(11), task(["a", "b"], overall=["c"]), scripted)
    # window 2 is shown window 1's verdicts
    assert [(r["rubric_idx"], r["meetExpectation"], r["justification"])
            for r in current(scripted.prompts[1])] == [
        ("rubric_0", True, "j0=True"), ("rubric_1", True, "j1=True"),
        ("rubric_2", False, "Not evaluated yet")]
    assert [(r.rubric, r.met, r.justification) for r in result.rubrics] == [
        ("a", True, "j0=True"), ("b", False, "j1=False"), ("c", False, "Not evaluated yet")]
    assert result.reward == 0.0
    assert result.met_fraction == pytest.approx(1 / 3)
    assert [(w.reply_parsed, w.applied) for w in result.windows] == [(True, 2), (True, 1)]


def test_reward_one_when_every_rubric_is_met(template_dir: Path) -> None:
    scripted = answers(verdicts((0, True)), verdicts((1, True), (2, "true")))
    result = judge(chat(11), task(["a", "b"], overall=["c"]), scripted)
    assert result.reward == 1.0 and result.met_fraction == 1.0
    assert result.rubrics[2].meet_expectation == "true" and result.rubrics[2].met


def test_meet_expectation_is_copied_verbatim(template_dir: Path) -> None:
    """As upstream: the value is shown back as given; only the final reading is a bool."""
    reply = json.dumps([{"rubric_idx": "rubric_0", "justification": "x",
                         "meetExpectation": "true"},
                        {"rubric_idx": "rubric_1", "justification": "y",
                         "meetExpectation": "maybe"},
                        {"rubric_idx": "rubric_2", "justification": "no verdict"}])
    scripted = answers(reply, "[]")
    result = judge(chat(11), task(["a", "b", "c"]), scripted)
    assert [r["meetExpectation"] for r in current(scripted.prompts[1])] == [
        "true", "maybe", False]
    assert [r.met for r in result.rubrics] == [True, False, False]
    assert result.rubrics[2].justification == "no verdict"


UNPARSEABLE = [
    "I cannot decide.",              # json_repair -> "" (upstream: json.loads raises)
    "",
    "[]",                            # upstream's "failed to parse, keeping current states"
    "{}",
    "null",
    '{"rubric_idx": "rubric_0", "meetExpectation": true}',   # an object, not a list
]


@pytest.mark.parametrize("reply", UNPARSEABLE)
def test_unparseable_reply_keeps_states(reply: str, template_dir: Path) -> None:
    scripted = answers(verdicts((0, True)), reply)
    result = judge(chat(11), task(["a", "b"]), scripted)
    assert [(r.met, r.justification) for r in result.rubrics] == [
        (True, "j0=True"), (False, "Not evaluated yet")]
    assert [w.reply_parsed for w in result.windows] == [True, False]
    assert result.windows[1].reply == reply


def test_odd_entries_are_skipped(template_dir: Path) -> None:
    """Entries that are not objects, name no known rubric, or (json_repair 0.64.6 on a
    truncated reply) a list of lists: upstream raises on some; nothing is applied."""
    replies = ['["a", 1, {"rubric_idx": 0, "meetExpectation": true}, '
               '{"rubric_idx": "rubric_9", "meetExpectation": true}]',
               'Sure: [{"rubric_idx": "rubric_0", "justification": "ok", '
               '"meetExpectation": true}] +] [w5']
    scripted = answers(*replies)
    result = judge(chat(11), task(["a"]), scripted)
    assert [(w.reply_parsed, w.applied) for w in result.windows] == [(True, 0), (True, 0)]
    assert result.rubrics[0].met is False


def test_truncated_reply_overwrites_the_justification_only(template_dir: Path) -> None:
    """json_repair 0.64.6 repairs a reply cut inside a key to [{"rubric_idx": ...}]: the
    justification becomes upstream's default, the state stays."""
    scripted = answers(verdicts((0, True)),
                             '```json\n[{"rubric_idx": "rubric_0", "meetEx')
    result = judge(chat(11), task(["a"]), scripted)
    assert (result.rubrics[0].met, result.rubrics[0].justification) == (
        True, "No justification provided")
    assert JSON_REPAIR_VERSION == "0.64.6"


# --- rubrics ----------------------------------------------------------------------------

def test_rubrics_deduplicated_by_exact_string_states_first() -> None:
    assert rubrics(task(["a", "b"], ["b", "c", "a "], overall=["d", "a", "c"])) == [
        "a", "b", "c", "a ", "d"]
    assert rubrics({"evaluation_criteria": {"expected_states": [{"state_rubrics": None}],
                                            "overall_rubrics": ["x"]}}) == ["x"]


def test_english_duplicate_translation_quirk_fixtures() -> None:
    """Task 10721002: the Chinese copies of each rubric are identical strings (10 unique),
    the English ones were translated apart (19 unique)."""
    zh, en = official("judge_delivery_zh.json"), official("judge_delivery_en.json")
    assert [len(rubrics(r["task"])) for r in (zh, en)] == [10, 19]
    for record in (zh, en):
        criteria = record["task"]["evaluation_criteria"]
        listed = sum(len(s["state_rubrics"] or []) for s in criteria["expected_states"])
        assert listed + len(criteria["overall_rubrics"]) == 20


@needs_vitabench
def test_duplicate_translation_quirk_over_the_delivery_sets() -> None:
    def unique(name: str) -> dict[str, int]:
        tasks = json.loads((VITABENCH_DATA / "domains" / "delivery" / name).read_text())
        return {t["id"]: len(rubrics(t)) for t in tasks}

    zh, en = unique("tasks.json"), unique("tasks_en.json")
    assert (zh["10721002"], en["10721002"]) == (10, 19)
    assert round(sum(zh.values()) / 100, 2) == 7.35
    assert round(sum(en.values()) / 100, 2) == 9.31
    assert sum(en[i] > zh[i] for i in zh) == 26


# --- terminations, judge --------------------------------------------------------------

@pytest.mark.parametrize("termination", sorted(PREMATURE))
def test_premature_termination_scores_zero_without_a_judge(termination: str) -> None:
    result = asyncio.run(judge_conversation(chat(5), task(["a"]), "en", None, termination))
    assert (result.reward, result.met_fraction, result.windows) == (0.0, None, [])
    assert result.note is not None and termination in result.note


def test_unknown_termination_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown termination 'finished'"):
        asyncio.run(judge_conversation(chat(5), task(["a"]), "en", None, "finished"))


def test_judged_run_without_a_judge_fails_clearly(template_dir: Path) -> None:
    with pytest.raises(JudgeNotSetError, match="--model-role judge="):
        asyncio.run(judge_conversation(chat(5), task(["a"]), "en", None, "user_stop"))


def test_no_rubrics_reward_one_without_a_call() -> None:
    no_criteria = {"id": "t", "environment": {}, "instructions": "x",
                   "evaluation_criteria": {"expected_states": [], "overall_rubrics": []}}
    result = asyncio.run(judge_conversation(chat(3), no_criteria, "en", None, "agent_stop"))
    assert (result.reward, result.windows) == (1.0, [])


def test_judge_sampling_is_upstreams(template_dir: Path) -> None:
    scripted = answers("[]")
    judge(chat(3), task(["a"]), scripted)
    assert scripted.requests[0].config.temperature == 0.0
    assert [m.role for m in scripted.requests[0].messages] == ["system", "user"]


def test_a_temperature_set_on_the_judge_wins(template_dir: Path) -> None:
    scripted = answers("[]", config=GenerateConfig(temperature=0.7))
    asyncio.run(judge_conversation(chat(3), task(["a"]), "en", scripted.model, "user_stop"))
    assert scripted.requests[0].config.temperature == 0.7


# --- against the official code --------------------------------------------------------

def fixture_messages(record: dict[str, Any]) -> list[Message]:
    return [Message.model_validate(m) for m in record["messages"]]


@pytest.mark.parametrize("name", FIXTURES)
def test_states_and_window_prompts_equal_official(name: str, template_dir: Path) -> None:
    """User prompts (window text, carried-over states) and the result, template aside."""
    record = official(name)
    scripted = answers(*record["replies"])
    result = judge(fixture_messages(record), record["task"], scripted,
                   record["termination_reason"], record["language"])
    assert scripted.prompts == [r["user"] for r in record["requests"]]
    assert result.reward == record["reward"]
    assert result.met_fraction == pytest.approx(record["met_fraction"])
    assert [{"nl_rubric": r.rubric, "met": r.met, "justification": r.justification}
            for r in result.rubrics] == record["nl_rubrics"]
    assert [r.config.temperature for r in scripted.requests] == [
        r["temperature"] for r in record["requests"]]


@needs_vitabench
@pytest.mark.parametrize("name", FIXTURES)
def test_window_system_prompts_equal_official(name: str, use_vitabench_data: Path) -> None:
    """The release's template, filled as upstream fills it, character for character; the
    fixture's task view is the release's task."""
    record = official(name)
    path = {"delivery": "delivery", "instore": "instore"}[record["set"]]
    file = "tasks.json" if record["language"] == "zh" else "tasks_en.json"
    tasks = json.loads((VITABENCH_DATA / "domains" / path / file).read_text(encoding="utf-8"))
    [full] = [t for t in tasks if t["id"] == record["task"]["id"]]
    assert rubrics(full) == rubrics(record["task"])
    scripted = answers(*record["replies"])
    result = judge(fixture_messages(record), full, scripted, record["termination_reason"],
                   record["language"])
    assert [(m[0].text, m[1].text) for m in (r.messages for r in scripted.requests)] == [
        (r["system"], r["user"]) for r in record["requests"]]
    assert result.reward == record["reward"]


# --- odd replies, against the official code -------------------------------------------

REPLIES = official("judge_replies.json")
#: where upstream raises on the reply itself (json.loads of "", `.get` on a non-object,
#: an unhashable rubric_idx): here the states stay as window 1 left them
KEPT = {"prose", "empty", "object not list", "string entries", "list rubric_idx",
        "list of lists"}
#: where upstream's final `NLRubricCheck` refuses the verbatim values: here an unreadable
#: verdict is unmet and a null justification is kept
UNREADABLE = {"truncated in value": (False, "ok"), "maybe string": (False, "j"),
              "null verdict": (False, "j"), "null justification": (True, None)}


@pytest.mark.parametrize("case", REPLIES["cases"], ids=lambda c: c["name"])
def test_odd_replies_as_official(case: dict[str, Any], template_dir: Path) -> None:
    scripted = answers(*case["replies"])
    result = judge([Message.model_validate(m) for m in REPLIES["messages"]],
                   REPLIES["task"], scripted)
    got = [{"nl_rubric": r.rubric, "met": r.met, "justification": r.justification}
           for r in result.rubrics]
    name, expected = case["name"], case["official"]
    if "raises" not in expected:
        assert (result.reward, result.met_fraction, got) == (
            expected["reward"], pytest.approx(expected["met_fraction"]),
            expected["nl_rubrics"])
    elif name in KEPT:
        [kept] = [c["official"] for c in REPLIES["cases"] if c["name"] == "empty list"]
        assert got == kept["nl_rubrics"]
        assert result.windows[1].applied == 0
    else:
        assert (got[1]["met"], got[1]["justification"]) == UNREADABLE[name]
        assert got[0]["met"] and not any(r["met"] for r in got[2:])
    assert set(KEPT) | set(UNREADABLE) == {
        c["name"] for c in REPLIES["cases"] if "raises" in c["official"]}
