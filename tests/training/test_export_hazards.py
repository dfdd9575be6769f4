"""What a new user hits between logs, trajectories and training exports (issue 24).

Each test is one hazard a user met: output destroyed by a failed run, half-written
exports, a traceback for a wrong path, two exports racing on one folder, and benchmark
conversations accepted as training data. Expected counts come from the shipped task
files (the gold calls per turn), not from the code under test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from typer.testing import CliRunner

import training.export as export_module
from envfactory.cli import app
from harness.trajectory import Message, MessageCall, Provenance, Trajectory, Turn, read_jsonl
from tasks._envfactory.dataset import DATA_DIR
from training.export import ExportLocked, OutputInUse, export, output_lock

#: two shipped training tasks; their gold calls per turn are [2, 1, 2] and [4, 1]
TRAIN_IDS = ["bank_ledger-001", "bank_ledger-002"]
GOLD_TURNS = 5


def run(*args: str) -> tuple[int, list[str], str]:
    """(exit code, stderr lines, stdout) of `envfactory ARGS` in this process."""
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stderr.splitlines(), result.stdout


@pytest.fixture(scope="module")
def train_log(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    """An oracle run of two shipped training tasks (a recorded run that may be trained on)."""
    from tasks.envfactory.envfactory import envfactory

    (log,) = inspect_eval(envfactory(split="train"), model="envfactory/oracle",
                          sample_id=TRAIN_IDS, display="none",
                          log_dir=str(tmp_path_factory.mktemp("train_log")))
    assert log.status == "success"
    return log


@pytest.fixture(scope="module")
def bfcl_log(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    """An oracle run of two BFCL multi-turn entries (benchmark data: never training data)."""
    from tasks.bfcl_multiturn.bfcl_multiturn import bfcl_multiturn

    (log,) = inspect_eval(bfcl_multiturn(category="base"), model="envfactory/oracle",
                          sample_id=["multi_turn_base_0", "multi_turn_base_1"],
                          display="none", log_dir=str(tmp_path_factory.mktemp("bfcl_log")))
    assert log.status == "success"
    return log


@pytest.fixture()
def keep(tmp_path: Path) -> Path:
    """An existing output the user cares about."""
    path = tmp_path / "keep.jsonl"
    path.write_text('{"precious": true}\n' * 1000)
    return path


# -- envfactory trajectories --------------------------------------------------------------

def test_a_corrupt_log_fails_in_one_line_and_leaves_out_as_it_was(
        tmp_path: Path, keep: Path, train_log: EvalLog) -> None:
    fake = tmp_path / "fake.eval"
    fake.write_text("not a zip file")
    before = keep.read_bytes()
    for logs in ([str(fake)], [train_log.location, str(fake)]):
        code, err, _ = run("trajectories", *logs, "--out", str(keep))
        assert code == 1 and len(err) == 1, err
        assert err[0].startswith(f"error: {fake}: not a readable Inspect log")
        assert keep.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []


def test_a_folder_is_read_as_the_logs_inside_it(tmp_path: Path, train_log: EvalLog) -> None:
    out = tmp_path / "runs.jsonl"
    folder = Path(train_log.location).parent
    code, err, stdout = run("trajectories", str(folder), "--out", str(out))
    assert code == 0, err
    assert sorted(t.id for t in read_jsonl(out)) == TRAIN_IDS
    assert "2 trajectories from 1 logs" in stdout


def test_an_empty_folder_or_a_log_without_samples_is_refused(
        tmp_path: Path, keep: Path, train_log: EvalLog) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    before = keep.read_bytes()
    code, err, _ = run("trajectories", str(empty), "--out", str(keep))
    assert (code, err) == (1, [f"error: {empty}: no Inspect logs (*.eval, *.json) in this "
                               "folder"])
    header = read_eval_log(train_log.location, header_only=True)
    sampleless = tmp_path / "sampleless.eval"
    write_eval_log(header.model_copy(update={"samples": None}), str(sampleless))
    code, err, _ = run("trajectories", str(sampleless), "--out", str(keep))
    assert code == 1 and len(err) == 1 and err[0].startswith("error: no samples in "), err
    assert keep.read_bytes() == before


def test_out_naming_a_folder_is_a_usage_error(tmp_path: Path, train_log: EvalLog) -> None:
    code, err, _ = run("trajectories", train_log.location, "--out", str(tmp_path))
    assert code == 2 and len(err) == 1 and "is a folder" in err[0], err


# -- envfactory train export: recorded runs ------------------------------------------------

def test_a_recorded_training_run_exports(tmp_path: Path, train_log: EvalLog) -> None:
    runs = tmp_path / "runs.jsonl"
    assert run("trajectories", train_log.location, "--out", str(runs))[0] == 0
    out = tmp_path / "exports"
    code, err, _ = run("train", "export", str(runs), "--out-dir", str(out),
                       "--val-ratio", "0")
    assert code == 0, err
    manifest = json.loads((out / "manifest.json").read_text())
    # one RL row per turn with gold calls; no validation split asked, an empty val file
    assert (manifest["rl_train_rows"], manifest["rl_val_rows"]) == (GOLD_TURNS, 0)
    assert manifest["sft_samples"] > 0 and manifest["allow_benchmark_data"] is False
    assert sorted(p.name for p in (out / "rl").iterdir()) == [
        "tools.yaml", "train.parquet", "val.parquet"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [
        ".exports.lock"]  # no temporary folder left


def test_a_recorded_benchmark_run_is_refused_unless_allowed(
        tmp_path: Path, bfcl_log: EvalLog) -> None:
    runs = tmp_path / "bfcl.jsonl"
    assert run("trajectories", bfcl_log.location, "--out", str(runs))[0] == 0
    out = tmp_path / "exports"
    code, err, _ = run("train", "export", str(runs), "--out-dir", str(out))
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(f"error: {runs}: trajectory multi_turn_base_0 is BFCL v3 "
                             "benchmark data (environment bfcl/")
    assert not out.exists()
    code, err, stdout = run("train", "export", str(runs), "--out-dir", str(out),
                            "--allow-benchmark-data")
    assert code == 0, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["allow_benchmark_data"] is True
    assert manifest["benchmark_trajectories"] == {"BFCL v3": 2}
    # BFCL's logs carry no gold calls: SFT samples only, empty RL files of the right schema
    assert (manifest["rl_train_rows"], manifest["rl_val_rows"]) == (0, 0)
    assert manifest["sft_samples"] > 0
    assert "benchmark data allowed: BFCL v3" in stdout


def _recorded(env: list[str], task: str) -> Trajectory:
    """A recorded run in a benchmark's log shape: its environments and its task name."""
    return Trajectory(
        id="s-1", environments=env, initial_state={}, turns=[Turn(user="hi")],
        messages=[Message(role="user", content="hi", turn=0),
                  Message(role="assistant", turn=0, tool_calls=[
                      MessageCall(id="c1", name="search", arguments={"q": "x"})]),
                  Message(role="tool", content="found", tool_call_id="c1",
                          requestor="assistant", turn=0)],
        provenance=Provenance(source="inspect-log"), metadata={"task": task})


