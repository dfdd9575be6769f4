"""Run generated code and tests in a sandbox and say, in one word, how it ended.

`run_sandboxed(argv, files=..., limits=..., python_path=...)` writes `files` into a fresh
private directory, runs `argv` there (`"python"` as argv[0] means this interpreter) and
returns a `SandboxResult`: a verdict, the output, wall and CPU time, the text files the
command left behind (e.g. a JSON report) and one sentence that explains the verdict and
names the isolation layers that were active.

The layers, and what each one stops (outermost first):

* identity. Root: a fresh uid/gid per run that owns nothing (`sandbox_isolation`);
  a user: the user's uid in a user namespace. Stops writes wherever file permissions
  apply, reading other users' private files and other processes' environments, and
  signalling other processes.
* mount namespace: every mount remounted read-only except the work directory; an empty
  read-only tmpfs over /run; as root, directories the uid cannot enter (/root holding a
  pyenv interpreter) covered by a tmpfs with only the needed paths bound back read-only.
  Stops writes to world-writable places (/tmp, /dev/shm) and, for a non-root user, to
  the user's own files (the repo on `python_path` included), and connections to the
  machine's Unix sockets under /run.
* network namespace, no interface up (not even loopback): every Internet socket fails
  (`connect` gives ENETUNREACH; name lookups fail).
* `PR_SET_NO_NEW_PRIVS`: setuid binaries (`su`, `sudo`) cannot win privileges back.
* rlimits: RLIMIT_CPU (SIGXCPU, SIGKILL one second later), RLIMIT_AS, RLIMIT_NPROC,
  RLIMIT_FSIZE (= the memory limit), RLIMIT_CORE = 0. Stop infinite loops, memory
  bombs, fork bombs, huge files and core dumps.
* wall-clock limit, and at the end of every run the whole process group killed (in root
  mode also every process of the run's uid, which `setsid` cannot escape). Stops hangs
  (sleeping, blocked on I/O) and daemons left behind.
* output capped at `max_output_bytes` per stream (the rest is read and dropped, so the
  child never blocks on a full pipe): log floods cannot fill the parent's memory.
* environment: only PATH, HOME and TMPDIR (the work dir), PYTHONPATH,
  PYTHONDONTWRITEBYTECODE and LANG; nothing of the user's (API keys).
* `sitecustomize` audit-hook guard (`sandbox_sitecustomize`): reports network and
  outside-write attempts and failed forks as marker lines (reliable verdicts); refuses
  them itself when the kernel layers are unavailable.

Namespaces are probed once per process (`probe_namespaces`); when they fail (a container
without the privilege, a kernel without user namespaces) the run goes on with the
identity, rlimits and the guard in blocking mode, and the result's `detail` says so.

Verdicts, first match wins:

* `timeout`: we killed it at the wall limit;
* `cpu_limit`: SIGXCPU, or SIGKILL once the CPU limit was used up;
* `process_limit`: a `process_limit` marker, a shell's "fork: retry" or "can't start new
  thread" in the output, or EAGAIN in the output of a failed run;
* `memory_limit`: MemoryError / ENOMEM / bad_alloc in the output of a failed run;
* `network_blocked`: a `network` marker whatever the exit code (the contract forbids the
  attempt itself), or ENETUNREACH in a failed run;
* `write_blocked`: a `write` marker whatever the exit code, or EROFS in a failed run;
* then `ok` (exit 0), `failed` (non-zero exit) or `crashed` (another signal, or the
  command could not start).

Marker lines are `ENVGEN-SANDBOX <kind> <what>`, written to a pipe only the guard knows
(pytest's capture cannot swallow it) and to stderr.

Linux only (namespaces, rlimits, pidfd). Not covered: a process can still read
world-readable files, see other processes' command lines in /proc, and fill the disk
with many files below the size limit. /tmp and /dev/shm are read-only, so generated
code must use TMPDIR (`tempfile`), as the environment contract asks. In user mode a
process that calls `setsid` outlives the run (only root mode can find it by uid).
`preexec_fn` runs Python in the forked child, so a caller with threads (the pipeline
runs sandboxes from `asyncio.to_thread`) relies on it taking no lock: it only makes
system calls through `os`, `resource` and ctypes.
"""

