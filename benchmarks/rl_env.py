"""The environment's cost inside a GRPO rollout, per trajectory, against a generation step.

    python benchmarks/rl_env.py [--repeat N] [--no-generation]
    python benchmarks/rl_env.py --quick        # 40 rows, 1 repeat (CI)

For every RL row of the shipped training split (`envfactory train export`'s rows), an
oracle rollout does what verl's tool loop does on our side: the first call builds the
trajectory's `World` from the row's start state (`restore`), every gold call runs through
`RolloutSessions.call` (tool + recorded snapshot: `calls`), and `compute_score` scores it
(`reward`). Reported in µs per trajectory (CPU time, the steadier figure on a shared
machine) by phase, and per call.

The comparison: one greedy decode step (one new token, KV cache warm) of the embedded
SmolLM2-135M on this CPU, when it is prepared (`envfactory models prepare smollm2`), the
smallest real policy one would train here. A call costs the policy one decode step per
token of its `<tool_call>` block (`call_tokens`, the gold calls' mean in SmolLM2's
tokenizer), so `env_call_over_call_generation` is the environment's share beside the
generation of the very call it runs; far below 1 means the environment never limits RL.
Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from harness.trajectory import read_jsonl  # noqa: E402
from training.rl_export import rl_rows  # noqa: E402
from training.verl.reward import compute_score  # noqa: E402
from training.verl.session import RolloutSessions  # noqa: E402

console = Console(stderr=True)
DATA = ROOT / "tasks" / "envfactory" / "data" / "train.jsonl"


def _rollout(row: dict[str, Any], sessions: RolloutSessions, rid: str) -> tuple[float, ...]:
    info = dict(row["extra_info"])
    fields: dict[str, Any] = {}
    calls = [(g["name"], g["arguments"]) for g in json.loads(row["reward_model"]["ground_truth"])]
    t0 = time.process_time()
    sessions._world(rid, info["tools_kwargs"], fields)  # the restore verl's first call pays
    t1 = time.process_time()
    for name, args in calls:
        sessions.call(rid, name, args, info["tools_kwargs"], fields)
    t2 = time.process_time()
    text = "".join(f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>"
                   for n, a in calls)
    score = compute_score(row["data_source"], text, row["reward_model"]["ground_truth"],
                          {**info, **fields})["score"]
    t3 = time.process_time()
    sessions.release(rid)
    return t1 - t0, t2 - t1, t3 - t2, float(len(calls)), score


def _decode_step_us(rows: list[dict[str, Any]]) -> tuple[float, float] | None:
    """(CPU µs of one greedy SmolLM2 decode step, mean tokens of one gold `<tool_call>`
    block in its tokenizer), or None when the model is not prepared."""
    from training import local_models

    path = local_models.prepared_models().get("smollm2")
    if path is None:
        return None
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    ids = tok("Find the customer called Priya Nair and list her accounts.",
              return_tensors="pt").input_ids
    with torch.inference_mode():
        out = model(ids, use_cache=True)
        past, nxt = out.past_key_values, out.logits[:, -1:].argmax(-1)
        for _ in range(4):  # warm-up: the first steps pay allocation and kernel selection
            out = model(nxt, past_key_values=past, use_cache=True)
            past, nxt = out.past_key_values, out.logits[:, -1:].argmax(-1)
        steps = 16
        t0 = time.process_time()
        for _ in range(steps):
            out = model(nxt, past_key_values=past, use_cache=True)
            past, nxt = out.past_key_values, out.logits[:, -1:].argmax(-1)
        step_us = (time.process_time() - t0) / steps * 1e6
    blocks = [f"<tool_call>\n{json.dumps({'name': g['name'], 'arguments': g['arguments']})}"
              "\n</tool_call>" for r in rows for g in json.loads(r["reward_model"]["ground_truth"])]
    tokens = sum(len(tok(b).input_ids) for b in blocks) / len(blocks)
    return step_us, tokens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="40 rows, 1 repeat")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-generation", action="store_true", help="skip the decode step")
    args = ap.parse_args()
    rows = [r for t in read_jsonl(DATA) for r in rl_rows(t, "train")]
    repeat = 1 if args.quick else args.repeat
    if args.quick:
        rows = rows[:40]
    sessions = RolloutSessions()
    _rollout(rows[0], sessions, "warm-up")  # imports, registry
    restore = calls = reward = n_calls = 0.0
    scores = []
    for k in range(repeat):
        for i, row in enumerate(rows):
            a, b, c, n, s = _rollout(row, sessions, f"{k}-{i}")
            restore, calls, reward, n_calls = restore + a, calls + b, reward + c, n_calls + n
            scores.append(s)
    trajectories = len(rows) * repeat
    per = {name: value / trajectories * 1e6 for name, value in
           (("restore_us", restore), ("calls_us", calls), ("reward_us", reward))}
    total_us = sum(per.values())
    per_call_us = (restore + calls + reward) / n_calls * 1e6
    generation = None if args.no_generation else _decode_step_us(rows)
    decode, call_tokens = generation if generation else (None, None)
    table = Table(title=f"Environment cost per RL trajectory ({trajectories} oracle rollouts, "
                        f"{n_calls / trajectories:.2f} calls each, CPU µs)")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for name, value in [*per.items(), ("total per trajectory", total_us),
                        ("per tool call (all phases)", per_call_us),
                        ("SmolLM2 decode step", decode)]:
        table.add_row(name, "not prepared" if value is None else f"{value:,.0f}")
    if decode and call_tokens:
        table.add_row("env per call / decode step", f"{per_call_us / decode:.3f}")
        table.add_row(f"env per call / generating the call ({call_tokens:.0f} tokens)",
                      f"{per_call_us / (decode * call_tokens):.4f}")
    console.print(table)
    print(json.dumps({"benchmark": "rl_env", "trajectories": trajectories,
                      "calls_per_trajectory": round(n_calls / trajectories, 3),
                      **{k: round(v, 1) for k, v in per.items()},
                      "env_us_per_trajectory": round(total_us, 1),
                      "env_us_per_call": round(per_call_us, 1),
                      "decode_step_us": None if decode is None else round(decode, 1),
                      "env_call_over_decode_step": None if not decode
                      else round(per_call_us / decode, 4),
                      "call_tokens": None if not call_tokens else round(call_tokens, 1),
                      "env_call_over_call_generation": None if not (decode and call_tokens)
                      else round(per_call_us / (decode * call_tokens), 5),
                      "oracle_mean_score": round(sum(scores) / len(scores), 4)}))


if __name__ == "__main__":
    main()