@pytest.mark.parametrize(("environments", "task", "benchmark", "why"), [
    (["tau2/airline"], "tau2_airline", "τ²-bench", "environment tau2/airline"),
    (["vitabench/delivery"], "vitabench_delivery", "VitaBench", "environment vitabench/delivery"),
    ([], "mcp_atlas", "MCP-Atlas", "task mcp_atlas"),  # MCP servers, no registered env
    ([], "bfcl_singleturn", "BFCL v3", "task bfcl_singleturn"),  # executes nothing
    ([], "tasks/bfcl_singleturn/bfcl_singleturn.py@bfcl_singleturn", "BFCL v3",
     "task tasks/bfcl_singleturn/bfcl_singleturn.py@bfcl_singleturn"),
])
def test_every_benchmark_shape_is_refused(tmp_path: Path, environments: list[str], task: str,
                                          benchmark: str, why: str) -> None:
    data = tmp_path / "runs.jsonl"
    data.write_text(_recorded(environments, task).model_dump_json() + "\n")
    with pytest.raises(ValueError) as refused:
        export([data], tmp_path / "out")
    assert str(refused.value).startswith(f"{data}: trajectory s-1 is {benchmark} benchmark "
                                         f"data ({why});")
    assert not (tmp_path / "out").exists()


def test_a_task_name_that_only_starts_like_a_benchmark_is_not_one(tmp_path: Path) -> None:
    data = tmp_path / "runs.jsonl"
    data.write_text(_recorded(["bank_ledger"], "bfclever").model_dump_json() + "\n")
    assert export([data], tmp_path / "out", val_ratio=0).sft_samples == 1


# -- envfactory train export: the output folder -------------------------------------------

def _train_data(tmp_path: Path) -> Path:
    """Two shipped training tasks (their gold calls are replayed for SFT)."""
    lines = (DATA_DIR / "train.jsonl").read_text().splitlines()
    data = tmp_path / "train.jsonl"
    data.write_text("".join(line + "\n" for line in lines
                            if json.loads(line)["id"] in TRAIN_IDS))
    return data


