"""`push_dataset` against the fake Hub: splits as parquet, the card, idempotent re-pushes,
visibility and branches; read back by `datasets.load_dataset` in a fresh process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from envfactory.cli import app
from leaderboard.hub import push_dataset
from tests.leaderboard.fake_hub import TOKEN, FakeHub, fake_hub_fixture, run_client  # noqa: F401

TASKS = Path(__file__).resolve().parents[2] / "tasks" / "envfactory" / "data"


def _lines(path: Path, n: int) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line][:n]


@pytest.fixture
def querygen_dir(tmp_path: Path) -> Path:
    """A QueryGen-shaped output directory: 3 training trajectories, a rejection (not data),
    the manifest and a contamination report."""
    out = tmp_path / "qg"
    out.mkdir()
    (out / "trajectories.jsonl").write_text(
        "\n".join(_lines(TASKS / "train.jsonl", 3)) + "\n", encoding="utf-8")
    (out / "rejections.jsonl").write_text(
        json.dumps({"id": "qg-7-000003", "reason": "judge_rejected"}) + "\n", encoding="utf-8")
    (out / "manifest.json").write_text(json.dumps(
        {"preset": "sft_nonconv", "seed": 7, "n": 4, "kept": 3,
         "rejected": {"judge_rejected": 1}}), encoding="utf-8")
    (out / "contamination.md").write_text(
        "# Contamination\n\nNo 13-gram overlap with BFCL or tau2 prompts.\n", encoding="utf-8")
    return out


def _front_matter(text: str) -> dict:
    assert text.startswith("---\n")
    return yaml.safe_load(text[4:text.index("\n---\n", 4)])


def test_push_dataset_splits_card_and_load_dataset(fake_hub: FakeHub, querygen_dir: Path,
                                                   tmp_path: Path) -> None:
    heldout = tmp_path / "heldout.jsonl"
    heldout.write_text("\n".join(_lines(TASKS / "heldout.jsonl", 2)) + "\n", encoding="utf-8")
    train_records = [json.loads(line) for line in _lines(TASKS / "train.jsonl", 3)]
    test_records = [json.loads(line) for line in _lines(TASKS / "heldout.jsonl", 2)]

    result = push_dataset([querygen_dir, heldout], "tester/trajectories", private=True)

    assert result.url == f"{fake_hub.url}/datasets/tester/trajectories"
    assert result.changed and result.revision == "main"
    assert fake_hub.commits("tester/trajectories", "dataset")[0].sha == result.commit
    files = fake_hub.files("tester/trajectories", "dataset")
    assert sorted(files) == [".gitattributes", "README.md",
                             "data/test-00000-of-00001.parquet",
                             "data/train-00000-of-00001.parquet"]
    assert files["data/train-00000-of-00001.parquet"].lfs
    assert fake_hub.repo("tester/trajectories", "dataset").private

    card = fake_hub.read("tester/trajectories", "README.md", "dataset").decode()
    meta = _front_matter(card)
    assert meta["license"] == "mit"
    assert meta["task_categories"] == ["text-generation"]
    assert meta["configs"][0]["data_files"] == [
        {"split": "train", "path": "data/train-00000-of-00001.parquet"},
        {"split": "test", "path": "data/test-00000-of-00001.parquet"}]
    assert {s["name"]: s["num_examples"] for s in meta["dataset_info"]["splits"]} == {
        "train": 3, "test": 2}
    for env in {e for r in train_records + test_records for e in r["environments"]}:
        assert f"`{env}`" in card
    assert '"seed": 7' in card  # the manifest
    assert "No 13-gram overlap with BFCL or tau2 prompts." in card  # the report
    assert "qg-7-000003" not in card and TOKEN not in card

    code = """
import json
from datasets import load_dataset
from harness.trajectory import Trajectory
ds = load_dataset("tester/trajectories")
out = {split: [{"id": row["id"], "environments": row["environments"],
                "num_turns": row["num_turns"],
                "record": Trajectory.model_validate_json(row["trajectory"]).model_dump(
                    mode="json", exclude_none=True)} for row in ds[split]]
       for split in ds}
