"""`envfactory demo`: the whole method in miniature, offline, on a CPU.

1. the embedded SmolLM2-135M (`envfactory models prepare smollm2`);
2. a short LoRA SFT of it on our training split with LlamaFactory (`smollm2-lora`: 30
   steps, only the tools each trajectory uses, merged), cached: a second run reuses the
   merged model when the SFT config is unchanged;
3. the base and the tuned model auto-scored on the `demo` suite (`envfactory score`): the
   first `--limit` held-out first turns (`-T turns=first`, interleaved over the four
   held-out environments, one tool-calling step each); eval-set resumes, so a second run
   re-scores nothing;
4. the two compared on the same samples (`first_turn_measures`, `compare`): per model the
   share of first turns that made a tool call, called a tool that exists, called one with
   arguments its environment accepted, called a gold tool, and the mean reward, each with
   a 95% interval; per measure the paired difference (tuned − base, by sample) with its
   95% interval, significant when that interval excludes 0.

The intervals are normal approximations from `harness.metrics.mean_stderr` (mean ± 1.96
standard errors; for the difference, of the per-sample differences: a paired z-test at
the 5% level). With no variation (every sample 0, say) the interval is a single point;
that says "no spread observed", not "certain".

Needs the train stack (LlamaFactory): run it from `.venv-train` (`make demo` does).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel

from envs.errors import ErrorKind
from envs.release_registry import DEMO
from envs.world import World
from harness.metrics import mean_stderr
from harness.trajectory import Trajectory
from training.autoscore import OnProgress, ScoreResult, score_checkpoint
from training.local_models import prepare_smollm2
from training.provenance import read_provenance
from training.reporting import Say, to_stderr
from training.sft import SftConfig, run_sft

__all__ = ["MEASURES", "TRAIN_SPLIT", "Comparison", "compare", "comparison_rows",
           "demo_config", "first_turn_measures", "run_demo", "verdict"]

#: the training side of the held-out suite's split (data read by path, never imported)
TRAIN_SPLIT = Path(__file__).resolve().parents[1] / "tasks" / "envfactory" / "data" / "train.jsonl"

#: what is measured on each first turn (1/0 per sample, except the reward)
MEASURES = ("made a tool call", "called a tool that exists", "arguments valid",
            "gold tool called", "reward")
#: the normal quantile of a two-sided 95% interval
Z95 = 1.959964


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


def first_turn_measures(log_file: Path) -> dict[str, dict[str, float]]:
    """Sample id -> `MEASURES` for the first user turn of each sample of a held-out
    EnvFactory log. A call "exists" when its name is one of the tools the episode offered
    (the sample's environments' qualified names); its arguments are valid when they were
    decoded and the environment did not reject them as `invalid_arguments` (its schema
    check); a gold tool is one the turn's gold calls name. Reward: the score's `reward`."""
    from inspect_ai.log import read_eval_log_samples

    from harness.logs import progress_of

    out = {}
    for sample in read_eval_log_samples(str(log_file), all_samples_required=False):
        gold = Trajectory.model_validate((sample.metadata or {})["trajectory"])
        offered = set(World(gold.environments).tool_names())
        gold_names = {c.qualified_name for c in gold.turns[0].gold_calls}
        messages = progress_of(sample).messages
        kinds = {m.tool_call_id: m.error_kind for m in messages if m.role == "tool"}
        calls = [c for m in messages if m.role == "assistant" and m.turn == 0
                 for c in m.tool_calls or []]
        existing = [c for c in calls if c.name in offered]
        valid = [c for c in existing if c.parse_error is None
                 and kinds.get(c.id) is not ErrorKind.INVALID_ARGUMENTS]
        score = next(iter((sample.scores or {}).values()))
        value = score.value
        reward = float(value["reward"]) if isinstance(value, dict) else 0.0
        out[str(sample.id)] = dict(zip(MEASURES, (
            float(bool(calls)), float(bool(existing)), float(bool(valid)),
            float(any(c.name in gold_names for c in calls)), reward), strict=True))
    return out


def _interval(values: Sequence[float], low: float, high: float) -> tuple[float, float, float]:
    """Mean and normal 95% interval of `values`, clipped to the range [`low`, `high`]."""
    mean, se = mean_stderr(values)
    return mean, max(low, mean - Z95 * se), min(high, mean + Z95 * se)


class Comparison(BaseModel):
    """One measure, base against tuned on the same samples."""

    measure: str
    n: int
    base: tuple[float, float, float]
    """Mean, 95% interval low and high."""
    tuned: tuple[float, float, float]
    difference: tuple[float, float, float]
    """tuned − base per sample: mean and its 95% interval."""

    @property
    def significant(self) -> bool:
        """The paired difference's 95% interval excludes 0."""
        _, low, high = self.difference
        return low > 0 or high < 0


