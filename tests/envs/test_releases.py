"""The one pinned-release mechanism and the one cache root.

Downloads run for real against a local HTTP server on 127.0.0.1 standing in for
raw.githubusercontent.com (`ENVFACTORY_GITHUB_RAW`): the file layout, transient failures
that a retry cures, permanent ones that fail at once, and a body cut short that leaves no
file behind. Every cache of the tree is checked to move with `ENVFACTORY_CACHE`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from envs import release_registry
from envs.downloads import fetch
from envs.release_registry import ENVFACTORY, registered_releases
from envs.releases import CacheFolder, PinnedRelease, cache_dir, hub_snapshot
from tests.shared_data import SHARED_DATA

ENVFACTORY_RELEASE = SHARED_DATA / "envfactory_release"

RELEASE = PinnedRelease(
    name="demo-bench", title="Demo", repository="acme/bench", ref="abc123",
    files=("data/tasks.json", "prompts/agent.md"), override="DEMO_BENCH_DIR",
    override_hint="a folder holding data/ and prompts/", source_override="DEMO_BENCH_SOURCE",
    layout=(("data/", "release/data/"),),
    record=(("demo_commit", "ref"), ("demo_data", "data"), ("demo_source", "source")))


class _Upstream:
    """What the fake raw host serves: path -> body, and a script of failures per path
    (`503` / `404` answers, or `cut` for a body shorter than its Content-Length)."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.failures: dict[str, list[str]] = {}
        self.requests: list[str] = []


