"""verl's real multi-turn tool loop on our exported RL rows, on CPU, with only the LLM faked.

What runs is verl 0.9.1's own code, driven the way its trainer drives it
(`RayPPOTrainer.fit`, notes/training.md §3.1), minus Ray and the GPU:

- the shipped train split is exported (`training.export.export`) and four RL rows (writes
  in one and two environments, a tool result over `max_tool_response_length`, one
  read-only turn) go through `RLHFDataset` + `collate_fn` into a `DataProto`: uid,
  `_get_gen_batch`, `repeat(n=2, interleave=True)`, a `priority` per sample;
- the config is verl's `ppo_trainer` composed with our `paper` preset and paths
  (`training.grpo.overrides`), resolved as `main_ppo` does;
- one `AgentLoopWorker` builds its tools from our `rl/tools.yaml` (`load_all_tools`),
  instantiates `ToolAgentLoop` (hermes) per sample from the registry and scores every
  trajectory through a real `RewardLoopWorker` (naive reward manager, our `compute_score`
  loaded from `reward.custom_reward_function` with its `reward_kwargs`); the reward worker
  sits behind an in-process stand-in for its Ray handle that copies the arguments as Ray
  does (the naive manager updates the row's `extra_info` in place, and the n rollouts of
  a row share that dict: only the copy keeps them apart);
- only the LLM server is fake: per row, the first trajectory gets an ORACLE (the row's gold
  calls as `<tool_call>` blocks, one per assistant turn, then a short answer) and the second
  a NEGATIVE policy (an answer, no calls), so each n=2 group has one of each;
- GRPO advantages come from `core_algos.compute_grpo_outcome_advantage` over the groups.

Checked: oracle rollouts score 1 (R_traj 1, R_state 1); the negative scores 0 (on the
read-only turn too: when nobody changed anything R_state is R_traj); the tool results the
policy saw are what our environments return (`ToolResult.text()`), cut in the middle at
512 characters; the trajectory's extra fields carry `envfactory_calls` /
`envfactory_final_state`; the reward equals `compute_score` on the decoded response; the
response mask covers exactly the generated tokens; advantages are +-1/sqrt(2).

Two regression tests pin problems found on the way: verl's length filter must keep our
rows under both presets (it renders tools from `data.tool_config_path`, which the presets
set to null, not the row's `tool_selection`), and a request id verl reuses
(`rollout.full_determinism`) must start from its own row's start state, never from an
earlier trajectory's world.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import pickle
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.train

REPO = Path(__file__).resolve().parents[2]
TRAIN = REPO / "tasks" / "envfactory" / "data" / "train.jsonl"
#: the preset's multi_turn.max_tool_response_length / tool_response_truncate_side=middle
MAX_TOOL_RESPONSE = 512
FINAL_ANSWER = "All done."
REFUSAL = "I cannot help with that."
_TOOL_RESPONSE = re.compile(r"<tool_response>\n(.*?)\n</tool_response>", re.DOTALL)


@pytest.fixture(scope="module", autouse=True)
def _train_env() -> None:  # module scope: runs before the module-scoped `exported`
    if (os.environ.get("ENVFACTORY_TRAIN_ENV") != "1"
            and importlib.util.find_spec("llamafactory") is None):
        pytest.skip("needs the train stack (.venv-train): run `make test-train`")


def truncated(text: str, limit: int = MAX_TOOL_RESPONSE) -> str:
    """What verl's tool loop shows of a tool result (`tool_response_truncate_side=middle`)."""
    if len(text) <= limit:
        return text
    return text[:limit // 2] + "...(truncated)..." + text[-(limit // 2):]


def gold_calls(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": g["name"], "arguments": g["arguments"]}
            for g in json.loads(row["reward_model"]["ground_truth"])]


def environment_texts(row: dict[str, Any]) -> list[str]:
    """The texts our environments return for the row's gold calls, replayed from its start."""
    from envs.names import split_name
    from envs.world import World

    info = row["extra_info"]
    start = json.loads(info["tools_kwargs"]["envfactory"]["start_state"])
    world = World(list(info["environments"]), start)
    texts = []
    for call in gold_calls(row):
        parts = split_name(call["name"], world.envs)
        assert parts is not None
        texts.append(world.call(*parts, call["arguments"]).text())
    return texts


def writes(row: dict[str, Any]) -> bool:
    info = row["extra_info"]
    return (json.loads(info["gold_final_state"])
            != json.loads(info["tools_kwargs"]["envfactory"]["start_state"]))


def pick_rows(rows: list[dict[str, Any]]) -> list[int]:
    """Four rows of four conversations: an add_payee turn, a transfer turn, a write across
    two environments with a tool result over the limit, a read-only turn."""
    predicates = [
        lambda r: "bank_ledger-add_payee" in r["reward_model"]["ground_truth"],
        lambda r: "bank_ledger-transfer_funds" in r["reward_model"]["ground_truth"],
        lambda r: len(r["extra_info"]["environments"]) == 2 and writes(r) and any(
            len(t) > MAX_TOOL_RESPONSE for t in environment_texts(r)),
        lambda r: not writes(r),
    ]
    chosen: list[int] = []
    for predicate in predicates:
        taken = {rows[i]["extra_info"]["trajectory_id"] for i in chosen}
        chosen.append(next(i for i, r in enumerate(rows) if predicate(r)
                           and r["extra_info"]["trajectory_id"] not in taken))
    assert any(len(t) > MAX_TOOL_RESPONSE for i in chosen for t in environment_texts(rows[i]))
    assert len({rows[i]["prompt"][-1]["content"] for i in chosen}) == len(chosen)
    return chosen


class FakeServer:
    """The LLM server verl's loop calls (`LLMServerClient.generate` -> `TokenOutput`).

    It recognises the row from the prompt it is sent (the row's last user message right
    before the generation prompt), gives the first trajectory of each row the oracle policy
    and the second the negative one, checks that every later prompt only appends to the
    previous prompt and its own output, and records the tool results appended in between:
    what the policy saw."""

    def __init__(self, tokenizer: Any, rows: list[dict[str, Any]]) -> None:
        self.tokenizer = tokenizer
        self.eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
        self.rows = rows
        self.sessions: dict[str, dict[str, Any]] = {}
        self.assigned: Counter[int] = Counter()

    def new_step(self) -> dict[str, dict[str, Any]]:
        """This step's sessions; the next step starts afresh (verl may reuse request ids)."""
        sessions, self.sessions, self.assigned = self.sessions, {}, Counter()
        return sessions

    def _row(self, prompt_ids: list[int]) -> int:
        text = self.tokenizer.decode(prompt_ids, skip_special_tokens=False)
        found = [i for i, r in enumerate(self.rows) if text.endswith(
            r["prompt"][-1]["content"] + "<|im_end|>\n<|im_start|>assistant\n")]
        assert len(found) == 1, text[-300:]
        return found[0]

    async def generate(self, request_id: str, *, prompt_ids: list[int],
                       sampling_params: dict[str, Any], **kwargs: Any) -> Any:
        from verl.workers.rollout.replica import TokenOutput

        session = self.sessions.get(request_id)
        if session is None:
            row = self._row(prompt_ids)
            policy = ("oracle", "negative")[self.assigned[row]]
            self.assigned[row] += 1
            session = self.sessions[request_id] = {
                "row": row, "policy": policy, "turn": 0, "prompt": [], "output": [],
                "seen": [], "generated": 0}
        else:
            before = session["prompt"] + session["output"]
            assert list(prompt_ids[:len(before)]) == before  # continuous tokens: append only
            appended = self.tokenizer.decode(prompt_ids[len(before):], skip_special_tokens=False)
            session["seen"] += _TOOL_RESPONSE.findall(appended)
        gold = gold_calls(self.rows[session["row"]])
        if session["policy"] == "oracle" and session["turn"] < len(gold):
            text = f"<tool_call>\n{json.dumps(gold[session['turn']])}\n</tool_call>"
        else:
            text = FINAL_ANSWER if session["policy"] == "oracle" else REFUSAL
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.eos]
        session.update(turn=session["turn"] + 1, prompt=list(prompt_ids), output=ids,
                       generated=session["generated"] + len(ids))
        return TokenOutput(token_ids=ids, stop_reason="completed",
                           extra_fields={"fake_request_id": request_id})


