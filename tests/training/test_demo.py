"""`envfactory demo`: a tuned model is reused only when it came from exactly the demo's
config; each held-out first turn is measured from its log; base and tuned are compared by
sample with 95% intervals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from training.demo import (
    MEASURES,
    Comparison,
    _cached,
    compare,
    comparison_rows,
    demo_config,
    verdict,
)
from training.provenance import CheckpointProvenance, write_provenance

HELDOUT = Path(__file__).parents[2] / "tasks" / "envfactory" / "data" / "heldout.jsonl"


def test_the_merged_model_is_reused_only_for_the_same_config(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    assert config.preset == "smollm2-lora" and config.merge and config.tools == "used"
    assert _cached(config) is None  # nothing trained yet
    merged = config.output_dir / "merged"
    merged.mkdir(parents=True)
    (config.output_dir / "envfactory_sft.json").write_text(config.model_dump_json())
    assert _cached(config) is None  # no provenance: the merge never finished
    write_provenance(merged, CheckpointProvenance(run_id="demo", method="sft",
                                                  base_model="smollm2", step=30))
    assert _cached(config) == merged
    changed = config.model_copy(update={"overrides": {"max_steps": 60}})
    assert _cached(changed) is None


def test_first_turn_measures_of_a_real_held_out_log(tmp_path: Path) -> None:
    """The demo suite's task (first turns, one step) with a scripted model, one behaviour
    per sample, each sample's measures hand-derived from what it was scripted to do and the
    task file's gold calls (the reward from the log's own scores)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import ModelOutput
    from inspect_ai.tool import ToolCall

    from harness.providers.responder import reply, responder_model
    from tasks.envfactory.envfactory import envfactory
    from training.demo import first_turn_measures

    tasks = {t["id"]: t for t in map(json.loads, HELDOUT.read_text().splitlines())}

    def call(name: str, arguments: dict, error: str | None = None) -> ToolCall:  # type: ignore[type-arg]
        return ToolCall(id=f"c{len(name)}{len(arguments)}", function=name,
                        arguments=arguments, parse_error=error)

    gold = tasks["issue_tracker-001"]["turns"][0]["gold_calls"]
    script = {  # the first five first turns (interleaved by first environment)
        "expense_reports-001": reply("I cannot help with that."),
        "pharmacy-001": reply(calls=[call("pharmacy-teleport", {})]),
        # a gold tool, its required arguments missing: invalid_arguments
        "hotel_booking-001": reply(calls=[call("hotel_booking-find_guest", {})]),
        "issue_tracker-001": reply(calls=[
            ToolCall(id=f"g{i}", function=f"{c['env']}-{c['name']}", arguments=c["arguments"])
            for i, c in enumerate(gold)]),
        "expense_reports-002": reply(calls=[call("expense_reports-add_expense_item", {},
                                                 "bad JSON")]),
    }
    by_text = {tasks[i]["turns"][0]["user"]: out for i, out in script.items()}

    def respond(messages: list) -> ModelOutput:  # type: ignore[type-arg]
        if messages[-1].role == "tool":  # never: one tool-calling step per first turn
            raise AssertionError("asked again after the step limit")
        return by_text[messages[-1].text]

    (log,) = inspect_eval(envfactory(turns="first", max_turn_steps=1),
                          model=responder_model(respond), limit=5, log_dir=str(tmp_path),
                          display="none")
    assert log.status == "success", log.error
    assert log.location is not None
    measures = first_turn_measures(Path(log.location))
    full = read_eval_log(log.location)
    rewards = {str(s.id): next(iter(s.scores.values())).value["reward"]  # type: ignore[union-attr,index]
               for s in full.samples or []}
    assert rewards["issue_tracker-001"] == 1.0  # every gold call of the turn
    expected = {"expense_reports-001": (0, 0, 0, 0), "pharmacy-001": (1, 0, 0, 0),
                "hotel_booking-001": (1, 1, 0, 1), "issue_tracker-001": (1, 1, 1, 1),
                "expense_reports-002": (1, 1, 0, 0)}
    assert measures == {i: dict(zip(MEASURES, (*map(float, e), rewards[i]), strict=True))
                        for i, e in expected.items()}


def test_compare_pairs_by_sample_with_hand_computed_intervals() -> None:
    """Four samples. Tool calls: base 0,0,0,0, tuned 1,1,1,0: difference mean 0.75, sd 0.5,
    se 0.25, interval 0.75 ± 0.49 = [0.26, 1.24] clipped to 1: significant. Tuned's own
    interval: the same numbers, clipped to [0, 1]. Reward: base .5,.5,0,0, tuned
    .5,0,.5,0: differences 0,-.5,.5,0, mean 0: not significant. The other measures are
    0 for both: a point interval, not significant. A sample only one model has is left
    out."""
    def rows(calls: list[float], rewards: list[float]) -> dict[str, dict[str, float]]:
        return {f"s{i}": {**dict.fromkeys(MEASURES, 0.0), MEASURES[0]: c, "reward": r}
                for i, (c, r) in enumerate(zip(calls, rewards, strict=True))}

    base = rows([0, 0, 0, 0], [0.5, 0.5, 0, 0])
    tuned = {**rows([1, 1, 1, 0], [0.5, 0, 0.5, 0]), "extra": dict.fromkeys(MEASURES, 1.0)}
    comparisons = compare(base, tuned)
    assert [c.measure for c in comparisons] == list(MEASURES)
    calls, reward = comparisons[0], comparisons[-1]
    assert calls.n == 4
    assert calls.base == (0.0, 0.0, 0.0)
    assert calls.tuned == pytest.approx((0.75, 0.75 - 1.959964 * 0.25, 1.0))
    assert calls.difference == pytest.approx((0.75, 0.75 - 1.959964 * 0.25, 1.0))
    assert calls.significant and not reward.significant
    assert comparison_rows(comparisons)[0] == (
        "made a tool call", "0.00 [0.00, 0.00]", "0.75 [0.26, 1.00]",
        "+0.75 [+0.26, +1.00]", "yes")
    # each model's rewards: mean .25, sd sqrt(.25/3) = 0.289, se 0.144, ± 0.283 (low
    # clipped to 0); differences 0, -.5, .5, 0: sd sqrt(1/6) = 0.408, se 0.204, ± 0.400
    assert comparison_rows(comparisons)[-1] == (
        "reward", "0.25 [0.00, 0.53]", "0.25 [0.00, 0.53]", "+0.00 [-0.40, +0.40]", "no")
    assert verdict(comparisons) == [
        "tuned beats base (4 paired first turns, 95%): made a tool call",
        "tuned does not beat base (no significant difference): called a tool that exists, "
        "arguments valid, gold tool called, reward"]


def test_a_significantly_worse_tuned_model_is_said_to_be_worse() -> None:
    worse = Comparison(measure="reward", n=3, base=(1.0, 1.0, 1.0), tuned=(0.0, 0.0, 0.0),
                       difference=(-1.0, -1.0, -1.0))
    assert worse.significant
    assert verdict([worse]) == ["tuned is worse than base: reward"]
    with pytest.raises(ValueError, match="no scored sample in common"):
        compare({"a": {}}, {"b": {}})
