"""`envfactory mcp-atlas doctor` and `install`: a row per missing piece with how to get it
(never a crash), and exit codes that say whether anything is missing or failed."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from tasks._mcp_atlas import dataset, servers
from tasks._mcp_atlas.doctor import check, judge_check, server_check
from tests.shared_data import needs_mcp_atlas

#: the pieces a run cannot start without, as the doctor names them
RELEASE_PIECES = ["server template", "data/ files (each sample's /data)",
                  "judge prompt (score_claims.py)", "tool tables (main.py)"]
LOCAL_SERVERS = ["calculator", "cli-mcp-server", "desktop-commander", "filesystem", "git",
                 "mcp-code-executor", "mcp-server-code-runner", "memory"]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def no_hub(*args: Any, **kwargs: Any) -> Any:
    raise ConnectionError("the Hub is unreachable")


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A machine with nothing: empty cache and servers folder, no override folders,
    GitHub behind a closed port, the Hub unreachable, no network for the servers."""
    for var in ("MCP_ATLAS_DATA_DIR", "MCP_ATLAS_SOURCE_DIR", "MCP_ATLAS_TASKS",
                "MCP_ATLAS_REPOS_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MCP_ATLAS_SERVERS_DIR", str(tmp_path / "servers"))
    monkeypatch.setenv("ENVFACTORY_GITHUB_RAW", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv("MCP_ATLAS_NETWORK", "0")
    monkeypatch.setattr(dataset, "hub_snapshot", no_hub)
    return tmp_path


def doctor(*args: str) -> Any:
    return CliRunner().invoke(app, ["mcp-atlas", "doctor", *args], env={"COLUMNS": "250"})


def test_offline_with_nothing_reports_every_missing_piece_and_exits_1(offline: Path) -> None:
    result = doctor()
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)  # no crash
    assert result.stderr.splitlines() == [
        "error: MCP-Atlas cannot run here: missing " + ", ".join([*RELEASE_PIECES, "tasks"])]
    report = check()
    assert [c.piece for c in report.missing] == [*RELEASE_PIECES, "tasks"]
    rows = {c.piece: c for c in report.checks}
    assert rows["server template"].status.startswith("download failed: ")
    assert "Connection refused" in rows["server template"].status
    # after the first download failed, the other files are not tried again
    for piece in RELEASE_PIECES[1:]:
        assert rows[piece].status == "not fetched: the download above failed"
    assert "MCP_ATLAS_DATA_DIR" in rows["data/ files (each sample's /data)"].how
    assert "MCP_ATLAS_SOURCE_DIR" in rows["judge prompt (score_claims.py)"].how
    assert "MCP_ATLAS_TASKS" in rows["tasks"].how
    assert "the Hub is unreachable" in rows["tasks"].status
    assert "MCP_ATLAS_DATA_DIR" in result.stdout and "MCP_ATLAS_TASKS" in result.stdout


@needs_mcp_atlas
@pytest.mark.usefixtures("use_mcp_atlas_data")
def test_release_without_servers_names_each_local_server_and_how_to_install_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_ATLAS_SERVERS_DIR", str(tmp_path / "no-servers"))
    monkeypatch.setenv("MCP_ATLAS_NETWORK", "0")
    report = check()
    rows = {c.piece: c for c in report.checks}
    for name in LOCAL_SERVERS:
        row = rows[f"server {name}"]
        assert (row.ok, row.status) == (False, "not installed")
        assert row.how == f"`envfactory mcp-atlas install {name}`"
    # the sample CSV has 6 tasks of the offline subset, none runnable without servers
    assert [c.piece for c in report.missing] == ["subset offline (the default)"]
    assert rows["subset offline (the default)"].status.startswith("0 of 6 runnable")
    assert rows["tasks"].ok and rows["tasks"].status.startswith("10 from ")
    result = doctor()
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "error: MCP-Atlas cannot run here: missing subset offline (the default)"]


