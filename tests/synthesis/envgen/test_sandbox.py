"""The EnvGen sandbox against real attacks, in real processes.

Each attack must end in its verdict, never a hang or damage. No timing assertion beyond
a generous hang guard (`HANG_S`); the times are printed (`pytest -s`) and measured by
`benchmarks/envgen_sandbox.py`.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from synthesis.envgen import sandbox as sandbox_module
from synthesis.envgen import sandbox_isolation as isolation
from synthesis.envgen.sandbox import SandboxLimits, SandboxResult, classify, run_sandboxed
from synthesis.envgen.sandbox_isolation import probe_namespaces

ROOT = Path(__file__).resolve().parents[3]
HANG_S = 60.0
SMALL = SandboxLimits(cpu_seconds=2, wall_seconds=30, memory_mb=256, max_processes=16)

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox")
pytestmark = linux_only


def run(code: str, limits: SandboxLimits = SMALL, files: dict[str, str] | None = None
        ) -> SandboxResult:
    """Run a Python snippet in the sandbox, with the repo importable."""
    started = time.perf_counter()
    result = run_sandboxed(["python", "main.py"],
                           files={"main.py": textwrap.dedent(code), **(files or {})},
                           limits=limits, python_path=[ROOT])
    took = time.perf_counter() - started
    print(f"verdict={result.verdict} wall={took:.2f}s cpu={result.cpu_s:.2f}s: {result.detail}")
    assert took < HANG_S, f"hang guard: {took:.0f} s"
    return result


def processes_with(token: str) -> list[int]:
    """Live processes whose command line holds `token`."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmdline = Path(entry.path, "cmdline").read_bytes()
            state = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if token.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A world-writable directory that any uid can reach (unlike pytest's 0700
    tmp_path): only the sandbox's read-only mount stands between it and a write."""
    path = Path(tempfile.mkdtemp(prefix="envgen-open-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path)


kernel_layers = pytest.mark.skipif(probe_namespaces() is not None,
                                   reason=f"namespaces unavailable: {probe_namespaces()}")


def test_ok_command_sees_only_its_files_and_returns_new_ones() -> None:
    result = run("""
        from pathlib import Path
        import envs  # the repo is importable from python_path
        Path("out/report.json").parent.mkdir()
        Path("out/report.json").write_text(Path("data.txt").read_text().upper())
        print("done")
    """, files={"data.txt": "hello"})
    assert result.verdict == "ok", result
    assert result.returncode == 0 and result.stdout == "done\n"
    assert result.files == {"out/report.json": "HELLO"}  # data.txt unchanged: not returned


def test_infinite_loop_hits_the_cpu_limit() -> None:
    result = run("while True:\n    pass\n", SMALL.model_copy(update={"cpu_seconds": 1}))
    assert result.verdict == "cpu_limit", result
    assert result.returncode is not None and result.returncode < 0


def test_sleeping_forever_hits_the_wall_limit() -> None:
    result = run("import time\ntime.sleep(3600)\n",
                 SMALL.model_copy(update={"wall_seconds": 1}))
    assert result.verdict == "timeout", result


def test_memory_bomb_hits_the_memory_limit() -> None:
    result = run("""
        hoard = []
        while True:
            hoard.append(bytearray(10_000_000))
    """)
    assert result.verdict == "memory_limit", result
    assert "MemoryError" in result.stderr


def test_fork_bomb_hits_the_process_limit_and_leaves_nothing_behind() -> None:
    token = f"forkbomb-{uuid.uuid4().hex}"
    result = run_sandboxed(["python", "bomb.py", token], files={"bomb.py": textwrap.dedent("""
        import os
        while True:
            os.fork()
    """)}, limits=SMALL.model_copy(update={"max_processes": 8}))
    print(f"fork bomb: {result.verdict} {result.wall_s:.2f}s: {result.detail}")
    assert result.verdict == "process_limit", result
    assert processes_with(token) == []


def test_a_daemon_that_left_the_process_group_is_killed_too() -> None:
    token = f"daemon-{uuid.uuid4().hex}"
    result = run_sandboxed(["python", "daemon.py", token], files={"daemon.py": textwrap.dedent("""
        import os, time
        if os.fork() == 0:
            os.setsid()
            time.sleep(600)
        print("parent exits")
    """)}, limits=SMALL)
    assert result.verdict == "ok", result
    if os.geteuid() != 0:
        pytest.skip("only root mode can find processes by the run's uid")
    assert processes_with(token) == []


def test_network_call_is_blocked_and_the_listener_sees_nothing() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        result = run(f"""
            import socket
            socket.create_connection(("127.0.0.1", {port}), timeout=5).sendall(b"leak")
        """)
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()  # no connection ever arrived
    assert result.verdict == "network_blocked", result
    assert result.returncode != 0


def test_with_network_allowed_the_same_call_connects() -> None:
    """The control for the test above: the listener and the check do work."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        result = run(f"""
            import socket
            socket.create_connection(("127.0.0.1", {port}), timeout=5).sendall(b"hi")
        """, SMALL.model_copy(update={"network": True}))
        listener.settimeout(5)
        conn, _ = listener.accept()
        with conn:
            assert conn.recv(16) == b"hi"
    assert result.verdict == "ok", result


@pytest.mark.parametrize("where", ["owned", "world_writable", "repo_new", "repo_existing"])
def test_writes_outside_the_sandbox_are_blocked(tmp_path: Path, open_dir: Path,
                                                where: str) -> None:
    owned = tmp_path / "owned.txt"
    owned.write_text("original")
    targets = {
        "owned": (owned, "w"),
        "world_writable": (open_dir / "new.txt", "w"),
        "repo_new": (ROOT / f".envgen-sandbox-probe-{uuid.uuid4().hex}", "w"),
        "repo_existing": (ROOT / "synthesis" / "envgen" / "sandbox.py", "a"),
    }
    target, mode = targets[where]
    before = target.read_bytes() if target.exists() else None
    result = run(f"""
        with open({str(target)!r}, {mode!r}) as f:
            f.write("pwned")
    """)
    assert result.verdict == "write_blocked", result
    assert (target.read_bytes() if target.exists() else None) == before
    assert owned.read_text() == "original"


@kernel_layers
def test_the_kernel_refuses_the_write_not_only_the_guard(open_dir: Path) -> None:
    result = run(f"""
        try:
            open({str(open_dir / "x")!r}, "w")
        except OSError as exc:
            print(exc.errno, exc.strerror)
    """)
    assert result.stdout.strip() == "30 Read-only file system", result  # EROFS, from the kernel
    assert result.verdict == "write_blocked"  # caught, yet the attempt is reported
    assert not (open_dir / "x").exists()


def test_the_guard_blocks_on_its_own_without_namespaces(open_dir: Path, tmp_path: Path) -> None:
    """The fallback layer alone, in a plain interpreter (no kernel layers at all): the
    hook itself must refuse, report on stderr, and leave the target untouched."""
    guard = Path(sandbox_module.__file__).with_name("sandbox_sitecustomize.py")
    code = textwrap.dedent(f"""
        import importlib.util, socket, sys
        spec = importlib.util.spec_from_file_location("guard", {str(guard)!r})
        guard = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(guard)
        guard.install({str(tmp_path)!r}, -1, 0, watch_network=True, block=True)
        open({str(tmp_path / "inside.txt")!r}, "w").write("fine")
        for attempt in (lambda: open({str(open_dir / "x")!r}, "w"),
                        lambda: socket.create_connection(("127.0.0.1", 9), timeout=2)):
            try:
                attempt()
            except PermissionError as exc:
                print(exc)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=HANG_S)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("[Errno 13] EnvGen sandbox: write refused (open ")
    assert lines[1].startswith("[Errno 101] EnvGen sandbox: network refused (socket.connect")
    assert "ENVGEN-SANDBOX write open" in proc.stderr
    assert "ENVGEN-SANDBOX network socket.connect" in proc.stderr
    assert not (open_dir / "x").exists()
    assert (tmp_path / "inside.txt").read_text() == "fine"


def test_the_users_environment_is_not_visible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVGEN_TEST_SECRET", "s3cret-value")
    result = run(f"""
        import os
        print(sorted(os.environ))
        try:
            print(open("/proc/{os.getpid()}/environ", "rb").read())
        except OSError as exc:
            print("parent environ:", exc.strerror)
    """)
    assert result.verdict == "ok", result
    assert "s3cret-value" not in result.stdout and "ENVGEN_TEST_SECRET" not in result.stdout
    assert result.stdout.splitlines()[0] == str(
        sorted(["HOME", "LANG", "PATH", "PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "TMPDIR"]))


PYTEST_ARGV = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--junitxml=report.xml", "test_tiny.py"]


def test_a_passing_pytest_run_is_ok_with_its_report() -> None:
    result = run_sandboxed(PYTEST_ARGV, files={"test_tiny.py": textwrap.dedent("""
        from envs.base import Environment

        def test_contract_importable():
            assert Environment.__name__ == "Environment"

        def test_arithmetic():
            assert 2 + 2 == 4
    """)}, limits=SandboxLimits(wall_seconds=60), python_path=[ROOT])
    print(f"pytest ok: {result.wall_s:.2f}s")
    assert result.verdict == "ok", result
    report = result.files["report.xml"]
    assert 'tests="2"' in report and 'failures="0"' in report and 'errors="0"' in report


def test_a_failing_pytest_run_is_failed() -> None:
    result = run_sandboxed(PYTEST_ARGV, files={"test_tiny.py": textwrap.dedent("""
        def test_good():
            assert True

        def test_bad():
            assert 1 == 2
    """)}, limits=SandboxLimits(wall_seconds=60), python_path=[ROOT])
    assert result.verdict == "failed", result
    assert result.returncode == 1
    assert 'failures="1"' in result.files["report.xml"]
    assert "assert 1 == 2" in result.stdout


def test_output_is_capped() -> None:
    result = run("print('x' * 3_000_000)\n",
                 SMALL.model_copy(update={"max_output_bytes": 1000}))
    assert result.verdict == "ok"
    assert len(result.stdout) == 1000
    assert "3000001 bytes" not in result.detail and "2999001 bytes of output dropped" in (
        result.detail)


def test_a_planted_symlink_is_not_followed_into_files() -> None:
    result = run("import os\nos.symlink('/etc/passwd', 'report.json')\n")
    assert result.verdict == "ok"
    assert result.files == {}


@pytest.mark.parametrize("name", ["/etc/passwd", "../escape.py", "a/../../b", ""])
def test_files_outside_the_sandbox_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="files key"):
        run_sandboxed(["python", "-c", "pass"], files={name: "x"})


def test_a_missing_program_is_crashed() -> None:
    result = run_sandboxed(["/nonexistent/tool"], files={})
    assert result.verdict == "crashed" and result.returncode is None
    assert "could not start" in result.detail


LIMITS = SandboxLimits(cpu_seconds=5, memory_mb=256, max_processes=8)


@pytest.mark.parametrize(("returncode", "timed_out", "cpu_s", "stderr", "markers", "verdict"), [
    (0, False, 0.1, "", "", "ok"),
    (2, False, 0.1, "", "", "failed"),
    (-9, True, 0.5, "", "", "timeout"),
    (-24, False, 5.0, "", "", "cpu_limit"),
    (-9, False, 6.0, "", "", "cpu_limit"),
    (-9, False, 0.2, "", "", "crashed"),
    (-11, False, 0.2, "", "", "crashed"),
    (1, False, 0.3, "Traceback ...\nMemoryError\n", "", "memory_limit"),
    (0, False, 0.3, "MemoryError handled", "", "ok"),
    (1, False, 0.3, "BlockingIOError: [Errno 11] Resource temporarily unavailable", "",
     "process_limit"),
    (0, False, 0.3, "", "ENVGEN-SANDBOX process_limit os.fork EAGAIN\n", "process_limit"),
    (0, False, 0.3, "bash: fork: retry: Resource temporarily unavailable", "", "process_limit"),
    (0, False, 0.3, "read: Resource temporarily unavailable (handled)", "", "ok"),
    (0, False, 0.3, "", "ENVGEN-SANDBOX network socket.connect ('1.2.3.4', 80)\n",
     "network_blocked"),
    (1, False, 0.3, "OSError: [Errno 101] Network is unreachable", "", "network_blocked"),
    (1, False, 0.3, "OSError: [Errno 30] Read-only file system: '/x'", "", "write_blocked"),
    (1, False, 0.3, "ENVGEN-SANDBOX write open /x\n", "", "write_blocked"),
])
def test_classification_rules(returncode: int, timed_out: bool, cpu_s: float, stderr: str,
                              markers: str, verdict: str) -> None:
    got, why = classify(returncode, timed_out=timed_out, cpu_s=cpu_s, limits=LIMITS,
                        stdout="", stderr=stderr, markers=markers)
    assert got == verdict, why


@pytest.mark.skipif(os.geteuid() != 0, reason="only root mode gives each run its own uid; a "
                    "user's runs share the user's process count")
def test_a_fork_bomb_does_not_starve_a_sandbox_running_beside_it() -> None:
    """Concurrent runs (the EnvGen pipeline validates several environments at once):
    each counts its own processes, so the bomb's limit is not its neighbour's."""
    token = f"forkbomb-{uuid.uuid4().hex}"
    bomb = {"bomb.py": "import os\nwhile True:\n    os.fork()\n"}
    calm = {"calm.py": "import subprocess, sys\nfor _ in range(5):\n"
                       "    subprocess.run([sys.executable, '-c', 'pass'], check=True)\n"}
    limits = SMALL.model_copy(update={"max_processes": 8})
    with ThreadPoolExecutor(max_workers=2) as pool:
        bombed = pool.submit(run_sandboxed, ["python", "bomb.py", token], files=bomb,
                             limits=limits)
        calmed = [pool.submit(run_sandboxed, ["python", "calm.py"], files=calm, limits=limits)
                  for _ in range(3)]
        assert bombed.result(timeout=HANG_S).verdict == "process_limit"
        for future in calmed:
            result = future.result(timeout=HANG_S)
            assert result.verdict == "ok", result
    assert processes_with(token) == []


NOBODY = 65534
USER_MODE_SCRIPT = """
import json, sys
from pathlib import Path
from synthesis.envgen.sandbox import SandboxLimits, run_sandboxed
limits = SandboxLimits(cpu_seconds=2, wall_seconds=20, memory_mb=256, max_processes=8)
cases = {
    "ok": "print('hi')",
    "write_own_file": f"open({sys.argv[1]!r}, 'a').write('pwned')",
    "network": "import socket; socket.create_connection(('127.0.0.1', 9), timeout=2)",
    "fork_bomb": "import os\\nwhile True:\\n    os.fork()",
}
print(json.dumps({name: run_sandboxed(["python", "-c", code], files={}, limits=limits,
                                      python_path=[Path(sys.argv[2])]).model_dump()
                  for name, code in cases.items()}))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="as a non-root user the suite above is user mode")
@kernel_layers
def test_user_mode_as_an_unprivileged_user(open_dir: Path) -> None:
    """The non-root path (user namespace): run as `nobody`, whose own file must still be
    safe from the sandboxed code. The interpreter under /root and the checkout are exposed
    to `nobody` the way the sandbox itself does it."""
    unreadable = [p for p in (ROOT / "synthesis" / "envgen" / "sandbox.py", Path(sys.executable))
                  if not os.stat(os.path.realpath(p)).st_mode & stat.S_IROTH]
    if unreadable:
        pytest.skip(f"{unreadable[0]} is not readable by other users (umask 077?), so `nobody` "
                    "cannot import the checkout")
    own = open_dir / "own.txt"
    own.write_text("original")
    os.chown(own, NOBODY, NOBODY)

    def become_nobody() -> None:
        isolation._check(isolation._libc().unshare(isolation.CLONE_NEWNS), "unshare")
        isolation._mount(None, "/", None, isolation.MS_REC | isolation.MS_PRIVATE)
        # the checkout too: a clone under a 0700 directory (mktemp -d, a private home)
        # is otherwise out of nobody's reach, as the interpreter under /root is
        for cover, inner in isolation.exposures((*isolation.interpreter_dirs(), str(ROOT))):
            isolation._expose(cover, inner)
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)

    proc = subprocess.run([sys.executable, "-c", USER_MODE_SCRIPT, str(own), str(ROOT)],
                          preexec_fn=become_nobody, capture_output=True, text=True,
                          cwd=open_dir, timeout=HANG_S,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(open_dir),
                               "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    results = {name: SandboxResult.model_validate(r)
               for name, r in json.loads(proc.stdout).items()}
    for name, result in results.items():
        print(f"user mode {name}: {result.verdict} {result.wall_s:.2f}s")
        assert "user namespace" in result.detail, result
    assert {name: r.verdict for name, r in results.items()} == {
        "ok": "ok", "write_own_file": "write_blocked", "network": "network_blocked",
        "fork_bomb": "process_limit"}
    assert results["ok"].stdout == "hi\n"
    assert own.read_text() == "original"


def test_the_marker_pipe_never_closes_a_number_twice() -> None:
    """Closing the write end early and everything at the end must not close a pipe that
    another run (another thread) opened under the reused number in between: that closed a
    neighbour's stderr in CI when runs validated in parallel."""
    marker = sandbox_module._MarkerPipe()
    marker.close(marker.write_fd)
    reused_r, reused_w = os.pipe()  # the lowest free numbers: the one just closed
    try:
        marker.close()
        os.write(reused_w, b"x")
        assert os.read(reused_r, 1) == b"x"
    finally:
        os.close(reused_r)
        os.close(reused_w)
