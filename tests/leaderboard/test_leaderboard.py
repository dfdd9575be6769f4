"""`envfactory leaderboard build`: values from real and hand-built logs, comparability
marks, baselines and deltas, checkpoint curves, the failure taxonomy, outputs and CLI.

Every expected number is worked out by hand from the scores the test writes (or, for the
real logs, from what an oracle / a text-only negative control must score)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from typer.testing import CliRunner

from envfactory.cli import app
from harness.trajectory import Call, Message, MessageCall, Provenance, Trajectory, Turn
from leaderboard import taxonomy as tx
from leaderboard.baselines import BaselineFile, load_baselines, reported_rows
from leaderboard.build import BuildError, build
from leaderboard.outputs import to_markdown
from leaderboard.read import find_logs, model_identity, read_logs
from leaderboard.records import Leaderboard, LogRecord
from leaderboard.table import build_table
from tasks.envfactory.envfactory import envfactory
from tests.leaderboard.logs import BFCL_META, showcase, write_log

ROOT = Path(__file__).resolve().parents[2]


def records(*paths: Path) -> list[LogRecord]:
    out = read_logs(find_logs(paths))
    assert all(isinstance(r, LogRecord) for r in out), out
    return out  # type: ignore[return-value]


def row(board: Leaderboard, key: str):  # noqa: ANN201 - RowInfo
    return next(r for r in board.rows if r.key == key)


# -- real logs: oracle 1.0, text-only negative control 0 -------------------------------


@pytest.fixture(scope="module")
def real_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    logs = tmp_path_factory.mktemp("real")
    ids = ["expense_reports-001", "expense_reports-002"]
    negative = logs / "negative.jsonl"
    negative.write_text("".join(json.dumps({"id": i, "turns": []}) + "\n" for i in ids))
    for model, args in (("envfactory/oracle", {}),
                        ("envfactory/replay", {"path": str(negative)})):
        [log] = inspect_eval(envfactory(), model=model, model_args=args, limit=2,
                             log_dir=str(logs / "runs"), display="none")
        assert log.status == "success"
    return logs / "runs"


def test_real_logs_oracle_one_negative_zero(real_logs: Path, tmp_path: Path) -> None:
    result = build([real_logs], tmp_path / "out", baselines=None)
    board = result.board
    oracle = row(board, "envfactory/oracle").cells
    negative = row(board, "envfactory/replay (negative.jsonl)").cells
    assert oracle["envfactory"].value == 1.0 and oracle["envfactory"].n == 2
    assert oracle["envfactory.r_state"].value == 1.0
    assert negative["envfactory"].value == 0.0 and negative["envfactory.r_traj"].value == 0.0
    # the cell recomputed from the samples equals what the log reports
    assert oracle["envfactory"].log_value == 1.0 and negative["envfactory"].log_value == 0.0
    assert oracle["envfactory"].comparable and negative["envfactory"].comparable
    # the negative control answered in text only: both failures are "no tool use"
    [entry] = board.taxonomy
    assert (entry.row, entry.category, entry.count) == (
        "envfactory/replay (negative.jsonl)", tx.NO_TOOL_USE, 2)
    assert {e.sample_id for e in entry.examples} == {"expense_reports-001",
                                                    "expense_reports-002"}
    assert board.failed_samples == {"envfactory/replay (negative.jsonl)": {"envfactory": 2}}


def test_taxonomy_in_worker_processes_matches_in_process(
        real_logs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    recs = records(real_logs)
    alone = tx.taxonomy(recs, workers=1)
    monkeypatch.setattr(tx, "PARALLEL_FROM", 0)
    seen: list[int] = []
    assert tx.taxonomy(recs, on_logs=seen.append, workers=2) == alone
    assert sum(seen) == len(recs)


# -- hand-built logs: values, intervals, pass^k --------------------------------------


def test_bfcl_overall_is_the_unweighted_mean_of_categories(tmp_path: Path) -> None:
    scores = [("multi_turn_base_0", 1, "C"), ("multi_turn_base_1", 1, "C"),
              ("multi_turn_base_2", 1, "C"), ("multi_turn_miss_func_0", 1, "C"),
              ("multi_turn_miss_func_1", 1, "I")]
    write_log(tmp_path / "a.eval", task="bfcl_multiturn", model="m/a", scores=scores,
              metadata=BFCL_META, limit=5)
    board = build_table(records(tmp_path))
    cells = row(board, "m/a").cells
    # (3/3 + 1/2) / 2, not the plain 4/5
    assert cells["bfcl_mt"].value == pytest.approx(0.75)
    assert cells["bfcl_mt.base"].value == 1.0 and cells["bfcl_mt.base"].n == 3
    assert cells["bfcl_mt.miss_func"].value == 0.5
    assert cells["bfcl_mt"].n == 5
    low, high = cells["bfcl_mt"].ci_low, cells["bfcl_mt"].ci_high
    assert low is not None and high is not None
    # base never varies, miss_func resamples to 0, 0.5 or 1: overall in [0.5, 1]
    assert 0.5 <= low < 0.75 < high <= 1.0


def test_tau2_pass_hat_k_over_epochs(tmp_path: Path) -> None:
    trials = {0: [1.0, 1.0], 1: [1.0, 0.0], 2: [0.0, 0.0]}
    scores = [(sid, e + 1, v) for sid, vs in trials.items() for e, v in enumerate(vs)]
    write_log(tmp_path / "t.eval", task="tau2_airline", model="m/a", scores=scores,
              metadata={"benchmark": "tau2", "domain": "airline", "tau2_release": "v0.2.0"},
              epochs=2, scorer="tau2_scorer", metrics={"pass^1": 0.5})
    cell = row(build_table(records(tmp_path)), "m/a").cells["tau2.airline"]
    assert cell.value == pytest.approx(0.5) and cell.n == 3 and cell.epochs == 2
    assert cell.pass_hat == pytest.approx({"pass^1": 0.5, "pass^2": 1 / 3})
    assert cell.log_value == 0.5
    assert "50.0 [0.0, 100.0] n=3×2 pass^1=50.0 pass^2=33.3" in to_markdown(
        build_table(records(tmp_path)))
    # one domain only: the τ² average is marked partial, not passed off as the average
    avg = row(build_table(records(tmp_path)), "m/a").cells["tau2"]
    assert not avg.comparable and "retail, telecom missing" in (avg.note or "")


# -- comparability ----------------------------------------------------------------------


def test_cells_with_other_data_version_or_limit_are_marked(tmp_path: Path) -> None:
    scores = [("multi_turn_base_0", 1, "C"), ("multi_turn_base_1", 1, "I")]
    for model in ("m/a", "m/b"):
        write_log(tmp_path / f"{model[-1]}.eval", task="bfcl_multiturn", model=model,
                  scores=scores, metadata=BFCL_META, limit=2)
    write_log(tmp_path / "c.eval", task="bfcl_multiturn", model="m/c", scores=scores,
              metadata={**BFCL_META, "bfcl_data_prefix": "BFCL_v4"}, limit=2)
    write_log(tmp_path / "d.eval", task="bfcl_multiturn", model="m/d", scores=scores,
              metadata=BFCL_META, limit=5)
    board = build_table(records(tmp_path))
    assert row(board, "m/a").cells["bfcl_mt"].comparable
    assert row(board, "m/b").cells["bfcl_mt"].comparable
    c, d = row(board, "m/c").cells["bfcl_mt"], row(board, "m/d").cells["bfcl_mt"]
    assert not c.comparable and "bfcl_data_prefix BFCL_v4 (column: BFCL_v3)" in (c.note or "")
    assert not d.comparable and "limit 5 (column: 2)" in (d.note or "")
    column = next(col for col in board.columns if col.key == "bfcl_mt")
    assert column.reference["bfcl_data_prefix"] == "BFCL_v3" and column.reference["limit"] == "2"


def test_newest_log_of_a_row_and_task_wins(tmp_path: Path) -> None:
    old = write_log(tmp_path / "old.eval", task="bfcl_multiturn", model="m/a",
                    scores=[("multi_turn_base_0", 1, "I")], metadata=BFCL_META,
                    created="2026-06-01T10:00:00+00:00")
    write_log(tmp_path / "new.eval", task="bfcl_multiturn", model="m/a",
              scores=[("multi_turn_base_0", 1, "C")], metadata=BFCL_META,
              created="2026-06-02T10:00:00+00:00")
    board = build_table(records(tmp_path))
    assert row(board, "m/a").cells["bfcl_mt"].value == 1.0
    assert board.superseded == [str(old)]


# -- baselines --------------------------------------------------------------------------


def test_shipped_baselines_and_their_deltas() -> None:
    data = load_baselines()
    rows = {r.key: r for r in reported_rows(data)}
    ef4 = rows["reported:EnvFactory 4B"]
    assert ef4.base_row == "reported:Qwen3 4B" and ef4.kind == "reported"
    # the paper's own gains: +15.00 BFCL multi-turn at 4B, +7.75 at 8B
    assert ef4.cells["bfcl_mt"].value == pytest.approx(0.485)
    assert ef4.cells["bfcl_mt"].delta == pytest.approx(0.15)
    assert rows["reported:EnvFactory 8B"].cells["bfcl_mt"].delta == pytest.approx(0.0775)
    assert rows["reported:EnvScaler 4B"].cells["mcp_atlas"].value == pytest.approx(0.0997)
    assert rows["reported:Qwen3 4B"].cells["bfcl_mt"].delta is None
    assert all(r.source and r.source.startswith(data.paper) for r in rows.values())


def test_a_baselines_file_mixing_papers_is_refused(tmp_path: Path) -> None:
    data = json.loads((ROOT / "leaderboard/baselines.json").read_text())
    data["rows"][3]["source"] = "EnvScaler (arXiv 2601.05808), Table 2"
    bad = tmp_path / "baselines.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"rows\[3\].*never mixes papers"):
        load_baselines(bad)
    data["rows"][3]["source"] = data["paper"]
    data["rows"][3]["values"] = {"bfcl_multi": 1.0}
    bad.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="unknown column"):
        load_baselines(bad)


def test_reported_rows_sit_beside_measured_ones(tmp_path: Path) -> None:
    write_log(tmp_path / "a.eval", task="bfcl_multiturn", model="m/a",
              scores=[("multi_turn_base_0", 1, "C")], metadata=BFCL_META)
    board = build_table(records(tmp_path), BaselineFile.model_validate(
        json.loads((ROOT / "leaderboard/baselines.json").read_text())))
    kinds = [r.kind for r in board.rows]
    # the main table's 11 rows and the 3 SFT-only rows of its ablations
    assert kinds[0] == "measured" and kinds.count("reported") == 14
    assert board.baselines_source == "EnvFactory (arXiv 2605.18703)"


# -- checkpoint curves ------------------------------------------------------------------


def _checkpoint(tmp_path: Path, name: str, step: int | None, method: str, correct: int,
                run: str = "run1") -> None:
    meta = {**BFCL_META, "envfactory_run_id": run, "envfactory_method": method,
            "envfactory_base_model": "org/base", "envfactory_step": step,
            "envfactory_checkpoint": f"/ckpt/{name}"}
    scores = [(f"multi_turn_base_{i}", 1, "C" if i < correct else "I") for i in range(4)]
    write_log(tmp_path / f"{name}.eval", task="bfcl_multiturn", model="hf/local",
              scores=scores, metadata=meta, limit=4)


def test_checkpoints_of_a_run_form_a_curve(tmp_path: Path) -> None:
    _checkpoint(tmp_path, "checkpoint-200", 200, "sft", 3)
    _checkpoint(tmp_path, "base", None, "base", 1)
    _checkpoint(tmp_path, "checkpoint-100", 100, "sft", 2)
    board = build_table(records(tmp_path))
    points = board.curves["run1"]["bfcl_mt"]
    assert [(p.step, p.value) for p in points] == [(0, 0.25), (100, 0.5), (200, 0.75)]
    ck = row(board, "run1/checkpoint-200")
    assert (ck.run_id, ck.method, ck.step) == ("run1", "sft", 200)
    assert ck.base_row == "org/base"  # the base model's one row (`model_identity`)
    assert ck.cells["bfcl_mt"].delta == pytest.approx(0.5)
    result = build([tmp_path], tmp_path / "out", baselines=None, with_taxonomy=False)
    assert result.board.curves == board.curves
    assert "step 0: 25.0, step 100: 50.0, step 200: 75.0" in (
        tmp_path / "out/leaderboard.md").read_text()
    assert (tmp_path / "out/plots/curve_run1.svg").read_text().count("<path") > 3


def test_a_base_model_scored_on_its_own_is_the_curves_step_0(tmp_path: Path) -> None:
    """`envfactory demo` scores the base model outside the run (its own run id); it still
    pairs with the run's checkpoints through the base model they name."""
    _checkpoint(tmp_path, "merged", 30, "sft", 3)
    _checkpoint(tmp_path, "base", None, "base", 1, run="org/base")
    board = build_table(records(tmp_path))
    assert row(board, "run1/merged").base_row == "org/base"
    assert [(p.step, p.value) for p in board.curves["run1"]["bfcl_mt"]] == [
        (0, 0.25), (30, 0.75)]
    assert "org/base" not in board.curves  # a base alone is no curve