@needs_mcp_atlas
@pytest.mark.usefixtures("use_mcp_atlas_data")
def test_everything_a_run_needs_is_there_exits_0() -> None:
    if not servers.availability("calculator").ok:
        pytest.skip("calculator is not installed (`make install-mcp-atlas`)")
    result = doctor()
    assert result.exit_code == 0, result.output
    assert check().missing == []


@needs_mcp_atlas
@pytest.mark.usefixtures("use_mcp_atlas_data")
def test_a_failed_install_is_shown_with_its_reason(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_ATLAS_SERVERS_DIR", str(tmp_path / "servers"))
    failed = tmp_path / "servers" / "failed" / "desktop-commander.txt"
    failed.parent.mkdir(parents=True)
    failed.write_text("npm registry has no @wonderwhy-er/desktop-commander@0.2.7")
    row = server_check(servers.template("desktop-commander"))
    assert row.status == ("install failed: npm registry has no "
                          "@wonderwhy-er/desktop-commander@0.2.7")
    assert row.how.startswith("`envfactory mcp-atlas install desktop-commander` once")


def test_the_judge_row() -> None:
    unchecked = judge_check(None)
    assert unchecked.ok and not unchecked.required
    assert "--model-role judge=<model>" in unchecked.status
    assert judge_check("mockllm/model").ok
    unknown = judge_check("nosuch/model")
    assert unknown.missing and "nosuch" in unknown.status


# --- install ---------------------------------------------------------------------------

def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def local_repo(path: Path) -> str:
    """A one-commit git repository at `path`; its commit."""
    path.mkdir()
    _git("init", "-q", cwd=path)
    (path / "README").write_text("x")
    _git("add", "README", cwd=path)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one", cwd=path)
    return _git("rev-parse", "HEAD", cwd=path)


def fake_install(t: servers.ServerTemplate) -> servers.InstallResult:
    """calculator installs; every other server fails as the npm registry here makes it."""
    ok = t.name == "calculator"
    return servers.InstallResult(server=t.name, requirement=t.requirement, ok=ok,
                                 detail="" if ok else f"npm registry has no {t.requirement}")


@needs_mcp_atlas
@pytest.mark.usefixtures("use_mcp_atlas_data")
def test_install_exits_1_naming_what_failed_and_a_rerun_resumes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = tmp_path / "upstream" / "good"
    good.parent.mkdir()
    sha = local_repo(good)
    pins = [servers.RepoPin(url=str(good), sha=sha, path="data/repos/good"),
            servers.RepoPin(url=str(tmp_path / "upstream" / "gone"), sha=sha,
                            path="data/repos/gone")]
    monkeypatch.setattr(servers, "repo_pins", lambda: pins)
    monkeypatch.setattr(servers, "_install_one", fake_install)
    monkeypatch.setenv("MCP_ATLAS_REPOS_DIR", str(tmp_path / "repos"))
    args = ["mcp-atlas", "install", "calculator", "desktop-commander", "--repos"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 1
    assert first.stderr.splitlines()[-1] == (
        "error: not installed: desktop-commander, repos/gone (2 of 4 in place; a rerun "
        "skips what is in place)")
    assert "npm registry has no @wonderwhy-er/desktop-commander@0.2.7" in first.stderr
    assert _git("rev-parse", "HEAD", cwd=tmp_path / "repos" / "good") == sha
    assert not (tmp_path / "repos" / "gone").exists()
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 1
    assert any(line.startswith("repos/good") and line.endswith("already installed")
               for line in again.stderr.splitlines())


@needs_mcp_atlas
@pytest.mark.usefixtures("use_mcp_atlas_data")
def test_install_with_nothing_failed_exits_0(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(servers, "_install_one", fake_install)
    result = CliRunner().invoke(app, ["mcp-atlas", "install", "calculator"])
    assert result.exit_code == 0, result.output
