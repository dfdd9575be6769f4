"""One sample's world for MCP-Atlas: its own copy of `/data`, its repos, its HOME.

Upstream runs every server in one container whose `/data` holds the release's files
(CSVs, the memory server's file, git repositories, the code executor's venv), shared by
all tasks of a run. Here each sample gets a fresh temporary folder: `data/` is a copy of
`release().data_dir()` plus the git repositories the task needs (copied from
`repos_dir()`), `home/` is the HOME its servers get (desktop-commander keeps its config
there). Writes never touch the release or another sample, and the folder is removed when
the sample ends.

Why path mapping and not a real `/data`: creating `/data`, a bind mount or a mount
namespace needs root (or user namespaces, which macOS lacks and many Linux hosts
disable), and a fixed path cannot hold several samples at once. So the servers run as a
normal user on the real folder (`root`), and the model keeps seeing upstream's paths:
`arguments` rewrites `/data` in every string of a call's arguments to `root`, and
`text` rewrites `root` back to `/data` in every result and error.

Limits of the mapping (what a real `/data` would do that this does not):
- only literal spellings are mapped: a path a program builds (`"/" + "data"`,
  `os.path.join("/", "data")`), reaches through `..`, or escapes (`\\/data`) goes to
  the host's `/data`, not the sample's;
- `/data` must stand alone: `/data`, `/data/...`, `"/data"`, `dir=/data` are mapped;
  `/database`, `/data.csv`, `/x/data`, `./data` are not (nor `/data.` at a sentence's end);
- in results only the sample's root is mapped back: other host paths (the sample's
  HOME, temp files, the server's own install) are shown as they are;
- file metadata a server reports (owner, inode) is the host's.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from harness.tool_backends import McpServerSpec
from tasks._mcp_atlas.release import release
from tasks._mcp_atlas.servers import (
    availability,
    code_executor_venv,
    installed_executable,
    repo_head,
    repo_pins,
    repos_dir,
    substitute,
    template,
)

__all__ = ["VIRTUAL_ROOT", "MissingRepos", "Workspace", "launch", "missing_repos"]

#: the root upstream's servers and tasks use
VIRTUAL_ROOT = "/data"
#: characters that continue a path component (so `/database` is not `/data`)
_NAME = r"[\w.\-~]"
_VIRTUAL = re.compile(rf"(?<![\w.\-~/]){re.escape(VIRTUAL_ROOT)}(?!{_NAME})")
CODE_EXECUTOR_WORKSPACE = Path("repos") / "mcp_code_executor_workspace"
T = TypeVar("T")


class MissingRepos(FileNotFoundError):
    """The task needs git repositories that are not installed: it cannot run here."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        super().__init__(
            f"git repositories {', '.join(names)} not found in {repos_dir()} (clone the "
            "release's pinned repos with `envfactory mcp-atlas install --repos`, which "
            "needs GitHub, or set MCP_ATLAS_REPOS_DIR to a folder holding them)")


def missing_repos(names: Iterable[str]) -> list[str]:
    """Which of these repositories `repos_dir()` lacks."""
    return [n for n in names if not (repos_dir() / n / ".git").exists()]


class Workspace:
    """A sample's `/data` (a fresh copy) and HOME, as a context manager.

    `repos`: the git repositories the task uses, copied in as `data/repos/<name>` (with
    every other repository installed in `repos_dir()`, as upstream's `/data` has them all); a
    missing one of the task's raises `MissingRepos`, and one of the release's pins checked out at
    another commit raises `ValueError`. `root` is the resolved real path that stands for
    `/data`; `arguments` / `text` translate (the `Rewrite` that `McpBackend` applies)."""

    def __init__(self, repos: Iterable[str] = ()) -> None:
        self.repos = list(dict.fromkeys(repos))
        self._dir: Path | None = None

    @property
    def dir(self) -> Path:
        if self._dir is None:
            raise RuntimeError("the workspace is used outside its `with` block")
        return self._dir

    @property
    def root(self) -> Path:
        """The real folder standing for `/data`."""
        return self.dir / "data"

    @property
    def home(self) -> Path:
        return self.dir / "home"

    def __enter__(self) -> Workspace:
        missing = missing_repos(self.repos)
        if missing:
            raise MissingRepos(missing)
        pins = {p.name: p.sha for p in repo_pins()}
        # upstream's /data/repos holds every clone, whichever task runs
        others = sorted(g.parent.name for g in repos_dir().glob("*/.git")
                        if g.parent.name not in self.repos) if repos_dir().is_dir() else []
        repos = self.repos + others
        for name in repos:
            head = repo_head(repos_dir() / name) if name in pins else None
            if head is not None and head != pins[name]:
                raise ValueError(f"{repos_dir() / name} is at {head}, not the release's "
                                 f"pinned {pins[name]}")
        self._created = Path(tempfile.mkdtemp(prefix="mcp-atlas-"))
        self._dir = self._created.resolve()
        try:
            shutil.copytree(release().data_dir(), self.root, symlinks=True)
            for name in repos:
                shutil.copytree(repos_dir() / name, self.root / "repos" / name, symlinks=True)
            venv = code_executor_venv()
            if venv.is_dir():
                (self.root / CODE_EXECUTOR_WORKSPACE / ".venv").symlink_to(venv)
            self.home.mkdir()
        except BaseException:
            self.close()
            raise
        spellings = sorted({str(self.root), str(self._created / "data")}, key=len,
                           reverse=True)
        self._real = re.compile(rf"(?:{'|'.join(map(re.escape, spellings))})(?!{_NAME})")
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def path(self, virtual: str) -> Path:
        """The real path of one `/data...` path."""
        return Path(self.arguments(virtual))

    def arguments(self, value: T) -> T:
        """`value` with `/data` in every string (nested in dicts and lists) pointing at
        this sample's copy; keys and non-strings are kept."""
        root = str(self.root)
        if isinstance(value, str):
            return _VIRTUAL.sub(lambda _: root, value)  # type: ignore[return-value]
        if isinstance(value, Mapping):
            return {k: self.arguments(v) for k, v in value.items()}  # type: ignore[return-value]
        if isinstance(value, list):
            return [self.arguments(v) for v in value]  # type: ignore[return-value]
        return value

    def text(self, text: str) -> str:
        """`text` with this sample's real root (either spelling, resolved or as created)
        shown as `/data` again."""
        return self._real.sub(VIRTUAL_ROOT, text)


def launch(name: str, workspace: Workspace) -> McpServerSpec:
    """The command line that starts this installed server for one sample: its absolute
    executable, args and env with `${VAR}`s filled and `/data` paths mapped into the
    workspace, `PATH` kept, `HOME` the sample's own. desktop-commander gets upstream's
    start-up call restricting it to `/data` (upstream's main.py). It lives here, not in
    `servers` (which installs and checks, and needs neither a workspace nor Inspect)."""
    t = template(name)
    executable = installed_executable(t)
    if executable is None:
        raise FileNotFoundError(f"MCP server {name!r} cannot start: "
                                f"{availability(name).reason}")
    env = {key: str(workspace.arguments(substitute(value, name)))
           for key, value in t.env.items()}
    env["PATH"] = os.environ.get("PATH", os.defpath)
    env["HOME"] = str(workspace.home)
    setup: list[tuple[str, dict[str, Any]]] = []
    if name == "desktop-commander":
        setup.append(("set_config_value",
                      {"key": "allowedDirectories", "value": [str(workspace.root)]}))
    return McpServerSpec(name=name, command=str(executable),
                         args=[str(workspace.arguments(substitute(a, name))) for a in t.args],
                         env=env, cwd=str(workspace.home), setup=setup)