out["features"] = {name: str(f) for name, f in ds["train"].features.items()}
print(json.dumps(out))
"""
    got = run_client(code, fake_hub, tmp_path / "reader-home")
    assert sorted(k for k in got if k != "features") == ["test", "train"]
    for split, records in (("train", train_records), ("test", test_records)):
        assert [r["id"] for r in got[split]] == [r["id"] for r in records]
        assert [r["environments"] for r in got[split]] == [r["environments"] for r in records]
        assert [r["num_turns"] for r in got[split]] == [len(r["turns"]) for r in records]
        # the canonical record comes back whole
        assert [r["record"] for r in got[split]] == records
    assert got["features"]["num_turns"] == "Value('int64')"


def test_repush_is_idempotent_and_drops_stale_splits(fake_hub: FakeHub, querygen_dir: Path,
                                                     tmp_path: Path) -> None:
    heldout = tmp_path / "heldout.jsonl"
    heldout.write_text("\n".join(_lines(TASKS / "heldout.jsonl", 2)) + "\n", encoding="utf-8")
    first = push_dataset([querygen_dir, heldout], "tester/again")
    commits = len(fake_hub.commits("tester/again", "dataset"))

    same = push_dataset([querygen_dir, heldout], "tester/again")
    assert not same.changed and same.commit == first.commit
    assert len(fake_hub.commits("tester/again", "dataset")) == commits

    fewer = push_dataset([querygen_dir], "tester/again")
    assert fewer.changed and fewer.deleted == ["data/test-00000-of-00001.parquet"]
    assert len(fake_hub.commits("tester/again", "dataset")) == commits + 1  # one commit
    assert sorted(fake_hub.files("tester/again", "dataset")) == [
        ".gitattributes", "README.md", "data/train-00000-of-00001.parquet"]


def test_visibility_and_branch(fake_hub: FakeHub, querygen_dir: Path) -> None:
    push_dataset([querygen_dir], "tester/vis", private=True)
    assert fake_hub.repo("tester/vis", "dataset").private
    main_head = fake_hub.commits("tester/vis", "dataset")[0].sha
    (querygen_dir / "trajectories.jsonl").write_text(
        _lines(TASKS / "train.jsonl", 1)[0] + "\n", encoding="utf-8")

    on_dev = push_dataset([querygen_dir], "tester/vis", private=False, revision="dev")

    assert not fake_hub.repo("tester/vis", "dataset").private
    assert on_dev.revision == "dev" and on_dev.url.endswith("/datasets/tester/vis/tree/dev")
    assert fake_hub.commits("tester/vis", "dataset")[0].sha == main_head  # main untouched
    assert fake_hub.commits("tester/vis", "dataset", "dev")[0].sha == on_dev.commit
    card = fake_hub.read("tester/vis", "README.md", "dataset", revision="dev").decode()
    assert {s["name"]: s["num_examples"] for s in _front_matter(card)["dataset_info"]["splits"]
            } == {"train": 1}


def test_bad_input_is_named(fake_hub: FakeHub, tmp_path: Path) -> None:
    broken = tmp_path / "train.jsonl"
    broken.write_text('{"id": "x"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"train\.jsonl:1: invalid trajectory"):
        push_dataset([broken], "tester/bad")
    with pytest.raises(ValueError, match="no trajectory JSONL files"):
        push_dataset([tmp_path / "fake-hub"], "tester/bad")
    with pytest.raises(ValueError, match="NAMESPACE/NAME"):
        push_dataset([TASKS / "train.jsonl"], "just-a-name")
    assert fake_hub.repos == {}  # nothing was created


def test_cli_prints_url_and_commit(fake_hub: FakeHub, querygen_dir: Path) -> None:
    argv = ["hub", "push-dataset", str(querygen_dir), "--repo", "tester/cli", "--public",
            "--revision", "v1"]
    first = CliRunner().invoke(app, argv)
    assert first.exit_code == 0, first.output
    head = fake_hub.commits("tester/cli", "dataset", "v1")[0].sha
    assert f"{fake_hub.url}/datasets/tester/cli/tree/v1" in first.output
    assert f"revision v1, commit {head}: committed; 2 file(s) pushed" in first.output

    again = CliRunner().invoke(app, [*argv, "--json"])
    assert again.exit_code == 0, again.output
    result = json.loads(again.stdout)
    assert result["commit"] == head and result["changed"] is False
