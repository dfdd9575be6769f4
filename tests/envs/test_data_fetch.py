"""`envfactory data fetch`: every release file ahead, then the benchmarks load offline.

A local HTTP server on 127.0.0.1 stands in for raw.githubusercontent.com
(`ENVFACTORY_GITHUB_RAW`) and codeload.github.com (`ENVFACTORY_GITHUB_ARCHIVE`) and serves
a fake file at every URL the pinned releases name (τ²'s tool modules as a minimal toolkit
class each, so its tool objects derive; the EnvFactory commit's archive as a tarball of the
hand-written release fixture, `tests/data/release_fixture`); after
one fetch the mirror is pointed at a closed port and each benchmark's files still load.
The Hub dataset is left out (`--no-hub`): nothing here can reach the Hub.
"""

from __future__ import annotations

import io
import json
import socket
import tarfile
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.cli.data import BENCHMARKS
from envs.release_registry import registered_releases
from envs.tau2 import data as tau2_data
from envs.tau2 import tool_objects

runner = CliRunner()
RELEASE_FIXTURE = Path(__file__).parents[1] / "data" / "release_fixture"
GITHUB_BENCHMARKS = ["tau2", "vitabench", "mcp-atlas", "envfactory-release"]


def _toolkit(module: str) -> bytes:
    name = module.split(".")[-2].title() + "Tools"
    return (f"class {name}(ToolKitBase):\n    @is_tool(ToolType.READ)\n"
            f"    def lookup(self, key: str) -> str:\n        \"\"\"Look {module} up.\n\n"
            "        Args:\n            key: What to look up.\n        \"\"\"\n"
            "        return ''\n").encode()


