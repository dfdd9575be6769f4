"""`push_results` / `download_results` against the fake Hub: logs accumulate across pushes,
the index lists every log once, and the downloaded logs read back with Inspect."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from typer.testing import CliRunner

from envfactory.cli import app
from leaderboard.hub import HubError, download_results, push_results, snapshot_commit
from tests.leaderboard.fake_hub import TOKEN, FakeHub, fake_hub_fixture  # noqa: F401
from tests.leaderboard.test_hub_model import write_log


def test_push_results_accumulates_and_downloads(fake_hub: FakeHub, tmp_path: Path) -> None:
    first = tmp_path / "scores" / "run1"
    first.mkdir(parents=True)
    write_log(first / "2025-06-01_envfactory_a.eval", "envfactory", {"overall": 0.25}, 5)
    write_log(first / "2025-06-01_bfcl_b.eval", "bfcl_multiturn", {"accuracy": 0.6}, 5)
    later = tmp_path / "elsewhere" / "2025-06-02_tau2_c.eval"
    later.parent.mkdir()
    write_log(later, "tau2_airline", {"accuracy": 0.5}, 4)

    one = push_results([first], "tester/results")
    two = push_results([later], "tester/results")
    again = push_results([first, later], "tester/results")

    assert one.url == f"{fake_hub.url}/datasets/tester/results"
    assert two.changed and not again.changed and again.commit == two.commit
    files = fake_hub.files("tester/results", "dataset")
    assert sorted(p for p in files if p.startswith("logs/")) == [
        "logs/2025-06-01_bfcl_b.eval", "logs/2025-06-01_envfactory_a.eval",
        "logs/2025-06-02_tau2_c.eval"]
    index = [json.loads(line) for line in
             fake_hub.read("tester/results", "index.jsonl", "dataset").decode().splitlines()]
    assert [(e["path"], e["task"], e["samples"], e["metrics"]) for e in index] == [
        ("logs/2025-06-01_bfcl_b.eval", "bfcl_multiturn", 5,
         {"bfcl_multiturn_scorer/accuracy": 0.6}),
        ("logs/2025-06-01_envfactory_a.eval", "envfactory", 5,
         {"envfactory_scorer/overall": 0.25}),
        ("logs/2025-06-02_tau2_c.eval", "tau2_airline", 4,
         {"tau2_airline_scorer/accuracy": 0.5})]
    assert index[0]["envfactory"] == {"run_id": "sft-tiny", "step": 2}
    card = fake_hub.read("tester/results", "README.md", "dataset").decode()
    assert "tau2_airline" in card and TOKEN not in card

    local = download_results("tester/results")

    assert local.is_dir() and local.name == "logs"
    got = {p.name: read_eval_log(str(p)) for p in sorted(local.iterdir())}
    assert sorted(got) == ["2025-06-01_bfcl_b.eval", "2025-06-01_envfactory_a.eval",
                           "2025-06-02_tau2_c.eval"]
    tau2 = got["2025-06-02_tau2_c.eval"]
    assert tau2.eval.task == "tau2_airline" and tau2.status == "success"
    assert tau2.results is not None and tau2.results.scores[0].metrics["accuracy"].value == 0.5
    # the standard cache (HF_HOME) holds it, not the working directory
    assert str(local).startswith(str(tmp_path / "hf-home"))


def test_download_results_of_an_older_revision(fake_hub: FakeHub, tmp_path: Path) -> None:
    a, b = tmp_path / "a.eval", tmp_path / "b.eval"
    write_log(a, "envfactory", {"overall": 0.1}, 2)
    write_log(b, "envfactory", {"overall": 0.2}, 2)
    old = push_results([a], "tester/revs")
    push_results([b], "tester/revs")

    assert sorted(p.name for p in download_results("tester/revs").iterdir()) == [
        "a.eval", "b.eval"]
    assert sorted(p.name for p in download_results("tester/revs", revision=old.commit)
                  .iterdir()) == ["a.eval"]


def test_download_errors_are_clear(fake_hub: FakeHub, tmp_path: Path) -> None:
    with pytest.raises(HubError, match="download results tester/missing: .*RepositoryNotFound"):
        download_results("tester/missing")
    with pytest.raises(FileNotFoundError, match="no Inspect logs"):  # harness.logs.find_logs
        push_results([tmp_path], "tester/empty")
    not_a_log = tmp_path / "x.txt"
    not_a_log.write_text("hello", encoding="utf-8")
    with pytest.raises(ValueError, match=r"x\.txt: not an Inspect log"):
        push_results([not_a_log], "tester/empty")


def test_download_results_reads_a_resolved_commit_and_says_which(
        fake_hub: FakeHub, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """`main` moves with every push: each read resolves it to the commit it names then,
    reads that commit (the cache's snapshot folder is named by it) and logs it."""
    a, b = tmp_path / "a.eval", tmp_path / "b.eval"
    write_log(a, "envfactory", {"overall": 0.1}, 2)
    write_log(b, "envfactory", {"overall": 0.2}, 2)
    first = push_results([a], "tester/moving")
    caplog.set_level(logging.INFO, logger="envs.releases")

    old = download_results("tester/moving")
    assert snapshot_commit(old) == first.commit and len(first.commit) == 40
    assert f"at commit {first.commit}" in caplog.text

    second = push_results([b], "tester/moving")
    new = download_results("tester/moving")
    assert second.commit != first.commit and snapshot_commit(new) == second.commit
    assert sorted(p.name for p in new.iterdir()) == ["a.eval", "b.eval"]
    assert sorted(p.name for p in old.iterdir()) == ["a.eval"]  # the older snapshot stays
    # a branch or a commit is resolved the same way
    assert snapshot_commit(download_results("tester/moving", revision="main")) == second.commit
    assert snapshot_commit(download_results("tester/moving",
                                            revision=first.commit)) == first.commit
    assert snapshot_commit(tmp_path) is None  # not a Hub snapshot


def test_download_results_of_an_unknown_revision_is_a_hub_error(fake_hub: FakeHub,
                                                                tmp_path: Path) -> None:
    write_log(tmp_path / "a.eval", "envfactory", {"overall": 0.1}, 2)
    push_results([tmp_path / "a.eval"], "tester/revs2")
    with pytest.raises(HubError, match="download results tester/revs2: .*Revision"):
        download_results("tester/revs2", revision="no-such-branch")


def test_cli_from_hub_prints_the_commit_it_read(fake_hub: FakeHub, tmp_path: Path) -> None:
    write_log(tmp_path / "a.eval", "envfactory", {"overall": 0.1}, 2)
    pushed = push_results([tmp_path / "a.eval"], "tester/board")
    result = CliRunner().invoke(app, ["leaderboard", "build", "--from-hub", "tester/board",
                                      "--no-taxonomy", "--out-dir", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert f"--from-hub tester/board: main is commit {pushed.commit}; read " in result.output
    assert "1 logs" in result.output
