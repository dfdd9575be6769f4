"""A small Hugging Face Hub on 127.0.0.1 for offline tests of Hub publishing.

No emulator of the Hub exists on PyPI (notes/training.md §7.1), so this implements the
endpoints that `huggingface_hub`, `datasets` and `transformers` hit when they create a
repo, commit files (regular and LFS), and read them back (§7.2): repo create/info, branch
create, preupload (with the remote oid, so an unchanged file is a no-op), the LFS batch
API and PUT uploads (sha256 checked), NDJSON commits, tree listings, paths-info, refs,
`validate-yaml`, and `resolve` downloads. Repos are kept in memory as a chain of commits
(path -> blob) per branch; blobs live in a temporary directory. Tests read the state back
through `commits` / `files` / `read`, and can make every request fail with `fail_with`
(the error body echoes the request's Authorization header, as a careless server might, so
that token redaction is tested against the worst case).

Start it with `FakeHub.start(root)`; set `HF_ENDPOINT=fake.url`, `HF_HUB_DISABLE_XET=1` and
a dummy `HF_TOKEN` before the clients read them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
import yaml

#: files stored through the LFS path (datasets 5.x deletes its parquet shards after
#: preupload, so they must be uploaded before the commit: notes §7.3)
LFS_SUFFIXES = (".parquet", ".safetensors", ".bin", ".pt", ".eval", ".arrow", ".gguf")
LFS_MIN_SIZE = 10 * 1024 * 1024


def git_blob_sha1(data: bytes) -> str:
    """The oid huggingface_hub computes for a regular file (git's blob hash)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # noqa: S324


@dataclass
class Blob:
    sha256: str
    size: int
    lfs: bool
    sha1: str

    @property
    def oid(self) -> str:
        """What preupload and the tree listing report for the file."""
        return self.sha256 if self.lfs else self.sha1


@dataclass
class Commit:
    sha: str
    parent: str | None
    message: str
    files: dict[str, Blob]
    time: datetime


@dataclass
class Repo:
    type: str
    repo_id: str
    private: bool
    branches: dict[str, str] = field(default_factory=dict)
    commits: dict[str, Commit] = field(default_factory=dict)

    def resolve(self, revision: str) -> Commit | None:
        revision = unquote(revision)
        sha = self.branches.get(revision, revision)
        return self.commits.get(sha)


class HttpError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


class FakeHub:
    """The server and its state; `url` is the endpoint to give the clients."""

    def __init__(self, root: Path, user: str = "tester") -> None:
        self.root = root
        (root / "blobs").mkdir(parents=True, exist_ok=True)
        self.user = user
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lock = threading.RLock()
        #: every request as "METHOD path" (for tests that check what a client called)
        self.requests: list[str] = []
        #: every Authorization header received
        self.auth_headers: list[str] = []
        #: when set, every request gets this status with the Authorization header echoed
        self.fail_with: int | None = None
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._uploads: dict[str, Path] = {}

    # --- life cycle -------------------------------------------------------------------

    @classmethod
    def start(cls, root: Path) -> FakeHub:
        hub = cls(root)
        handler = type("Handler", (_Handler,), {"hub": hub})
        hub._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        hub._server.daemon_threads = True
        hub._thread = threading.Thread(target=hub._server.serve_forever, daemon=True)
        hub._thread.start()
        return hub

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # --- what tests read --------------------------------------------------------------

    def repo(self, repo_id: str, repo_type: str = "model") -> Repo:
        return self.repos[(repo_type, repo_id)]

    def commits(self, repo_id: str, repo_type: str = "model", branch: str = "main"
                ) -> list[Commit]:
        """The branch's commits, newest first."""
        repo = self.repo(repo_id, repo_type)
        out = []
        sha: str | None = repo.branches[branch]
        while sha is not None:
            commit = repo.commits[sha]
            out.append(commit)
            sha = commit.parent
        return out

    def files(self, repo_id: str, repo_type: str = "model", revision: str = "main"
              ) -> dict[str, Blob]:
        commit = self.repo(repo_id, repo_type).resolve(revision)
        assert commit is not None, revision
        return dict(commit.files)

    def read(self, repo_id: str, path: str, repo_type: str = "model",
             revision: str = "main") -> bytes:
        return self._blob_path(self.files(repo_id, repo_type, revision)[path]).read_bytes()

    # --- storage ----------------------------------------------------------------------

    def _blob_path(self, blob: Blob) -> Path:
        return self.root / "blobs" / blob.sha256

    def _store(self, data: bytes, lfs: bool) -> Blob:
        sha256 = hashlib.sha256(data).hexdigest()
        path = self.root / "blobs" / sha256
        if not path.exists():
            path.write_bytes(data)
        return Blob(sha256=sha256, size=len(data), lfs=lfs, sha1=git_blob_sha1(data))

    def _new_commit(self, repo: Repo, branch: str, message: str, files: dict[str, Blob]
                    ) -> Commit:
        parent = repo.branches.get(branch)
        now = datetime.now(UTC)
        seed = f"{repo.repo_id}\n{parent}\n{message}\n{now.isoformat()}\n{len(repo.commits)}"
        seed += "".join(f"\n{p}:{b.sha256}" for p, b in sorted(files.items()))
        commit = Commit(sha=hashlib.sha1(seed.encode()).hexdigest(),  # noqa: S324
                        parent=parent, message=message, files=files, time=now)
        repo.commits[commit.sha] = commit
        repo.branches[branch] = commit.sha
        return commit

    def _get_repo(self, repo_type: str, repo_id: str) -> Repo:
        repo = self.repos.get((repo_type, repo_id))
        if repo is None:
            raise HttpError(404, f"Repository {repo_id} not found", "RepoNotFound")
        return repo

    def _get_commit(self, repo: Repo, revision: str) -> Commit:
        commit = repo.resolve(revision)
        if commit is None:
            raise HttpError(404, f"Revision {unquote(revision)} not found", "RevisionNotFound")
        return commit

    # --- endpoints --------------------------------------------------------------------

    def create_repo(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        repo_type = body.get("type") or "model"
        name = body["name"]
        namespace = body.get("organization") or self.user
        repo_id = f"{namespace}/{name}"
        url = self._repo_url(repo_type, repo_id)
        if (repo_type, repo_id) in self.repos:
            return 409, {"error": "You already created this repo", "url": url}
        repo = Repo(type=repo_type, repo_id=repo_id, private=_private(body) or False)
        blob = self._store(b"*.parquet filter=lfs diff=lfs merge=lfs -text\n", lfs=False)
        self._new_commit(repo, "main", "initial commit", {".gitattributes": blob})
        self.repos[(repo_type, repo_id)] = repo
        return 200, {"url": url, "name": repo_id}

    def _repo_url(self, repo_type: str, repo_id: str) -> str:
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        return f"{self.url}/{prefix}{repo_id}"

    def info(self, repo: Repo, revision: str | None) -> dict[str, Any]:
        commit = self._get_commit(repo, revision or "main")
        readme = commit.files.get("README.md")
        card: dict[str, Any] = {}
        if readme is not None:
            card = _front_matter(self._blob_path(readme).read_text(encoding="utf-8")) or {}
        return {
            "_id": hashlib.sha1(repo.repo_id.encode()).hexdigest()[:24],  # noqa: S324
            "id": repo.repo_id, "author": repo.repo_id.split("/")[0], "sha": commit.sha,
            "private": repo.private, "disabled": False, "gated": False, "downloads": 0,
            "likes": 0, "tags": [], "cardData": card,
            "lastModified": commit.time.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "createdAt": commit.time.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "siblings": [{"rfilename": p} for p in sorted(commit.files)],
        }

    def preupload(self, repo: Repo, revision: str, body: dict[str, Any]) -> dict[str, Any]:
        commit = repo.resolve(revision)
        existing = commit.files if commit is not None else {}
        files = []
        for entry in body.get("files", []):
            path = entry["path"]
            lfs = path.endswith(LFS_SUFFIXES) or int(entry.get("size", 0)) >= LFS_MIN_SIZE
            remote = existing.get(path)
            files.append({"path": path, "uploadMode": "lfs" if lfs else "regular",
                          "shouldIgnore": False,
                          "oid": remote.oid if remote is not None else None})
        return {"files": files, "commitOid": commit.sha if commit else None}

    def lfs_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        objects = []
        for obj in body.get("objects", []):
            oid, size = obj["oid"], obj["size"]
            entry: dict[str, Any] = {"oid": oid, "size": size, "authenticated": True}
            if not (self.root / "blobs" / oid).exists():
                entry["actions"] = {"upload": {"href": f"{self.url}/lfs-upload/{oid}",
                                               "header": {}}}
            objects.append(entry)
        return {"transfer": "basic", "objects": objects}

    def lfs_upload(self, oid: str, data: bytes) -> None:
        if hashlib.sha256(data).hexdigest() != oid:
            raise HttpError(400, f"LFS upload {oid}: content does not match its sha256")
        self._store(data, lfs=True)

    def commit(self, repo: Repo, revision: str, lines: list[dict[str, Any]]
               ) -> dict[str, Any]:
        branch = unquote(revision)
        if branch not in repo.branches:
            raise HttpError(404, f"Revision {branch} not found", "RevisionNotFound")
        files = dict(repo.commits[repo.branches[branch]].files)
        message = "commit"
        for line in lines:
            key, value = line["key"], line["value"]
            if key == "header":
                message = value.get("summary") or message
                parent = value.get("parentCommit")
                if parent and parent != repo.branches[branch]:
                    raise HttpError(412, "parent commit is not the branch head")
            elif key == "file":
                data = base64.b64decode(value["content"])
                files[value["path"]] = self._store(data, lfs=False)
            elif key == "lfsFile":
                path = self.root / "blobs" / value["oid"]
                if not path.exists():
                    raise HttpError(400, f"LFS object {value['oid']} was never uploaded")
                data = path.read_bytes()
                files[value["path"]] = Blob(sha256=value["oid"], size=len(data), lfs=True,
                                            sha1=git_blob_sha1(data))
            elif key == "deletedFile":
                if files.pop(value["path"], None) is None:
                    raise HttpError(404, f"{value['path']}: no such file", "EntryNotFound")
            elif key == "deletedFolder":
                prefix = value["path"].rstrip("/") + "/"
                for path in [p for p in files if p.startswith(prefix)]:
                    del files[path]
            else:
                raise HttpError(400, f"unknown commit line {key!r}")
        new = self._new_commit(repo, branch, message, files)
        return {"commitOid": new.sha, "commitUrl": f"{self._repo_url(repo.type, repo.repo_id)}"
                f"/commit/{new.sha}", "pullRequestUrl": None, "success": True}

    def tree(self, repo: Repo, revision: str, path: str, recursive: bool
             ) -> list[dict[str, Any]]:
        commit = self._get_commit(repo, revision)
        prefix = path.strip("/") + "/" if path.strip("/") else ""
        entries: dict[str, dict[str, Any]] = {}
        for file_path, blob in sorted(commit.files.items()):
            if not file_path.startswith(prefix):
                continue
            rest = file_path[len(prefix):]
            if "/" in rest and not recursive:
                folder = prefix + rest.split("/", 1)[0]
                entries[folder] = {"type": "directory", "path": folder, "oid": "0" * 40,
                                   "size": 0}
                continue
            if recursive:
                parts = rest.split("/")[:-1]
                for i in range(len(parts)):
                    folder = prefix + "/".join(parts[:i + 1])
                    entries[folder] = {"type": "directory", "path": folder, "oid": "0" * 40,
                                       "size": 0}
            entries[file_path] = self._file_entry(file_path, blob)
        if prefix and not entries:
            raise HttpError(404, f"{path}: no such folder", "EntryNotFound")
        return list(entries.values())

    def _file_entry(self, path: str, blob: Blob) -> dict[str, Any]:
        entry: dict[str, Any] = {"type": "file", "path": path, "oid": blob.sha1,
                                 "size": blob.size}
        if blob.lfs:
            entry["lfs"] = {"oid": blob.sha256, "size": blob.size, "pointerSize": 134}
        return entry

    def paths_info(self, repo: Repo, revision: str, paths: list[str]) -> list[dict[str, Any]]:
        commit = self._get_commit(repo, revision)
        out = []
        for path in paths:
            path = path.strip("/")
            if path in commit.files:
                out.append(self._file_entry(path, commit.files[path]))
            elif any(p.startswith(path + "/") for p in commit.files):
                out.append({"type": "directory", "path": path, "oid": "0" * 40, "size": 0})
        return out


def _private(body: dict[str, Any]) -> bool | None:
    """The visibility a create/settings body asks for (hub 1.x sends `visibility`, older
    clients `private`); None when it asks for none."""
    if "visibility" in body:
        return body["visibility"] != "public"
    return bool(body["private"]) if "private" in body else None


def _front_matter(text: str) -> dict[str, Any] | None:
    if not text.startswith("---"):
        return None
    end = text.find("\n---", 3)
    if end < 0:
        raise ValueError("front matter is not closed")
    data = yaml.safe_load(text[3:end])
    if data is not None and not isinstance(data, dict):
        raise ValueError("front matter is not a mapping")
    return data


_TYPES = {"models": "model", "datasets": "dataset", "spaces": "space"}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hub: FakeHub

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        """Quiet: tests read `hub.requests` instead."""

    def do_GET(self) -> None:
        self._handle("GET")

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    # --- plumbing ---------------------------------------------------------------------

    def _handle(self, method: str) -> None:
        hub = self.hub
        split = urlsplit(self.path)
        path, query = unquote(split.path), parse_qs(split.query)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        auth = self.headers.get("Authorization", "")
        with hub.lock:
            hub.requests.append(f"{method} {split.path}")
            hub.auth_headers.append(auth)
        try:
            if hub.fail_with is not None:
                # the worst case for redaction: the server echoes the credentials back
                raise HttpError(hub.fail_with, f"request refused; you sent Authorization: "
                                               f"{auth}")
            with hub.lock:
                self._route(method, path, query, body, auth)
        except HttpError as e:
            headers = {"X-Error-Code": e.code} if e.code else {}
            headers["X-Error-Message"] = e.message.replace("\n", " ")
            self._json(e.status, {"error": e.message}, headers, head=method == "HEAD")
        except (KeyError, ValueError, json.JSONDecodeError) as e:
            self._json(400, {"error": f"bad request: {e}"}, head=method == "HEAD")

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None,
              head: bool = False) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if not head:
            self.wfile.write(data)

    def _require_auth(self, auth: str) -> None:
        if not auth.startswith("Bearer "):
            raise HttpError(401, "Invalid credentials in Authorization header")

    def _route(self, method: str, path: str, query: dict[str, list[str]], body: bytes,
               auth: str) -> None:
        hub = self.hub
        parts = [p for p in path.split("/") if p]
        if path == "/api/whoami-v2":
            self._require_auth(auth)
            return self._json(200, {"type": "user", "name": hub.user, "orgs": [],
                                    "auth": {"type": "access_token",
                                             "accessToken": {"role": "write"}}})
        if path == "/api/repos/create" and method == "POST":
            self._require_auth(auth)
            status, payload = hub.create_repo(json.loads(body))
            return self._json(status, payload)
        if path == "/api/validate-yaml" and method == "POST":
            try:
                _front_matter(json.loads(body)["content"])
            except (ValueError, yaml.YAMLError) as e:
                return self._json(400, {"errors": [{"message": str(e)}]})
            return self._json(200, {"warnings": []})
        if parts[:1] == ["lfs-upload"] and method == "PUT":
            hub.lfs_upload(parts[1], body)
            return self._json(200, {})
        if len(parts) >= 4 and parts[0] == "api" and parts[1] in _TYPES:
            return self._api(method, _TYPES[parts[1]], parts[2:], query, body, auth)
        if path.endswith(".git/info/lfs/objects/batch"):
            self._require_auth(auth)
            return self._json(200, hub.lfs_batch(json.loads(body)))
        # /{datasets/}ns/name/resolve/rev/path...
        repo_type = "model"
        if parts and parts[0] in ("datasets", "spaces"):
            repo_type, parts = _TYPES[parts[0]], parts[1:]
        if len(parts) >= 5 and parts[2] == "resolve":
            return self._resolve(method, hub._get_repo(repo_type, "/".join(parts[:2])),
                                 parts[3], "/".join(parts[4:]))
        raise HttpError(404, f"no route for {method} {path}")

    def _api(self, method: str, repo_type: str, parts: list[str], query: dict[str, list[str]],
             body: bytes, auth: str) -> None:
        hub = self.hub
        repo = hub._get_repo(repo_type, "/".join(parts[:2]))
        rest = parts[2:]
        if not rest and method == "GET":
            return self._json(200, hub.info(repo, None))
        action, args = rest[0], rest[1:]
        if action == "revision" and method == "GET":
            return self._json(200, hub.info(repo, "/".join(args)))
        if action == "preupload" and method == "POST":
            self._require_auth(auth)
            return self._json(200, hub.preupload(repo, "/".join(args), json.loads(body)))
        if action == "commit" and method == "POST":
            self._require_auth(auth)
            lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
            return self._json(200, hub.commit(repo, "/".join(args), lines))
        if action == "branch" and method == "POST":
            self._require_auth(auth)
            branch = unquote("/".join(args))
            if branch in repo.branches:
                raise HttpError(409, f"branch {branch} already exists")
            start = json.loads(body).get("startingPoint") if body else None
            head = hub._get_commit(repo, start or "main")
            repo.branches[branch] = head.sha
            return self._json(200, {})
        if action == "settings" and method == "PUT":
            self._require_auth(auth)
            private = _private(json.loads(body))
            if private is not None:
                repo.private = private
            return self._json(200, {})
        if action == "tree" and method == "GET":
            revision, folder = args[0], "/".join(args[1:])
            recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
            return self._json(200, hub.tree(repo, revision, folder, recursive))
        if action == "paths-info" and method == "POST":
            try:
                paths = json.loads(body)["paths"]
            except (ValueError, KeyError):
                paths = parse_qs(body.decode()).get("paths", [])
            return self._json(200, hub.paths_info(repo, "/".join(args), paths))
        if action == "refs" and method == "GET":
            return self._json(200, {"branches": [
                {"name": b, "ref": f"refs/heads/{b}", "targetCommit": sha}
                for b, sha in repo.branches.items()], "tags": [], "converts": []})
        raise HttpError(404, f"no route for {method} /api/{repo_type}s/.../{action}")

    def _resolve(self, method: str, repo: Repo, revision: str, path: str) -> None:
        commit = self.hub._get_commit(repo, revision)
        blob = commit.files.get(path)
        if blob is None:
            raise HttpError(404, f"{path}: entry not found", "EntryNotFound")
        data = self.hub._blob_path(blob).read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Repo-Commit", commit.sha)
        self.send_header("ETag", f'"{blob.oid}"')
        if blob.lfs:
            self.send_header("X-Linked-Etag", f'"{blob.sha256}"')
            self.send_header("X-Linked-Size", str(blob.size))
        self.end_headers()
        if method == "GET":
            self.wfile.write(data)


# --- pointing the clients at a fake hub -----------------------------------------------

def client_env(hub: FakeHub, home: Path, token: str) -> dict[str, str]:
    """The environment a fresh process needs to use `hub` (and nothing else): endpoint,
    token, an isolated HF_HOME, Xet off (notes §7.3), no offline switch."""
    return {"HF_ENDPOINT": hub.url, "HF_TOKEN": token, "HF_HOME": str(home),
            "HF_HUB_DISABLE_XET": "1", "HF_HUB_OFFLINE": "0", "HF_DATASETS_OFFLINE": "0",
            "TRANSFORMERS_OFFLINE": "0", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}


def use_in_process(hub: FakeHub, home: Path, token: str, monkeypatch: Any) -> None:
    """Point this process's clients at `hub`. huggingface_hub reads its settings into
    `constants` when first imported (often before a test runs), so besides the variables
    the constants derived from them are patched too: the endpoint, Xet, the cache and the
    token files (so a token stored by the user's own login is never read)."""
    from huggingface_hub import constants

    for key, value in client_env(hub, home, token).items():
        monkeypatch.setenv(key, value)
    patched = {
        "ENDPOINT": hub.url,
        "HUGGINGFACE_CO_URL_TEMPLATE": hub.url + "/{repo_id}/resolve/{revision}/{filename}",
        "HF_HUB_DISABLE_XET": True, "HF_HUB_OFFLINE": False, "HF_HOME": str(home),
        "HF_HUB_CACHE": str(home / "hub"), "HF_TOKEN_PATH": str(home / "token"),
        "HF_STORED_TOKENS_PATH": str(home / "stored_tokens"),
    }
    for name, value in patched.items():
        monkeypatch.setattr(constants, name, value)


TOKEN = "hf_FakeHubTestToken0123456789abcdef"
"""The dummy token every test sends; tests assert it never shows up where it must not."""

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(name="fake_hub")
def fake_hub_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """A running fake Hub with this process's clients pointed at it (`use_in_process`)."""
    hub = FakeHub.start(tmp_path / "fake-hub")
    use_in_process(hub, tmp_path / "hf-home", TOKEN, monkeypatch)
    try:
        yield hub
    finally:
        hub.stop()


def run_client(code: str, hub: FakeHub, home: Path, timeout: float = 180) -> Any:
    """Run `code` in a fresh Python process whose Hub settings point at `hub` (set before
    anything imports huggingface_hub, as for a user); return the JSON of its last line."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(client_env(hub, home, TOKEN))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=timeout, cwd=REPO_ROOT, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])
