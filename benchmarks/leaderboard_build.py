"""`envfactory leaderboard build` on N synthetic Inspect logs.

    python benchmarks/leaderboard_build.py [--quick] [--logs N] [--samples S] [--no-taxonomy]
        [--keep DIR]

Writes N real `EvalLog`s with `write_eval_log` (.eval files; one (model, task) each, so
that none is superseded and every failure is classified; a tenth of the models are
checkpoints of two training runs; benchmarks BFCL multi-turn / single-turn, τ² airline
with 2 epochs and the EnvFactory held-out task; S samples each, scores drawn per model so
that about half fail, failed samples carrying a text answer or a tool call with an error
result), then times the build: reading headers and sample summaries, the table, the
failure taxonomy (which reads the failed samples' bodies; `--no-taxonomy` leaves it out)
and the outputs (Markdown/CSV/JSON, plots, page). Target: under 10 s for 1,000 logs.
Default 1,000 logs; `--quick` 50.

Prints a table on stderr and ends with one JSON line on stdout.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from inspect_ai.log import (  # noqa: E402
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    write_eval_log,
)
from inspect_ai.model import (  # noqa: E402
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
)
from inspect_ai.scorer import Score  # noqa: E402
from inspect_ai.tool import ToolCall, ToolCallError  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from envs.bfcl.categories import MULTI_TURN_CATEGORIES  # noqa: E402
from leaderboard.build import build  # noqa: E402

BENCHES = ("bfcl_multi_turn", "bfcl_singleturn", "tau2", "envfactory")
CATS = MULTI_TURN_CATEGORIES


def _sample(bench: str, i: int, epoch: int, ok: bool) -> EvalSample:
    if bench == "bfcl_multi_turn":
        sid: str | int = f"multi_turn_{CATS[i % 4]}_{i}"
        score = Score(value="C" if ok else "I",
                      metadata={"error_type": None if ok else
                                "multi_turn:instance_state_mismatch"})
    elif bench == "bfcl_singleturn":
        sid, score = f"simple_{i}", Score(value="C" if ok else "I", metadata={
            "error_type": None if ok else "value_error:others"})
    elif bench == "tau2":
        sid, score = i, Score(value=1.0 if ok else 0.0)
    else:
        sid = f"expense_reports-{i:03d}"
        r = 1.0 if ok else 0.25
        score = Score(value={"reward": r, "r_traj": r, "r_state": r, "p_length": 0.0,
                             "p_format": 0.0})
    messages: list[Any] = [ChatMessageUser(content="do the task")]
    if not ok and i % 2:
        messages += [ChatMessageAssistant(content="", tool_calls=[
            ToolCall(id="c1", function="lookup", arguments={"q": i})]),
            ChatMessageTool(content="", tool_call_id="c1", function="lookup",
                            error=ToolCallError("unknown", "record not found"))]
    messages.append(ChatMessageAssistant(content="done"))
    return EvalSample(id=sid, epoch=epoch, input="do the task", target="",
                      messages=messages, scores={f"{bench}_scorer": score})


def synthetic_log(n: int, samples: int, rng: random.Random) -> EvalLog:
    bench = BENCHES[n % len(BENCHES)]
    # every log its own (model, task): nothing is superseded, every failure is classified
    model_no = n // len(BENCHES)
    meta: dict[str, Any] = {"benchmark": bench}
    model = f"openai/model-{model_no}"
    if model_no % 10 == 9:  # a tenth are checkpoints of two training runs
        run, step = f"run-{model_no % 2}", 100 * (model_no // 10 + 1)
        model = "hf/local"
        meta.update({"envfactory_run_id": run, "envfactory_method": "sft",
                     "envfactory_base_model": "HuggingFaceTB/SmolLM2-135M-Instruct",
                     "envfactory_step": step,
                     "envfactory_checkpoint": f"/runs/{run}/checkpoint-{step}"})
    if bench.startswith("bfcl"):
        meta.update({"bfcl_eval_version": "2025.8.6.2", "bfcl_data_prefix": "BFCL_v3"})
    if bench == "tau2":
        meta.update({"domain": "airline", "tau2_release": "v0.2.0"})
    epochs = 2 if bench == "tau2" else 1
    skill = 0.3 + 0.5 * rng.random()
    body = [_sample(bench, i, e, rng.random() < skill)
            for i in range(samples) for e in range(1, epochs + 1)]
    task = {"tau2": "tau2_airline", "bfcl_multi_turn": "bfcl_multiturn"}.get(bench, bench)
    day = 1 + n % 28
    return EvalLog(
        status="success",
        eval=EvalSpec(created=f"2026-05-{day:02d}T10:{n % 60:02d}:00+00:00", task=task,
                      dataset=EvalDataset(name=task, samples=samples), model=model,
                      model_args={"model_path": f"/runs/ckpt-{model_no}"}
                      if model == "hf/local" else {},
                      config=EvalConfig(limit=samples, epochs=epochs), metadata=meta),
        results=EvalResults(total_samples=samples, completed_samples=samples, scores=[
            EvalScore(name=f"{bench}_scorer", scorer=f"{bench}_scorer",
                      metrics={"accuracy": EvalMetric(name="accuracy", value=skill)})]),
        samples=body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="50 logs")
    parser.add_argument("--logs", type=int, default=None)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--no-taxonomy", action="store_true",
                        help="time the build without the failure taxonomy")
    parser.add_argument("--keep", type=Path, default=None,
                        help="write the logs and the output here (kept)")
    args = parser.parse_args()
    n_logs = args.logs or (50 if args.quick else 1000)
    console = Console(stderr=True)
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        logs = root / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        for n in range(n_logs):
            write_eval_log(synthetic_log(n, args.samples, rng),
                           str(logs / f"log-{n:05d}.eval"))
        write_s = time.perf_counter() - t
        cpu = time.process_time()
        result = build([logs], root / "out", with_taxonomy=not args.no_taxonomy)
        cpu = time.process_time() - cpu
    s = result.seconds
    failed = sum(v for per in result.board.failed_samples.values() for v in per.values())
    table = Table(title=f"leaderboard build: {n_logs} logs x {args.samples} samples")
    for col in ("phase", "seconds"):
        table.add_column(col)
    for phase in ("read", "table", "taxonomy", "outputs", "total"):
        table.add_row(phase, f"{s.get(phase, 0.0):.2f}")
    table.add_row("cpu (build, this process)", f"{cpu:.2f}")
    table.add_row("writing the logs (setup)", f"{write_s:.2f}")
    console.print(table)
    console.print(f"{len(result.board.rows)} rows, {len(result.board.columns)} columns, "
                  f"{failed} failed trials classified; target < 10 s for 1,000 logs")
    print(json.dumps({"benchmark": "leaderboard_build", "logs": n_logs,
                      "taxonomy": not args.no_taxonomy,
                      "samples_per_log": args.samples, "build_s": round(s["total"], 3),
                      "read_s": round(s["read"], 3), "table_s": round(s["table"], 3),
                      "taxonomy_s": round(s.get("taxonomy", 0.0), 3),
                      "outputs_s": round(s["outputs"], 3), "cpu_s": round(cpu, 3),
                      "failed_trials": failed, "ms_per_log": round(1000 * s["total"]
                                                                   / n_logs, 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