@pytest.fixture
def upstream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[_Upstream]:
    state = _Upstream()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server hook's name
            state.requests.append(self.path)
            script = state.failures.get(self.path)
            failure = script.pop(0) if script else None
            body = state.files.get(self.path)
            if failure in {"503", "404"} or body is None:
                self.send_response(int(failure or 404))
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2] if failure == "cut" else body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    monkeypatch.setenv("ENVFACTORY_GITHUB_RAW", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path / "cache"))
    for name in ("DEMO_BENCH_DIR", "DEMO_BENCH_SOURCE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("envs.downloads.time.sleep", lambda seconds: None)
    yield state
    server.shutdown()
    server.server_close()
    thread.join()


def test_cache_dir_honours_envfactory_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ENVFACTORY_CACHE", raising=False)
    assert cache_dir("a", "b") == Path.home() / ".cache" / "envfactory" / "a" / "b"
    monkeypatch.setenv("ENVFACTORY_CACHE", "/srv/cache")
    assert cache_dir() == Path("/srv/cache") and cache_dir("x") == Path("/srv/cache/x")


def test_every_cache_of_the_tree_moves_with_envfactory_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from envs.generated import generated_dir
    from envs.tau2 import data as tau2_data
    from envs.vitabench.release import release as vitabench_release
    from synthesis.embedders import default_cache_dir
    from synthesis.envgen.corpus import default_index_path
    from tasks._mcp_atlas.release import release as mcp_atlas_release
    from tasks._mcp_atlas.servers import servers_dir
    from training.local_models import models_dir

    root = tmp_path / "cache"
    monkeypatch.setenv("ENVFACTORY_CACHE", str(root))
    for entry in registered_releases():
        if entry.override:
            monkeypatch.delenv(entry.override, raising=False)
    places = {
        "generated envs": generated_dir(), "local models": models_dir(),
        "demo": release_registry.DEMO.path(), "embeddings": default_cache_dir(),
        "envgen index": default_index_path(tmp_path).parent,
        "bfcl project root": release_registry.BFCL_PROJECT_ROOT.path(),
        "tau2": tau2_data.cache_dir(), "vitabench": vitabench_release().cache,
        "mcp-atlas": mcp_atlas_release().cache, "mcp-atlas servers": servers_dir(),
        **{entry.name: Path(entry.local_status().where) for entry in registered_releases()},
    }
    outside = {name: path for name, path in places.items() if not path.is_relative_to(root)}
    assert not outside


def test_a_cache_folder_override_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    folder = CacheFolder("models", ("models",), "DEMO_MODELS_DIR")
    monkeypatch.setenv("ENVFACTORY_CACHE", "/srv/cache")
    monkeypatch.delenv("DEMO_MODELS_DIR", raising=False)
    assert folder.path() == Path("/srv/cache/models")
    monkeypatch.setenv("DEMO_MODELS_DIR", "/data/models")
    assert folder.path() == Path("/data/models")
    assert folder.local_status().override == "DEMO_MODELS_DIR"


def test_files_are_fetched_once_at_the_pinned_ref_into_the_cache(
        upstream: _Upstream, tmp_path: Path) -> None:
    upstream.files["/acme/bench/abc123/release/data/tasks.json"] = b"[1, 2]"
    path = RELEASE.path("data/tasks.json")
    assert path == tmp_path / "cache" / "demo-bench" / "abc123" / "data" / "tasks.json"
    assert path.read_bytes() == b"[1, 2]"
    assert RELEASE.path("data/tasks.json") == path  # the second read is the cache's
    assert upstream.requests == ["/acme/bench/abc123/release/data/tasks.json"]
    upstream.files["/acme/bench/abc123/src/a%20b.py"] = b"X = 1\n"  # names are quoted
    assert RELEASE.source_text("src/a b.py") == "X = 1\n"


def test_a_transient_failure_is_retried_and_a_permanent_one_is_not(
        upstream: _Upstream, tmp_path: Path) -> None:
    url = "/acme/bench/abc123/prompts/agent.md"
    upstream.files[url] = b"be brief"
    upstream.failures[url] = ["503", "cut"]
    assert RELEASE.path("prompts/agent.md").read_text() == "be brief"
    assert upstream.requests == [url] * 3
    upstream.requests.clear()
    with pytest.raises(FileNotFoundError, match="set DEMO_BENCH_DIR to a folder holding"):
        RELEASE.path("data/absent.json")
    assert len(upstream.requests) == 1


def test_a_download_cut_short_leaves_no_file(upstream: _Upstream, tmp_path: Path) -> None:
    """Nothing appears under the file's name; what arrived waits in `.part` to be resumed
    (this server ignores `Range`, so each try restarts from the first byte)."""
    url = "/acme/bench/abc123/prompts/agent.md"
    upstream.files[url] = b"0123456789"
    upstream.failures[url] = ["cut", "cut", "cut"]
    with pytest.raises(FileNotFoundError, match="after 3 attempts.*5 bytes so far are kept"):
        RELEASE.path("prompts/agent.md")
    folder = tmp_path / "cache" / "demo-bench" / "abc123" / "prompts"
    assert [p.name for p in folder.iterdir()] == ["agent.md.part"]
    assert (folder / "agent.md.part").read_bytes() == b"01234"
    assert RELEASE.path("prompts/agent.md").read_bytes() == b"0123456789"
    assert [p.name for p in folder.iterdir()] == ["agent.md"]


def test_fetch_writes_through_a_private_part_file(tmp_path: Path) -> None:
    source = tmp_path / "source.txt"
    source.write_text("hello")
    target = tmp_path / "out" / "file.txt"
    fetch(source.as_uri(), target, "a file", "no remedy")
    assert target.read_text() == "hello" and sorted(p.name for p in target.parent.iterdir()) == [
        "file.txt"]


def test_an_override_is_used_as_is_and_names_what_it_lacks(
        upstream: _Upstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    local = tmp_path / "local"
    (local / "data").mkdir(parents=True)
    (local / "data" / "tasks.json").write_text("[]")
    monkeypatch.setenv("DEMO_BENCH_DIR", str(local))
    assert RELEASE.path("data/tasks.json") == local / "data" / "tasks.json"
    with pytest.raises(FileNotFoundError, match="prompts/agent.md missing from DEMO_BENCH_DIR"):
        RELEASE.path("prompts/agent.md")
    assert upstream.requests == []
    status = RELEASE.local_status()
    assert (status.where, status.override) == (str(local), "DEMO_BENCH_DIR")
    assert (status.present, status.missing) == (["data/tasks.json"], ["prompts/agent.md"])
    assert status.state == "partial" and status.problem  # nothing will fetch it


def test_local_status_of_the_cache_downloads_nothing(upstream: _Upstream) -> None:
    status = RELEASE.local_status()
    assert status.state == "absent" and status.fetched_on_use and not status.problem
    assert status.missing == list(RELEASE.files) and upstream.requests == []


def test_provenance_records_the_configured_keys(
        upstream: _Upstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEMO_BENCH_SOURCE", "/src/bench")
    assert RELEASE.provenance() == {
        "demo_commit": "abc123", "demo_data": str(tmp_path / "cache" / "demo-bench" / "abc123"),
        "demo_source": "/src/bench"}


def test_the_benchmarks_keep_the_provenance_keys_their_logs_record(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from envs.tau2 import data as tau2_data
    from envs.vitabench.release import release as vitabench_release
    from tasks._mcp_atlas.release import release as mcp_atlas_release

    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path))
    assert list(tau2_data.version_info()) == ["tau2_release", "tau2_data_dir",
                                              "tau2_split_release"]
    assert tau2_data.version_info()["tau2_release"] == "v0.2.0"
    assert tau2_data.version_info()["tau2_split_release"] == "v0.2.1"  # split_tasks.json
    assert list(vitabench_release().provenance()) == [
        "vitabench_revision", "vitabench_commit", "vitabench_data", "vitabench_source"]
    assert list(mcp_atlas_release().provenance()) == [
        "mcp_atlas_commit", "mcp_atlas_data", "mcp_atlas_source"]


def test_the_registry_lists_every_release_and_cache_once() -> None:
    names = [entry.name for entry in registered_releases()]
    assert len(names) == len(set(names))
    assert {"tau2", "vitabench-2025-11", "vitabench-2026-01", "mcp-atlas", "envfactory",
            "bfcl-project-root", "embeddings", "envgen-corpus-index", "generated-envs",
            "local-models", "demo"} <= set(names)


def test_a_hub_read_at_a_branch_is_refused_naming_the_option() -> None:
    for moving in ("main", None, "v1.0"):
        with pytest.raises(ValueError, match="pinned commit .* set --revision"):
            hub_snapshot("org/data", moving, option="--revision")


def test_without_a_local_release_root_the_envfactory_folders_are_fetched_on_use(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ENVFACTORY_RELEASE_DIR", raising=False)
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path))
    status = ENVFACTORY.local_status()
    assert "envs/tools/" in status.missing and status.fetched_on_use and not status.problem
    # a folder left by an interrupted extraction (no completion marker) is not "present"
    (tmp_path / "envfactory_release" / "eff3b22" / "envs" / "tools").mkdir(parents=True)
    assert "envs/tools/" in ENVFACTORY.local_status().missing
    assert not ENVFACTORY.folders_present()


@pytest.mark.skipif(not (ENVFACTORY_RELEASE / "envs").is_dir(),
                    reason=f"EnvFactory release not found at {ENVFACTORY_RELEASE}")
def test_the_envfactory_release_read_from_a_local_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVFACTORY_RELEASE_DIR", str(ENVFACTORY_RELEASE))
    status = ENVFACTORY.local_status()
    # the shared copy holds the environment folders, the prompt modules and the dataset
    # writer, but not QueryGen's two pipeline files and src/gen/__init__.py, nor the
    # graph's two LLM-pass files
    pipeline = {"src/gen/query_gen/query_gen_non_conv.py", "src/gen/query_gen/query_gen_conv.py",
                "src/gen/__init__.py", "src/graph/tool_graph.py", "src/graph/tool_node.py"}
    present = {f for f in pipeline if (ENVFACTORY_RELEASE / f).is_file()}
    assert set(status.missing) == pipeline - present, status.missing
    assert status.state == ("present" if present == pipeline else "partial")
    assert status.where == str(ENVFACTORY_RELEASE)
    first = sorted(p.name for p in (ENVFACTORY_RELEASE / "envs" / "metadata").iterdir())[0]
    assert "class_name" in ENVFACTORY.path(f"envs/metadata/{first}").read_text()
    assert "def " in ENVFACTORY.source_text("src/utils/data_process.py")
    assert ENVFACTORY.provenance() == {"upstream_envfactory_commit": "eff3b22",
                                       "upstream_envfactory_dir": str(ENVFACTORY_RELEASE)}


def test_an_override_that_is_not_a_release_is_reported_not_raised(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from envs.tau2.data import TAU2

    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path / "nowhere"))
    status = TAU2.local_status()
    assert status.error == f"TAU2_DATA_DIR={tmp_path / 'nowhere'} has no domains/ folder"
    assert status.missing[0] == "domains/" and status.problem
    with pytest.raises(FileNotFoundError, match="has no domains/ folder"):
        TAU2.data_root()


def test_a_hub_read_retries_a_dropped_connection_and_returns_the_commit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    commit = "0123456789abcdef0123456789abcdef01234567"
    calls: list[str] = []

    def flaky(repo_id: str, **kwargs: object) -> str:
        calls.append(str(kwargs["revision"]))
        if len(calls) == 1:
            raise ConnectionError("reset by peer")
        if repo_id == "org/gone":
            raise KeyError("a permanent failure")
        return str(tmp_path / "snapshots" / commit)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", flaky)
    monkeypatch.setattr("envs.releases.time.sleep", lambda seconds: None)
    folder, resolved = hub_snapshot("org/data", commit, option="--revision")
    assert (folder, resolved, calls) == (tmp_path / "snapshots" / commit, commit, [commit] * 2)
    calls.clear()
    with pytest.raises(KeyError):
        hub_snapshot("org/gone", commit, option="--revision")
    assert len(calls) == 2  # the dropped connection, then the permanent failure: no third