def test_an_empty_input_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    out = tmp_path / "exports"
    code, err, _ = run("train", "export", str(empty), "--out-dir", str(out))
    assert (code, err) == (1, [f"error: no trajectories in {empty}: nothing to export"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.jsonl"]


def test_out_dir_naming_a_file_is_a_usage_error(tmp_path: Path) -> None:
    file = tmp_path / "existing_file"
    file.write_text("mine")
    code, err, _ = run("train", "export", str(_train_data(tmp_path)), "--out-dir", str(file))
    assert code == 2 and len(err) == 1, err
    assert f"--out-dir {file}: is a file, not a folder" in err[0]
    assert file.read_text() == "mine"


def test_a_folder_with_files_is_replaced_only_with_overwrite(tmp_path: Path) -> None:
    data = _train_data(tmp_path)
    out = tmp_path / "exports"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    code, err, _ = run("train", "export", str(data), "--out-dir", str(out))
    assert code == 2 and len(err) == 1 and "already holds files" in err[0], err
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    code, err, _ = run("train", "export", str(data), "--out-dir", str(out), "--overwrite")
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "rl", "sft"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".exports.lock", "exports",
                                                          "train.jsonl"]


def test_a_failure_while_writing_leaves_the_old_export_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _train_data(tmp_path)
    out = tmp_path / "exports"
    first = export([data], out)
    old = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def broken(environments: list[str]) -> dict[str, object]:
        raise OSError("disk full")

    monkeypatch.setattr(export_module, "tools_config", broken)
    with pytest.raises(OSError, match="disk full"):
        export([data], out, seed=first.seed + 1, overwrite=True)
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == old
    assert sorted(p.name for p in tmp_path.iterdir()) == [".exports.lock", "exports",
                                                          "train.jsonl"]


def test_a_second_export_to_a_locked_folder_fails_naming_the_holder(tmp_path: Path) -> None:
    """Two real processes: one holds the folder's lock, `envfactory train export` runs."""
    data = _train_data(tmp_path)
    out = tmp_path / "same"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from pathlib import Path; from training.export import output_lock\n"
         f"with output_lock(Path({str(out)!r})):\n"
         "    print('locked', flush=True); sys.stdin.readline()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        second = subprocess.run(
            [sys.executable, "-m", "envfactory", "train", "export", str(data),
             "--out-dir", str(out)], capture_output=True, text=True, check=False)
        assert second.returncode == 1, second.stderr
        assert second.stderr.splitlines() == [
            f"error: {out}: another export is writing it (pid {holder.pid}, lock "
            f"{tmp_path / '.same.lock'}); wait for it to finish or choose another --out-dir"]
        assert not out.exists()
    finally:
        holder.communicate("\n")
    assert holder.returncode == 0
    assert export([data], out).conversations == 2  # free again once the holder is gone


def test_the_lock_is_refused_in_process_too(tmp_path: Path) -> None:
    """flock locks belong to open files: a second lock from the same process is refused
    as well, so one process's two exports do not interleave either."""
    with output_lock(tmp_path / "same"), pytest.raises(ExportLocked):
        export([_train_data(tmp_path)], tmp_path / "same")


def test_output_in_use_is_checked_before_any_reading(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"  # never read: the output check comes first
    file = tmp_path / "file"
    file.write_text("")
    with pytest.raises(OutputInUse):
        export([missing], file)
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(OutputInUse, match="already holds files"):
        export([missing], folder, overwrite=False)


def test_find_logs_skips_listings_and_hidden_folders(tmp_path: Path) -> None:
    from harness.logs import find_logs

    for name in ("run/a.eval", "run/nested/b.json", "run/logs.json", "run/.cache/c.eval",
                 "run/notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    run_dir = tmp_path / "run"
    assert find_logs([run_dir, run_dir / "a.eval"]) == [run_dir / "a.eval",
                                                        run_dir / "nested" / "b.json"]


def test_allowed_benchmark_data_without_turns_is_nothing_to_export(tmp_path: Path) -> None:
    """A BFCL single-turn run converts to a record without turns (it executes nothing):
    allowed in, it gives no sample and no row, and says so rather than failing inside."""
    data = tmp_path / "runs.jsonl"
    record = Trajectory(id="simple_0", environments=[], initial_state={}, turns=[],
                        provenance=Provenance(source="inspect-log"),
                        metadata={"task": "bfcl_singleturn"})
    data.write_text(record.model_dump_json() + "\n")
    with pytest.raises(ValueError, match=r"^1 trajectories give no SFT sample .* nothing to "
                                         "export$"):
        export([data], tmp_path / "out", allow_benchmark_data=True)
    assert not (tmp_path / "out").exists()
