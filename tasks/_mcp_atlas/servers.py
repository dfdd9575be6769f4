"""MCP-Atlas's servers: the release's template made installable, checkable and launchable.

Upstream's image runs each server of `mcp_server_template.json` with `npx pkg@ver` or
`uvx pkg==ver`, after installing them all at build time. Here each server is installed
once, at exactly the template's pinned version, under `servers_dir()`:

- npm packages into one prefix, `<servers_dir>/npm` (`npm install --prefix --save-exact`);
- Python servers each into its own venv, `<servers_dir>/py/<name>` (`python -m venv` and
  pip: nothing beyond Python is needed), so that their pinned dependencies never meet.
  `mcp<2` constrains every venv: the pinned servers import `mcp.server.fastmcp`, which
  MCP 2.0 removed, and upstream's image was built before 2.0 (rLLM's port pins
  `mcp==1.26.0` likewise);
- mcp-code-executor's workspace venv (the dependencies of the release's
  `data/repos/mcp_code_executor_workspace/pyproject.toml`) at
  `<servers_dir>/code-executor-venv`, linked into each sample's workspace;
- with `repos=True` (needs GitHub), the repositories of `data/repos/git_submodule_info.csv`
  at their pinned commits, in `repos_dir()`.

`workspace.launch` then starts the installed executable by its absolute path — never
`npx`/`uvx`, so that a run works offline and never fetches a different version — with the
template's arguments and environment, `${VAR}`s filled from this process's environment
and upstream's `/data` paths pointed at the sample's `Workspace`.

`OFFLINE` is the set of keyless servers that serve local files or compute locally; the
other keyless ones call live web APIs; the rest need the keys named by their `${VAR}`s
(found as upstream's `mcp_client.py` finds them). `availability` says, for one server,
whether it can start here and why not.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from envs.release_registry import MCP_ATLAS_SERVERS
from tasks._mcp_atlas.release import release

__all__ = [
    "OFFLINE",
    "Availability",
    "InstallResult",
    "RepoPin",
    "ServerTemplate",
    "availability",
    "install",
    "install_repos",
    "network_available",
    "repo_pins",
    "repos_dir",
    "servers_dir",
    "substitute",
    "template",
    "templates",
]

#: keyless servers that need no network: local files, local computation
OFFLINE = ("calculator", "cli-mcp-server", "desktop-commander", "filesystem", "git",
           "mcp-code-executor", "mcp-server-code-runner", "memory")
#: what every Python server's venv is resolved under (see the module's docstring)
PY_CONSTRAINTS = ("mcp<2",)
#: npx options that come before the package in the template (`npx -y URL`)
NPX_FLAGS = ("-y", "--yes")
CODE_EXECUTOR = "mcp-code-executor"
WORKSPACE_PYPROJECT = "repos/mcp_code_executor_workspace/pyproject.toml"
#: where `network_available` knocks (one of the servers' own APIs)
PROBE = ("en.wikipedia.org", 443)
_VAR = re.compile(r"\$\{([^}]+)\}")
_NPM_SPEC = re.compile(r"^((?:@[^/@\s]+/)?[^/@\s]+)@([^@\s]+)$")
_PYPI_SPEC = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^=\s]+)$")


class ServerTemplate(BaseModel):
    """One server of the template, as an installable package and a command line.

    `requirement` is what gets installed: an npm `pkg@ver`, a PyPI `pkg==ver`, or a git
    URL for the few servers upstream runs from GitHub (`version` is then None: upstream
    takes the repository's default branch). `executable` is the command to run from the
    install (uvx's command; None for npm, where it is the package's `bin`, picked as
    npx picks it)."""

    name: str
    runner: Literal["npx", "uvx"]
    requirement: str
    package: str | None
    version: str | None
    executable: str | None
    args: list[str]
    env: dict[str, str]
    key_vars: list[str]
    offline: bool

    @property
    def from_git(self) -> bool:
        return self.version is None


def _template_error(name: str, field: str, problem: str) -> ValueError:
    return ValueError(f"MCP-Atlas server template, server {name!r}, field {field!r}: {problem}")


def _strings(name: str, field: str, value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _template_error(name, field, f"expected a list of strings, got {value!r}")
    return list(value)


def _env(name: str, value: object) -> dict[str, str]:
    # upstream allows a list of env objects and picks one at random per start (API-key
    # load balancing); we take the first, so that runs are deterministic
    if isinstance(value, list):
        value = value[0] if value else {}
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in value.items()):
        raise _template_error(name, "env", f"expected an object of strings, got {value!r}")
    return dict(value)


def _is_git(requirement: str) -> bool:
    return requirement.startswith(("https://github.com/", "git+", "github:"))


def parse_template(name: str, entry: Mapping[str, Any]) -> ServerTemplate:
    """One `mcpServers` entry -> ServerTemplate; a clear error names the server and field."""
    if not isinstance(entry, Mapping):
        raise _template_error(name, "(entry)", f"expected an object, got {entry!r}")
    runner = entry.get("command")
    args = _strings(name, "args", entry.get("args", []))
    env = _env(name, entry.get("env"))
    key_vars = sorted({v for text in [*env.values(), *args] for v in _VAR.findall(text)})
    package: str | None
    version: str | None
    if runner == "npx":
        rest = list(args)
        while rest and rest[0] in NPX_FLAGS:
            rest.pop(0)
        if not rest:
            raise _template_error(name, "args", "npx is given no package")
        requirement, rest = rest[0], rest[1:]
        executable = None
        if _is_git(requirement):
            package = version = None
        elif m := _NPM_SPEC.match(requirement):
            package, version = m.group(1), m.group(2)
        else:
            raise _template_error(name, "args", f"{requirement!r} is not a pinned npm "
                                  "package (`pkg@version`) or a GitHub URL")
    elif runner == "uvx":
        if args[:1] == ["--from"]:
            if len(args) < 3:
                raise _template_error(name, "args", "`--from` needs a requirement and a command")
            requirement, executable, rest = args[1], args[2], args[3:]
        elif args:
            requirement, rest = args[0], args[1:]
            executable = requirement.split("==")[0]
        else:
            raise _template_error(name, "args", "uvx is given no package")
        if _is_git(requirement):
            package = version = None
        elif m := _PYPI_SPEC.match(requirement):
            package, version = m.group(1), m.group(2)
        else:
            raise _template_error(name, "args", f"{requirement!r} is not a pinned PyPI "
                                  "package (`pkg==version`) or a git URL")
    else:
        raise _template_error(name, "command", f"{runner!r} is neither npx nor uvx")
    return ServerTemplate(name=name, runner=runner, requirement=requirement, package=package,
                          version=version, executable=executable, args=rest, env=env,
                          key_vars=key_vars, offline=name in OFFLINE)


def templates() -> list[ServerTemplate]:
    """Every server of the release's template, in upstream's order."""
    return [parse_template(name, entry) for name, entry in release().template().items()]


def template(name: str) -> ServerTemplate:
    entry = release().template().get(name)
    if entry is None:
        raise KeyError(f"{name!r} is not a server of MCP-Atlas's template")
    return parse_template(name, entry)


# --- where things are installed -------------------------------------------------------

def servers_dir() -> Path:
    """`MCP_ATLAS_SERVERS_DIR`, else `cache_dir("mcp_atlas", "servers")`."""
    return MCP_ATLAS_SERVERS.path()


def repos_dir() -> Path:
    """Where the git repositories the tasks use are found: `MCP_ATLAS_REPOS_DIR`, else
    `<servers_dir()>/repos` (what `install_repos` fills)."""
    override = os.environ.get("MCP_ATLAS_REPOS_DIR")
    return Path(override) if override else servers_dir() / "repos"


def code_executor_venv() -> Path:
    return servers_dir() / "code-executor-venv"


def _npm_prefix() -> Path:
    return servers_dir() / "npm"


def _venv(name: str) -> Path:
    return servers_dir() / "py" / name


def _venv_bin(venv: Path, command: str) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / command


def _failure_file(name: str) -> Path:
    return servers_dir() / "failed" / f"{name}.txt"


def _npm_package_dir(t: ServerTemplate) -> Path | None:
    """The installed package's folder: by name, or for a git URL the dependency of the
    prefix whose spec names that repository."""
    modules = _npm_prefix() / "node_modules"
    if t.package is not None:
        return modules / t.package
    manifest = _npm_prefix() / "package.json"
    if not manifest.is_file():
        return None
    repo = re.sub(r"^(git\+)?https://github.com/|\.git$", "", t.requirement)
    for dep, spec in json.loads(manifest.read_text()).get("dependencies", {}).items():
        if repo in str(spec):
            return modules / dep
    return None


def _npm_bin(package_dir: Path) -> Path:
    """The file npx would run: the package's only `bin`, or the one named after it."""
    manifest = json.loads((package_dir / "package.json").read_text())
    bins = manifest.get("bin")
    unscoped = str(manifest.get("name", "")).split("/")[-1]
    if isinstance(bins, str):
        return package_dir / bins
    if isinstance(bins, dict) and bins:
        chosen = bins[next(iter(bins))] if len(bins) == 1 else bins.get(unscoped)
        if chosen:
            return package_dir / chosen
    raise FileNotFoundError(f"{package_dir / 'package.json'} names no executable "
                            f"(bin: {bins!r})")


def installed_executable(t: ServerTemplate) -> Path | None:
    """The installed server's executable at the pinned version, or None."""
    if t.runner == "npx":
        package_dir = _npm_package_dir(t)
        if package_dir is None or not (package_dir / "package.json").is_file():
            return None
        if t.version is not None and json.loads(
                (package_dir / "package.json").read_text()).get("version") != t.version:
            return None
        try:
            path = _npm_bin(package_dir)
        except FileNotFoundError:
            return None
        return path if path.is_file() else None
    venv = _venv(t.name)
    marker = venv / "envfactory-requirement.txt"
    path = _venv_bin(venv, t.executable or "")
    if marker.is_file() and marker.read_text() == t.requirement and path.is_file():
        return path
    return None


# --- installing ------------------------------------------------------------------------

class InstallResult(BaseModel):
    """What installing one thing did: `ok` (installed now or already), `skipped` (it
    was already there), or the tool's error in `detail`."""

    server: str
    requirement: str
    ok: bool
    skipped: bool = False
    detail: str = ""
    seconds: float = 0.0


class _Failed(Exception):
    pass


def _run(command: list[str], what: str, timeout: float = 900) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              check=False)
    except FileNotFoundError as e:
        raise _Failed(f"{command[0]} not found ({e})") from e
    except subprocess.TimeoutExpired as e:
        raise _Failed(f"{what} timed out after {timeout:.0f} s") from e
    if done.returncode != 0:
        raise _Failed(_tool_error(command[0], what, done.stdout + done.stderr))
    return done.stdout


