"""MCP-Atlas's servers: the template parsed, installs checked, real servers answering.

The real-server tests start each offline server installed here from its pinned package
(`make install-mcp-atlas` installs them under `~/.cache/envfactory/mcp_atlas/servers`)
and skip, naming the reason, where one is not installed. Install failures and launch
command lines are checked with a fake `npm` and fake installs, so that they run anywhere.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.tool_backends import McpBackend
from tasks._mcp_atlas import servers
from tasks._mcp_atlas.servers import (
    OFFLINE,
    availability,
    install,
    parse_template,
    templates,
)
from tasks._mcp_atlas.workspace import Workspace, launch
from tests.shared_data import needs_mcp_atlas
from tests.tasks.mcp_atlas.test_workspace import make_repo, write_release

#: upstream's keyless servers (`DEFAULT_SERVERS` of
#: services/agent-environment/src/agent_environment/mcp_client.py at the pinned commit)
UPSTREAM_DEFAULT_SERVERS = [
    "arxiv", "calculator", "cli-mcp-server", "clinicaltrialsgov-mcp-server", "context7",
    "ddg-search", "desktop-commander", "fetch", "filesystem", "git", "mcp-code-executor",
    "mcp-server-code-runner", "memory", "met-museum", "open-library", "osm-mcp-server",
    "pubmed", "weather", "whois", "wikipedia"]


# --- the template ----------------------------------------------------------------------

@needs_mcp_atlas
def test_template_entries_parse_as_upstream_runs_them(use_mcp_atlas_data: Path) -> None:
    parsed = {t.name: t for t in templates()}
    assert len(parsed) == 36 and list(parsed)[:3] == ["airtable", "alchemy", "arxiv"]
    fs = parsed["filesystem"]
    assert (fs.runner, fs.requirement, fs.package, fs.version, fs.args) == (
        "npx", "@modelcontextprotocol/server-filesystem@2026.7.10",
        "@modelcontextprotocol/server-filesystem", "2026.7.10", ["/data"])
    git = parsed["git"]
    assert (git.requirement, git.package, git.version, git.executable, git.args) == (
        "mcp-server-git==2026.7.10", "mcp-server-git", "2026.7.10", "mcp-server-git", [])
    wiki = parsed["wikipedia"]
    assert (wiki.requirement, wiki.executable, wiki.args) == (
        "wikipedia-mcp==2.0.1", "wikipedia-mcp", [])
    pubmed = parsed["pubmed"]
    assert (pubmed.requirement, pubmed.version, pubmed.executable, pubmed.args) == (
        "git+https://github.com/geobio/PubMed-MCP-Server.git", None, "python",
        ["-m", "pubmed_server"])
    github = parsed["github"]
    assert (github.requirement, github.from_git, github.key_vars) == (
        "https://github.com/geobio/smitheryai-mcp-servers-github", True, ["GITHUB_TOKEN"])
    assert parsed["twelvedata"].key_vars == ["TWELVE_DATA_API_KEY"]
    assert parsed["twelvedata"].args == ["-k", "${TWELVE_DATA_API_KEY}"]
    assert parsed["mongodb"].key_vars == ["MONGODB_CONNECTION_STRING"]
    assert parsed["notion"].key_vars == ["NOTION_TOKEN"]
    assert parsed["oxylabs"].key_vars == ["OXYLABS_PASSWORD", "OXYLABS_USERNAME"]
    # upstream's keyless servers are exactly those without ${VAR}s; ours are among them
    assert [n for n, t in parsed.items() if not t.key_vars] == UPSTREAM_DEFAULT_SERVERS
    assert [n for n, t in parsed.items() if t.offline] == list(OFFLINE)


@pytest.mark.parametrize(("entry", "field", "problem"), [
    ({"command": "npx", "args": ["some-server"]}, "args", "not a pinned npm package"),
    ({"command": "npx", "args": ["some-server@latest", 3]}, "args", "list of strings"),
    ({"command": "npx", "args": ["-y"]}, "args", "no package"),
    ({"command": "uvx", "args": ["some-server>=1"]}, "args", "not a pinned PyPI package"),
    ({"command": "uvx", "args": ["--from", "x==1"]}, "args", "needs a requirement"),
    ({"command": "docker", "args": ["run", "x"]}, "command", "neither npx nor uvx"),
    ({"command": "npx", "args": ["a@1"], "env": {"KEY": 1}}, "env", "object of strings"),
])
def test_bad_entries_name_the_server_and_field(entry: dict[str, Any], field: str,
                                               problem: str) -> None:
    with pytest.raises(ValueError, match=problem) as error:
        parse_template("broken", entry)
    assert f"server 'broken', field '{field}'" in str(error.value)


# --- installing, with a fake npm ---------------------------------------------------------

DESKTOP = {"desktop-commander": {"command": "npx",
                                 "args": ["@wonderwhy-er/desktop-commander@0.2.7"]}}
FAKE_NPM = '''#!{python}
"""npm as the test wants it: log the call in npm.log, then fail or install the version
that mode.txt (beside this file) says."""
import json, pathlib, sys
here = pathlib.Path(__file__).parent
args = sys.argv[1:]
with open(here / "npm.log", "a") as log:
    log.write(" ".join(args) + "\\n")
mode = (here / "mode.txt").read_text()
if mode == "missing":
    print("npm error code ETARGET", file=sys.stderr)
    print("npm error notarget No matching version found for " + args[-1], file=sys.stderr)
    sys.exit(1)
name = args[-1].rsplit("@", 1)[0]
package = pathlib.Path(args[args.index("--prefix") + 1]) / "node_modules" / name
(package / "dist").mkdir(parents=True, exist_ok=True)
(package / "dist" / "index.js").write_text("#!/usr/bin/env node\\n")
(package / "package.json").write_text(json.dumps(
    {{"name": name, "version": mode, "bin": {{"desktop-commander": "dist/index.js"}}}}))
'''


@pytest.fixture
def fake_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake `npm` first on PATH; its calls are logged in the returned file, and it
    does what `bin/mode.txt` says (a version to install, or `missing`)."""
    write_release(tmp_path, monkeypatch, json.dumps({"mcpServers": DESKTOP}))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(FAKE_NPM.format(python=sys.executable))
    (bin_dir / "npm").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir / "npm.log"