# -- failure taxonomy -------------------------------------------------------------------


def _traj(messages: list[Message], turns: list[Turn] | None = None,
          termination: str = "turns_done") -> Trajectory:
    return Trajectory(id="x", environments=["e"], initial_state={}, turns=turns or [],
                      messages=messages, termination=termination,
                      provenance=Provenance(source="test"))


def _call(name: str, arguments: dict | None = None, parse_error: str | None = None
          ) -> Message:
    return Message(role="assistant", content="", turn=0, tool_calls=[MessageCall(
        id="c1", name=name, arguments=arguments or {}, parse_error=parse_error)])


def _result(text: str, error: bool = False) -> Message:
    return Message(role="tool", content=text, tool_call_id="c1", error=error, turn=0)


GOLD = [Call(env="e", name="add", arguments={"x": 1, "note": "n"}, masked_arguments=["note"])]


@pytest.mark.parametrize(("case", "kwargs", "expected"), [
    ("user side errored", {"traj": _traj([], termination="user_error")}, tx.USER_JUDGE),
    ("judge gave no score", {"traj": _traj([_call("add")]), "values": {}}, tx.USER_JUDGE),
    ("step limit", {"traj": _traj([_call("add")], termination="max_steps")}, tx.LIMIT),
    ("inspect limit", {"traj": _traj([_call("add")]), "limit": "message"}, tx.LIMIT),
    ("text only", {"traj": _traj([Message(role="assistant", content="hi", turn=0)])},
     tx.NO_TOOL_USE),
    ("undecodable", {"traj": _traj([_call("add", parse_error="bad JSON")])}, tx.MALFORMED),
    ("unknown tool", {"traj": _traj([_call("nope"), _result(
        "Error: Unknown tool 'nope'. Available tools: add.", True)])}, tx.UNKNOWN_TOOL),
    ("stopped early", {"traj": _traj([_call("add")], [Turn(user="u")],
                                     termination="agent_stop"), "user_turns": 3},
     tx.STOPPED_EARLY),
    ("invalid arguments, never fixed", {"traj": _traj([_call("add")], [Turn(
        user="u", calls=[Call(env="e", name="add", ok=False, result="Invalid arguments "
                              "for tool 'add': missing required argument 'x'.")])])},
     tx.WRONG_ARGUMENTS),
    ("tool error, never recovered", {"traj": _traj([_call("add")], [Turn(
        user="u", calls=[Call(env="e", name="add", ok=False, result="record not found")])])},
     tx.NO_RECOVERY),
    ("gold tool never called", {"traj": _traj([_call("list")], [Turn(
        user="u", gold_calls=GOLD, calls=[Call(env="e", name="list", ok=True)])])},
     tx.MISSING_CALL),
    ("one gold tool missing, another with other arguments", {"traj": _traj([_call("add")], [
        Turn(user="u", gold_calls=GOLD, calls=[Call(env="e", name="add", ok=True,
                                                    arguments={"x": 2})]),
        Turn(user="v", gold_calls=[Call(env="e", name="submit")])])}, tx.MISSING_CALL),
    ("gold tool, other arguments", {"traj": _traj([_call("add")], [Turn(
        user="u", gold_calls=GOLD, calls=[Call(env="e", name="add", ok=True,
                                               arguments={"x": 2, "note": "n"})])])},
     tx.WRONG_ARGUMENTS),
    ("gold calls plus more", {"traj": _traj([_call("add")], [Turn(
        user="u", gold_calls=GOLD, calls=[
            Call(env="e", name="add", ok=True, arguments={"x": 1, "note": "other"}),
            Call(env="e", name="delete", ok=True)])])}, tx.EXTRA_WRITES),
    ("bfcl: a gold function never called", {"traj": _traj([_call("cd")]),
                                            "gold_names": ["cd", "mkdir"]}, tx.MISSING_CALL),
    ("bfcl: an extra function", {"traj": _traj([_call("cd"), _call("rm")]),
                                 "gold_names": ["cd"]}, tx.EXTRA_WRITES),
    ("bfcl single-turn decoder failure", {
        "traj": _traj([]), "agent_calls": 1,
        "score_meta": {"error_type": "ast_decoder:decoder_failed"}}, tx.MALFORMED),
    ("exception", {"traj": _traj([_call("add")]), "error": "RuntimeError: boom"}, tx.OTHER),
])
def test_taxonomy_rules(case: str, kwargs: dict, expected: str) -> None:
    traj = kwargs.pop("traj")
    category, detail = tx.classify(traj, **kwargs)
    assert category == expected, (case, detail)


