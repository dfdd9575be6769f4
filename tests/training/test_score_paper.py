"""`envfactory score run MODEL --suite paper` and scoring by Hub id.

The paper suite runs through real `inspect eval-set` subprocesses on the oracle
(`envfactory/oracle`, `--serve inspect`) with the `user` and `judge` roles scripted
(`envfactory/script/ROLE`, harness/providers/script.py), offline. Hub ids are downloaded
from the fake Hub (tests/leaderboard/fake_hub.py). The whole paper suite, and a tiny Qwen3
scored by its Hub id in-process, are marked slow.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from huggingface_hub import HfApi
from inspect_ai._util.config import parse_cli_args
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.cli.score_preflight import task_preflight
from testkit.recording_server import Api, RecordingServer, Reply
from tests.leaderboard.fake_hub import FakeHub, fake_hub_fixture  # noqa: F401
from tests.shared_data import (
    MCP_ATLAS_DATA,
    needs_mcp_atlas,
    needs_tau2,
    needs_vitabench,
)
from training.autoscore import (
    SKIPPED_FILE,
    SUITES,
    ModelTarget,
    ScoreError,
    TaskCheck,
    download_checkpoint,
    eval_set_argv,
    hub_provenance,
    parse_hub_spec,
    provenance_metadata,
    results_dir,
    score_checkpoint,
)

ORACLE = "envfactory/oracle"
USER, JUDGE = "envfactory/script/user", "envfactory/script/judge"
ROLES = ["--user", USER, "--judge", JUDGE]
#: what the scripted roles answer: the judges of VitaBench ("[]": no rubric item met) and
#: MCP-Atlas (one claim verdict, the field names of its judge schema); a user who asks once
#: and stops (τ²'s and VitaBench's stop token)
SCRIPT = """# envfactory/script: a plumbing check, not a model
responses:
  - role: judge
    match: "(?i)coverage_outcome"
    text: >-
      {"claim_text": "c", "coverage_outcome": "fulfilled", "justification": "j",
      "confidence_level": 1.0}
  - role: judge
    text: '[]'
  - role: user
    turn: 0
    text: Hello, I need help with my request.
  - role: user
    text: "Thank you, that is all. ###STOP###"
"""
BFCL_MT_CATEGORIES = ["base", "miss_func", "miss_param", "long_context"]
#: BFCL v3 single-turn's 13 categories (bfcl-eval 2025.8.6.2, the official leaderboard's)
BFCL_ST_CATEGORIES = {"simple", "java", "javascript", "multiple", "parallel",
                      "parallel_multiple", "irrelevance", "live_simple", "live_multiple",
                      "live_parallel", "live_parallel_multiple", "live_irrelevance",
                      "live_relevance"}


@pytest.fixture
def scripted_roles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The script file of the `envfactory/script/ROLE` models (named by `--model-role`
    alone, so through `ENVFACTORY_SCRIPT`, which the eval-set subprocesses inherit)."""
    script = tmp_path / "roles.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    monkeypatch.setenv("ENVFACTORY_SCRIPT", str(script))
    return script


@pytest.fixture
def no_mcp_servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MCP-Atlas's sample tasks and release files, and an empty servers folder: no task can
    run, whatever this machine has installed."""
    monkeypatch.setenv("MCP_ATLAS_DATA_DIR", str(MCP_ATLAS_DATA))
    monkeypatch.setenv("MCP_ATLAS_SOURCE_DIR", str(MCP_ATLAS_DATA / "source"))
    monkeypatch.setenv("MCP_ATLAS_TASKS", str(MCP_ATLAS_DATA / "sample_tasks.csv"))
    (tmp_path / "no-servers").mkdir()
    monkeypatch.setenv("MCP_ATLAS_SERVERS_DIR", str(tmp_path / "no-servers"))


def paper_task(name: str) -> Any:
    return next(t for t in SUITES["paper"] if t.name == name)


def role_models(log: EvalLog) -> dict[str, str]:
    """The models bound to the log's roles, as Inspect recorded them."""
    out = {}
    for role, config in (log.eval.model_roles or {}).items():
        assert not isinstance(config, list), role  # one model per role
        out[role] = config.model
    return out


def headers(directory: Path) -> dict[str, EvalLog]:
    return {log.eval.task: log for log in (read_eval_log(info, header_only=True) for info
                                           in list_eval_logs(str(directory), recursive=False))}