def test_a_version_the_registry_lacks_is_reported(fake_npm: Path) -> None:
    (fake_npm.parent / "mode.txt").write_text("missing")
    (result,) = install(["desktop-commander"])
    assert not result.ok
    assert result.detail == "npm registry has no @wonderwhy-er/desktop-commander@0.2.7"
    assert availability("desktop-commander").reason == \
        "not installed (npm registry has no @wonderwhy-er/desktop-commander@0.2.7)"


def test_another_version_is_never_accepted(fake_npm: Path) -> None:
    (fake_npm.parent / "mode.txt").write_text("0.2.8")
    (result,) = install(["desktop-commander"])
    assert not result.ok and "not at the pinned version" in result.detail
    assert not availability("desktop-commander").ok


def test_install_is_exact_and_idempotent_and_launches_without_npx(fake_npm: Path,
                                                                  tmp_path: Path) -> None:
    (fake_npm.parent / "mode.txt").write_text("0.2.7")
    (first,) = install(["desktop-commander"])
    (second,) = install(["desktop-commander"])
    assert (first.ok, first.skipped, second.ok, second.skipped) == (True, False, True, True)
    prefix = tmp_path / "servers" / "npm"
    assert fake_npm.read_text().splitlines() == [
        f"install --prefix {prefix} --save-exact --no-audit --no-fund --loglevel=error "
        "--fetch-retries=1 @wonderwhy-er/desktop-commander@0.2.7"]
    assert availability("desktop-commander").ok
    with Workspace() as ws:
        spec = launch("desktop-commander", ws)
        assert spec.command == str(prefix / "node_modules" / "@wonderwhy-er" /
                                   "desktop-commander" / "dist" / "index.js")
        assert spec.env is not None and spec.env["HOME"] == str(ws.home)
        assert spec.env["PATH"] == os.environ["PATH"]
        # upstream's main.py: set_config_value(allowedDirectories=["/data"]) at start
        assert spec.setup == [("set_config_value",
                               {"key": "allowedDirectories", "value": [str(ws.root)]})]


