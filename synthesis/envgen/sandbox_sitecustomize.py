"""The EnvGen sandbox's in-interpreter guard, copied into each sandbox as `sitecustomize.py`.

Standalone on purpose (the standard library only): the sandboxed interpreter imports it
at start-up from the sandbox's read-only guard directory, before any generated code.
`sandbox.py` appends one `install(...)` call with the run's values.

It installs a `sys.addaudithook` hook that watches three things and reports each as one
marker line, `ENVGEN-SANDBOX <kind> <what>`, on the run's marker pipe (a file descriptor
the parent passed down; pytest's output capture cannot swallow it) and on stderr:

* `network`: an Internet-socket `connect`/`sendto`/`sendmsg`, or a name lookup of a host
  other than localhost, while the run has no network;
* `write`: opening a file for writing, or creating / removing / renaming / changing a
  path, outside the sandbox's work directory;
* `process_limit`: `os.fork` failing with EAGAIN (RLIMIT_NPROC reached).

With the kernel layers active (network namespace, read-only mounts) the hook only
reports: the kernel then refuses the operation itself. Without them the hook also
refuses it (`block=True`), raising PermissionError; that stops Python code only, not a
C extension or a non-Python child, which is why it is the fallback, not the defence.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import sys
from typing import Any

MARKER = "ENVGEN-SANDBOX"
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_ALLOWED_PREFIXES = ("/dev/fd/", "/proc/self/fd/")
_ALLOWED_PATHS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
# event -> positions of path arguments that are written (created, removed, changed)
_PATH_EVENTS: dict[str, tuple[int, ...]] = {
    "os.mkdir": (0,), "os.remove": (0,), "os.rmdir": (0,), "os.rename": (0, 1),
    "os.symlink": (1,), "os.link": (1,), "os.truncate": (0,), "os.chmod": (0,),
    "os.chown": (0,), "os.utime": (0,), "os.mkfifo": (0,), "os.mknod": (0,),
}
_NET_EVENTS = frozenset({"socket.connect", "socket.sendto", "socket.sendmsg"})
_LOCAL_HOSTS = frozenset({None, "", "localhost", "localhost.localdomain", b"localhost"})


class _Guard:
    def __init__(self, work: str, marker_fd: int, marker_ino: int, *, watch_network: bool,
                 block: bool) -> None:
        self.work = os.path.realpath(work)
        self.marker_fd = marker_fd
        self.marker_ino = marker_ino
        self.watch_network = watch_network
        self.block = block
        self.busy = False

    def emit(self, kind: str, what: str) -> None:
        line = f"{MARKER} {kind} {what}\n".encode(errors="replace")
        try:
            st = os.fstat(self.marker_fd)
            # only the parent's pipe: the number may have been reused in a grandchild
            if stat.S_ISFIFO(st.st_mode) and st.st_ino == self.marker_ino:
                os.write(self.marker_fd, line)
        except OSError:
            pass
        try:
            os.write(2, line)
        except OSError:
            pass

    def outside(self, path: Any) -> str | None:
        """The resolved path when it lies outside the work directory, else None."""
        if isinstance(path, int) or path is None:
            return None
        raw = os.fsdecode(path)
        if raw in _ALLOWED_PATHS or raw.startswith(_ALLOWED_PREFIXES):
            return None
        full = os.path.realpath(raw)
        if full == self.work or full.startswith(self.work + os.sep) or full in _ALLOWED_PATHS:
            return None
        return full

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if self.busy:
            return
        if event == "open":
            path, mode, flags = args
            writes = bool(flags & _WRITE_FLAGS) or any(c in (mode or "") for c in "wax+")
            if writes:
                self.check_write(event, path)
        elif event in _PATH_EVENTS:
            for i in _PATH_EVENTS[event]:
                if i < len(args):
                    self.check_write(event, args[i])
        elif self.watch_network and event in _NET_EVENTS:
            sock, address = args[0], args[1]
            if getattr(sock, "family", None) in (socket.AF_INET, socket.AF_INET6):
                self.refuse("network", f"{event} {address!r}", errno.ENETUNREACH)
        elif self.watch_network and event == "socket.getaddrinfo":
            host = args[0]
            if host not in _LOCAL_HOSTS and not _numeric(host):
                self.refuse("network", f"{event} {host!r}", errno.ENETUNREACH)

    def check_write(self, event: str, path: Any) -> None:
        self.busy = True
        try:
            full = self.outside(path)
        finally:
            self.busy = False
        if full is not None:
            self.refuse("write", f"{event} {full}", errno.EACCES)

    def refuse(self, kind: str, what: str, code: int) -> None:
        self.emit(kind, what)
        if self.block:
            raise PermissionError(code, f"EnvGen sandbox: {kind} refused ({what})")


def _numeric(host: Any) -> bool:
    """A literal address needs no lookup (the connect that follows is what gets caught)."""
    text = os.fsdecode(host) if isinstance(host, bytes) else str(host)
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, text)
        except OSError:
            continue
        return True
    return False


def install(work: str, marker_fd: int, marker_ino: int, *, watch_network: bool,
            block: bool) -> None:
    """Install the audit hook and the fork wrapper (once per interpreter)."""
    guard = _Guard(work, marker_fd, marker_ino, watch_network=watch_network, block=block)
    sys.addaudithook(guard.hook)
    real_fork = os.fork

    def fork() -> int:
        try:
            return real_fork()
        except BlockingIOError:
            guard.emit("process_limit", "os.fork EAGAIN")
            raise

    os.fork = fork
