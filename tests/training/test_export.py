"""SFT and RL exports from Trajectory: the released sample rules on hand-checked examples.

Expected samples are written out by hand from the rules in notes/envfactory.md §10; the
only values taken from code are the environment's own tool results (`World.call`), which
the export must show verbatim.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from datasets import Dataset

from envs.world import World
from harness.prompts import AGENT_SYSTEM_PROMPT
from harness.trajectory import Call, Message, MessageCall, Provenance, Trajectory, Turn
from training.export import RL_FEATURES, SFT_FEATURES, export, val_ids
from training.rl_export import rl_rows
from training.sft_export import sft_samples

ENV = "bank_ledger"
ASK = "Jamal Wright is on the phone. What accounts does he have with us?"
THANKS = "Thanks!"
PRIYA = "Look up Priya Nair too."
MISSING = "Error: Customer 'C9999' not found."


def call(name: str, **arguments: object) -> Call:
    return Call(env=ENV, name=name, arguments=dict(arguments))


def fc(name: str, **arguments: object) -> dict[str, str]:
    return {"from": "function_call",
            "value": json.dumps({"name": f"{ENV}-{name}", "arguments": arguments})}


def xml(name: str, **arguments: object) -> str:
    return ("<tool_call>\n" + json.dumps({"name": f"{ENV}-{name}", "arguments": arguments})
            + "\n</tool_call>\n")


def response(text: str) -> str:
    return f"<tool_response>\n{text}\n</tool_response>\n"


def task(traj_id: str = "t-1", split: str = "train") -> Trajectory:
    """Turn 0: a lookup, a failing call, the right call; turn 1: no calls; turn 2: a lookup."""
    return Trajectory(
        id=traj_id, environments=[ENV], initial_state=World([ENV]).snapshot(),
        turns=[Turn(user=ASK, gold_calls=[call("find_customer", query="Jamal Wright"),
                                          call("list_accounts", customer_id="C9999"),
                                          call("list_accounts", customer_id="C1002")]),
               Turn(user=THANKS),
               Turn(user=PRIYA, gold_calls=[call("find_customer", query="Priya Nair")])],
        provenance=Provenance(source="hand-written", split=split))


def results() -> tuple[str, str, str]:
    """What the environment answers to turn 0's good calls and turn 2's call."""
    w = World([ENV])
    found = w.call(ENV, "find_customer", {"query": "Jamal Wright"}).text()
    accounts = w.call(ENV, "list_accounts", {"customer_id": "C1002"}).text()
    priya = w.call(ENV, "find_customer", {"query": "Priya Nair"}).text()
    return found, accounts, priya


def test_sharegpt_one_sample_per_target_failed_calls_only_in_history() -> None:
    found, accounts, _ = results()
    human, obs = "human", "observation"
    turn0 = [{"from": human, "value": ASK}, fc("find_customer", query="Jamal Wright"),
             {"from": obs, "value": found}, fc("list_accounts", customer_id="C9999"),
             {"from": obs, "value": MISSING}, fc("list_accounts", customer_id="C1002")]
    samples = sft_samples(task())
    assert [s["conversations"] for s in samples] == [
        turn0[:2],
        turn0,  # the failed call is history, the next call the target
        [*turn0, {"from": obs, "value": accounts}, {"from": "gpt", "value": "Done."},
         {"from": human, "value": PRIYA}, fc("find_customer", query="Priya Nair")],
    ]  # turn 1 (no calls) is gone entirely
    assert [s["id"] for s in samples] == ["t-1#0", "t-1#1", "t-1#2"]
    assert all(s["system"] == AGENT_SYSTEM_PROMPT for s in samples)
    tools = json.loads(samples[0]["tools"])
    names = [t["name"] for t in tools]
    assert "bank_ledger-find_customer" in names and all(n.startswith("bank_ledger-")
                                                        for n in names)
    assert set(tools[0]) == {"name", "description", "parameters"}


def test_alpaca_history_pairs_and_merged_inputs() -> None:
    found, accounts, _ = results()
    samples = sft_samples(task(), "alpaca")
    assert [(s["instruction"], s["output"], s["history"]) for s in samples] == [
        (ASK, xml("find_customer", query="Jamal Wright"), []),
        (response(MISSING), xml("list_accounts", customer_id="C1002"),
         [[ASK, xml("find_customer", query="Jamal Wright")],
          [response(found), xml("list_accounts", customer_id="C9999")]]),
        (response(accounts) + PRIYA, xml("find_customer", query="Priya Nair"),
         [[ASK, xml("find_customer", query="Jamal Wright")],
          [response(found), xml("list_accounts", customer_id="C9999")],
          [response(MISSING), xml("list_accounts", customer_id="C1002")]]),
    ]
    assert all(s["input"] == "" for s in samples)


def test_recorded_messages_parallel_calls_and_an_undecodable_call() -> None:
    def tool(call_id: str, text: str, error: bool = False) -> Message:
        return Message(role="tool", content=text, tool_call_id=call_id, error=error)

    traj = task().model_copy(update={"messages": [
        Message(role="system", content="sys"),
        Message(role="user", content="Find Jamal and Priya."),
        Message(role="assistant", tool_calls=[
            MessageCall(id="a", name="bank_ledger-find_customer", arguments={"query": "Jamal"}),
            MessageCall(id="b", name="bank_ledger-find_customer", arguments={"query": "Priya"})]),
        tool("a", "A"), tool("b", "B"),
        Message(role="assistant", content="Both found."),
        Message(role="user", content="Now list his accounts."),
        Message(role="assistant", tool_calls=[MessageCall(
            id="c", name="bank_ledger-list_accounts", parse_error="bad JSON")]),
        tool("c", "Error: bad JSON", error=True),
        Message(role="assistant", tool_calls=[MessageCall(
            id="d", name="bank_ledger-list_accounts", arguments={"customer_id": "C1002"})]),
        tool("d", "X"),
        Message(role="assistant", content="He has one account."),
    ]})
    both = {"from": "function_call", "value": json.dumps([
        {"name": "bank_ledger-find_customer", "arguments": {"query": "Jamal"}},
        {"name": "bank_ledger-find_customer", "arguments": {"query": "Priya"}}])}
    first = [{"from": "human", "value": "Find Jamal and Priya."}, both,
             {"from": "observation", "value": "A\nB"}, {"from": "gpt", "value": "Both found."}]
    second = [*first, {"from": "human", "value": "Now list his accounts."},
              fc("list_accounts"), {"from": "observation", "value": "Error: bad JSON"},
              fc("list_accounts", customer_id="C1002")]
    assert [s["conversations"] for s in sft_samples(traj)] == [
        first[:2], first, second,
        [*second, {"from": "observation", "value": "X"},
         {"from": "gpt", "value": "He has one account."}]]


def test_rl_rows_per_turn_with_gold_history_and_states() -> None:
    found, accounts, _ = results()
    traj = task()
    rows = rl_rows(traj, "train")
    assert [r["extra_info"]["turn"] for r in rows] == [0, 2]
    first, last = rows
    assert first["prompt"] == [{"role": "system", "content": AGENT_SYSTEM_PROMPT},
                               {"role": "user", "content": ASK}]
    assert last["prompt"][1:] == [
        {"role": "user", "content": ASK},
        {"role": "assistant", "content": xml("find_customer", query="Jamal Wright").strip()},
        {"role": "user", "content": response(found).strip()},
        {"role": "assistant", "content": xml("list_accounts", customer_id="C9999").strip()},
        {"role": "user", "content": response(MISSING).strip()},
        {"role": "assistant", "content": xml("list_accounts", customer_id="C1002").strip()},
        {"role": "user", "content": "\n".join([response(accounts).strip(), THANKS, PRIYA])},
    ]
    assert json.loads(last["reward_model"]["ground_truth"]) == [
        {"name": "bank_ledger-find_customer", "arguments": {"query": "Priya Nair"},
         "masked_arguments": []}]
    assert (last["data_source"], last["agent_name"], last["reward_model"]["style"]) == (
        "envfactory", "tool_agent", "rule")
    info = last["extra_info"]
    # reads only: every state is the initial one (replayed, since no gold states are stored)
    start = info["tools_kwargs"]["envfactory"]
    assert start["environments"] == [ENV] and info["need_tools_kwargs"] is True
    assert json.loads(start["start_state"]) == json.loads(info["gold_final_state"]) == \
        traj.initial_state
    assert info["environments"] == [ENV] and info["trajectory_id"] == "t-1"
    offered = info["tool_selection"]
    assert "bank_ledger-find_customer" in offered and all(n.startswith("bank_ledger-")
                                                          for n in offered)


def test_rl_rows_use_recorded_gold_states() -> None:
    traj = task()
    marks = [{ENV: {**traj.initial_state[ENV], "now": f"2030-01-0{i + 1}T00:00"}}
             for i in range(3)]
    for turn, mark in zip(traj.turns, marks, strict=True):
        turn.gold_state_after = mark
    _, last = rl_rows(traj, "val")
    start = last["extra_info"]["tools_kwargs"]["envfactory"]["start_state"]
    assert json.loads(start) == marks[1]
    assert json.loads(last["extra_info"]["gold_final_state"]) == marks[2]


def test_export_files_features_and_split_by_conversation(tmp_path: Path) -> None:
    data = tmp_path / "in.jsonl"
    data.write_text("".join(task(f"t-{i}").model_dump_json() + "\n" for i in range(10)))
    summary = export([data], tmp_path / "out", val_ratio=0.2, seed=7)
    held = val_ids([f"t-{i}" for i in range(10)], 0.2, 7)
    assert len(held) == 2 and summary.val_conversations == 2
    assert (summary.sft_samples, summary.rl_train_rows, summary.rl_val_rows) == (24, 16, 4)
    train = Dataset.from_parquet(str(tmp_path / "out/rl/train.parquet"))
    val = Dataset.from_parquet(str(tmp_path / "out/rl/val.parquet"))
    assert train.features == RL_FEATURES == val.features
    assert {r["trajectory_id"] for r in val["extra_info"]} == held
    assert not held & {r["trajectory_id"] for r in train["extra_info"]}
    assert [r["index"] for r in train["extra_info"]] == list(range(16))
    sft = Dataset.from_json(str(tmp_path / "out/sft/envfactory_sft.jsonl"),
                            features=SFT_FEATURES["sharegpt"])
    assert not held & {i.partition("#")[0] for i in sft["id"]}
    tools = yaml.safe_load((tmp_path / "out/rl/tools.yaml").read_text())["tools"]
    assert {t["config"]["function"]["name"] for t in tools} == set(
        train["extra_info"][0]["tool_selection"])
    assert {t["class_name"] for t in tools} == {"training.verl.tools.EnvTool"}
    info = json.loads((tmp_path / "out/sft/dataset_info.json").read_text())
    assert info == {"envfactory_sft": {
        "file_name": "envfactory_sft.jsonl", "formatting": "sharegpt",
        "columns": {"messages": "conversations", "system": "system", "tools": "tools"}}}


def test_held_out_and_duplicate_trajectories_are_refused(tmp_path: Path) -> None:
    held = tmp_path / "heldout.jsonl"
    held.write_text(task(split="heldout").model_dump_json() + "\n")
    with pytest.raises(ValueError, match="held-out split"):
        export([held], tmp_path / "out")
    twice = tmp_path / "twice.jsonl"
    twice.write_text(task().model_dump_json() + "\n" + task().model_dump_json() + "\n")
    with pytest.raises(ValueError, match="t-1 already read"):
        export([twice], tmp_path / "out")


def test_used_tools_only_lists_what_the_trajectory_calls() -> None:
    names = [[t["name"] for t in json.loads(s["tools"])]
             for s in sft_samples(task(), tools="used")]
    assert names == [["bank_ledger-find_customer", "bank_ledger-list_accounts"]] * 3
