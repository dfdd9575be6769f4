"""The release's Hub datasets as training inputs, offline: hand-made records in the release's
formats (tests/data/release_datasets/README.md says where each field comes from in
data_process.py) served by the fake Hub as `LARK-Lab/EnvFactory-*`, exported with
`envfactory train export --hub ID@REV`; counts in and out, every row left out named.
RL rows run on our own release-format server `NotesAPI` in a release-shaped root."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from envfactory.cli import app
from tests.leaderboard.fake_hub import TOKEN, FakeHub, fake_hub_fixture  # noqa: F401
from training.export import ExportSummary, export_hub
from training.release_datasets import HubUsageError, RowReport, parse_hub_ref

REPO = Path(__file__).resolve().parents[2]
RECORDS = REPO / "tests" / "data" / "release_datasets"
NOTES = REPO / "tests" / "data" / "envfactory_format" / "NotesAPI.py"
FILTERED, ALL, RL = ("LARK-Lab/EnvFactory-SFT-FILTERED", "LARK-Lab/EnvFactory-SFT-ALL",
                     "LARK-Lab/EnvFactory-RL")


def publish(hub: FakeHub, dataset: str, files: dict[str, Path]) -> str:
    """Put `files` (name in the repo -> local file) in `dataset` on the fake Hub; the
    commit made."""
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(dataset, repo_type="dataset", exist_ok=True)
    info = api.create_commit(dataset, repo_type="dataset", commit_message="data",
                             operations=[CommitOperationAdd(path_in_repo=name,
                                                            path_or_fileobj=str(path))
                                         for name, path in files.items()])
    return str(info.oid)


def release_root(tmp: Path) -> Path:
    """A release-shaped root (`envs/{tools,intermediate,metadata}`) with NotesAPI alone."""
    root = tmp / "release"
    for sub in ("tools", "intermediate", "metadata"):
        (root / "envs" / sub).mkdir(parents=True)
    shutil.copy(NOTES, root / "envs" / "tools" / "NotesAPI.py")
    return root


@pytest.fixture
def notes_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = release_root(tmp_path)
    monkeypatch.setenv("ENVFACTORY_RELEASE_DIR", str(root))
    return root


def manifest(out: Path) -> dict[str, Any]:
    return json.loads((out / "manifest.json").read_text())


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --- the reference -------------------------------------------------------------------------

def test_a_reference_needs_a_release_dataset_and_a_revision() -> None:
    assert parse_hub_ref(f"{RL}@{'a' * 40}").kind == "rl"
    assert parse_hub_ref(f"{FILTERED}@{'b' * 40}").kind == "sft"
    with pytest.raises(HubUsageError, match="a revision is required"):
        parse_hub_ref(FILTERED)
    with pytest.raises(HubUsageError, match="not a dataset of the EnvFactory release"):
        parse_hub_ref(f"someone/else@{'a' * 40}")


def test_a_branch_is_refused_before_any_download(tmp_path: Path) -> None:
    with pytest.raises(HubUsageError, match="pinned commit .* set --hub ID@REV"):
        export_hub(f"{RL}@main", tmp_path / "out")
    assert not (tmp_path / "out").exists()


# --- SFT -------------------------------------------------------------------------------------

def test_sft_filtered_exports_its_rows_as_written_and_names_each_bad_one(
        fake_hub: FakeHub, tmp_path: Path) -> None:
    commit = publish(fake_hub, FILTERED, {"data/train.json": RECORDS / "sft_filtered.json"})
    lines: list[str] = []
    summary = export_hub(f"{FILTERED}@{commit}", tmp_path / "out",
                         report=RowReport(on_problem=lines.append))
    rows = json.loads((RECORDS / "sft_filtered.json").read_text())
    assert (summary.hub is not None and summary.hub.rows_read == 6
            and summary.hub.rows_kept == summary.sft_samples == 3)
    assert summary.hub.commit == commit and summary.hub.revision == commit
    assert summary.hub.skipped == {"unknown field": 1, "missing field": 1, "bad value": 1}
    assert lines == summary.hub.problems == [
        "data/train.json row 3: tools: unknown field (data_process.py writes no such field)",
        "data/train.json row 4: history: missing",
        "data/train.json row 5: history: Input should be a valid list"]
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "sft"]  # no rl/
    info = json.loads((out / "sft" / "dataset_info.json").read_text())
    # the release's LlamaFactory entry's columns (notes §10), plus our (empty) tools column
    assert info == {"envfactory_sft": {"file_name": "envfactory_sft.jsonl", "columns": {
        "prompt": "instruction", "query": "input", "response": "output",
        "history": "history", "system": "system", "tools": "tools"}}}
    samples = jsonl(out / "sft" / "envfactory_sft.jsonl")
    assert [s["id"] for s in samples] == [f"data/train.json#{i}" for i in range(3)]
    for sample, row in zip(samples, rows, strict=False):
        assert {k: sample[k] for k in row} == row  # as written, think prefix kept
        assert sample["tools"] == ""
    got = manifest(out)
    assert got["think"] == "keep" and got["hub"]["dataset"] == FILTERED
    assert list(got["inputs"]) == [f"hf://datasets/{FILTERED}@{commit}/data/train.json"]


def test_think_strip_drops_only_the_targets_think_prefix(
        fake_hub: FakeHub, tmp_path: Path) -> None:
    commit = publish(fake_hub, FILTERED, {"train.json": RECORDS / "sft_filtered.json"})
    export_hub(f"{FILTERED}@{commit}", tmp_path / "out", think="strip")
    samples = jsonl(tmp_path / "out" / "sft" / "envfactory_sft.jsonl")
    rows = json.loads((RECORDS / "sft_filtered.json").read_text())
    assert samples[0]["output"] == rows[0]["output"].split("</think>\n\n", 1)[1]
    assert samples[0]["output"].startswith("<tool_call>\n")
    assert samples[1]["output"] == "I created the note Groceries (N1)."
    assert samples[2]["output"].startswith("<tool_call>\n")  # "<think>None</think>" too
    assert samples[2]["history"] == rows[2]["history"]  # history never had a think prefix
    assert manifest(tmp_path / "out")["think"] == "strip"


def test_sft_all_as_json_lines_counts_a_line_that_is_not_json(
        fake_hub: FakeHub, tmp_path: Path) -> None:
    commit = publish(fake_hub, ALL, {"sft_all.jsonl": RECORDS / "sft_all.jsonl"})
    summary = export_hub(f"{ALL}@{commit}", tmp_path / "out")
    assert summary.hub is not None
    assert (summary.hub.rows_read, summary.hub.rows_kept) == (3, 2)
    assert summary.hub.skipped == {"undecodable row": 1}
    assert summary.hub.problems[0].startswith("sft_all.jsonl row 1: not JSON: ")


# --- RL --------------------------------------------------------------------------------------

def rl_export(hub: FakeHub, out: Path, **kwargs: Any) -> ExportSummary:
    commit = publish(hub, RL, {"rl_train.json": RECORDS / "rl_train.json",
                               "rl_val.json": RECORDS / "rl_val.json"})
    return export_hub(f"{RL}@{commit}", out, **kwargs)


def test_rl_rows_become_verl_rows_on_release_environments(
        fake_hub: FakeHub, notes_release: Path, tmp_path: Path) -> None:
    import pandas as pd

    out = tmp_path / "out"
    summary = rl_export(fake_hub, out)
    assert summary.hub is not None
    assert (summary.hub.rows_read, summary.hub.rows_kept) == (10, 4)
    assert summary.hub.skipped == {"unknown server": 1, "invalid scenario": 1,
                                   "unknown tool": 1, "unknown field": 1,
                                   "missing field": 1, "bad value": 1}
    problems = summary.hub.problems
    assert problems[0].startswith("rl_train.json row 3: extra_info.mcp_factory_kwargs."
                                  "mcp_servers: unknown server 'Ghost'")
    assert problems[1].startswith("rl_train.json row 4: extra_info.mcp_factory_kwargs."
                                  "initial_config: refused by the server's load_scenario: "
                                  "ValidationError")
    assert problems[2] == ("rl_train.json row 5: reward_model.ground_truth[0].name: "
                           "'NotesAPI-delete_note' is no tool of release/NotesAPI")
    assert problems[3:5] == [
        "rl_train.json row 6: split: unknown field (data_process.py writes no such field)",
        "rl_train.json row 7: reward_model: missing"]
    assert problems[5].startswith("rl_train.json row 8: prompt: Invalid JSON")
    # the release's own split (its validation file), by conversation
    assert (summary.rl_train_rows, summary.rl_val_rows) == (3, 1)
    assert (summary.conversations, summary.train_conversations,
            summary.val_conversations) == (3, 2, 1)
    assert summary.environments == ["release/NotesAPI"]
    assert sorted(p.name for p in (out / "rl").iterdir()) == [
        "tools.yaml", "train.parquet", "val.parquet"]
    assert not (out / "sft").exists()

    train = pd.read_parquet(out / "rl" / "train.parquet").to_dict("records")
    source = json.loads((RECORDS / "rl_train.json").read_text())
    first, second = train[0], train[1]
    info = first["extra_info"]
    assert info["trajectory_id"] == second["extra_info"]["trajectory_id"]  # one conversation
    assert (info["turn"], second["extra_info"]["turn"], train[2]["extra_info"]["turn"]) == (
        0, 1, 0)
    assert [r["extra_info"]["index"] for r in train] == [0, 1, 2]
    # prompt: our system prompt, then the release's messages exactly as it wrote them
    assert first["prompt"][0]["role"] == "system"
    assert [dict(m) for m in second["prompt"][1:]] == json.loads(source[1]["prompt"])
    assert first["reward_model"]["ground_truth"] == source[0]["reward_model"]["ground_truth"]
    kwargs = json.loads(source[0]["extra_info"]["mcp_factory_kwargs"]["initial_config"])
    start = info["tools_kwargs"]["envfactory"]
    assert list(start["environments"]) == ["release/NotesAPI"]
    assert json.loads(start["start_state"]) == {"release/NotesAPI": kwargs["NotesAPI"]}
    final = json.loads(source[0]["extra_info"]["mcp_factory_kwargs"]["final_config"])
    assert json.loads(info["gold_final_state"]) == {"release/NotesAPI": final["NotesAPI"]}
    assert list(info["tool_selection"]) == [
        "NotesAPI-create_note", "NotesAPI-get_note", "NotesAPI-tag_note"]
    settings = {"variant": "release", "alpha": 0.5, "gamma": 0.05}
    assert json.loads(info["reward_settings"]) == settings
    assert manifest(out)["reward"] == settings
    tools = yaml.safe_load((out / "rl" / "tools.yaml").read_text())["tools"]
    assert [t["config"]["function"]["name"] for t in tools] == list(info["tool_selection"])


def test_an_exported_row_is_scored_by_our_reward_on_its_release_world(
        fake_hub: FakeHub, notes_release: Path, tmp_path: Path) -> None:
    import pandas as pd

    from training.verl.reward import compute_score
    from training.verl.session import RolloutSessions

    rl_export(fake_hub, tmp_path / "out")
    rows = pd.read_parquet(tmp_path / "out" / "rl" / "train.parquet").to_dict("records")

    def play(row: dict[str, Any], calls: list[dict[str, Any]]) -> dict[str, Any]:
        info = json.loads(json.dumps(row["extra_info"], default=list))
        extra: dict[str, Any] = {}
        sessions = RolloutSessions()
        for call in calls:  # what verl's tool loop does, call by call
            sessions.call("req", call["name"], call["arguments"], info["tools_kwargs"], extra)
        text = "".join(f"<tool_call>{json.dumps(c)}</tool_call>" for c in calls)
        return compute_score(row["data_source"], text, row["reward_model"]["ground_truth"],
                             {**info, **extra})

    tag = rows[1]  # turn 2: tag N1, from the state after turn 1
    gold = json.loads(tag["reward_model"]["ground_truth"])
    assert play(tag, gold)["score"] == 1.0  # the gold calls reach the release's final state
    wrong = [{"name": "NotesAPI-tag_note", "arguments": {"note_id": "N1", "tags": ["later"]}}]
    # release reward: R_traj 0 (tags differ), R_state 0 (other final state): 0.5*0 + 0.5*0
    assert play(tag, wrong)["score"] == 0.0
    masked = rows[2]  # `body` is masked in the gold: any wording matches R_traj ...
    free = [{"name": "NotesAPI-create_note",
             "arguments": {"title": "Ideas", "body": "write more tests"}}]
    assert play(masked, free)["score"] == 1.0  # ... and this body is the final state's


def test_without_a_validation_file_the_split_is_drawn_by_conversation(
        fake_hub: FakeHub, notes_release: Path, tmp_path: Path) -> None:
    import datasets
    import pandas as pd

    parquet = tmp_path / "train-00000-of-00001.parquet"
    good = json.loads((RECORDS / "rl_train.json").read_text())[:3]
    datasets.Dataset.from_list(good).to_parquet(str(parquet))
    commit = publish(fake_hub, RL, {"data/train-00000-of-00001.parquet": parquet})
    summary = export_hub(f"{RL}@{commit}", tmp_path / "out", val_ratio=0.5, seed=42)
    assert summary.hub is not None and summary.hub.rows_kept == 3 and not summary.hub.skipped
    assert summary.conversations == 2 and summary.val_conversations == 1
    splits: dict[str, set[str]] = {}
    for split in ("train", "val"):
        frame = pd.read_parquet(tmp_path / "out" / "rl" / f"{split}.parquet")
        for info in frame["extra_info"]:
            splits.setdefault(info["trajectory_id"], set()).add(split)
    assert all(len(s) == 1 for s in splits.values())  # each conversation on one side
    assert summary.rl_train_rows + summary.rl_val_rows == 3


def test_parquet_rows_missing_a_field_are_named(
        fake_hub: FakeHub, notes_release: Path, tmp_path: Path) -> None:
    import datasets

    good = json.loads((RECORDS / "rl_train.json").read_text())[0]
    parquet = tmp_path / "train.parquet"
    rows = [good, {**good, "ability": None}]  # parquet has one schema: a lacking field is null
    datasets.Dataset.from_list(rows).to_parquet(str(parquet))
    commit = publish(fake_hub, RL, {"train.parquet": parquet})
    summary = export_hub(f"{RL}@{commit}", tmp_path / "out", val_ratio=0.0)
    assert summary.hub is not None and summary.hub.problems == [
        "train.parquet row 1: ability: missing"]


def test_nothing_exportable_fails_naming_the_reasons(
        fake_hub: FakeHub, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"instruction": "x"}]))
    commit = publish(fake_hub, FILTERED, {"train.json": bad})
    with pytest.raises(ValueError, match=r"none of its 1 rows .*1 missing field"):
        export_hub(f"{FILTERED}@{commit}", tmp_path / "out")
    assert not (tmp_path / "out").exists()


# --- the commands ------------------------------------------------------------------------------

def test_train_export_hub_prints_each_row_left_out_and_the_counts(
        fake_hub: FakeHub, notes_release: Path, tmp_path: Path) -> None:
    commit = publish(fake_hub, RL, {"rl_train.json": RECORDS / "rl_train.json",
                                    "rl_val.json": RECORDS / "rl_val.json"})
    result = CliRunner().invoke(app, ["train", "export", "--hub", f"{RL}@{commit}",
                                      "--out-dir", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped: ")]
    assert len(skipped) == 6 and "unknown server 'Ghost'" in skipped[0]
    assert "rows read" in result.stdout and "release α=0.5 γ=0.05" in result.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--hub", f"{RL}@main"], "pinned commit"),
    (["--hub", RL], "a revision is required"),
    (["--hub", f"{RL}@{'a' * 40}", str(NOTES)], "one of the two"),
    ([], "one of the two"),
    (["--hub", f"{FILTERED}@{'a' * 40}", "--format", "sharegpt"], "does not apply"),
    ([str(NOTES), "--think", "strip"], "--hub SFT datasets only"),
])
def test_train_export_usage_errors_exit_2(args: list[str], message: str,
                                          tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["train", "export", "--out-dir", str(tmp_path / "o"),
                                      *args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr


def test_the_paper_presets_take_the_exports(fake_hub: FakeHub, notes_release: Path,
                                            tmp_path: Path) -> None:
    sft_commit = publish(fake_hub, FILTERED, {"train.json": RECORDS / "sft_filtered.json"})
    export_hub(f"{FILTERED}@{sft_commit}", tmp_path / "sft-data")
    rl_export(fake_hub, tmp_path / "rl-data")
    runner = CliRunner()
    sft = tmp_path / "sft.yaml"
    sft.write_text(yaml.safe_dump({"preset": "paper", "data": ["sft-data"],
                                   "output_dir": "sft-run"}))
    result = runner.invoke(app, ["train", "sft", str(sft), "--dry-run"])
    assert result.exit_code == 0, result.output
    rendered = yaml.safe_load(result.stdout)
    assert rendered["dataset_dir"] == str((tmp_path / "sft-data" / "sft").resolve())
    assert (rendered["dataset"], rendered["template"], rendered["mask_history"],
            rendered["learning_rate"], rendered["model_name_or_path"]) == (
        "envfactory_sft", "qwen3", True, 1e-6, "Qwen/Qwen3-8B")
    assert not (tmp_path / "sft-run").exists()  # a dry run writes nothing
    grpo = tmp_path / "grpo.yaml"
    grpo.write_text(yaml.safe_dump({"preset": "paper", "model": "Qwen/Qwen3-8B",
                                    "data": "rl-data", "output_dir": "grpo-run"}))
    result = runner.invoke(app, ["train", "grpo", str(grpo), "--dry-run"])
    assert result.exit_code == 0, result.output
    rl = (tmp_path / "rl-data" / "rl").resolve()
    assert f"data.train_files={rl / 'train.parquet'}" in result.stdout
    assert f"multi_turn.tool_config_path={rl / 'tools.yaml'}" in result.stdout


def test_an_rl_export_is_no_sft_data(fake_hub: FakeHub, notes_release: Path,
                                     tmp_path: Path) -> None:
    rl_export(fake_hub, tmp_path / "rl-data")
    config = tmp_path / "sft.yaml"
    config.write_text(yaml.safe_dump({"preset": "paper", "data": ["rl-data"],
                                      "output_dir": "run"}))
    result = CliRunner().invoke(app, ["train", "sft", str(config), "--dry-run"])
    assert result.exit_code == 1 and "no sft/dataset_info.json" in result.stderr


SHARED_RELEASE = REPO.parent / "shared" / "data" / "envfactory_release"


@pytest.mark.skipif(not (SHARED_RELEASE / "envs" / "tools" / "Airline.py").is_file(),
                    reason=f"EnvFactory release not found at {SHARED_RELEASE}")
def test_rows_on_a_real_release_server_start_from_its_checkpoint_scenarios(
        fake_hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two RL rows built here (in data_process.py's format, as the hand-made ones) on the
    release's `Airline`, from its checkpoint read at test time: a `pass` scenario is a
    starting state; `scenario_004` (`expected_behavior: validation_error`) is refused by
    the server's own load_scenario, so its row is counted as an invalid scenario."""
    monkeypatch.setenv("ENVFACTORY_RELEASE_DIR", str(SHARED_RELEASE))
    checkpoint = json.loads((SHARED_RELEASE / "envs" / "intermediate" /
                             "Airline_checkpoint.json").read_text())
    scenarios = {s["scenario_id"]: s for s in checkpoint["scenarios"]}
    assert scenarios["scenario_004"]["expected_behavior"] == "validation_error"

    def row(scenario: str) -> dict[str, Any]:
        data = {"Airline": scenarios[scenario]["scenario_data"]}
        return {"prompt": json.dumps([{"role": "user", "content": "Which airports?"}]),
                "data_source": "EnvFactory", "agent_name": "tool_agent",
                "ability": "tool_use",
                "reward_model": {"ground_truth": json.dumps([{
                    "name": "Airline-list_airports", "arguments": {},
                    "masked_arguments": []}]), "style": "rule"},
                "extra_info": {"mcp_factory_kwargs": {
                    "mcp_servers": json.dumps(["Airline"]),
                    "initial_config": json.dumps(data), "final_config": json.dumps(data)}}}

    records = tmp_path / "train.json"
    records.write_text(json.dumps([row("scenario_001"), row("scenario_004")]))
    commit = publish(fake_hub, RL, {"train.json": records})
    summary = export_hub(f"{RL}@{commit}", tmp_path / "out", val_ratio=0.0)
    assert summary.hub is not None and summary.hub.rows_kept == 1
    assert summary.hub.skipped == {"invalid scenario": 1}
    assert summary.hub.problems[0].startswith(
        "train.json row 1: extra_info.mcp_factory_kwargs.initial_config: refused by the "
        "server's load_scenario")
    assert summary.environments == ["release/Airline"]