from __future__ import annotations

import os
import re
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from synthesis.envgen.sandbox_isolation import (
    ChildPlan,
    child_setup,
    count_processes_of,
    exposures,
    hidden_dirs,
    interpreter_dirs,
    kill_leftovers,
    pick_sandbox_uid,
    probe_namespaces,
    rlimits,
    writable_mounts,
)

Verdict = Literal["ok", "failed", "timeout", "cpu_limit", "memory_limit", "process_limit",
                  "network_blocked", "write_blocked", "crashed"]

MARKER = "ENVGEN-SANDBOX"
_GUARD_SOURCE = Path(__file__).with_name("sandbox_sitecustomize.py")
_MARKER_CAP = 64 * 1024
_DRAIN_S = 2.0  # after the child exits: how long its leftover pipe holders may take
_MAX_FILES = 2000
_SKIPPED_DIRS = frozenset({"__pycache__", ".pytest_cache"})
_PROCESS_TEXT = re.compile(r"Resource temporarily unavailable|BlockingIOError")
# unambiguous even when the run exits 0 (a shell whose background jobs hit the limit)
_PROCESS_TEXT_ANY_EXIT = re.compile(r"fork: retry|fork: Resource temporarily unavailable|"
                                    r"can't start new thread")
_MEMORY_TEXT = re.compile(r"MemoryError|Cannot allocate memory|std::bad_alloc|out of memory")
_NETWORK_TEXT = re.compile(r"Network is unreachable|Temporary failure in name resolution")
_WRITE_TEXT = re.compile(r"Read-only file system")


class SandboxLimits(BaseModel):
    """Limits of one sandboxed run (CPU and wall in seconds)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cpu_seconds: float = Field(default=60, gt=0)
    wall_seconds: float = Field(default=120, gt=0)
    memory_mb: int = Field(default=2048, gt=0)
    max_processes: int = Field(default=64, gt=0)
    max_output_bytes: int = Field(default=1_000_000, gt=0)
    network: bool = False


class SandboxResult(BaseModel):
    """How one sandboxed run ended."""

    verdict: Verdict
    returncode: int | None
    stdout: str
    stderr: str
    wall_s: float
    cpu_s: float
    files: dict[str, str]
    detail: str


_DEFAULT_LIMITS = SandboxLimits()


@dataclass
class _Stream:
    """Bytes read from one pipe, kept up to `cap`."""

    cap: int
    data: bytearray = field(default_factory=bytearray)
    dropped: int = 0

    def add(self, chunk: bytes) -> None:
        room = self.cap - len(self.data)
        self.data += chunk[:max(room, 0)]
        self.dropped += max(len(chunk) - max(room, 0), 0)

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


class _MarkerPipe:
    """The guard's marker pipe, each end closed exactly once. The parent closes the write
    end as soon as the child holds it (so reading sees EOF); closing a number twice would,
    with runs on other threads, close whatever pipe reused that number in between."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self._open = {self.read_fd, self.write_fd}

    def close(self, *fds: int) -> None:
        for fd in fds or tuple(self._open):
            if fd in self._open:
                self._open.discard(fd)
                os.close(fd)


@dataclass
class _Outcome:
    returncode: int | None
    timed_out: bool
    wall_s: float
    cpu_s: float
    stdout: _Stream
    stderr: _Stream
    markers: _Stream


