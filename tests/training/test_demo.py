"""`envfactory demo` reuses a tuned model only when it came from exactly the demo's config."""

from __future__ import annotations

from pathlib import Path

from training.autoscore.scoring import ScoreResult, TaskScore
from training.demo import _cached, comparison_rows, demo_config
from training.provenance import CheckpointProvenance, write_provenance


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


def test_tool_call_figures_count_samples_that_called_and_every_call(tmp_path: Path) -> None:
    """A real eval log: sample 1 calls twice (one call unparsable), sample 2 answers in
    prose, sample 3 calls once; hand-counted: 2 of 3 samples called, 3 calls."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput
    from inspect_ai.solver import generate
    from inspect_ai.tool import ToolCall

    from harness.providers.responder import reply, responder_model
    from training.demo import tool_call_figures

    def call(name: str, error: str | None = None) -> ToolCall:
        return ToolCall(id=name, function=name, arguments={}, parse_error=error)

    outputs = {"one": reply(calls=[call("a"), call("b", "bad JSON")]), "two": reply("prose"),
               "three": reply(calls=[call("c")])}

    def respond(messages: list) -> ModelOutput:  # type: ignore[type-arg]
        return outputs[messages[-1].text]

    task = Task(dataset=[Sample(input=text, id=text) for text in outputs], solver=generate())
    [log] = eval(task, model=responder_model(respond), log_dir=str(tmp_path),
                 display="none")
    assert log.location is not None
    assert tool_call_figures(Path(log.location)) == (2, 3, 3)


def test_comparison_rows_pair_each_tasks_metrics_and_tool_calls() -> None:
    """The demo's table as rows: a task's metrics side by side (a metric one side lacks is
    nan), then the tool-call figures, "-" where a model has no log."""
    def result(headlines: dict[str, dict[str, float]]) -> ScoreResult:
        return ScoreResult(checkpoint="m", status="scored", suite="demo", serve="hf", limit=1,
                           tasks=[TaskScore(task=f"tasks/x.py@{name}", returncode=0,
                                            seconds=1.0, headline=headline)
                                  for name, headline in headlines.items()])

    before = result({"envfactory": {"overall": 0.0}, "bfcl": {"accuracy": 0.25}})
    after = result({"envfactory": {"overall": 0.5, "turns": 1.0}, "bfcl": {"accuracy": 0.75}})
    assert comparison_rows(before, after) == [
        ("envfactory", "overall", "0.000", "0.500"),
        ("envfactory", "turns", "nan", "1.000"),
        ("envfactory", "made tool calls", "-", "-"),
        ("bfcl", "accuracy", "0.250", "0.750"),
        ("bfcl", "made tool calls", "-", "-")]
