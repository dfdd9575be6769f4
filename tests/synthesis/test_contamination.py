"""The contamination check: copied 13-word spans are flagged and paraphrases are not,
nearest neighbours come from one matrix product, EnvFactory's cloned environments show
their overlap with BFCL and τ², and `--drop-flagged` writes exactly the clean items."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from envfactory.cli.synth_contamination import contamination
from harness.trajectory import Provenance, Trajectory, Turn, read_jsonl, write_jsonl
from synthesis import contamination as c
from tests.shared_data import SHARED_DATA, needs_tau2

METADATA = SHARED_DATA / "envfactory_metadata"
needs_metadata = pytest.mark.skipif(not METADATA.is_dir(),
                                    reason=f"EnvFactory metadata not found at {METADATA}")

#: a 20-word benchmark prompt
PROMPT = c.BenchmarkPrompt(
    source="bfcl", id="multi_turn_base_7#0",
    text="Please move the quarterly report from the documents folder into the archive "
         "directory, then list every file that remains there today.")


def traj(id: str, *users: str, envs: Sequence[str] = ("bank_ledger",)) -> Trajectory:
    return Trajectory(id=id, environments=list(envs), initial_state={},
                      turns=[Turn(user=u) for u in users], provenance=Provenance(source="test"))


def test_normalise_words_lowercases_and_strips_punctuation() -> None:
    assert c.normalise_words("Move 'final_report.pdf' -- NOW!") == [
        "move", "final", "report", "pdf", "now"]


def test_copied_13_word_span_is_flagged_and_paraphrase_is_not() -> None:
    # words 3..15 of PROMPT (13 words), recased and repunctuated, inside other words
    copied = ("Hi! THE QUARTERLY REPORT, from the documents folder into the archive "
              "directory; then list -- thanks")
    paraphrase = ("Could you shift the quarterly report out of documents and into archive, "
                  "and afterwards show me which files are left in there?")
    twelve = "the quarterly report from the documents folder into the archive directory then"
    turns = c.user_turns([traj("a", copied), traj("b", paraphrase), traj("c", twelve)])
    pairs = c.ngram_pairs(turns, [PROMPT])
    assert [(p.trajectory, p.turn, p.prompt_id) for p in pairs] == [
        ("a", 0, "multi_turn_base_7#0")]
    # 13 shared words -> exactly one shared 13-gram, the copied span
    assert pairs[0].score == 1
    assert pairs[0].span == ("the quarterly report from the documents folder into the "
                             "archive directory then list")


class TableEmbedder:
    """Deterministic embedder: each text's vector is given (and normalised here)."""

    name = "table"
    threshold = 0.5

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        v = np.array([self.table[t] for t in texts], dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_embedding_nearest_neighbour_and_threshold() -> None:
    prompts = [c.BenchmarkPrompt(source="tau2", id="airline/1", text="P1"),
               c.BenchmarkPrompt(source="tau2", id="airline/2", text="P2")]
    emb = TableEmbedder({"P1": [1, 0], "P2": [0, 1], "near P2": [0.6, 0.8],
                         "between": [1, 1]})
    data = [traj("x", "near P2"), traj("y", "between")]
    report = c.check(data, data=["d"], prompts=prompts, benchmark_apis=[], sources=[],
                     embedder=emb, embedding_threshold=0.75)
    # cos(near P2, P2) = 0.8; cos(between, P1) = cos(between, P2) = 1/sqrt(2) ~ 0.707
    assert [(p.trajectory, p.prompt_id, round(p.score, 3)) for p in report.embedding_closest] \
        == [("x", "airline/2", 0.8), ("y", "airline/1", 0.707)]
    assert [p.trajectory for p in report.embedding_flagged] == ["x"]
    assert report.flagged == {"x": ["embedding"]}


def test_normalised_names_and_parameter_jaccard() -> None:
    ours = [c.ApiEnv(source="t", env="mine", tools=[
        c.ApiTool(name="GetUserDetails", params=["userid", "verbose"]),
        c.ApiTool(name="ping", params=[])])]
    theirs = [c.ApiEnv(source="b", env="bench", tools=[
        c.ApiTool(name="get_user_details", params=["userid"])])]
    [o] = c.env_overlaps(ours, theirs)
    assert (o.env, o.benchmark_env, o.share) == ("mine", "bench", 0.5)
    assert o.matches == [("GetUserDetails", "get_user_details", 0.5)]


def _overlap(overlaps: list[c.EnvOverlap], env: str, bench: str) -> c.EnvOverlap:
    [o] = [o for o in overlaps if o.env == env and o.benchmark_env == bench]
    return o


@needs_metadata
def test_metadata_gorilla_file_system_clones_bfcl() -> None:
    pytest.importorskip("bfcl_eval")
    bfcl, status = c.bfcl_apis()
    assert status.compared
    overlaps = c.env_overlaps(c.metadata_apis(METADATA), bfcl)
    o = _overlap(overlaps, "GorillaFileSystem", "bfcl/GorillaFileSystem")
    # both have the same 18 commands (pwd, ls, cd, ... cp) with the same parameters
    assert (len(o.matches), o.share, o.mean_param_jaccard) == (18, 1.0, 1.0)
    best = max((x for x in overlaps if x.env == "GorillaFileSystem"), key=lambda x: x.share)
    assert best.benchmark_env == "bfcl/GorillaFileSystem"


@needs_metadata
@needs_tau2
def test_metadata_airline_clones_tau2(use_tau2_data: Path) -> None:
    tau2, status = c.tau2_apis()
    assert status.compared
    o = _overlap(c.env_overlaps(c.metadata_apis(METADATA), tau2), "Airline", "tau2/airline")
    # 7 of the 10 metadata tools keep τ²'s names (list_airports, search_flights and
    # update_reservation_baggage do not); book_reservation: payment_method vs
    # payment_methods -> 10/12; update_reservation_flights: payment_method vs
    # payment_id -> 3/5; the other five have equal parameters
    assert len(o.matches) == 7 and o.share == 0.7
    jaccard = {ours: j for ours, _, j in o.matches}
    assert jaccard["book_reservation"] == round(10 / 12, 3)
    assert jaccard["update_reservation_flights"] == 0.6
    assert o.mean_param_jaccard == round((5 + 10 / 12 + 0.6) / 7, 3)


def test_cli_report_and_drop_flagged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI against a fixture benchmark: one copied turn, one clean trajectory."""
    import typer

    monkeypatch.setattr(c, "bfcl_prompts", lambda: (
        [PROMPT], c.SourceStatus(name="bfcl prompts", compared=True, count=1)))
    for name in c.LOADERS[1:]:
        monkeypatch.setattr(c, name, lambda name=name: (
            [], c.SourceStatus(name=name.replace("_", " "), compared=False, reason="absent")))
    data = tmp_path / "data.jsonl"
    copied = "ok: " + " ".join(c.normalise_words(PROMPT.text)[:14])
    write_jsonl(data, [traj("keep-1", "What is my balance?"),
                       traj("drop-1", "Hello there.", copied),
                       traj("keep-2", "Pay the electricity bill.")])
    app = typer.Typer()
    app.command()(contamination)
    out, clean = tmp_path / "report", tmp_path / "clean.jsonl"
    result = CliRunner().invoke(app, [str(data), "--out-dir", str(out), "--embedder", "none",
                                      "--drop-flagged", str(clean)])
    assert result.exit_code == 0, result.output
    assert [t.id for t in read_jsonl(clean)] == ["keep-1", "keep-2"]
    report = json.loads((out / "contamination.json").read_text())
    assert report["flagged"] == {"drop-1": ["ngram"]}
    assert [(p["trajectory"], p["turn"], p["score"]) for p in report["ngram_flagged"]] == [
        ("drop-1", 1, 2.0)]
    assert [s["compared"] for s in report["sources"]] == [True] + [False] * 7
    assert "loaded  bfcl prompts: 1" in result.output
    assert "missing mcp atlas apis: absent" in result.output
    assert "drop-1" in (out / "contamination.md").read_text()