def run_sandboxed(argv: list[str], *, files: Mapping[str, str],
                  limits: SandboxLimits = _DEFAULT_LIMITS,
                  python_path: Sequence[Path] = ()) -> SandboxResult:
    """Run `argv` in a fresh private directory holding `files` (relative path -> text),
    under `limits`, with `python_path` importable and read-only; the directory is deleted
    afterwards. See the module docstring for the layers and the verdicts."""
    if not argv:
        raise ValueError("run_sandboxed: argv is empty")
    relative = {_checked_relative(name): text for name, text in files.items()}
    argv = [sys.executable if i == 0 and a == "python" else a for i, a in enumerate(argv)]
    root = os.geteuid() == 0
    missing_namespaces = probe_namespaces()
    base = Path(tempfile.mkdtemp(prefix="envgen-sandbox-"))
    marker = _MarkerPipe()
    try:
        work, guard = base / "work", base / "guard"
        work.mkdir(mode=0o700)
        guard.mkdir(mode=0o755)
        for name, text in relative.items():
            target = work / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        uid = pick_sandbox_uid() if root else None
        if uid is not None:
            os.chmod(base, 0o711)
            _chown_tree(work, uid)
        (guard / "sitecustomize.py").write_text(
            _guard_text(work, marker.write_fd, limits, block=missing_namespaces is not None),
            encoding="utf-8")
        os.chmod(guard / "sitecustomize.py", 0o644)
        plan = _plan(work, limits, uid, python_path, namespaces=missing_namespaces is None)
        layers = _layers_text(uid, limits, missing_namespaces)
        env = _environment(work, guard, python_path)
        outcome = _run(argv, work, env, plan, limits, marker, uid)
        if isinstance(outcome, str):
            return SandboxResult(verdict="crashed", returncode=None, stdout="", stderr=outcome,
                                 wall_s=0.0, cpu_s=0.0, files={},
                                 detail=f"The command could not start: {outcome} ({layers}).")
        left = _left_files(work, relative, limits.max_output_bytes)
    finally:
        marker.close()
        shutil.rmtree(base, onerror=_force_remove)
    verdict, why = classify(outcome.returncode, timed_out=outcome.timed_out,
                            cpu_s=outcome.cpu_s, limits=limits, stdout=outcome.stdout.text(),
                            stderr=outcome.stderr.text(), markers=outcome.markers.text())
    dropped = outcome.stdout.dropped + outcome.stderr.dropped
    cut = f"; {dropped} bytes of output dropped past the cap" if dropped else ""
    return SandboxResult(verdict=verdict, returncode=outcome.returncode,
                         stdout=outcome.stdout.text(), stderr=outcome.stderr.text(),
                         wall_s=round(outcome.wall_s, 4), cpu_s=round(outcome.cpu_s, 4),
                         files=left, detail=f"{why}{cut} ({layers}).")