def test_a_sample_cut_by_an_inspect_limit_is_a_limit_failure(tmp_path: Path) -> None:
    write_log(tmp_path / "a.eval", task="bfcl_multiturn", model="m/a", metadata=BFCL_META,
              scores=[("multi_turn_base_0", 1, "I"), ("multi_turn_base_1", 1, "C")],
              limits={"multi_turn_base_0": "message"})
    [rec] = records(tmp_path)
    assert [s.limit for s in rec.samples] == ["message", None]
    [entry], failed = tx.taxonomy([rec])
    assert (entry.category, entry.count, failed) == (tx.LIMIT, 1, {"m/a": {
        "bfcl_multi_turn": 1}})


# -- outputs and CLI --------------------------------------------------------------------


def _two_models(logs: Path) -> None:
    write_log(logs / "a.eval", task="bfcl_multiturn", model="m/a", metadata=BFCL_META,
              scores=[("multi_turn_base_0", 1, "C"), ("multi_turn_base_1", 1, "C")])
    write_log(logs / "b.eval", task="bfcl_multiturn", model="m/b", metadata=BFCL_META,
              scores=[("multi_turn_base_0", 1, "C"), ("multi_turn_base_1", 1, "I")])


def test_outputs_written(tmp_path: Path) -> None:
    _two_models(tmp_path / "logs")
    result = build([tmp_path / "logs"], tmp_path / "out")
    out = tmp_path / "out"
    md = (out / "leaderboard.md").read_text()
    assert "| m/a | 100.0 [100.0, 100.0] n=2" in md and "| m/b | 50.0 [0.0, 100.0] n=2" in md
    assert "EnvFactory 4B (reported) | 48.50 (rep.) (+15.00)" in md
    lines = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))
    b = next(x for x in lines if x["row"] == "m/b" and x["column"] == "bfcl_mt")
    assert float(b["value"]) == 0.5 and b["n"] == "2" and b["logs"].endswith("b.eval")
    board = Leaderboard.model_validate_json((out / "leaderboard.json").read_text())
    assert board == result.board
    html = (out / "index.html").read_text()
    assert "<script src=" not in html and "http" not in html.split("<script>")[1]
    assert (out / "plots/bars_bfcl_mt.svg").read_text().lstrip().startswith("<?xml")
    assert (out / "plots/taxonomy.svg").is_file()