def _tool_error(tool: str, what: str, output: str) -> str:
    """The lines of a failed npm/pip/git run that say why."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    if Path(tool).name == "npm" and any(code in output for code in ("E404", "ETARGET")):
        return f"npm registry has no {what}"
    keep = [ln for ln in lines if ln.startswith(("npm error", "npm ERR!", "ERROR:", "error:",
                                                 "fatal:"))
            and "complete log of this run" not in ln]
    return f"{what}: " + (" | ".join(keep[:6]) or " | ".join(lines[-4:]) or "failed")


def _install_npm(t: ServerTemplate) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise _Failed("npm not found on PATH: install Node.js (>= 18, with npm) to run "
                      "the npm servers")
    prefix = _npm_prefix()
    prefix.mkdir(parents=True, exist_ok=True)
    _run([npm, "install", "--prefix", str(prefix), "--save-exact", "--no-audit", "--no-fund",
          "--loglevel=error", "--fetch-retries=1", t.requirement], t.requirement)
    if installed_executable(t) is None:
        raise _Failed(f"npm installed {t.requirement} but not at the pinned version or "
                      "without an executable")


def _new_venv(venv: Path, requirements: list[str]) -> None:
    """A fresh venv at `venv` with `requirements` under PY_CONSTRAINTS."""
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(PY_CONSTRAINTS) + "\n")
    try:
        what = " ".join(requirements)
        python = str(_venv_bin(venv, "python"))
        _run([sys.executable, "-m", "venv", str(venv)], f"venv for {what}")
        _run([python, "-m", "pip", "install", "--disable-pip-version-check", "-q",
              "--retries", "1", "-c", f.name, *requirements], what)
    except _Failed:
        shutil.rmtree(venv, ignore_errors=True)
        raise
    finally:
        os.unlink(f.name)


def _install_python(t: ServerTemplate) -> None:
    venv = _venv(t.name)
    _new_venv(venv, [t.requirement])
    if not _venv_bin(venv, t.executable or "").is_file():
        shutil.rmtree(venv, ignore_errors=True)
        raise _Failed(f"{t.requirement} installed no {t.executable!r}")
    (venv / "envfactory-requirement.txt").write_text(t.requirement)


def _workspace_requirements() -> list[str]:
    pyproject = release().data_dir() / WORKSPACE_PYPROJECT
    return list(tomllib.loads(pyproject.read_text())["project"]["dependencies"])


def _install_workspace_venv() -> InstallResult:
    requirements = _workspace_requirements()
    venv = code_executor_venv()
    marker = venv / "envfactory-requirement.txt"
    wanted = "\n".join(requirements)
    start = time.perf_counter()
    if marker.is_file() and marker.read_text() == wanted:
        return InstallResult(server=f"{CODE_EXECUTOR} workspace", requirement=wanted, ok=True,
                             skipped=True)
    try:
        _new_venv(venv, requirements)
        marker.write_text(wanted)
        return InstallResult(server=f"{CODE_EXECUTOR} workspace", requirement=wanted, ok=True,
                             seconds=time.perf_counter() - start)
    except _Failed as e:
        return InstallResult(server=f"{CODE_EXECUTOR} workspace", requirement=wanted,
                             ok=False, detail=str(e), seconds=time.perf_counter() - start)


def _install_one(t: ServerTemplate) -> InstallResult:
    start = time.perf_counter()
    if installed_executable(t) is not None:
        _failure_file(t.name).unlink(missing_ok=True)
        return InstallResult(server=t.name, requirement=t.requirement, ok=True, skipped=True)
    try:
        if t.runner == "npx":
            _install_npm(t)
        else:
            _install_python(t)
    except _Failed as e:
        _failure_file(t.name).parent.mkdir(parents=True, exist_ok=True)
        _failure_file(t.name).write_text(str(e))
        return InstallResult(server=t.name, requirement=t.requirement, ok=False, detail=str(e),
                             seconds=time.perf_counter() - start)
    _failure_file(t.name).unlink(missing_ok=True)
    return InstallResult(server=t.name, requirement=t.requirement, ok=True,
                         seconds=time.perf_counter() - start)


def install(names: Iterable[str] = OFFLINE, *, repos: bool = False,
            on_step: Callable[[str], None] | None = None) -> list[InstallResult]:
    """Install these servers at their pinned versions (already installed: skipped), then
    mcp-code-executor's workspace venv when that server is installed, then (`repos`)
    the pinned git repositories. A failure is a result with the tool's error, never an
    exception. `on_step(description)` is called as each step starts (the command line
    shows it beside a spinner)."""
    chosen = [template(n) for n in names]
    step = on_step or (lambda _: None)
    results: list[InstallResult] = []
    for t in chosen:
        step(f"{t.name}: {t.requirement}")
        results.append(_install_one(t))
    if any(r.ok and r.server == CODE_EXECUTOR for r in results):
        step(f"{CODE_EXECUTOR} workspace venv")
        results.append(_install_workspace_venv())
    if repos:
        for pin in repo_pins():
            step(f"repos/{pin.name}: {pin.url}@{pin.sha[:10]}")
            results.append(install_repo(pin))
    return results


# --- git repositories ------------------------------------------------------------------

class RepoPin(BaseModel):
    """One line of `data/repos/git_submodule_info.csv`: url, commit, upstream's path."""

    url: str
    sha: str
    path: str

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]


