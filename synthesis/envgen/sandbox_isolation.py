"""The kernel layers of the EnvGen sandbox: namespaces, read-only mounts, limits, identity.

Everything here runs in the forked child before `exec` (a `preexec_fn` built by
`child_setup`), or in the parent to clean up (`kill_leftovers`). The order inside the
child matters: namespaces and mounts need privileges, so they come first; rlimits next;
the identity change last, then `PR_SET_NO_NEW_PRIVS` (no setuid binary can win root
back) and `PR_SET_PDEATHSIG` (the child dies with the thread that started it; set after
the identity change, which clears it).

Two modes, picked by who runs us:

* root: the child drops to a fresh unprivileged uid/gid per run (`pick_sandbox_uid`),
  which owns nothing on the machine, so file permissions stop writes, `RLIMIT_NPROC`
  counts only this run's processes (a fork bomb cannot starve other sandboxes), and
  every leftover process can be found by uid and killed.
* user: the child keeps the user's uid inside a new user namespace (which is what lets
  an unprivileged process create the network and mount namespaces).

`probe_namespaces` checks once per process whether the namespaces work here; when they
do not, the caller falls back to the in-interpreter guard (`sandbox_guard`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import resource
import secrets
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_NOATIME = 0x400
MS_NODIRATIME = 0x800
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MS_RELATIME = 0x200000
MS_STRICTATIME = 0x1000000

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38

# Per-mount options a remount must repeat: inside a user namespace the kernel refuses
# (EPERM) a remount that would clear a flag the outer namespace set ("locked" flags).
_KEPT_OPTIONS = {
    "nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME, "strictatime": MS_STRICTATIME,
}
# Kernel pseudo-filesystems stay as they are: their writable files are root-only.
_SKIPPED_MOUNT_ROOTS = ("/proc", "/sys")
# Far above any real account (and below 2**31 for tools that use signed ids); random per
# run so that concurrent sandboxes never share a uid.
_UID_BASE = 1_500_000_000
_UID_SPAN = 100_000_000
_MIB = 1024 * 1024


@dataclass(frozen=True)
class ChildPlan:
    """What the forked child does before exec (built in the parent, so the child only
    makes system calls)."""

    work_dir: str
    namespaces: bool
    user_namespace: bool
    network: bool
    readonly_mounts: tuple[tuple[str, int], ...]
    rlimits: tuple[tuple[int, int, int], ...]
    drop_to: tuple[int, int] | None
    uid_map: tuple[int, int] | None = None
    hide_dirs: tuple[str, ...] = field(default=())
    expose: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())


@cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int,
           data: str | None = None) -> None:
    enc = os.fsencode
    _check(_libc().mount(enc(source) if source else None, enc(target),
                         enc(fstype) if fstype else None, ctypes.c_ulong(flags),
                         enc(data) if data else None), f"mount {target}")


def _write_proc(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _unescape_mount_path(raw: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal (`\\040`)."""
    out, i = [], 0
    while i < len(raw):
        if raw[i] == "\\" and len(raw[i + 1:i + 4]) == 3 and raw[i + 1:i + 4].isdigit():
            out.append(chr(int(raw[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(raw[i])
            i += 1
    return "".join(out)


def writable_mounts() -> tuple[tuple[str, int], ...]:
    """Mount points (outside /proc and /sys) that are read-write now, with the option
    flags a read-only remount must keep; read from /proc/self/mountinfo."""
    found: list[tuple[str, int]] = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        mount_point, options = _unescape_mount_path(fields[4]), fields[5].split(",")
        if "ro" in options or any(
                mount_point == r or mount_point.startswith(r + "/") for r in _SKIPPED_MOUNT_ROOTS):
            continue
        flags = 0
        for opt in options:
            flags |= _KEPT_OPTIONS.get(opt, 0)
        found.append((mount_point, flags))
    return tuple(found)


def child_setup(plan: ChildPlan) -> Callable[[], None]:
    """The `preexec_fn` for one sandboxed process (runs in the forked child)."""
    libc = _libc()

    def setup() -> None:
        if plan.namespaces:
            flags = CLONE_NEWNS | CLONE_NEWIPC | (0 if plan.network else CLONE_NEWNET)
            if plan.user_namespace:
                flags |= CLONE_NEWUSER
            _check(libc.unshare(flags), "unshare")
            if plan.user_namespace and plan.uid_map is not None:
                uid, gid = plan.uid_map
                _write_proc("/proc/self/setgroups", "deny")
                _write_proc("/proc/self/uid_map", f"{uid} {uid} 1")
                _write_proc("/proc/self/gid_map", f"{gid} {gid} 1")
            # private first, so nothing below propagates back to the machine's mounts
            _mount(None, "/", None, MS_REC | MS_PRIVATE)
            _mount(plan.work_dir, plan.work_dir, None, MS_BIND | MS_REC)
            for mount_point, kept in plan.readonly_mounts:
                _mount(None, mount_point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | kept)
            for hidden in plan.hide_dirs:
                _mount("tmpfs", hidden, "tmpfs",
                       MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=755")
            for cover, inner in plan.expose:
                _expose(cover, inner)
            # the cwd still points below the old (now read-only) mount: enter the bind
            os.chdir(plan.work_dir)
        for which, soft, hard in plan.rlimits:
            resource.setrlimit(which, (soft, hard))
        if plan.drop_to is not None:
            uid, gid = plan.drop_to
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
        _check(libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0), "prctl(PDEATHSIG)")
        os.umask(0o077)

    return setup


def _expose(cover: str, inner: tuple[str, ...]) -> None:
    """Cover `cover` (a directory the sandbox uid may not enter, e.g. /root) with an
    empty tmpfs and bind back only `inner` (e.g. the interpreter's prefix), read-only."""
    held = [os.open(path, os.O_PATH | os.O_DIRECTORY) for path in inner]
    try:
        _mount("tmpfs", cover, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=755")
        for path, fd in zip(inner, held, strict=True):
            os.makedirs(path, mode=0o755, exist_ok=True)
            _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
            _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY)
        _mount(None, cover, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    finally:
        for fd in held:
            os.close(fd)


def exposures(paths: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """For a sandbox uid that owns nothing: which directories that it could not enter
    (no execute bit for others, like /root with a pyenv interpreter inside) must be
    covered, and which of `paths` bound back inside each."""
    groups: dict[str, list[str]] = {}
    for raw in paths:
        path = os.path.realpath(raw)
        if not os.path.isdir(path):
            continue
        parts = Path(path).parts
        for depth in range(2, len(parts)):
            ancestor = os.path.join(*parts[:depth])
            if not os.stat(ancestor).st_mode & stat.S_IXOTH:
                groups.setdefault(ancestor, []).append(path)
                break
    out = []
    for cover, inner in sorted(groups.items()):
        kept = sorted(set(inner))
        kept = [p for p in kept if not any(p != q and p.startswith(q + "/") for q in kept)]
        out.append((cover, tuple(kept)))
    return tuple(out)


def interpreter_dirs() -> tuple[str, ...]:
    """What running this interpreter needs to read: its prefixes and its binary's dir."""
    return tuple({sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                  os.path.dirname(os.path.realpath(sys.executable))})


def rlimits(*, cpu_seconds: float, memory_mb: int, max_processes: int,
            processes_already: int) -> tuple[tuple[int, int, int], ...]:
    """(resource, soft, hard) triples. CPU: SIGXCPU at the soft limit, SIGKILL one second
    later for a process that ignores it. File size is capped at the memory limit: no
    legitimate test output is larger than what the process may hold."""
    cpu = max(1, int(-(-cpu_seconds // 1)))
    memory = memory_mb * _MIB
    nproc = processes_already + max_processes
    return (
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_AS, memory, memory),
        (resource.RLIMIT_NPROC, nproc, nproc),
        (resource.RLIMIT_FSIZE, memory, memory),
        (resource.RLIMIT_CORE, 0, 0),
    )


def pick_sandbox_uid() -> int:
    """A fresh uid (used as gid too) for one run; see the module docstring."""
    return _UID_BASE + secrets.randbelow(_UID_SPAN)


def _pids_of_uid(uid: int) -> list[int]:
    """Live (non-zombie) processes whose real uid is `uid`. Reads /proc/<pid>/status, not
    the owner of /proc/<pid>, which a process can turn into root's with
    PR_SET_DUMPABLE=0."""
    needle = f"\nUid:\t{uid}\t".encode()
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", "rb") as status:
                data = status.read()
        except OSError:
            continue
        if needle in data and b"\nState:\tZ" not in data:
            pids.append(int(name))
    return pids


def count_processes_of(uid: int) -> int:
    """How many live processes `uid` runs now (RLIMIT_NPROC counts them all)."""
    return len(_pids_of_uid(uid))


def kill_leftovers(pgid: int, sandbox_uid: int | None, *, rounds: int = 200) -> int:
    """Kill the run's process group, and in root mode every process of the run's uid
    (which also catches processes that left the group with `setsid`). Repeats until
    none is left, because a fork bomb may fork between a scan and the kill. Returns how
    many processes were signalled."""
    killed = 0
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if sandbox_uid is None:
        return killed
    for _ in range(rounds):
        pids = _pids_of_uid(sandbox_uid)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        time.sleep(0.005)
    return killed


@cache
def probe_namespaces() -> str | None:
    """None when the namespaces, read-only remounts and (as root) the identity change
    work here; else why not (then the in-interpreter guard has to stand in). Runs this
    interpreter once in a full plan; cached per process."""
    root = os.geteuid() == 0
    with tempfile.TemporaryDirectory(prefix="envgen-probe-") as work:
        uid = pick_sandbox_uid() if root else None
        if uid is not None:
            os.chmod(work, 0o777)
        plan = ChildPlan(
            work_dir=work, namespaces=True, user_namespace=not root, network=False,
            readonly_mounts=writable_mounts(), rlimits=(),
            drop_to=(uid, uid) if uid is not None else None,
            uid_map=None if root else (os.getuid(), os.getgid()),
            hide_dirs=hidden_dirs(), expose=exposures(interpreter_dirs()) if root else ())
        # /tmp is world-writable: only the read-only mount can refuse this write
        outside = os.path.join(os.path.dirname(work), f"envgen-probe-{os.getpid()}")
        code = (f"open('ok', 'w').close()\ntry:\n    open({outside!r}, 'w')\n"
                "except OSError:\n    pass\nelse:\n    raise SystemExit(3)")
        try:
            proc = subprocess.run([sys.executable, "-S", "-c", code], cwd=work, env={},
                                  preexec_fn=child_setup(plan), timeout=60,
                                  capture_output=True, text=True)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"namespaces unavailable here ({exc})"
        if os.path.exists(outside):
            os.unlink(outside)
        if proc.returncode != 0 or not Path(work, "ok").exists():
            return (f"namespace probe exited {proc.returncode}: "
                    f"{proc.stderr.strip()[-200:]}")
    return None


def hidden_dirs() -> tuple[str, ...]:
    """Directories covered by an empty read-only tmpfs in the child: /run holds the
    machine's Unix sockets (D-Bus, databases), which a read-only mount does not stop."""
    return tuple(d for d in ("/run",) if os.path.isdir(d) and not os.path.islink(d))
