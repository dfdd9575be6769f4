"""The one downloader's resume: an interrupted file continues where it stopped.

A local HTTP server on 127.0.0.1 that honours `Range` (206 with the rest) stands in for
raw.githubusercontent.com; bodies are cut short on purpose to interrupt a download.
"""

from __future__ import annotations

import fcntl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from envs.downloads import fetch, observed

BODY = bytes(range(256)) * 40  # 10240 bytes


class _Server:
    def __init__(self) -> None:
        self.body = BODY
        #: per request, how many bytes to send before closing (None: all)
        self.cuts: list[int | None] = []
        self.ranges: list[str | None] = []
        self.honour_range = True
        self.port = 0


@pytest.fixture
def server() -> Iterator[_Server]:
    state = _Server()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server hook's name
            wanted = self.headers.get("Range")
            state.ranges.append(wanted)
            start = int(wanted.removeprefix("bytes=").rstrip("-")) if wanted else 0
            if wanted and state.honour_range and start >= len(state.body):
                self.send_response(416)
                self.end_headers()
                return
            if not (wanted and state.honour_range):
                start = 0
            rest = state.body[start:]
            self.send_response(206 if start else 200)
            if start:
                self.send_header("Content-Range",
                                 f"bytes {start}-{len(state.body) - 1}/{len(state.body)}")
            self.send_header("Content-Length", str(len(rest)))
            self.end_headers()
            cut = state.cuts.pop(0) if state.cuts else None
            self.wfile.write(rest if cut is None else rest[:cut])

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            return

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = http.server_port
    thread = threading.Thread(target=http.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    yield state
    http.shutdown()
    http.server_close()
    thread.join()


def _url(server: _Server) -> str:
    return f"http://127.0.0.1:{server.port}/owner/repo/ref/file.bin"


def test_an_interrupted_download_resumes_from_its_part_file(
        server: _Server, tmp_path: Path) -> None:
    target = tmp_path / "file.bin"
    server.cuts = [4000]
    with pytest.raises(FileNotFoundError, match="4000 bytes so far are kept in file.bin.part"):
        fetch(_url(server), target, "a file", "no remedy", attempts=1)
    assert not target.exists() and (tmp_path / "file.bin.part").stat().st_size == 4000
    seen: list[tuple[int, int | None]] = []
    with observed(lambda what, done, total: seen.append((done, total))):
        fetch(_url(server), target, "a file", "no remedy", attempts=1)
    assert target.read_bytes() == BODY
    assert server.ranges == [None, "bytes=4000-"]  # the second asked for the rest only
    assert seen[-1] == (len(BODY), len(BODY)) and seen[0][0] > 4000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.bin"]


def test_retries_within_one_fetch_resume_too(server: _Server, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("envs.downloads.time.sleep", lambda seconds: None)
    server.cuts = [1000, 2000]
    fetch(_url(server), tmp_path / "file.bin", "a file", "no remedy")
    assert (tmp_path / "file.bin").read_bytes() == BODY
    assert server.ranges == [None, "bytes=1000-", "bytes=3000-"]


def test_a_server_ignoring_range_restarts_the_file_cleanly(
        server: _Server, tmp_path: Path) -> None:
    (tmp_path / "file.bin.part").write_bytes(b"stale bytes of unknown origin")
    server.honour_range = False
    fetch(_url(server), tmp_path / "file.bin", "a file", "no remedy", attempts=1)
    assert (tmp_path / "file.bin").read_bytes() == BODY
    assert server.ranges == ["bytes=29-"]


def test_a_part_longer_than_the_file_is_discarded(server: _Server, tmp_path: Path) -> None:
    (tmp_path / "file.bin.part").write_bytes(b"x" * (len(BODY) + 5))
    fetch(_url(server), tmp_path / "file.bin", "a file", "no remedy", attempts=1)
    assert (tmp_path / "file.bin").read_bytes() == BODY
    assert server.ranges == [f"bytes={len(BODY) + 5}-", None]  # 416, then from the start


def test_a_part_another_process_holds_is_left_alone(server: _Server, tmp_path: Path) -> None:
    """The other process's `.part` (locked) is neither resumed nor touched: this one
    downloads through a private file of its own."""
    shared = tmp_path / "file.bin.part"
    with shared.open("a+b") as other:
        other.write(b"their half")
        other.flush()
        fcntl.flock(other, fcntl.LOCK_EX)
        fetch(_url(server), tmp_path / "file.bin", "a file", "no remedy", attempts=1)
        assert shared.read_bytes() == b"their half"
    assert (tmp_path / "file.bin").read_bytes() == BODY and server.ranges == [None]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.bin", "file.bin.part"]
