"""A QueryGen trajectory exports with the solver's own exchange (recorded messages)."""

from __future__ import annotations

import json

import anyio

from synthesis.querygen import Kept, synthesize
from tests.synthesis import querygen_scripted as scripted
from tests.synthesis.test_querygen_synthesize import CHAIN
from training.rl_export import rl_rows
from training.sft_export import sft_samples


def test_kept_trajectory_exports_the_chosen_candidates_messages() -> None:
    out = anyio.run(lambda: synthesize(CHAIN, scripted.ours("sft_conv"), traj_id="qg-x", models={
        "synth": scripted.synth(), "solver": scripted.solver(), "user": scripted.user(),
        "judge": scripted.judge()}))
    assert isinstance(out, Kept), out
    traj = out.trajectory
    assert {m.turn for m in traj.messages} == {0, 1}
    samples = sft_samples(traj)
    # per turn: two call targets and the solver's closing text (gold replay has no text)
    targets = [s["conversations"][-1] for s in samples]
    assert [t["from"] for t in targets] == ["function_call", "function_call", "gpt"] * 2
    assert [json.loads(t["value"])["name"] for t in targets if t["from"] != "gpt"] == [
        "email-search_messages", "email-get_message", "bank_ledger-find_customer",
        "bank_ledger-add_payee"]
    humans = [m["value"] for m in samples[-1]["conversations"] if m["from"] == "human"]
    assert humans == [scripted.PLUMBER, scripted.PAYEE]  # the stop message is not a turn
    assert [r["extra_info"]["turn"] for r in rl_rows(traj, "train")] == [0, 1]
