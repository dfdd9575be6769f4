"""The GPU path end to end on one GPU: `python -m training.gpu.smoke --out DIR` in
`.venv-gpu` (`make install-gpu`; `make gpu-smoke` runs it).

Stages, each a real command run with its output in its own log under DIR:

1. `model`: `envfactory models prepare smollm2 --out-dir DIR/model/smollm2` (the packaged
   SmolLM2-135M-Instruct, no Hub access; `--model PATH` scores and trains a local HF
   directory instead, e.g. `make demo`'s tuned model, and skips this stage). GRPO's
   prompts are capped so that prompt + response fit the model's context (SmolLM2: 8,192
   tokens, so 6,144 + 2,048; verl left-truncates longer prompts);
2. `score`: `envfactory score run MODEL --suite quick --serve vllm --json`: vLLM serves the
   checkpoint and Inspect scores the quick suite against it (results in DIR/scores);
3. `export`: `envfactory train export` of the shipped training split (DIR/export);
4. `grpo`: `envfactory train grpo DIR/grpo.yaml`: the `gpu-smoke` preset (2 GRPO steps,
   our tools and the release's reward) on that export, verl's per-step metrics written by
   its file logger to DIR/grpo/metrics.jsonl.

Then DIR/summary.json holds the figures (per stage: exit status and wall time; the scored
checkpoint's per-task results and Inspect's token counts as tokens/s; per GRPO step the
reward, seconds, steps/s and verl's tokens/s), and the last line printed is that JSON.
A stage that fails is recorded and the later stages still run where they can (GRPO does
not need the score); the exit status is 1 unless every stage succeeded.

`--dry-run` prints the plan (every stage's argv and environment) as JSON and runs nothing:
the CPU tests check it, run the real export and `envfactory train grpo --dry-run` on the
written config, and compose it with verl's Hydra config.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

from training.autoscore.processes import stop_process_group
from training.reporting import Say, to_stderr

__all__ = ["SmokeOptions", "Stage", "grpo_config", "grpo_figures", "main", "plan",
           "score_figures", "summarize"]

ROOT = Path(__file__).resolve().parents[2]
TRAIN_SPLIT = ROOT / "tasks" / "envfactory" / "data" / "train.jsonl"
PRESET = "gpu-smoke"
#: SmolLM2-135M-Instruct's max_position_embeddings (its config.json), known before the
#: `model` stage has prepared it
SMOLLM2_CONTEXT = 8192


class SmokeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    out: Path
    #: `smollm2` (prepared by the run) or a local HF model directory
    model: str = "smollm2"
    #: samples per task of the quick suite
    limit: int = 5
    data: Path = TRAIN_SPLIT
    #: vLLM's share of GPU memory while scoring
    gpu_memory_utilization: float = 0.5
    #: per stage, seconds
    timeout_s: float = 3600.0

    def model_dir(self) -> Path:
        if self.model == "smollm2":
            return (self.out / "model" / self.model).resolve()
        return Path(self.model).expanduser().resolve()


class Stage(BaseModel):
    """One command of the run: its argv, the environment it adds, where its output goes."""

    name: str
    argv: list[str]
    env: dict[str, str] = {}
    #: stdout is kept apart (the score's --json) when set
    stdout: str | None = None
    log: str


def _preset_lengths() -> tuple[int, int]:
    """The preset's data.max_prompt_length and data.max_response_length."""
    from training.grpo import preset_overrides

    values = dict(o.split("=", 1) for o in preset_overrides(PRESET) if "=" in o)
    return int(values["data.max_prompt_length"]), int(values["data.max_response_length"])


def prompt_cap(opts: SmokeOptions) -> int | None:
    """GRPO's data.max_prompt_length when the preset's prompt + response exceed the
    model's context (vLLM's max_model_len); None when they fit or the context is unknown."""
    context: int | None = SMOLLM2_CONTEXT if opts.model == "smollm2" else None
    config = opts.model_dir() / "config.json"
    if context is None and config.is_file():
        context = json.loads(config.read_text(encoding="utf-8")).get("max_position_embeddings")
    prompt, response = _preset_lengths()
    if context is None or prompt + response <= context:
        return None
    if context - response < 1024:
        raise ValueError(f"{config}: a context of {context} tokens leaves under 1,024 prompt "
                         f"tokens beside the {PRESET} preset's {response}-token responses")
    return int(context - response)


def _envfactory() -> list[str]:
    """This environment's `envfactory` (the venv running this script)."""
    exe = Path(sys.executable).parent / "envfactory"
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "envfactory.cli"]


