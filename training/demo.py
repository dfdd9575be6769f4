"""`envfactory demo`: the whole method in miniature, offline, on a CPU.

1. the embedded SmolLM2-135M (`envfactory models prepare smollm2`);
2. a short LoRA SFT of it on our training split with LlamaFactory (`smollm2-lora`: 30
   steps, only the tools each trajectory uses, merged), cached: a second run reuses the
   merged model when the SFT config is unchanged;
3. the base and the tuned model auto-scored on the `demo` suite (`envfactory score`): the
   first held-out EnvFactory task (at most 3 tool-calling steps a user turn) and the first
   `--limit` BFCL single-turn `simple` entries; eval-set resumes, so a second run re-scores
   nothing;
4. the two side by side: each task's score, and how often the model called a tool at all
   (the first thing SFT teaches a 135M model; the scores of so small a model stay near 0).

Needs the train stack (LlamaFactory): run it from `.venv-train` (`make demo` does).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from envs.release_registry import DEMO
from training.autoscore import OnProgress, ScoreResult, score_checkpoint
from training.local_models import prepare_smollm2
from training.provenance import read_provenance
from training.reporting import Say, to_stderr
from training.sft import SftConfig, run_sft

__all__ = ["TRAIN_SPLIT", "comparison_rows", "demo_config", "run_demo", "tool_call_figures"]

#: the training side of the held-out suite's split (data read by path, never imported)
TRAIN_SPLIT = Path(__file__).resolve().parents[1] / "tasks" / "envfactory" / "data" / "train.jsonl"


def demo_config(cache: Path) -> SftConfig:
    return SftConfig(preset="smollm2-lora", model="smollm2", data=[TRAIN_SPLIT],
                     output_dir=cache / "sft-smollm2-lora", tools="used", merge=True,
                     run_id="demo-smollm2-lora")


def _cached(config: SftConfig) -> Path | None:
    """The merged model of an earlier run of exactly this config, if there is one."""
    merged = config.output_dir / "merged"
    recorded = config.output_dir / "envfactory_sft.json"
    if read_provenance(merged) is None or not recorded.is_file():
        return None
    same = json.loads(recorded.read_text(encoding="utf-8")) == json.loads(
        config.model_dump_json())
    return merged if same else None


def tool_call_figures(log_file: Path) -> tuple[int, int, int]:
    """(samples with at least one tool call, samples, tool calls) in one eval log; a call
    whose arguments did not parse counts as a call (the model tried)."""
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import ChatMessageAssistant

    log = read_eval_log(str(log_file))
    calling = calls = 0
    for sample in log.samples or []:
        made = sum(len(m.tool_calls or []) for m in sample.messages
                   if isinstance(m, ChatMessageAssistant))
        calls += made
        calling += made > 0
    return calling, len(log.samples or []), calls


def _calls_cell(result: ScoreResult, task: str) -> str:
    score = next(t for t in result.tasks if t.task == task)
    if result.log_dir is None or score.log is None:
        return "-"
    calling, samples, calls = tool_call_figures(Path(result.log_dir) / score.log)
    return f"{calling}/{samples} samples, {calls} calls"


def comparison_rows(before: ScoreResult, after: ScoreResult) -> list[tuple[str, str, str, str]]:
    """The demo's side-by-side table, a row per (task, metric) plus how often each model
    made tool calls: (task, metric, base, tuned)."""
    rows = []
    for b, a in zip(before.tasks, after.tasks, strict=True):
        name = b.task.rsplit("@", 1)[-1]
        for metric in sorted(set(b.headline) | set(a.headline)):
            rows.append((name, metric, f"{b.headline.get(metric, float('nan')):.3f}",
                         f"{a.headline.get(metric, float('nan')):.3f}"))
        rows.append((name, "made tool calls", _calls_cell(before, b.task),
                     _calls_cell(after, a.task)))
    return rows


def run_demo(cache: Path | None = None, *, limit: int = 5, max_tokens: int = 64,
             say: Say = to_stderr, on_progress: OnProgress | None = None,
             on_result: Callable[[ScoreResult], None] | None = None,
             ) -> tuple[ScoreResult, ScoreResult]:
    """Train (or reuse) the tuned SmolLM2, score base and tuned; see above. `say` hears
    each step, `on_progress(stage, done, total)` the SFT steps and each scored task's
    samples as they finish, `on_result` each scoring; `comparison_rows` of the two results
    is the table `envfactory demo` prints."""
    cache = (cache or DEMO.path()).expanduser().resolve()
    base = prepare_smollm2(say=say)
    config = demo_config(cache)
    tuned = _cached(config)
    if tuned is None:
        say("LoRA SFT of SmolLM2 on the training split (LlamaFactory)")
        result = run_sft(config, on_progress)
        assert result.merged is not None  # merge: true
        tuned = result.merged
        say(f"SFT: {result.steps} steps in {result.wall_s:.0f} s, loss "
            f"{result.first_loss:.3f} -> {result.last_loss:.3f}")
    else:
        say(f"reusing the tuned model in {tuned}")
    scores = []
    for name, model in (("base", base), ("tuned", tuned)):
        say(f"scoring the {name} model")
        scores.append(score_checkpoint(model, suite="demo", limit=limit,
                                       max_tokens=max_tokens, log_root=cache / "scores",
                                       say=say, on_progress=on_progress,
                                       on_result=on_result))
    before, after = scores
    return before, after
