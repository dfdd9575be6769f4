"""The per-sample `/data`: a fresh copy, its repos, and the path mapping both ways.

Runs on a small release laid out like upstream's (`fake_release`), so it needs neither
the shared data nor any server; expected paths are written out by hand."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest

from tasks._mcp_atlas.release import DATA_FILES
from tasks._mcp_atlas.workspace import MissingRepos, Workspace

PINNED_SHA = "93c5c9a0c9105ef08c3042e6433f2e504998932b"


def make_repo(path: Path, files: dict[str, str], message: str = "first") -> str:
    """A git repository at `path` with one commit of `files`; its commit id."""
    path.mkdir(parents=True)
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    for name, text in files.items():
        (path / name).write_text(text)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", message], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()


def write_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                  template: str = '{"mcpServers": {}}') -> Path:
    """MCP_ATLAS_DATA_DIR with every file of upstream's data/ (one line each; the repos
    CSV names snake-game at its real pin) and this template; empty servers/repos folders."""
    root = tmp_path / "release"
    for name in DATA_FILES:
        (root / "data" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "data" / name).write_text(f"{name}\n")
    (root / "data" / "repos" / "git_submodule_info.csv").write_text(
        f"https://github.com/Atamyrat2005/snake-game.git,{PINNED_SHA},/data/repos/snake-game\n")
    (root / "mcp_server_template.json").write_text(template)
    monkeypatch.setenv("MCP_ATLAS_DATA_DIR", str(root))
    monkeypatch.setenv("MCP_ATLAS_SERVERS_DIR", str(tmp_path / "servers"))
    monkeypatch.setenv("MCP_ATLAS_REPOS_DIR", str(tmp_path / "repos"))
    return root


@pytest.fixture
def fake_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return write_release(tmp_path, monkeypatch)


def test_arguments_map_every_virtual_path(fake_release: Path) -> None:
    with Workspace() as ws:
        r = str(ws.root)
        given = {"path": "/data/Top Movies.csv", "n": 3, "flag": True, "none": None,
                 "paths": ["/data", "/data/", "/database/x", "/x/data/y", "./data/z",
                           "~/data", "/data.csv", "/data-2", "/datax"],
                 "command": "cat /data/a.csv > /tmp/out; ls '/data'",
                 "env": "dir=/data,other=/data/repos/r",
                 "code": 'open("/data/Crime_records.csv")',
                 "nested": {"deeper": [{"repo_path": "/data/repos/snake-game"}]}}
        assert ws.arguments(given) == {
            "path": f"{r}/Top Movies.csv", "n": 3, "flag": True, "none": None,
            "paths": [r, f"{r}/", "/database/x", "/x/data/y", "./data/z", "~/data",
                      "/data.csv", "/data-2", "/datax"],
            "command": f"cat {r}/a.csv > /tmp/out; ls '{r}'",
            "env": f"dir={r},other={r}/repos/r",
            "code": f'open("{r}/Crime_records.csv")',
            "nested": {"deeper": [{"repo_path": f"{r}/repos/snake-game"}]}}
        assert ws.path("/data/fantasy sports.csv") == ws.root / "fantasy sports.csv"
        assert ws.arguments({"/data": "keys are kept"}) == {"/data": "keys are kept"}


def test_text_maps_both_spellings_back(fake_release: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Through a symlinked temp dir (macOS's /var -> /private/var): the resolved root and
    the spelling it was created under both read as /data; look-alikes do not."""
    real = tmp_path / "real-tmp"
    real.mkdir()
    (tmp_path / "link-tmp").symlink_to(real)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "link-tmp"))
    with Workspace() as ws:
        resolved = str(ws.root)
        assert resolved.startswith(str(real))
        created = str(tmp_path / "link-tmp" / ws.root.parent.name / "data")
        assert ws.text(f"Allowed directories:\n{resolved}\n{created}/x.csv") == \
            "Allowed directories:\n/data\n/data/x.csv"
        assert ws.text(f"{resolved}base and {resolved}.bak") == \
            f"{resolved}base and {resolved}.bak"
        assert ws.text("nothing here") == "nothing here"
        call = {"path": "/data/repos/r/file.txt"}
        assert ws.text(ws.arguments(call)["path"]) == call["path"]


def test_each_sample_has_its_own_copy(fake_release: Path) -> None:
    shipped = fake_release / "data" / "Top Movies.csv"
    with Workspace() as one, Workspace() as two:
        assert one.root != two.root
        assert sorted(p.relative_to(one.root).as_posix() for p in one.root.rglob("*")
                      if p.is_file()) == sorted(DATA_FILES)
        (one.root / "Top Movies.csv").write_text("changed by sample one")
        (one.root / "new.txt").write_text("only in one")
        assert (two.root / "Top Movies.csv").read_text() == "Top Movies.csv\n"
        assert not (two.root / "new.txt").exists()
        assert one.home.is_dir() and one.home != two.home
        dirs = [one.dir, two.dir]
    assert shipped.read_text() == "Top Movies.csv\n"
    assert not any(d.exists() for d in dirs)


def test_repos_are_copied_in_and_missing_ones_say_so(fake_release: Path,
                                                     tmp_path: Path) -> None:
    make_repo(tmp_path / "repos" / "demo", {"README.md": "demo\n"})
    with Workspace(repos=["demo"]) as ws:
        copy = ws.root / "repos" / "demo"
        assert (copy / "README.md").read_text() == "demo\n" and (copy / ".git").is_dir()
        (copy / "README.md").write_text("edited")
    assert (tmp_path / "repos" / "demo" / "README.md").read_text() == "demo\n"
    with pytest.raises(MissingRepos, match="storyteller") as missing:
        Workspace(repos=["demo", "storyteller"]).__enter__()
    assert missing.value.names == ["storyteller"]
    assert "MCP_ATLAS_REPOS_DIR" in str(missing.value)


def test_a_pinned_repo_at_another_commit_is_refused(fake_release: Path,
                                                    tmp_path: Path) -> None:
    head = make_repo(tmp_path / "repos" / "snake-game", {"game.py": "print()\n"})
    with pytest.raises(ValueError, match=f"{head}, not the release's pinned {PINNED_SHA}"):
        Workspace(repos=["snake-game"]).__enter__()


def test_code_executor_venv_is_linked_when_installed(fake_release: Path,
                                                     tmp_path: Path) -> None:
    with Workspace() as ws:
        assert not (ws.root / "repos" / "mcp_code_executor_workspace" / ".venv").exists()
    (tmp_path / "servers" / "code-executor-venv").mkdir(parents=True)
    with Workspace() as ws:
        link = ws.root / "repos" / "mcp_code_executor_workspace" / ".venv"
        assert link.is_symlink() and link.resolve() == tmp_path / "servers" / "code-executor-venv"