class InProcessActor:
    """`handle.method.remote(*args)` for an object in this process; the arguments are
    copied through pickle, as Ray serialises them for an actor call."""

    def __init__(self, actor: Any) -> None:
        self._actor = actor

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._actor, name)

        class _Method:
            @staticmethod
            async def remote(*args: Any, **kwargs: Any) -> Any:
                args, kwargs = pickle.loads(pickle.dumps((args, kwargs)))
                return await method(*args, **kwargs)

        return _Method


def verl_config(export_dir: Path, model: Path, output_dir: Path, preset: str = "paper",
                n: int = 2, extra: tuple[str, ...] = ("data.tool_config_path=null",)) -> Any:
    """verl's `ppo_trainer` config with a preset and our paths, resolved as `main_ppo` does.

    `data.tool_config_path=null` by default: see
    `test_the_presets_length_filter_keeps_our_rows`."""
    import verl
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from training.grpo import GrpoConfig, overrides

    config = GrpoConfig(preset=preset, model=str(model), data=export_dir,  # type: ignore[arg-type]
                        output_dir=output_dir,
                        overrides=[f"actor_rollout_ref.rollout.n={n}", *extra])
    config_dir = Path(verl.__file__).parent / "trainer" / "config"
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        composed = compose(config_name="ppo_trainer", overrides=overrides(config))
    OmegaConf.resolve(composed)
    return composed


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The shipped train split exported, the chosen rows' parquet, the policy's tokenizer."""
    import datasets
    from transformers import AutoTokenizer

    from training.export import export
    from training.local_models import prepare_smollm2

    started = time.perf_counter()
    root = tmp_path_factory.mktemp("verl_loop")
    export([TRAIN], root / "export")
    export_seconds = time.perf_counter() - started
    rl = root / "export" / "rl"
    every_row = datasets.Dataset.from_parquet(str(rl / "train.parquet"))
    every_row.select(pick_rows(every_row.to_list())).to_parquet(rl / "chosen.parquet")
    model = prepare_smollm2()
    return {"root": root, "export": root / "export", "chosen": rl / "chosen.parquet",
            "model": model, "tokenizer": AutoTokenizer.from_pretrained(model),
            "export_seconds": export_seconds, "seconds": time.perf_counter() - started}


@pytest.fixture(autouse=True)
def _fresh_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's trajectories get worlds of their own (`EnvTool` reads the global)."""
    from training.verl import tools
    from training.verl.session import RolloutSessions

    monkeypatch.setattr(tools, "SESSIONS", RolloutSessions())


