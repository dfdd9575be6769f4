"""Hand-built Inspect logs for the leaderboard tests: real `EvalLog`s written with
`write_eval_log`, every score set by the test that uses them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalSample,
    EvalSampleLimit,
    EvalScore,
    EvalSpec,
    write_eval_log,
)
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelConfig
from inspect_ai.scorer import Score


def write_log(path: Path, *, task: str, model: str,
              scores: Sequence[tuple[str | int, int, Any]],
              metadata: dict[str, Any] | None = None, limit: int | None = None,
              epochs: int = 1, created: str = "2026-06-01T10:00:00+00:00",
              metrics: dict[str, float] | None = None, scorer: str = "s",
              model_args: dict[str, Any] | None = None,
              score_meta: dict[str | int, dict[str, Any]] | None = None,
              limits: dict[str | int, str] | None = None,
              sample_id: str | list[str] | None = None,
              model_roles: dict[str, str] | None = None,
              task_args: dict[str, Any] | None = None) -> Path:
    """A finished log of `task` by `model`: `scores` are (sample id, epoch, score value);
    `model_roles`: role -> model name (`--model-role`); `task_args`: `-T` options."""
    samples = [EvalSample(id=sid, epoch=epoch, input="q", target="",
                          messages=[ChatMessageUser(content="q"),
                                    ChatMessageAssistant(content="a")],
                          scores={scorer: Score(value=value,
                                                metadata=(score_meta or {}).get(sid))},
                          limit=EvalSampleLimit.model_validate(
                              {"type": (limits or {})[sid], "limit": 10})
                          if sid in (limits or {}) else None)
               for sid, epoch, value in scores]
    log = EvalLog(
        status="success",
        eval=EvalSpec(created=created, task=task, model=model, model_args=model_args or {},
                      dataset=EvalDataset(name=task, samples=len(scores)),
                      config=EvalConfig(limit=limit, epochs=epochs, sample_id=sample_id),
                      metadata=metadata, task_args=task_args or {},
                      task_args_passed=task_args or {},
                      model_roles={role: ModelConfig(model=name)
                                   for role, name in (model_roles or {}).items()} or None),
        results=EvalResults(
            total_samples=len(scores), completed_samples=len(scores),
            scores=[EvalScore(name=scorer, scorer=scorer, metrics={
                k: EvalMetric(name=k, value=v) for k, v in (metrics or {}).items()})]),
        samples=samples)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(log, str(path))
    return path


BFCL_META = {"benchmark": "bfcl_multi_turn", "bfcl_eval_version": "2025.8.6.2",
             "bfcl_data_prefix": "BFCL_v3"}


def _bfcl(correct: int, total: int = 8) -> list[tuple[str | int, int, Any]]:
    half = total // 2
    return [(f"multi_turn_{c}_{i}", 1, "C" if n < correct else "I")
            for n, (c, i) in enumerate([("base", i) for i in range(half)]
                                       + [("miss_func", i) for i in range(total - half)])]


def showcase(root: Path) -> Path:
    """Logs of every benchmark for three models, plus the issue-24 cases, under `root`:

    * `m/strong` ran BFCL multi-turn in full three times, then one `--sample-id` check
      (newest): the cell must use a full run (8 samples) and list the other three;
    * `m/limited` ran BFCL multi-turn with `--limit 4`, read before any default run: the
      column's reference stays the task as shipped, so `m/limited` is the one marked;
    * `hf/local -M model_path=/models/smollm2-135m-instruct` (`inspect eval`) and the
      same folder scored by `envfactory score` (method base): one row,
      `smollm2-135m-instruct`.
    """
    runs = [("2026-06-01T10:00:00+00:00", 5), ("2026-06-02T10:00:00+00:00", 6),
            ("2026-06-03T10:00:00+00:00", 6)]
    for i, (created, correct) in enumerate(runs):
        write_log(root / f"strong-bfcl-{i}.eval", task="bfcl_multiturn", model="m/strong",
                  scores=_bfcl(correct), metadata=BFCL_META, created=created)
    write_log(root / "strong-bfcl-check.eval", task="bfcl_multiturn", model="m/strong",
              scores=[("multi_turn_base_0", 1, "C")], metadata=BFCL_META,
              created="2026-06-04T10:00:00+00:00", sample_id="multi_turn_base_0")
    write_log(root / "a-limited-bfcl.eval", task="bfcl_multiturn", model="m/limited",
              scores=_bfcl(2, 4), metadata=BFCL_META, limit=4,
              created="2026-05-01T10:00:00+00:00")
    write_log(root / "weak-bfcl.eval", task="bfcl_multiturn", model="m/weak",
              scores=_bfcl(2), metadata=BFCL_META)
    write_log(root / "smol-inspect.eval", task="bfcl_multiturn", model="hf/local",
              model_args={"model_path": "/models/smollm2-135m-instruct"},
              scores=_bfcl(1), metadata=BFCL_META)
    score_meta = {"envfactory_run_id": "smollm2-135m-instruct", "envfactory_method": "base",
                  "envfactory_base_model": "smollm2-135m-instruct", "envfactory_step": None,
                  "envfactory_checkpoint": "/models/smollm2-135m-instruct"}
    for domain, value in (("airline", 0.0), ("retail", 1.0)):
        write_log(root / f"smol-score-tau2-{domain}.eval", task=f"tau2_{domain}",
                  model="hf/local", model_args={"model_path": "/models/smollm2-135m-instruct"},
                  scores=[(0, 1, value), (1, 1, 0.0)], scorer="tau2_scorer",
                  metadata={"benchmark": "tau2", "domain": domain, **score_meta})
    for model, good in (("m/strong", 3), ("m/weak", 1)):
        for domain in ("airline", "retail", "telecom"):
            write_log(root / f"{model[2:]}-tau2-{domain}.eval", task=f"tau2_{domain}",
                      model=model, scorer="tau2_scorer",
                      scores=[(i, 1, 1.0 if i < good else 0.0) for i in range(4)],
                      metadata={"benchmark": "tau2", "domain": domain})
        for task_set in ("cross", "delivery", "instore", "ota"):
            write_log(root / f"{model[2:]}-vita-{task_set}.eval", task=f"vitabench_{task_set}",
                      model=model, scorer="vitabench_scorer",
                      scores=[(f"{task_set}-{i}", 1, 1.0 if i < good - 1 else 0.5)
                              for i in range(4)],
                      metadata={"benchmark": "vitabench", "task_set": task_set})
        write_log(root / f"{model[2:]}-mcp.eval", task="mcp_atlas", model=model,
                  scorer="mcp_atlas_scorer",
                  scores=[(f"t{i}", 1, 0.9 if i < good else 0.3) for i in range(4)],
                  metadata={"benchmark": "mcp_atlas"})
        write_log(root / f"{model[2:]}-envfactory.eval", task="envfactory", model=model,
                  scorer="reward", metadata={"benchmark": "envfactory"},
                  scores=[(f"e{i}", 1, {"reward": 1.0 if i < good else 0.2, "r_traj": 0.5,
                                        "r_state": 1.0 if i < good else 0.0,
                                        "p_length": 0.0, "p_format": 0.0})
                          for i in range(4)])
    return root


#: the resolved commit the released-checkpoint logs below record (any 40-hex value)
GAP_REVISION = "0123456789abcdef0123456789abcdef01234567"


def released_checkpoint_logs(root: Path) -> Path:
    """Logs of two released checkpoints (`leaderboard/checkpoints.json`), under `root`:

    * `LARK-Lab/EnvFactory-4B` as `envfactory score run LARK-Lab/EnvFactory-4B` writes it
      (contract of issue 27: `envfactory_hub_id`/`_hub_revision`, method base, served with
      `hf/local -M model_path=<Hub cache snapshot>`):
      - BFCL multi-turn in full: base 4/4 correct, miss_func 0/4 → 0.5, and every
        resample of a category is constant, so its interval is [0.5, 0.5];
      - τ² airline/retail/telecom with `--limit 2` and user `openai/gpt-4.1`: rewards
        (1, 0), (1, 1), (0, 0) → pass^1 0.5, 1.0, 0.0, average 0.5; the average's
        resamples are (a + 1 + 0) / 3 with a ∈ {0, 0.5, 1} at 1/4, 1/2, 1/4, so its
        interval is [1/3, 2/3];
      - VitaBench delivery alone, judge bound but no user: rewards 1, 0, 0, 0 → 0.25
        (the average is partial: in-store and OTA missing);
      - MCP-Atlas in full (subset `all`, 4 of 4 tasks run) with judge
        `openai/gpt-4.1-mini`: coverage 1.0, 0.8, 0.5, 0.0
        → pass@0.75 0.5, mean coverage 0.575;
    * `Qwen/Qwen3-4B` run as `inspect eval --model hf/Qwen/Qwen3-4B` (no provenance): BFCL
      multi-turn in full, base 4/4, miss_func 0/4 → 0.5;
    * `m/other`, no released checkpoint: BFCL multi-turn (no gap row).
    """
    prov = {"envfactory_hub_id": "LARK-Lab/EnvFactory-4B",
            "envfactory_hub_revision": GAP_REVISION, "envfactory_hub_requested": "main",
            "envfactory_method": "base", "envfactory_base_model": "LARK-Lab/EnvFactory-4B",
            "envfactory_run_id": "hub",
            "envfactory_checkpoint": f"/hf-cache/models--LARK-Lab--EnvFactory-4B/snapshots/"
                                     f"{GAP_REVISION}"}
    served: dict[str, Any] = {"model": "hf/local",
                              "model_args": {"model_path": prov["envfactory_checkpoint"]}}
    bfcl = [(f"multi_turn_base_{i}", 1, "C") for i in range(4)] + [
        (f"multi_turn_miss_func_{i}", 1, "I") for i in range(4)]
    write_log(root / "ef4b-bfcl.eval", task="bfcl_multiturn", scores=bfcl,
              metadata={**BFCL_META, **prov}, **served)
    for domain, rewards in (("airline", (1.0, 0.0)), ("retail", (1.0, 1.0)),
                            ("telecom", (0.0, 0.0))):
        write_log(root / f"ef4b-tau2-{domain}.eval", task=f"tau2_{domain}", limit=2,
                  scores=[(i, 1, r) for i, r in enumerate(rewards)], scorer="tau2_scorer",
                  metadata={"benchmark": "tau2", "domain": domain, **prov},
                  model_roles={"user": "openai/gpt-4.1"}, **served)
    write_log(root / "ef4b-vita-delivery.eval", task="vitabench_delivery",
              scores=[(f"delivery-{i}", 1, r) for i, r in enumerate((1.0, 0.0, 0.0, 0.0))],
              scorer="vitabench_scorer",
              metadata={"benchmark": "vitabench", "task_set": "delivery", **prov},
              model_roles={"judge": "openai/gpt-4.1-mini"}, **served)
    write_log(root / "ef4b-mcp.eval", task="mcp_atlas", scorer="mcp_atlas_scorer",
              scores=[(f"t{i}", 1, c) for i, c in enumerate((1.0, 0.8, 0.5, 0.0))],
              metadata={"benchmark": "mcp_atlas", "mcp_atlas_subset": "all",
                        "mcp_atlas_population": 4, "mcp_atlas_runnable": 4, **prov},
              model_roles={"judge": "openai/gpt-4.1-mini"}, **served)
    write_log(root / "qwen4b-bfcl.eval", task="bfcl_multiturn", model="hf/Qwen/Qwen3-4B",
              scores=bfcl, metadata=BFCL_META)
    write_log(root / "other-bfcl.eval", task="bfcl_multiturn", model="m/other",
              scores=_bfcl(3), metadata=BFCL_META)
    return root