def compare(base: dict[str, dict[str, float]],
            tuned: dict[str, dict[str, float]]) -> list[Comparison]:
    """Each measure on the samples both models ran, paired by sample id."""
    ids = sorted(set(base) & set(tuned))
    if not ids:
        raise ValueError("the two models have no scored sample in common")
    out = []
    for measure in MEASURES:
        b = [base[i][measure] for i in ids]
        t = [tuned[i][measure] for i in ids]
        out.append(Comparison(measure=measure, n=len(ids), base=_interval(b, 0.0, 1.0),
                              tuned=_interval(t, 0.0, 1.0),
                              difference=_interval([y - x for x, y in zip(b, t, strict=True)],
                                                   -1.0, 1.0)))
    return out


def _cell(estimate: tuple[float, float, float], sign: bool = False) -> str:
    mean, low, high = estimate
    return f"{mean:+.2f} [{low:+.2f}, {high:+.2f}]" if sign else (
        f"{mean:.2f} [{low:.2f}, {high:.2f}]")


def comparison_rows(comparisons: Sequence[Comparison]) -> list[tuple[str, str, str, str, str]]:
    """The demo's table: (measure, base, tuned, tuned − base, significant?), each figure
    a mean with its 95% interval."""
    return [(c.measure, _cell(c.base), _cell(c.tuned), _cell(c.difference, sign=True),
             "yes" if c.significant else "no") for c in comparisons]


def verdict(comparisons: Sequence[Comparison]) -> list[str]:
    """One line per outcome: where the tuned model is significantly better, where it is
    not better (no significant difference, or worse)."""
    better = [c.measure for c in comparisons if c.significant and c.difference[0] > 0]
    worse = [c.measure for c in comparisons if c.significant and c.difference[0] < 0]
    same = [c.measure for c in comparisons if not c.significant]
    n = comparisons[0].n if comparisons else 0
    lines = []
    if better:
        lines.append(f"tuned beats base ({n} paired first turns, 95%): {', '.join(better)}")
    if same:
        lines.append(f"tuned does not beat base (no significant difference): {', '.join(same)}")
    if worse:
        lines.append(f"tuned is worse than base: {', '.join(worse)}")
    return lines


def _measures(result: ScoreResult) -> dict[str, dict[str, float]]:
    [score] = [t for t in result.tasks if t.task.endswith("@envfactory")]
    if result.log_dir is None or score.log is None:
        raise RuntimeError(f"{result.checkpoint}: no held-out log to measure "
                           f"({result.message or score.status})")
    return first_turn_measures(Path(result.log_dir) / score.log)


def run_demo(cache: Path | None = None, *, limit: int = 24, max_tokens: int = 64,
             say: Say = to_stderr, on_progress: OnProgress | None = None,
             on_result: Callable[[ScoreResult], None] | None = None,
             ) -> tuple[ScoreResult, ScoreResult, list[Comparison]]:
    """Train (or reuse) the tuned SmolLM2, score base and tuned on `limit` held-out first
    turns, compare them; see above. `say` hears each step, `on_progress(stage, done,
    total)` the SFT steps and each scored task's samples as they finish, `on_result` each
    scoring; `comparison_rows` and `verdict` of the comparisons are what `envfactory demo`
    prints."""
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
    return before, after, compare(_measures(before), _measures(after))