def load_rows(exported: dict[str, Any], config: Any) -> list[dict[str, Any]]:
    from verl.utils.dataset.rl_dataset import RLHFDataset

    dataset = RLHFDataset(str(exported["chosen"]), exported["tokenizer"], config.data)
    return [dataset[i] for i in range(len(dataset))]


def rollout(config: Any, rows: list[dict[str, Any]], server: FakeServer,
            steps: int = 1) -> list[tuple[Any, dict[str, dict[str, Any]]]]:
    """Rollout steps as `RayPPOTrainer.fit` and `AgentLoopManager` run them: each step's
    batch (uid, `_get_gen_batch`, n interleaved repeats, a priority per sample) through one
    real `AgentLoopWorker` whose reward handle is a real `RewardLoopWorker`. Per step: the
    repeated batch united with the rollout output (what the trainer holds next) and the
    server's sessions of that step."""
    import numpy as np
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.experimental.reward_loop import RewardLoopWorker
    from verl.protocol import DataProto
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer
    from verl.utils.dataset.rl_dataset import collate_fn

    n = config.actor_rollout_ref.rollout.n

    def step_batches(step: int) -> tuple[DataProto, DataProto]:
        batch = DataProto.from_single_dict(collate_fn(rows))
        batch.non_tensor_batch["uid"] = np.array([f"row{i}" for i in range(len(batch))],
                                                 dtype=object)
        gen_batch = RayPPOTrainer._get_gen_batch(None, batch)  # type: ignore[arg-type]
        gen_batch.meta_info["global_steps"] = step
        gen_batch = gen_batch.repeat(repeat_times=n, interleave=True)
        gen_batch.non_tensor_batch["priority"] = np.arange(len(gen_batch), dtype=np.int64)
        return batch, gen_batch

    async def run() -> list[tuple[DataProto, dict[str, dict[str, Any]]]]:
        reward_worker = InProcessActor(RewardLoopWorker(config))
        worker = AgentLoopWorker(config, server, reward_loop_worker_handles=[reward_worker])
        results = []
        for step in range(1, steps + 1):
            batch, gen_batch = step_batches(step)
            out = await worker.generate_sequences(gen_batch)
            assert len(out) == n * len(rows)
            results.append((batch.repeat(repeat_times=n, interleave=True).union(out),
                            server.new_step()))
        return results

    return asyncio.run(run())