def repo_pins() -> list[RepoPin]:
    import csv

    path = release().data_dir() / "repos" / "git_submodule_info.csv"
    with path.open(newline="", encoding="utf-8") as f:
        return [RepoPin(url=row[0].strip(), sha=row[1].strip(), path=row[2].strip())
                for row in csv.reader(f) if row]


def repo_head(path: Path) -> str | None:
    """The commit checked out in a repository, or None when it is not one."""
    try:
        return _run(["git", "-C", str(path), "rev-parse", "HEAD"], f"git rev-parse {path}",
                    timeout=30).strip()
    except _Failed:
        return None


def install_repo(pin: RepoPin) -> InstallResult:
    """Clone one pinned repository into `repos_dir()` and check out its commit."""
    target = repos_dir() / pin.name
    start = time.perf_counter()
    what = f"{pin.url}@{pin.sha}"
    if (target / ".git").exists() and repo_head(target) == pin.sha:
        return InstallResult(server=f"repos/{pin.name}", requirement=what, ok=True,
                             skipped=True)
    partial = target.with_name(target.name + ".part")
    shutil.rmtree(partial, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        _run(["git", "clone", "--quiet", pin.url, str(partial)], f"git clone {pin.url}")
        _run(["git", "-C", str(partial), "checkout", "--quiet", pin.sha],
             f"git checkout {pin.sha}")
    except _Failed as e:
        shutil.rmtree(partial, ignore_errors=True)
        return InstallResult(server=f"repos/{pin.name}", requirement=what, ok=False,
                             detail=str(e), seconds=time.perf_counter() - start)
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return InstallResult(server=f"repos/{pin.name}", requirement=what, ok=True,
                         seconds=time.perf_counter() - start)


def install_repos() -> list[InstallResult]:
    return [install_repo(pin) for pin in repo_pins()]


# --- availability ----------------------------------------------------------------------

class Availability(BaseModel):
    """Whether one server can start here; `reason` says why not, and the fields say what
    is missing, so that `doctor` can say how to get each piece."""

    server: str
    ok: bool
    reason: str = ""
    #: installed at the pinned version (and, for mcp-code-executor, its workspace venv)
    installed: bool = True
    #: why the last `install` of it failed (the tool's error), when it did
    install_failure: str = ""
    #: the key variables its template needs that are unset here
    missing_keys: list[str] = []
    #: it calls web APIs and there is no network
    no_network: bool = False


@functools.cache
def _probe() -> bool:
    try:
        with socket.create_connection(PROBE, timeout=1.5):
            return True
    except OSError:
        return False


def network_available() -> bool:
    """Whether the servers' web APIs can be reached: `MCP_ATLAS_NETWORK=1|0`, else a
    short TCP probe (once per process)."""
    forced = os.environ.get("MCP_ATLAS_NETWORK")
    if forced in ("0", "1"):
        return forced == "1"
    return _probe()


def availability(name: str) -> Availability:
    """Installed (at the pinned version)? Keys set? Network, where needed?"""
    try:
        t = template(name)
    except KeyError as e:
        return Availability(server=name, ok=False, reason=str(e.args[0]))
    reasons = []
    missing = [v for v in t.key_vars if not os.environ.get(v, "").strip()]
    if missing:
        reasons.append(f"needs {', '.join(missing)} (unset)")
    installed = installed_executable(t) is not None
    failure = _failure_file(name)
    install_failure = failure.read_text().strip() if failure.is_file() else ""
    if not installed:
        how = ("`make install-mcp-atlas` installs it" if name in OFFLINE else
               f"`envfactory mcp-atlas install {name}` installs it")
        reasons.append(f"not installed ({install_failure})" if install_failure
                       else f"not installed in {servers_dir()} ({how})")
    elif name == CODE_EXECUTOR and not (code_executor_venv() / "envfactory-requirement.txt"
                                        ).is_file():
        installed = False
        reasons.append(f"its workspace venv is not installed in {code_executor_venv()}")
    no_network = not t.offline and not network_available()
    if no_network:
        reasons.append("needs network (no connection to the internet; "
                       "MCP_ATLAS_NETWORK=1 says there is)")
    return Availability(server=name, ok=not reasons, reason="; ".join(reasons),
                        installed=installed, install_failure=install_failure,
                        missing_keys=missing, no_network=no_network)


# --- launching (`workspace.launch`) ----------------------------------------------------

def substitute(text: str, name: str) -> str:
    """`text` with each `${VAR}` of server `name`'s template filled from this process's
    environment; an unset one is a `ValueError` naming it."""
    def value(m: re.Match[str]) -> str:
        found = os.environ.get(m.group(1), "").strip()
        if not found:
            raise ValueError(f"MCP server {name!r} needs {m.group(1)} (unset)")
        return found
    return _VAR.sub(value, text)