def release_archive(root: Path, top: str = "EnvFactory-eff3b22") -> bytes:
    """A GitHub-style archive (`<top>/...`) of a release-shaped folder, plus a file outside
    the three folders that must not be extracted."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(root / "envs", arcname=f"{top}/envs")
        readme = b"not one of the folders\n"
        info = tarfile.TarInfo(f"{top}/README.md")
        info.size = len(readme)
        tar.addfile(info, io.BytesIO(readme))
    return buffer.getvalue()


def _fake(path: str) -> bytes:
    """A body for each upstream path, telling which file it is."""
    if path == "/LARK-AI-Lab/EnvFactory/tar.gz/eff3b22":
        return release_archive(RELEASE_FIXTURE)
    for module in tool_objects.TOOLKITS.values():
        if path.endswith("src/" + module.replace(".", "/") + ".py"):
            return _toolkit(module)
    if path.endswith("mcp_server_template.json"):
        return json.dumps({"mcpServers": {"fake": {"command": "true"}}}).encode()
    if path.endswith("split_tasks.json"):
        return json.dumps({"base": [path]}).encode()
    if path.endswith(".json"):
        return json.dumps([{"id": path}]).encode()
    if path.endswith(".toml"):
        return f'name = "{path}"\n'.encode()
    return f"# {path}\n".encode()


class _Mirror:
    def __init__(self) -> None:
        self.requests: list[str] = []
        self.missing: set[str] = set()
        self.port = 0


@pytest.fixture
def mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[_Mirror]:
    state = _Mirror()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server hook's name
            path = urllib.parse.unquote(self.path)
            state.requests.append(path)
            if any(path.endswith(m) for m in state.missing):
                self.send_response(404)
                self.end_headers()
                return
            body = _fake(path)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_port
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    monkeypatch.setenv("ENVFACTORY_GITHUB_RAW", f"http://127.0.0.1:{state.port}")
    monkeypatch.setenv("ENVFACTORY_GITHUB_ARCHIVE", f"http://127.0.0.1:{state.port}")
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path / "cache"))
    for entry in registered_releases():
        for variable in (entry.override, getattr(entry, "source_override", None)):
            if variable:
                monkeypatch.delenv(variable, raising=False)
    monkeypatch.delenv("TAU2_SOURCE_DIR", raising=False)
    monkeypatch.setattr("envs.downloads.time.sleep", lambda seconds: None)
    tool_objects.official_tools.cache_clear()
    yield state
    server.shutdown()
    server.server_close()
    thread.join()
    tool_objects.official_tools.cache_clear()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_fetch_then_every_benchmark_loads_with_the_network_gone(
        mirror: _Mirror, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = runner.invoke(app, ["data", "fetch", *GITHUB_BENCHMARKS, "--no-hub"])
    assert result.exit_code == 0, result.output
    fetched = len(mirror.requests)
    # 19 τ² data files + 4 tool modules + the NL judge's 2 source files, 11 VitaBench data
    # + 5 source, 14 + 2 MCP-Atlas, 11 EnvFactory release files (6 prompt/data modules, 3 QueryGen
        # and 2 tool-graph sources) and its commit's archive:
    # hand-counted from the modules' lists
    assert fetched == 19 + 4 + 2 + 11 + 5 + 14 + 2 + 11 + 1
    again = runner.invoke(app, ["data", "fetch", *GITHUB_BENCHMARKS, "--no-hub"])
    assert again.exit_code == 0 and len(mirror.requests) == fetched  # all cached: skipped

    closed = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("ENVFACTORY_GITHUB_RAW", closed)
    monkeypatch.setenv("ENVFACTORY_GITHUB_ARCHIVE", closed)
    tool_objects.official_tools.cache_clear()
    monkeypatch.setattr(tau2_data, "_load", tau2_data._load.__wrapped__)  # no memo
    assert tau2_data.load_tasks("airline") == [
        {"id": f"/{tau2_data.REPOSITORY}/{tau2_data.RELEASE_COMMIT}"
               "/data/tau2/domains/airline/tasks.json"}]
    assert tau2_data.load_split("retail") == {
        "base": [f"/{tau2_data.REPOSITORY}/v0.2.1/data/tau2/domains/retail/split_tasks.json"]}
    airline = tool_objects.official_tools("airline")
    assert [t["function"]["name"] for t in airline] == ["lookup"]
    assert airline[0]["function"]["description"] == "Look tau2.domains.airline.tools up."

    from envs.vitabench import tool_objects as vita_objects
    from envs.vitabench.release import release as vitabench
    from tasks._mcp_atlas.claims import SCORER_FILE
    from tasks._mcp_atlas.release import release as mcp_atlas

    assert json.loads(vitabench().tasks_path("ota", "en").read_text())[0]["id"].endswith(
        "/data/vita/domains/ota/tasks_en.json")
    table = vita_objects.DESCRIPTION_TABLES["delivery"][0]
    assert vitabench().source_text(table).endswith(f"/{table}\n")
    assert mcp_atlas().template() == {"fake": {"command": "true"}}
    assert (mcp_atlas().data_dir() / "Top Movies.csv").is_file()
    assert mcp_atlas().source_text(SCORER_FILE).endswith(f"/{SCORER_FILE}\n")

    from envs.release_envs import create_release, list_release

    cached = tmp_path / "cache" / "envfactory_release" / "eff3b22"
    assert sorted(e.name for e in list_release()) == [
        "ImportFails", "Library", "NoScenarioMethods", "Unparsable"]  # the fixture's four
    assert not (cached / "README.md").exists()  # only the three folders are extracted
    assert not list(cached.glob("*.tar.gz"))  # the archive is gone once extracted
    library = create_release("release/Library@scenario_001")
    assert library.call("get_book", {"book_id": "b1"}).content["copies"] == 2


def test_list_shows_each_file_its_source_and_whether_it_is_cached(
        mirror: _Mirror, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    before = runner.invoke(app, ["data", "fetch", "--list", "tau2", "bfcl"])
    assert before.exit_code == 0 and mirror.requests == []  # listing downloads nothing
    source = f"http://127.0.0.1:{mirror.port}/{tau2_data.REPOSITORY}/"
    assert f"tau2: files from {source}" in before.output
    line = next(x for x in before.output.splitlines() if "domains/airline/db.json" in x)
    assert f"v0.2.0 @ {tau2_data.RELEASE_COMMIT[:7]}" in line
    assert line.rstrip(" │").endswith("no")
    assert "ships in the bfcl-eval package" in before.output
    assert runner.invoke(app, ["data", "fetch", "tau2"]).exit_code == 0
    after = runner.invoke(app, ["data", "fetch", "--list", "tau2"])
    line = next(x for x in after.output.splitlines() if "domains/airline/db.json" in x)
    size = len(_fake(f"/{tau2_data.REPOSITORY}/{tau2_data.RELEASE_COMMIT}"
                     "/data/tau2/domains/airline/db.json"))
    assert f"{size} B" in line and "yes" in line


def test_a_file_that_cannot_be_fetched_fails_the_run_and_the_rest_still_arrive(
        mirror: _Mirror, tmp_path: Path) -> None:
    mirror.missing = {"domains/telecom/db.toml"}
    result = runner.invoke(app, ["data", "fetch", "tau2"])
    assert result.exit_code == 1
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 2, lines  # the file that failed, and the one error line
    assert lines[0].startswith(f"not fetched: {tau2_data.TAU2.title} domains/telecom/db.toml: "
                               "cannot download") and "HTTP Error 404" in lines[0]
    # τ²: 19 data files, 4 derived tool files, the NL judge's 2 source files
    assert lines[1] == ("error: 1 of 25 files not fetched (each named above); a rerun "
                        "fetches only what is missing")
    cached = tmp_path / "cache" / "tau2" / tau2_data.RELEASE / "domains"
    assert (cached / "airline" / "db.json").is_file()
    assert not (cached / "telecom" / "db.toml").exists()


def test_an_unknown_benchmark_is_a_usage_error(mirror: _Mirror) -> None:
    result = runner.invoke(app, ["data", "fetch", "tau3"])
    assert result.exit_code == 2 and mirror.requests == []
    assert "unknown benchmark 'tau3'; choose from " + ", ".join(BENCHMARKS) in result.stderr