def test_cli_build(tmp_path: Path) -> None:
    _two_models(tmp_path / "logs")
    r = CliRunner().invoke(app, ["leaderboard", "build", str(tmp_path / "logs"),
                                 "--out-dir", str(tmp_path / "out"), "--no-baselines"])
    assert r.exit_code == 0, r.output
    assert "2 logs (0 left out, 0 superseded) -> 2 measured rows, 0 reported" in r.output
    assert (tmp_path / "out/index.html").is_file()
    r = CliRunner().invoke(app, ["leaderboard", "build", str(tmp_path / "missing"),
                                 "--out-dir", str(tmp_path / "o2")])
    assert r.exit_code == 1 and "missing: no such log file or folder" in r.output


def test_cli_from_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import leaderboard.hub

    _two_models(tmp_path / "hub")
    asked = []

    def fake_download(repo_id: str, *, revision: str | None = None) -> Path:
        asked.append((repo_id, revision))
        return tmp_path / "hub"

    monkeypatch.setattr(leaderboard.hub, "download_results", fake_download)
    r = CliRunner().invoke(app, ["leaderboard", "build", "--from-hub", "org/results",
                                 "--revision", "v1", "--out-dir", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    assert asked == [("org/results", "v1")]
    assert "-> 2 measured rows" in r.output


# -- issue 24: failures, picking runs, references, identity, plots ----------------------


def test_a_build_with_no_usable_log_fails_and_writes_nothing(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "x.eval").write_text("not a log")
    (logs / "y.json").write_text('{"a": 1}')
    out = tmp_path / "out"
    out.mkdir()
    (out / "leaderboard.md").write_text("an earlier build")
    with pytest.raises(BuildError, match=r"none of the 2 log file\(s\) could be used"):
        build([logs], out)
    assert [p.name for p in out.iterdir()] == ["leaderboard.md"]
    assert (out / "leaderboard.md").read_text() == "an earlier build"
    r = CliRunner().invoke(app, ["leaderboard", "build", str(logs),
                                 "--out-dir", str(tmp_path / "o2")])
    assert r.exit_code == 1
    [line] = r.output.strip().splitlines()
    assert line.startswith("error: none of the 2 log file(s) could be used, nothing written")
    assert f"{logs / 'x.eval'} (not a readable Inspect log" in line
    assert f"{logs / 'y.json'} (not a readable Inspect log" in line
    assert not (tmp_path / "o2").exists()


def test_a_build_with_some_usable_logs_lists_each_left_out(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    _two_models(logs)
    (logs / "x.eval").write_text("not a log")
    r = CliRunner().invoke(app, ["leaderboard", "build", str(logs), "--out-dir",
                                 str(tmp_path / "out"), "--no-baselines", "--no-taxonomy"])
    assert r.exit_code == 0, r.output
    assert "3 logs (1 left out, 0 superseded) -> 2 measured rows" in r.output
    left = [line for line in r.output.splitlines() if "left out:" in line]
    assert left == [f"  left out: {logs / 'x.eval'}: not a readable Inspect log: "
                    "EOCD not found"]


def _bfcl_run(path: Path, model: str, n: int, correct: int, created: str, **kw: Any) -> Path:
    scores = [(f"multi_turn_base_{i}", 1, "C" if i < correct else "I") for i in range(n)]
    return write_log(path, task="bfcl_multiturn", model=model, scores=scores,
                     metadata=BFCL_META, created=created, **kw)


def test_a_later_one_sample_check_does_not_replace_full_runs(tmp_path: Path) -> None:
    full = [_bfcl_run(tmp_path / f"full{d}.eval", "m/a", 4, d, f"2026-06-0{d}T10:00:00+00:00")
            for d in (1, 2, 3)]
    check = _bfcl_run(tmp_path / "check.eval", "m/a", 1, 1, "2026-06-04T10:00:00+00:00",
                      sample_id="multi_turn_base_0")
    board = build_table(records(tmp_path))
    cell = row(board, "m/a").cells["bfcl_mt"]
    # the newest of the full runs (3 of 4 correct), not the 1-sample check (1 of 1)
    assert (cell.value, cell.n, cell.logs) == (0.75, 4, [str(full[2])])
    assert cell.comparable
    assert [(o.path, o.n) for o in cell.others] == [
        (str(full[1]), 4), (str(full[0]), 4), (str(check), 1)]
    assert cell.others[0].settings == ""
    assert cell.others[2].settings == "sample_id multi_turn_base_0 (column: -)"
    assert sorted(board.superseded) == sorted(map(str, [full[0], full[1], check]))
    md = to_markdown(board)
    assert ("m/a: uses full3.eval; other runs of this task, not used: full2.eval "
            "(2026-06-02T10:00, n=4); full1.eval (2026-06-01T10:00, n=4); check.eval "
            "(2026-06-04T10:00, n=1; sample_id multi_turn_base_0 (column: -))") in md


def test_more_samples_win_over_newer_under_the_same_settings(tmp_path: Path) -> None:
    big = _bfcl_run(tmp_path / "big.eval", "m/a", 4, 4, "2026-06-01T10:00:00+00:00", limit=4)
    _bfcl_run(tmp_path / "small.eval", "m/a", 2, 0, "2026-06-02T10:00:00+00:00", limit=4)
    assert row(build_table(records(tmp_path)), "m/a").cells["bfcl_mt"].logs == [str(big)]


def test_the_reference_is_the_task_as_shipped_whichever_run_is_read_first(
        tmp_path: Path) -> None:
    # two rows ran --limit 2 (read first, and the majority); one ran the task as shipped
    for model in ("m/a", "m/b"):
        _bfcl_run(tmp_path / f"a-{model[-1]}.eval", model, 2, 1,
                  "2026-06-01T10:00:00+00:00", limit=2)
    _bfcl_run(tmp_path / "z-default.eval", "m/default", 2, 2, "2026-06-05T10:00:00+00:00")
    board = build_table(records(tmp_path))
    assert row(board, "m/default").cells["bfcl_mt"].comparable
    for model in ("m/a", "m/b"):
        cell = row(board, model).cells["bfcl_mt"]
        assert not cell.comparable and cell.note == "not comparable: limit 2 (column: all)"
    column = next(c for c in board.columns if c.key == "bfcl_mt")
    assert (column.reference["limit"], column.reference_from) == ("all", "defaults")
    assert "- BFCL MT overall (the task as shipped): " in to_markdown(board)


def test_release_paths_are_not_settings_and_release_commits_are(tmp_path: Path) -> None:
    meta = {"benchmark": "envfactory", "upstream_envfactory_commit": "eff3b22"}
    for model, folder in (("m/a", "/home/a/EnvFactory"), ("m/b", "/data/release")):
        write_log(tmp_path / f"{model[-1]}.eval", task="envfactory", model=model,
                  scorer="reward", scores=[("e0", 1, {"reward": 1.0})],
                  metadata={**meta, "upstream_envfactory_dir": folder})
    recs = records(tmp_path)
    assert all("upstream_envfactory_dir" not in r.comparability for r in recs)
    assert all(r.comparability["upstream_envfactory_commit"] == "eff3b22" for r in recs)
    board = build_table(recs)
    assert all(row(board, m).cells["envfactory"].comparable for m in ("m/a", "m/b"))


@pytest.mark.parametrize(("model", "args", "prov", "expected"), [
    ("hf/local", {"model_path": "/models/smollm2-135m-instruct"}, {},
     "smollm2-135m-instruct"),
    ("hf/local", {}, {"run_id": "smollm2-135m-instruct", "method": "base",
                      "base_model": "smollm2-135m-instruct",
                      "checkpoint": "/models/smollm2-135m-instruct"}, "smollm2-135m-instruct"),
    ("hf/local", {}, {"run_id": "r", "method": "base", "base_model": "/m/base"}, "base"),
    ("hf/Qwen/Qwen3-4B", {}, {}, "Qwen/Qwen3-4B"),
    ("vllm/Qwen/Qwen3-4B", {}, {}, "Qwen/Qwen3-4B"),
    ("hf/local", {}, {}, "hf/local"),
    ("hf/local", {}, {"run_id": "run1", "method": "sft", "step": 200,
                      "checkpoint": "/ckpt/checkpoint-200"}, "run1/checkpoint-200"),
    ("envfactory/replay", {"path": "/tmp/negative.jsonl"}, {},
     "envfactory/replay (negative.jsonl)"),
    ("openai/gpt-4.1", {}, {}, "openai/gpt-4.1"),
])
def test_one_identity_per_model(model: str, args: dict, prov: dict, expected: str) -> None:
    assert model_identity(model, args, prov) == expected


def test_inspect_eval_and_score_run_of_one_model_share_a_row(tmp_path: Path) -> None:
    showcase(tmp_path / "logs")
    board = build_table(records(tmp_path / "logs"))
    measured = [r.key for r in board.rows if r.kind == "measured"]
    assert measured == ["m/limited", "m/strong", "m/weak", "smollm2-135m-instruct"]
    smol = row(board, "smollm2-135m-instruct").cells
    assert smol["bfcl_mt"].value == 0.125  # from `inspect eval` (1 of 4 base right)
    assert smol["tau2.retail"].value == 0.5  # from `envfactory score`


def test_bar_plots_come_with_and_without_reported_rows_at_one_pitch(tmp_path: Path) -> None:
    showcase(tmp_path / "logs")
    result = build([tmp_path / "logs"], tmp_path / "out", with_taxonomy=False)
    plots = tmp_path / "out/plots"
    both = (plots / "bars_bfcl_mt.svg").read_text()
    alone = (plots / "bars_bfcl_mt.measured.svg").read_text()
    assert "EnvFactory 4B (reported)" in both and "(reported)" not in alone
    assert "m/strong" in alone
    assert not (plots / "bars_bfcl_st.measured.svg").exists()  # reported rows only

    def height(svg: str) -> str:
        return svg.split('height="', 1)[1].split('"', 1)[0]

    for name in ("bars_tau2", "bars_envfactory", "bars_mcp_atlas"):
        assert height((plots / f"{name}.svg").read_text()) == height(both)
        assert height((plots / f"{name}.measured.svg").read_text()) == height(alone)
    assert height(alone) != height(both)
    assert not list(plots.glob(".*partial"))
    # bfcl_mt, tau2, envfactory, vitabench, vitabench.cross (its own column), mcp_atlas and
    # the paper's Overall: bfcl_st has reported rows only
    assert result.files["html"].read_text().count("data-measured='plots/") == 7