def test_without_npm_the_reason_says_so(fake_npm: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    (result,) = install(["desktop-commander"])
    assert not result.ok and result.detail.startswith("npm not found on PATH")


def test_keys_network_and_paths_at_launch(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    write_release(tmp_path, monkeypatch, json.dumps({"mcpServers": {
        "twelvedata": {"command": "uvx", "args": ["mcp-server-twelve-data==0.2.5", "-k",
                                                  "${TWELVE_DATA_API_KEY}"]},
        "memory": {"command": "uvx", "args": ["fake-memory==1.0"], "env": {
            "MEMORY_FILE_PATH": "/data/repos/memory_mcp_server/memories-for-mcp.json"}}}}))
    for name, command in (("twelvedata", "mcp-server-twelve-data"),
                          ("memory", "fake-memory")):  # what a finished install leaves
        venv = tmp_path / "servers" / "py" / name
        (venv / "bin").mkdir(parents=True)
        (venv / "bin" / command).write_text("")
        (venv / "envfactory-requirement.txt").write_text(servers.template(name).requirement)
    monkeypatch.delenv("TWELVE_DATA_API_KEY", raising=False)
    monkeypatch.setenv("MCP_ATLAS_NETWORK", "0")
    assert availability("twelvedata").reason == (
        "needs TWELVE_DATA_API_KEY (unset); needs network (no connection to the internet; "
        "MCP_ATLAS_NETWORK=1 says there is)")
    monkeypatch.setenv("MCP_ATLAS_NETWORK", "1")
    with Workspace() as ws:
        with pytest.raises(ValueError, match="needs TWELVE_DATA_API_KEY"):
            launch("twelvedata", ws)
        monkeypatch.setenv("TWELVE_DATA_API_KEY", "k-123")
        assert availability("twelvedata").ok
        spec = launch("twelvedata", ws)
        assert spec.command == str(tmp_path / "servers" / "py" / "twelvedata" / "bin" /
                                   "mcp-server-twelve-data")
        assert spec.args == ["-k", "k-123"]
        memory = launch("memory", ws)
        assert memory.env is not None and memory.env["MEMORY_FILE_PATH"] == \
            f"{ws.root}/repos/memory_mcp_server/memories-for-mcp.json"
    assert availability("nonesuch").reason == "'nonesuch' is not a server of MCP-Atlas's template"


def test_pinned_repos_are_cloned_at_their_commit_once(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A local repository stands in for GitHub; the pin is its first commit, not HEAD."""
    origin = tmp_path / "origin" / "snake-game"
    pinned = make_repo(origin, {"game.py": "v1\n"})
    (origin / "game.py").write_text("v2\n")
    subprocess.run(["git", "-C", str(origin), "-c", "user.name=t", "-c",
                    "user.email=t@example.com", "commit", "-qam", "second"], check=True)
    release = write_release(tmp_path, monkeypatch)
    pins = release / "data" / "repos" / "git_submodule_info.csv"
    pins.write_text(f"{origin},{pinned},/data/repos/snake-game\n")
    (cloned,) = install([], repos=True)
    (again,) = install([], repos=True)
    assert (cloned.ok, cloned.skipped, again.ok, again.skipped) == (True, False, True, True)
    assert servers.repo_head(tmp_path / "repos" / "snake-game") == pinned
    with Workspace(repos=["snake-game"]) as ws:
        assert (ws.root / "repos" / "snake-game" / "game.py").read_text() == "v1\n"
    pins.write_text(f"{origin},{'0' * 40},/data/repos/snake-game\n")
    (wrong,) = servers.install_repos()
    assert not wrong.ok and wrong.detail.startswith(f"git checkout {'0' * 40}")
    assert servers.repo_head(tmp_path / "repos" / "snake-game") == pinned


# --- the real servers --------------------------------------------------------------------

@pytest.fixture
def atlas(use_mcp_atlas_data: Path) -> Path:
    return use_mcp_atlas_data


def require(*names: str) -> None:
    for name in names:
        state = availability(name)
        if not state.ok:
            pytest.skip(f"MCP server {name} cannot start here: {state.reason}")


def backend(ws: Workspace, *names: str) -> McpBackend:
    return McpBackend([launch(n, ws) for n in names], separator="_", rewrite=ws)


@needs_mcp_atlas
def test_the_offline_servers_here_are_installed_or_say_why(atlas: Path) -> None:
    states = [availability(n) for n in OFFLINE]
    assert all(s.ok or s.reason for s in states)
    print({s.server: s.reason or "ok" for s in states})


@needs_mcp_atlas
async def test_filesystem_serves_the_sample_data_as_slash_data(atlas: Path) -> None:
    require("filesystem")
    shipped = (atlas / "data" / "Top Movies.csv").read_text(encoding="utf-8")
    with Workspace() as ws:
        async with backend(ws, "filesystem") as b:
            names = {t.name for t in b.tools()}
            assert {"filesystem_read_file", "filesystem_list_allowed_directories",
                    "filesystem_write_file"} <= names
            allowed = await b.call("filesystem_list_allowed_directories", {})
            assert allowed.text == "Allowed directories:\n/data"
            read = await b.call("filesystem_read_file", {"path": "/data/Top Movies.csv"})
            assert read.ok and read.text == shipped
            missing = await b.call("filesystem_read_file", {"path": "/data/none.csv"})
            assert not missing.ok and "'/data/none.csv'" in missing.text
            assert str(ws.root) not in missing.text


@needs_mcp_atlas
async def test_calculator_computes(atlas: Path) -> None:
    require("calculator")
    with Workspace() as ws:
        async with backend(ws, "calculator") as b:
            assert [t.name for t in b.tools()] == ["calculator_calculate"]
            result = await b.call("calculator_calculate", {"expression": "2**10 + 3*7"})
            assert result.ok and result.text == "1045"


@needs_mcp_atlas
async def test_memory_writes_and_reads_an_entity_in_the_sample_file(atlas: Path) -> None:
    require("memory")
    shipped = atlas / "data" / "repos" / "memory_mcp_server" / "memories-for-mcp.json"
    before = shipped.read_bytes()
    entity = {"name": "Ada Lovelace", "entityType": "person",
              "observations": ["wrote the first program"]}
    with Workspace() as ws:
        async with backend(ws, "memory") as b:
            created = await b.call("memory_create_entities", {"entities": [entity]})
            assert created.ok
            found = await b.call("memory_open_nodes", {"names": ["Ada Lovelace"]})
            assert found.ok and json.loads(found.text)["entities"][0]["observations"] == \
                ["wrote the first program"]
        written = (ws.root / "repos" / "memory_mcp_server" / "memories-for-mcp.json").read_text()
        assert "Ada Lovelace" in written
    assert shipped.read_bytes() == before


@needs_mcp_atlas
async def test_git_logs_a_sample_repo(atlas: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    require("git")
    monkeypatch.setenv("MCP_ATLAS_REPOS_DIR", str(tmp_path / "repos"))
    head = make_repo(tmp_path / "repos" / "demo", {"README.md": "demo\n"}, "Add the README")
    with Workspace(repos=["demo"]) as ws:
        async with backend(ws, "git") as b:
            assert "git_git_log" in {t.name for t in b.tools()}
            log = await b.call("git_git_log", {"repo_path": "/data/repos/demo"})
            assert log.ok and head in log.text and "Add the README" in log.text
            status = await b.call("git_git_status", {"repo_path": "/data/repos/demo"})
            assert status.ok and "working tree clean" in status.text


@needs_mcp_atlas
async def test_cli_server_lists_slash_data(atlas: Path) -> None:
    require("cli-mcp-server")
    top = sorted({f.split("/")[0] for f in os.listdir(atlas / "data")})
    with Workspace() as ws:
        async with backend(ws, "cli-mcp-server") as b:
            listed = await b.call("cli-mcp-server_run_command", {"command": "ls"})
            assert listed.ok and listed.text.split("\n\n")[0].splitlines() == top
            repos = await b.call("cli-mcp-server_run_command", {"command": "ls /data/repos"})
            assert repos.text.split("\n\n")[0].splitlines() == sorted(
                os.listdir(atlas / "data" / "repos"))
            refused = await b.call("cli-mcp-server_run_command", {"command": "rm x"})
            assert "rm" in refused.text and "Command completed" not in refused.text


@needs_mcp_atlas
async def test_code_runner_reads_a_data_csv(atlas: Path) -> None:
    require("mcp-server-code-runner")
    with (atlas / "data" / "Crime_records.csv").open(newline="", encoding="utf-8") as f:
        rows = len(list(csv.reader(f))) - 1
    code = ("import csv\n"
            "rows = list(csv.reader(open('/data/Crime_records.csv', newline='')))\n"
            "print(len(rows) - 1)")
    with Workspace() as ws:
        async with backend(ws, "mcp-server-code-runner") as b:
            ran = await b.call("mcp-server-code-runner_run-code",
                               {"languageId": "python", "code": code})
            assert ran.ok and ran.text.strip() == str(rows)


@needs_mcp_atlas
async def test_two_samples_never_see_each_others_writes(atlas: Path) -> None:
    require("filesystem", "memory")
    with Workspace() as one, Workspace() as two:
        async with backend(one, "filesystem", "memory") as a, \
                backend(two, "filesystem", "memory") as b:
            for side, word in ((a, "one"), (b, "two")):
                wrote = await side.call("filesystem_write_file",
                                        {"path": "/data/notes.txt", "content": word})
                assert wrote.ok
                made = await side.call("memory_create_entities", {"entities": [
                    {"name": "Shared Name", "entityType": "note", "observations": [word]}]})
                assert made.ok
            for side, word in ((a, "one"), (b, "two")):
                read = await side.call("filesystem_read_file", {"path": "/data/notes.txt"})
                assert read.text == word
                node = await side.call("memory_open_nodes", {"names": ["Shared Name"]})
                assert json.loads(node.text)["entities"][0]["observations"] == [word]
    assert not (atlas / "data" / "notes.txt").exists()