def test_verls_tool_loop_scores_oracle_and_negative_rollouts_of_our_rows(
        exported: dict[str, Any]) -> None:
    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage

    from training.verl.reward import compute_score
    from training.verl.session import CALLS_KEY, STATE_KEY

    started = time.perf_counter()
    tokenizer = exported["tokenizer"]
    config = verl_config(exported["export"], exported["model"], exported["root"] / "run")
    multi_turn = config.actor_rollout_ref.rollout.multi_turn
    assert (multi_turn.format, multi_turn.max_tool_response_length,
            multi_turn.tool_response_truncate_side) == ("hermes", MAX_TOOL_RESPONSE, "middle")
    rows = load_rows(exported, config)
    assert len(rows) == 4
    server = FakeServer(tokenizer, rows)
    [(batch, sessions)] = rollout(config, rows, server)

    # the trainer's side: token-level rewards (no KL in the reward), GRPO over the uids
    rewards = batch.batch["rm_scores"]
    advantages, _ = compute_grpo_outcome_advantage(
        token_level_rewards=rewards, response_mask=batch.batch["response_mask"],
        index=batch.non_tensor_batch["uid"])

    figures = []
    for k in range(len(batch)):
        session = sessions[batch.non_tensor_batch["fake_request_id"][k]]
        row = rows[session["row"]]
        assert row["extra_info"]["trajectory_id"] == batch.non_tensor_batch[
            "extra_info"][k]["trajectory_id"]
        score = rewards[k].sum().item()
        parts = {key: float(batch.non_tensor_batch[key][k]) for key in ("r_traj", "r_state")}
        calls = batch.non_tensor_batch[CALLS_KEY][k]
        final = batch.non_tensor_batch[STATE_KEY][k]
        mask = batch.batch["response_mask"][k]
        # the loss sees exactly the tokens the policy generated, not the tool results
        assert int(mask.sum()) == session["generated"]
        # the reward verl computed is compute_score on the decoded response + extra fields
        length = int(batch.batch["attention_mask"][k][-mask.shape[0]:].sum())
        response = tokenizer.decode(batch.batch["responses"][k][:length],
                                    skip_special_tokens=True)
        fields = {key: batch.non_tensor_batch[key][k] for key in (CALLS_KEY, STATE_KEY)
                  if batch.non_tensor_batch[key][k] is not None}
        direct = compute_score(row["data_source"], response,
                               row["reward_model"]["ground_truth"],
                               {**row["extra_info"], **fields})
        assert direct["score"] == pytest.approx(score)
        advantage = advantages[k][mask.bool()]
        if session["policy"] == "oracle":
            assert (score, parts["r_traj"], parts["r_state"]) == (1.0, 1.0, 1.0)
            assert calls == [{**c, "ok": True} for c in gold_calls(row)]
            assert final == json.loads(row["extra_info"]["gold_final_state"])
            assert session["seen"] == [truncated(t) for t in environment_texts(row)]
            assert bool((advantage > 0).all())
            assert advantage[0].item() == pytest.approx(2 ** -0.5, abs=1e-4)
        else:
            assert calls is None and final is None and session["seen"] == []
            assert response.strip() == REFUSAL
            # a read-only turn too: nobody changed anything, so R_state is R_traj
            assert (score, parts["r_traj"], parts["r_state"]) == (0.0, 0.0, 0.0)
            assert bool((advantage < 0).all())
            assert advantage[0].item() == pytest.approx(-(2 ** -0.5), abs=1e-4)
        figures.append(f"{session['policy'][0]}{session['row']}={score:g}")
    assert sorted(s["policy"] for s in sessions.values()) == (
        ["negative"] * len(rows) + ["oracle"] * len(rows))
    seen = [t for s in sessions.values() for t in s["seen"]]
    assert len(seen) == sum(len(gold_calls(r)) for r in rows)
    assert any("...(truncated)..." in t for t in seen)
    print(f"\nverl ToolAgentLoop, {len(rows)} rows x n=2: rewards {' '.join(figures)}; "
          f"wall {exported['seconds'] + time.perf_counter() - started:.1f} s "
          f"(export {exported['export_seconds']:.1f} s)")


@pytest.mark.parametrize("preset", ["paper", "gpu-smoke"])
def test_the_presets_length_filter_keeps_our_rows(exported: dict[str, Any],
                                                   preset: str) -> None:
    config = verl_config(exported["export"], exported["model"], exported["root"] / preset,
                         preset=preset, extra=())
    assert config.data.filter_overlong_prompts
    assert len(load_rows(exported, config)) == 4


def test_a_reused_request_id_starts_from_its_rows_start_state(
        exported: dict[str, Any]) -> None:
    # n=1: the one trajectory of the row is the oracle's, request id det-0 in both steps
    config = verl_config(exported["export"], exported["model"], exported["root"] / "det",
                         n=1, extra=("data.tool_config_path=null",
                                     "actor_rollout_ref.rollout.full_determinism=True"))
    rows = load_rows(exported, config)[:1]  # the add_payee turn
    steps = rollout(config, rows, FakeServer(exported["tokenizer"], rows), steps=2)
    for batch, sessions in steps:
        assert [(s["policy"], k) for k, s in sessions.items()] == [("oracle", "det-0")]
        assert batch.batch["rm_scores"].sum().item() == 1.0