def classify(returncode: int | None, *, timed_out: bool, cpu_s: float, limits: SandboxLimits,
             stdout: str, stderr: str, markers: str) -> tuple[Verdict, str]:
    """The verdict and its explanation (without the final full stop); pure, so each rule
    can be checked on hand-written outputs."""
    found = _markers(markers + "\n" + stderr + "\n" + stdout)
    failed = returncode != 0
    text = stderr + "\n" + stdout
    cpu_cap = max(1, -(-limits.cpu_seconds // 1))
    if timed_out:
        return "timeout", (f"Killed at the wall-clock limit of {limits.wall_seconds:g} s "
                           f"after {cpu_s:.1f} s of CPU")
    if returncode == -signal.SIGXCPU or (returncode == -signal.SIGKILL and cpu_s >= cpu_cap):
        return "cpu_limit", (f"Stopped by the CPU-time limit of {cpu_cap:g} s "
                             f"({_signal_name(returncode)})")
    if ("process_limit" in found or _PROCESS_TEXT_ANY_EXIT.search(text)
            or (failed and _PROCESS_TEXT.search(text))):
        return "process_limit", (f"Hit the limit of {limits.max_processes} processes "
                                 "(fork failed with EAGAIN)")
    if failed and _MEMORY_TEXT.search(text):
        return "memory_limit", f"Ran out of its {limits.memory_mb} MB memory limit"
    if "network" in found or (failed and not limits.network and _NETWORK_TEXT.search(text)):
        what = found.get("network", "the network was unreachable")
        return "network_blocked", f"Tried to use the network, which it does not have ({what})"
    if "write" in found or (failed and _WRITE_TEXT.search(text)):
        what = found.get("write", "read-only file system")
        return "write_blocked", f"Tried to write outside its private directory ({what})"
    if returncode == 0:
        return "ok", "Exited 0"
    if returncode is not None and returncode > 0:
        return "failed", f"Exited {returncode}"
    return "crashed", f"Ended by {_signal_name(returncode)}"


def _markers(text: str) -> dict[str, str]:
    """kind -> the first marker's description."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith(MARKER + " "):
            _, kind, *what = line.split(" ", 2)
            found.setdefault(kind, what[0] if what else "")
    return found


def _signal_name(returncode: int | None) -> str:
    if returncode is None or returncode >= 0:
        return "no signal"
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def _checked_relative(name: str) -> str:
    path = PurePosixPath(name)
    if not name or path.is_absolute() or ".." in path.parts or name.startswith("~"):
        raise ValueError(f"run_sandboxed: files key {name!r} must be a relative path inside "
                         "the sandbox (no leading '/', no '..')")
    return str(path)


def _guard_text(work: Path, marker_fd: int, limits: SandboxLimits, *, block: bool) -> str:
    call = (f"\ninstall({str(work)!r}, {marker_fd}, {os.fstat(marker_fd).st_ino}, "
            f"watch_network={not limits.network}, block={block})\n")
    return _GUARD_SOURCE.read_text(encoding="utf-8") + call


def _plan(work: Path, limits: SandboxLimits, uid: int | None, python_path: Sequence[Path], *,
          namespaces: bool) -> ChildPlan:
    already = 0 if uid is not None else count_processes_of(os.getuid())
    readable = (*interpreter_dirs(), *(str(p) for p in python_path))
    return ChildPlan(
        work_dir=str(work), namespaces=namespaces, user_namespace=uid is None,
        network=limits.network, readonly_mounts=writable_mounts() if namespaces else (),
        rlimits=rlimits(cpu_seconds=limits.cpu_seconds, memory_mb=limits.memory_mb,
                        max_processes=limits.max_processes, processes_already=already),
        drop_to=(uid, uid) if uid is not None else None,
        uid_map=None if uid is not None else (os.getuid(), os.getgid()),
        hide_dirs=hidden_dirs() if namespaces else (),
        expose=exposures(readable) if namespaces and uid is not None else ())


def _layers_text(uid: int | None, limits: SandboxLimits, missing: str | None) -> str:
    who = f"uid {uid} of its own" if uid is not None else "the user's uid in a user namespace"
    if missing is None:
        net = "network allowed" if limits.network else "no network (namespace)"
        return (f"isolation: {who}, {net}, read-only filesystem but the work dir (mount "
                "namespace), rlimits, guard reporting")
    who = f"uid {uid} of its own" if uid is not None else "the user's uid"
    return f"isolation: {who}, rlimits, guard blocking; {missing}"


def _environment(work: Path, guard: Path, python_path: Sequence[Path]) -> dict[str, str]:
    paths = [str(guard), *(str(Path(p).resolve()) for p in python_path), str(work)]
    bin_dir = str(Path(sys.executable).parent)
    return {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(work),
        "TMPDIR": str(work),
        "PYTHONPATH": os.pathsep.join(paths),
        "PYTHONDONTWRITEBYTECODE": "1",
        "LANG": "C.UTF-8",
    }


def _run(argv: list[str], work: Path, env: dict[str, str], plan: ChildPlan,
         limits: SandboxLimits, marker: _MarkerPipe, uid: int | None) -> _Outcome | str:
    """Start the child, collect its output, enforce the wall limit, reap it with its
    rusage and kill whatever it left; a string when it could not start."""
    started = time.perf_counter()
    try:
        proc = subprocess.Popen(argv, cwd=work, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                pass_fds=(marker.write_fd,), start_new_session=True,
                                preexec_fn=child_setup(plan))
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{type(exc).__name__}: {exc}"
    marker.close(marker.write_fd)
    assert proc.stdout is not None and proc.stderr is not None
    out, err, markers = (_Stream(limits.max_output_bytes), _Stream(limits.max_output_bytes),
                         _Stream(_MARKER_CAP))
    streams = {proc.stdout.fileno(): out, proc.stderr.fileno(): err,
               marker.read_fd: markers}
    pidfd = os.pidfd_open(proc.pid)
    selector = selectors.DefaultSelector()
    for fd in (*streams, pidfd):
        selector.register(fd, selectors.EVENT_READ)
    deadline = started + limits.wall_seconds
    status: int | None = None
    cpu_s, ended, timed_out = 0.0, started, False
    try:
        while selector.get_map():
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                if status is None:  # the wall limit: kill, then reap below
                    timed_out = True
                    kill_leftovers(proc.pid, uid)
                    deadline = time.perf_counter() + 30
                    continue
                break  # pipes still held open after the drain time: stop reading
            for key, _ in selector.select(remaining):
                if key.fd == pidfd:
                    _, status, usage = os.wait4(proc.pid, 0)
                    ended = time.perf_counter()
                    cpu_s = usage.ru_utime + usage.ru_stime
                    selector.unregister(pidfd)
                    kill_leftovers(proc.pid, uid)
                    deadline = ended + _DRAIN_S
                    continue
                chunk = os.read(key.fd, 65536)
                if chunk:
                    streams[key.fd].add(chunk)
                else:
                    selector.unregister(key.fd)
    finally:
        selector.close()
        os.close(pidfd)
        if status is None:  # only on an exception above: never leave the child behind
            kill_leftovers(proc.pid, uid)
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    returncode = os.waitstatus_to_exitcode(status) if status is not None else proc.returncode
    proc.returncode = returncode
    return _Outcome(returncode=returncode, timed_out=timed_out, wall_s=ended - started,
                    cpu_s=cpu_s, stdout=out, stderr=err, markers=markers)


def _left_files(work: Path, inputs: Mapping[str, str], cap: int) -> dict[str, str]:
    """Text files in the work dir that are new or changed, up to `cap` bytes in all.
    Never follows a link and never opens anything but a regular file (the sandbox could
    have planted a symlink to a secret or a FIFO to hang us)."""
    out: dict[str, str] = {}
    budget, seen = cap, 0
    for dirpath, dirnames, filenames in os.walk(work):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIPPED_DIRS)
        for name in sorted(filenames):
            seen += 1
            if seen > _MAX_FILES or budget <= 0:
                return out
            path = os.path.join(dirpath, name)
            text = _read_regular_text(path, budget)
            rel = os.path.relpath(path, work)
            if text is None or inputs.get(rel) == text:
                continue
            out[rel] = text
            budget -= len(text.encode())
    return out


def _read_regular_text(path: str, limit: int) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        data = os.read(fd, info.st_size + 1)
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _chown_tree(top: Path, uid: int) -> None:
    os.chown(top, uid, uid)
    for dirpath, dirnames, filenames in os.walk(top):
        for name in (*dirnames, *filenames):
            os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)


def _force_remove(func: Callable[..., Any], path: str, _exc: Any) -> None:
    """rmtree's error handler: the sandbox may have taken permissions off its own dirs."""
    try:
        os.chmod(os.path.dirname(path), 0o700)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, 0o700)
        func(path)
    except OSError:
        pass