def grpo_config(opts: SmokeOptions) -> dict[str, Any]:
    """The `envfactory train grpo` config (training/grpo.py's GrpoConfig), absolute paths."""
    out = opts.out.resolve()
    overrides = ["trainer.logger=[console,file]"]
    cap = prompt_cap(opts)
    if cap is not None:
        overrides.append(f"data.max_prompt_length={cap}")
    return {"preset": PRESET, "model": str(opts.model_dir()),
            "data": str(out / "export"), "output_dir": str(out / "grpo"),
            "run_id": "gpu-smoke", "overrides": overrides}


def plan(opts: SmokeOptions) -> list[Stage]:
    """Every stage in order (the `model` stage only for `smollm2`)."""
    out = opts.out.resolve()
    cli = _envfactory()
    offline = {"HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    stages = []
    if opts.model == "smollm2":
        stages.append(Stage(name="model", log="model.log", env=offline,
                            argv=[*cli, "models", "prepare", opts.model,
                                  "--out-dir", str(opts.model_dir())]))
    stages += [
        Stage(name="score", log="score.log", stdout="score.json", env=offline,
              argv=[*cli, "score", "run", str(opts.model_dir()), "--suite", "quick",
                    "--serve", "vllm", "--limit", str(opts.limit),
                    "--log-dir", str(out / "scores"), "--json",
                    f"--vllm-arg=--gpu-memory-utilization={opts.gpu_memory_utilization}"]),
        Stage(name="export", log="export.log", env=offline,
              argv=[*cli, "train", "export", str(opts.data.resolve()),
                    "--out-dir", str(out / "export"), "--overwrite"]),
        Stage(name="grpo", log="grpo.log",
              env={**offline, "VERL_FILE_LOGGER_PATH": str(out / "grpo" / "metrics.jsonl")},
              argv=[*cli, "train", "grpo", str(out / "grpo.yaml")]),
    ]
    return stages


def _run(stage: Stage, out: Path, timeout_s: float, say: Say) -> dict[str, Any]:
    """Run one stage to its end (or its timeout), output to its log; its record."""
    log = (out / stage.log).open("w", encoding="utf-8")
    stdout = (out / stage.stdout).open("w", encoding="utf-8") if stage.stdout else log
    say(f"[{stage.name}] {' '.join(stage.argv)}  (log: {out / stage.log})")
    start = time.monotonic()
    with log, stdout:
        proc = subprocess.Popen(stage.argv, cwd=ROOT, env={**os.environ, **stage.env},
                                stdin=subprocess.DEVNULL, stdout=stdout, stderr=log,
                                start_new_session=True)
        timed_out = False
        while proc.poll() is None:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                elapsed = time.monotonic() - start
                if elapsed > timeout_s:
                    timed_out = True
                    stop_process_group(proc)
                    break
                say(f"[{stage.name}] running, {elapsed:.0f} s")
    seconds = time.monotonic() - start
    code = proc.returncode
    say(f"[{stage.name}] exit {code} after {seconds:.0f} s" + (" (timed out)" if timed_out else ""))
    return {"returncode": code, "seconds": round(seconds, 1), "timed_out": timed_out,
            "log": stage.log, **({"stdout": stage.stdout} if stage.stdout else {})}


def grpo_figures(metrics: Path) -> dict[str, Any]:
    """Per step, from verl's file logger (one `{"step", "data"}` object a line): the
    reward (`critic/score/mean`), the step's seconds (`perf/time_per_step`) and steps/s,
    verl's tokens/s per GPU (`perf/throughput`) and tokens (`perf/total_num_tokens`)."""
    if not metrics.is_file():
        return {"steps": [], "error": f"{metrics} was not written"}
    steps = []
    for line in metrics.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        data = record["data"]
        seconds = data.get("perf/time_per_step")
        steps.append({
            "step": record["step"],
            "reward_mean": data.get("critic/score/mean"),
            "seconds": seconds,
            "steps_per_s": 1.0 / seconds if seconds else None,
            "tokens_per_s": data.get("perf/throughput"),
            "tokens": data.get("perf/total_num_tokens"),
            "response_length_mean": data.get("response_length/mean"),
        })
    timed = [s["seconds"] for s in steps if s["seconds"]]
    return {"steps": steps,
            "steps_per_s": len(timed) / sum(timed) if timed else None,
            "reward_per_step": [s["reward_mean"] for s in steps]}


def _log_tokens(path: Path) -> dict[str, Any]:
    """One Inspect log's model tokens and wall time (its header only)."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path), header_only=True)
    usage = log.stats.model_usage.values()
    output = sum(u.output_tokens for u in usage)
    seconds = (datetime.fromisoformat(log.stats.completed_at)
               - datetime.fromisoformat(log.stats.started_at)).total_seconds()
    return {"input_tokens": sum(u.input_tokens for u in usage), "output_tokens": output,
            "eval_seconds": seconds,
            "output_tokens_per_s": output / seconds if seconds > 0 else None}


def score_figures(result_json: Path) -> dict[str, Any]:
    """The scored checkpoint's results (`score run --json`): per task its status, samples,
    headline metrics and, from its Inspect log, tokens and output tokens/s."""
    text = result_json.read_text(encoding="utf-8") if result_json.is_file() else ""
    if not text.strip():
        return {"error": f"{result_json} is empty: the score did not finish"}
    result = json.loads(text)
    log_dir = Path(result["log_dir"]) if result.get("log_dir") else None
    tasks = []
    for task in result["tasks"]:
        row = {key: task.get(key) for key in ("task", "status", "samples", "headline",
                                              "seconds", "reason")}
        if log_dir is not None and task.get("log") and (log_dir / task["log"]).is_file():
            row.update(_log_tokens(log_dir / task["log"]))
        tasks.append(row)
    output = sum(t.get("output_tokens") or 0 for t in tasks)
    seconds = sum(t.get("eval_seconds") or 0.0 for t in tasks)
    return {"checkpoint": result["checkpoint"], "status": result["status"],
            "model": result.get("model"), "suite": result["suite"],
            "serve": result["serve"], "limit": result.get("limit"),
            "seconds": result.get("seconds"), "tasks": tasks,
            "output_tokens_per_s": output / seconds if seconds > 0 else None}


def summarize(opts: SmokeOptions, stages: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out = opts.out.resolve()
    summary: dict[str, Any] = {"out": str(out), "model": str(opts.model_dir()),
                               "stages": stages,
                               "ok": all(s["returncode"] == 0 for s in stages.values())}
    if "score" in stages:
        summary["score"] = score_figures(out / "score.json")
    if "grpo" in stages:
        grpo = grpo_figures(out / "grpo" / "metrics.jsonl")
        wall = stages["grpo"]["seconds"]
        grpo["wall_s"] = wall
        grpo["steps_per_s_with_startup"] = len(grpo["steps"]) / wall if wall else None
        summary["grpo"] = grpo
    return _finite(summary)


def _finite(value: Any) -> Any:
    """NaN/inf (an empty batch's mean) as null, so the summary is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _preflight() -> str | None:
    """Why this environment cannot run the stages (None: it can)."""
    try:
        import torch
    except ImportError:
        return f"torch is not installed for {sys.executable}: run `make install-gpu`"
    if not torch.cuda.is_available():
        return (f"no CUDA device visible to torch {torch.__version__} ({sys.executable}): "
                "this script needs one GPU and the .venv-gpu stack (`make install-gpu`)")
    import importlib.util

    missing = [m for m in ("vllm", "verl") if importlib.util.find_spec(m) is None]
    if missing:
        return f"{', '.join(missing)} not installed for {sys.executable}: run `make install-gpu`"
    return None


def main(argv: Sequence[str] | None = None, say: Say = to_stderr) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.gpu.smoke",
                                     description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, required=True, help="folder for logs and figures")
    parser.add_argument("--model", default="smollm2",
                        help="smollm2 (prepared here) or an HF model directory")
    parser.add_argument("--limit", type=int, default=5, help="samples per quick-suite task")
    parser.add_argument("--timeout-s", type=float, default=3600.0, help="per stage")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan (argv and environment per stage) and stop")
    args = parser.parse_args(argv)
    opts = SmokeOptions(out=args.out, model=args.model, limit=args.limit,
                        timeout_s=args.timeout_s)
    stages = plan(opts)
    if args.dry_run:
        print(json.dumps({"grpo_config": grpo_config(opts),
                          "stages": [s.model_dump() for s in stages]}, indent=2))
        return 0
    why = _preflight()
    if why:
        say(f"error: {why}")
        return 2
    out = opts.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    (out / "grpo.yaml").write_text(yaml.safe_dump(grpo_config(opts), sort_keys=False),
                                   encoding="utf-8")
    records: dict[str, dict[str, Any]] = {}
    for stage in stages:
        if stage.name in ("score", "grpo") and records.get("model", {}).get("returncode"):
            records[stage.name] = {"returncode": None, "seconds": 0.0, "timed_out": False,
                                   "log": stage.log, "skipped": "the model stage failed"}
            continue
        if stage.name == "grpo" and records["export"]["returncode"] != 0:
            records["grpo"] = {"returncode": None, "seconds": 0.0, "timed_out": False,
                               "log": stage.log, "skipped": "the export stage failed"}
            continue
        records[stage.name] = _run(stage, out, opts.timeout_s, say)
    summary = summarize(opts, records)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    say(f"figures in {out / 'summary.json'}")
    print(json.dumps(summary))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