def score(*args: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(app, ["score", *args, "--json"])
    text = " ".join(result.output.split())
    try:
        return result.exit_code, json.loads(result.stdout), text
    except ValueError:
        return result.exit_code, {}, text


# --- the pieces, as pure functions -----------------------------------------------------


def test_the_paper_suite_refuses_a_run_without_its_user_and_judge(tmp_path: Path) -> None:
    base = ["score", "run", ORACLE, "--serve", "inspect", "--suite", "paper",
            "--log-dir", str(tmp_path / "scores")]
    neither = CliRunner().invoke(app, base)
    assert neither.exit_code == 1
    assert ("--suite paper pins the models of the user and judge roles: give --user MODEL "
            "--judge MODEL") in " ".join(neither.output.split())
    only_user = CliRunner().invoke(app, [*base, "--user", USER])
    assert only_user.exit_code == 1
    text = " ".join(only_user.output.split())
    assert "of the judge role: give --judge MODEL" in text and "--user MODEL" not in text
    assert not (tmp_path / "scores").exists()  # refused before any folder or process
    with pytest.raises(ScoreError, match="give --user MODEL --judge MODEL"):
        score_checkpoint(tmp_path, suite="paper")


@pytest.mark.usefixtures("scripted_roles")
def test_role_models_that_cannot_start_are_refused_before_anything_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    base = ["score", "run", ORACLE, "--serve", "inspect", "--suite", "paper",
            "--log-dir", str(tmp_path / "scores")]
    for roles, expected in (
            (["--user", USER, "--judge", ORACLE], "envfactory/oracle cannot judge"),
            (["--user", "nosuch/model", "--judge", JUDGE],
             "the user model 'nosuch/model': Model API nosuch"),
            (["--user", "openai/gpt-4.1", "--judge", JUDGE],
             "the user model openai/gpt-4.1 cannot start")):
        refused = CliRunner().invoke(app, [*base, *roles])
        assert refused.exit_code == 1, roles
        assert expected in " ".join(refused.output.split()), refused.output
    assert not (tmp_path / "scores").exists()


def test_roles_epochs_and_a_selection_reach_inspect_unchanged() -> None:
    task = paper_task("bfcl_multiturn")
    argv = eval_set_argv(task, ModelTarget(model=ORACLE), Path("/s"), limit=None,
                         roles={"user": "openai/gpt-4.1", "judge": JUDGE}, epochs=4,
                         sample_ids=["multi_turn_base_0", "multi_turn_miss_func_0"],
                         inspect=["inspect"])
    assert argv[:3] == ["inspect", "eval-set", "tasks/bfcl_multiturn/bfcl_multiturn.py@"
                                                "bfcl_multiturn"]
    flags = {flag: [argv[i + 1] for i, a in enumerate(argv) if a == flag]
             for flag in ("--model-role", "--epochs", "--sample-id", "--limit", "-T")}
    assert flags == {"--model-role": ["user=openai/gpt-4.1", f"judge={JUDGE}"],
                     "--epochs": ["4"],
                     "--sample-id": ["multi_turn_base_0,multi_turn_miss_func_0"],
                     "--limit": [], "-T": []}
    assert parse_cli_args(flags["--model-role"]) == {"user": "openai/gpt-4.1", "judge": JUDGE}
    with pytest.raises(ScoreError, match="comma"):
        eval_set_argv(task, ModelTarget(model=ORACLE), Path("/s"), limit=None,
                      sample_ids=["a,b"], inspect=["inspect"])


def test_a_stratified_limit_takes_the_first_n_of_each_stratum() -> None:
    check = TaskCheck(strata={"base": ["b0", "b1", "b2"], "miss_func": ["m0"]})
    assert check.sample_ids(2) == ["b0", "b1", "m0"]
    assert check.sample_ids(None) is None and TaskCheck().sample_ids(2) is None


def test_hub_ids_their_folders_and_their_metadata(tmp_path: Path) -> None:
    assert parse_hub_spec("LARK-Lab/EnvFactory-4B") == ("LARK-Lab/EnvFactory-4B", "main")
    assert parse_hub_spec("Qwen/Qwen3-4B@v1.0") == ("Qwen/Qwen3-4B", "v1.0")
    for not_an_id in ("Qwen3-4B", "a/b/c", "./a", "a/b@", "/abs/path", "a b/c"):
        assert parse_hub_spec(not_an_id) is None, not_an_id
    commit = "0123456789abcdef0123456789abcdef01234567"
    prov = hub_provenance("LARK-Lab/EnvFactory-4B", commit, "main", tmp_path)
    assert results_dir(tmp_path, prov, tmp_path, 2, "paper") == (
        tmp_path / "hub" / "LARK-Lab--EnvFactory-4B" / commit / "paper-limit-2")
    assert results_dir(tmp_path, prov, tmp_path, None, "quick") == (
        tmp_path / "hub" / "LARK-Lab--EnvFactory-4B" / commit / "all")
    meta = provenance_metadata(prov, tmp_path)
    assert {k: meta[k] for k in ("envfactory_hub_id", "envfactory_hub_revision",
                                 "envfactory_hub_requested", "envfactory_method",
                                 "envfactory_base_model", "envfactory_run_id")} == {
        "envfactory_hub_id": "LARK-Lab/EnvFactory-4B", "envfactory_hub_revision": commit,
        "envfactory_hub_requested": "main", "envfactory_method": "base",
        "envfactory_base_model": "LARK-Lab/EnvFactory-4B", "envfactory_run_id": "hub"}


def test_a_name_that_is_neither_a_directory_nor_a_hub_id(tmp_path: Path) -> None:
    code, _, text = score("run", str(tmp_path / "missing" / "deeper" / "x"))
    assert code == 1
    assert "no such directory, and not a Hub model id (OWNER/NAME[@REVISION])" in text
    code, _, text = score("run", str(tmp_path), "--serve", "inspect")
    assert code == 1 and "not an Inspect model name" in text


# --- the preflight: each paper task built as inspect builds it -------------------------


@needs_tau2
@needs_vitabench
@needs_mcp_atlas
@pytest.mark.usefixtures("use_tau2_data", "use_vitabench_data", "no_mcp_servers")
def test_the_preflight_builds_every_paper_task_and_says_why_one_cannot_run(
        use_vitabench_data: Path) -> None:
    said: list[str] = []
    check = task_preflight(said.append)
    checks = {task.name: check(task, {"user": USER, "judge": JUDGE})
              for task in SUITES["paper"]}
    mt = checks["bfcl_multiturn"]
    assert mt.reason is None and list(mt.strata) == BFCL_MT_CATEGORIES
    # the official ids: 200 entries per multi-turn category, numbered from 0
    assert all(ids == [f"multi_turn_{c}_{i}" for i in range(200)]
               for c, ids in mt.strata.items())
    st = checks["bfcl_singleturn"]
    assert st.reason is None and set(st.strata) == BFCL_ST_CATEGORIES
    for name in ("tau2_airline", "tau2_retail", "tau2_telecom"):
        assert checks[name] == TaskCheck(), name
    for name, folder in (("vitabench_delivery", "delivery"), ("vitabench_instore", "instore"),
                         ("vitabench_ota", "ota")):
        tasks_file = use_vitabench_data / "domains" / folder / "tasks.json"  # zh, the default
        reason = checks[name].reason
        if tasks_file.is_file():
            assert reason is None, reason
        else:
            assert reason is not None and f"{folder}/tasks.json missing" in reason
    atlas = checks["mcp_atlas"].reason
    assert atlas is not None and "no MCP-Atlas task of subset 'available' can run here" in atlas
    assert "bfcl_multiturn: 800 samples" in said


# --- end to end on the oracle ------------------------------------------------------------


@needs_vitabench
@needs_mcp_atlas
@pytest.mark.usefixtures("use_vitabench_data", "no_mcp_servers", "scripted_roles")
def test_paper_on_the_oracle_runs_what_can_run_and_lists_the_rest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """BFCL multi-turn (one entry of each category under --limit 1), VitaBench OTA (its
    tasks are not in the shared data) and MCP-Atlas (no server here): one runs, two are
    skipped with their reasons, none scored; the roles are in every log; a rerun resumes."""
    monkeypatch.setitem(SUITES, "paper", tuple(paper_task(n) for n in (
        "bfcl_multiturn", "vitabench_ota", "mcp_atlas")))
    args = ["run", ORACLE, "--serve", "inspect", "--suite", "paper", "--limit", "1",
            *ROLES, "--log-dir", str(tmp_path / "scores")]
    code, result, text = score(*args)
    assert code == 0, text
    out = tmp_path / "scores" / "inspect" / "envfactory--oracle" / "paper-limit-1"
    assert result["status"] == "scored" and result["log_dir"] == str(out)
    assert result["roles"] == {"user": USER, "judge": JUDGE}
    assert [(t["task"].split("@")[1], t["status"], t["samples"]) for t in result["tasks"]] == [
        ("bfcl_multiturn", "success", 4), ("vitabench_ota", "skipped", 0),
        ("mcp_atlas", "skipped", 0)]
    reasons = {t["task"]: t["reason"] for t in result["tasks"] if t["status"] == "skipped"}
    assert "ota/tasks.json missing" in reasons["tasks/vitabench/vitabench.py@vitabench_ota"]
    assert "no MCP-Atlas task" in reasons["tasks/mcp_atlas/mcp_atlas.py@mcp_atlas"]
    assert json.loads((out / SKIPPED_FILE).read_text()) == {"suite": "paper",
                                                           "skipped": reasons}
    assert result["tasks"][0]["headline"] == {"overall": 1.0}  # the oracle plays the gold
    logs = headers(out)
    assert list(logs) == ["bfcl_multiturn"]  # nothing for the skipped tasks, no 0 anywhere
    log = logs["bfcl_multiturn"]
    assert log.eval.model == ORACLE
    assert role_models(log) == {"user": USER, "judge": JUDGE}
    assert {k: v for k, v in (log.eval.metadata or {}).items()
            if k.startswith("envfactory_")} == {
        "envfactory_suite": "paper", "envfactory_user_model": USER,
        "envfactory_judge_model": JUDGE}
    assert log.eval.config.sample_id == [f"multi_turn_{c}_0" for c in BFCL_MT_CATEGORIES]
    files = sorted(out.glob("*.eval"))

    code, again, text = score(*args)  # resumed: eval-set finds the task done
    assert code == 0 and again["status"] == "scored", text
    assert sorted(out.glob("*.eval")) == files


@pytest.mark.slow
@needs_tau2
@needs_vitabench
@pytest.mark.usefixtures("use_tau2_data", "use_vitabench_data", "scripted_roles")
def test_the_whole_paper_suite_on_the_oracle(tmp_path: Path) -> None:
    """Every benchmark of the table on the oracle, --limit 1, --epochs 2: each task either
    ran (its log carries both roles and the suite) or is listed as skipped with a reason."""
    code, result, text = score("run", ORACLE, "--serve", "inspect", "--suite", "paper",
                               "--limit", "1", "--epochs", "2", *ROLES,
                               "--log-dir", str(tmp_path / "scores"))
    assert code == 0, text
    names = [t["task"] for t in result["tasks"]]
    assert names == [t.task for t in SUITES["paper"]]
    ran = {t["task"].split("@")[1] for t in result["tasks"] if t["status"] == "success"}
    skipped = [t for t in result["tasks"] if t["status"] == "skipped"]
    assert all(t["reason"] for t in skipped)
    assert {t["task"].split("@")[1] for t in skipped} | ran == {t.name for t in SUITES["paper"]}
    assert {"bfcl_multiturn", "bfcl_singleturn", "tau2_airline", "tau2_retail",
            "tau2_telecom", "vitabench_delivery"} <= ran
    logs = headers(Path(result["log_dir"]))
    assert set(logs) == ran
    for name, log in logs.items():
        assert log.eval.config.epochs == 2, name
        assert role_models(log) == {"user": USER, "judge": JUDGE}, name
        assert (log.eval.metadata or {})["envfactory_suite"] == "paper"
    chosen = logs["bfcl_singleturn"].eval.config.sample_id
    assert isinstance(chosen, list) and len(chosen) == len(BFCL_ST_CATEGORIES)


# --- Hub ids: the fake Hub --------------------------------------------------------------


def push(hub_id: str, folder: Path, message: str) -> str:
    """`folder` committed to the (fake) Hub under `hub_id`; the new commit's sha."""
    api = HfApi()
    api.create_repo(hub_id, exist_ok=True)
    return str(api.upload_folder(repo_id=hub_id, folder_path=folder,
                                 commit_message=message).oid)


def stand_in_model(path: Path, marker: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps({"model_type": "llama", "marker": marker}))
    (path / "model.safetensors").write_bytes(b"")
    return path


def test_download_resolves_the_revision_to_its_commit(fake_hub: FakeHub,
                                                      tmp_path: Path) -> None:
    first = push("LARK-Lab/EnvFactory-4B", stand_in_model(tmp_path / "v1", "one"), "v1")
    second = push("LARK-Lab/EnvFactory-4B", stand_in_model(tmp_path / "v2", "two"), "v2")
    assert [c.sha for c in fake_hub.commits("LARK-Lab/EnvFactory-4B")][:2] == [second, first]
    latest = download_checkpoint("LARK-Lab/EnvFactory-4B")
    assert (latest.commit, latest.requested) == (second, "main")
    assert latest.folder.name == second and latest.folder.parent.name == "snapshots"
    assert json.loads((latest.folder / "config.json").read_text())["marker"] == "two"
    pinned = download_checkpoint("LARK-Lab/EnvFactory-4B", first)
    assert pinned.commit == first
    assert json.loads((pinned.folder / "config.json").read_text())["marker"] == "one"
    with pytest.raises(ScoreError, match="LARK-Lab/Nothing: no such model on the Hub"):
        download_checkpoint("LARK-Lab/Nothing")
    with pytest.raises(ScoreError, match="LARK-Lab/EnvFactory-4B@nobranch: the Hub has no "
                                         "such revision"):
        download_checkpoint("LARK-Lab/EnvFactory-4B", "nobranch")


def cannot_help(api: Api, body: Any) -> Reply:
    return Reply(content="I cannot help.")


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with RecordingServer(cannot_help) as running:
        yield running


@pytest.mark.usefixtures("scripted_roles")
def test_score_reproduce_scores_the_released_checkpoint_by_hub_id(
        fake_hub: FakeHub, tmp_path: Path, server: RecordingServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`score reproduce envfactory-4b` finds the row's Hub id (leaderboard/checkpoints.json),
    downloads main's commit, and every log names the id, the commit and the row."""
    commit = push("LARK-Lab/EnvFactory-4B", stand_in_model(tmp_path / "m", "x"), "release")
    monkeypatch.setitem(SUITES, "paper", (paper_task("bfcl_multiturn"),))
    code, result, text = score("reproduce", "envfactory-4b", "--serve", server.url,
                               "--limit", "1", *ROLES, "--log-dir", str(tmp_path / "scores"))
    assert code == 0, text
    out = tmp_path / "scores" / "hub" / "LARK-Lab--EnvFactory-4B" / commit / "paper-limit-1"
    assert result["log_dir"] == str(out) and result["checkpoint"] == "LARK-Lab/EnvFactory-4B"
    assert result["provenance"]["hub_revision"] == commit
    (log,) = headers(out).values()
    meta = log.eval.metadata or {}
    assert {k: meta[k] for k in ("envfactory_hub_id", "envfactory_hub_revision",
                                 "envfactory_hub_requested", "envfactory_reproduce_row",
                                 "envfactory_base_model", "envfactory_suite")} == {
        "envfactory_hub_id": "LARK-Lab/EnvFactory-4B", "envfactory_hub_revision": commit,
        "envfactory_hub_requested": "main", "envfactory_reproduce_row": "envfactory-4b",
        "envfactory_base_model": "LARK-Lab/EnvFactory-4B", "envfactory_suite": "paper"}
    assert Path(meta["envfactory_checkpoint"]).name == commit
    code, _, text = score("reproduce", "envfactory-sft-4b", *ROLES)
    assert code == 1 and "envfactory-sft-4b" in text  # no public weights: refused, named


@pytest.mark.slow
@needs_tau2
@pytest.mark.usefixtures("use_tau2_data", "scripted_roles")
def test_a_tiny_qwen3_on_the_hub_scored_by_its_id_in_process(
        fake_hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tiny random Qwen3 pushed under a released checkpoint's id, scored by id with
    `--serve hf` (the snapshot folder loaded by transformers) against the scripted user and
    judge: BFCL multi-turn and τ² airline, one sample (per category) each."""
    pytest.importorskip("transformers", reason="needs the `local` extra (make install)")
    from training import local_models

    try:
        tiny = local_models.prepare_tiny_qwen3(tmp_path / "tiny-qwen3")
    except local_models.LocalModelUnavailable as e:
        pytest.skip(str(e))
    commit = push("LARK-Lab/EnvFactory-1.7B", tiny, "tiny Qwen3 as a stand-in release")
    monkeypatch.setitem(SUITES, "paper", tuple(paper_task(n) for n in (
        "bfcl_multiturn", "tau2_airline")))
    code, result, text = score("run", f"LARK-Lab/EnvFactory-1.7B@{commit}", "--suite", "paper",
                               "--limit", "1", "--max-tokens", "16", *ROLES,
                               "--log-dir", str(tmp_path / "scores"))
    assert code == 0, text
    assert [(t["task"].split("@")[1], t["status"]) for t in result["tasks"]] == [
        ("bfcl_multiturn", "success"), ("tau2_airline", "success")]
    logs = headers(Path(result["log_dir"]))
    for log in logs.values():
        assert log.eval.model == "hf/local"
        assert Path((log.eval.model_args or {})["model_path"]).name == commit
        meta = log.eval.metadata or {}
        assert (meta["envfactory_hub_id"], meta["envfactory_hub_revision"],
                meta["envfactory_hub_requested"]) == ("LARK-Lab/EnvFactory-1.7B", commit, commit)
        assert log.stats.model_usage["hf/local"].output_tokens > 0
