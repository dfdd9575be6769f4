"""Publishing to the Hugging Face Hub: trajectory datasets, models, results (Inspect logs).

Every push is one commit: the repo is created if needed (`exist_ok`), the visibility set
when `private` is given, the branch created when a `revision` other than main is asked
for, then all files (data or weights, the README card, an index) go up in a single
`create_commit`. Files the Hub already holds with the same content are dropped by
huggingface_hub, so pushing the same thing twice makes no new commit; files of an earlier
push that this one no longer has are deleted in the same commit (datasets and models
mirror what was pushed; results accumulate logs).

Credentials and endpoint are huggingface_hub's own: `HF_TOKEN` or the token stored by
`huggingface-cli login` / `hf auth login`, and `HF_ENDPOINT` (read at call time here, so a
process that set it after importing the hub still reaches the right server). The token
never reaches a message: every client error is re-raised as `HubError` with the token
(as a whole value: a one-letter test token does not turn `doesnotexist` into
`doesnote***ist`), `Bearer ...` values and `hf_...` strings masked, and without the
original exception attached (its text may quote the server, which may quote the request).
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

from envs.hashing import file_sha256
from envs.jsonl import read_records
from envs.releases import hub_snapshot
from leaderboard import cards
from leaderboard.hub_data import LogEntry, dataset_row, find_logs, log_entry, read_splits

__all__ = ["HubError", "PushResult", "download_results", "hub_call", "push_dataset",
           "push_model", "push_results", "redact", "snapshot_commit"]

RepoType = Literal["dataset", "model"]
T = TypeVar("T")

PROVENANCE_FILE = "envfactory_provenance.json"
"""A checkpoint's provenance (written by training/provenance.py; read here as a file)."""
TRAINING_CONFIGS = ("envfactory_sft.json", "llamafactory.yaml")
"""Training config files `envfactory train sft` leaves in its output directory."""
INDEX_FILE = "index.jsonl"
LOGS_DIR = "logs"

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[^\s\"',;]+")
_HF_TOKEN_LIKE = re.compile(r"\bhf_[A-Za-z0-9]{6,}")
MASK = "***"
MIN_TOKEN_CHARS = 16
"""A token this long is masked wherever it occurs; a shorter one only as a whole word."""


class HubError(RuntimeError):
    """A Hub operation failed; the message names what was asked and never the token."""


class PushResult(BaseModel):
    """Where a push landed (the CLI prints it; `--json` prints it as JSON)."""

    repo_id: str
    repo_type: RepoType
    url: str
    revision: str
    commit: str
    commit_url: str
    changed: bool
    """False when the Hub already held exactly these files (no commit was made)."""
    files: list[str] = Field(default_factory=list)
    """Paths this push wrote (unchanged ones included)."""
    deleted: list[str] = Field(default_factory=list)


# --- credentials and errors -----------------------------------------------------------


def _token() -> str | None:
    from huggingface_hub import get_token

    return get_token()


def _token_pattern(token: str) -> re.Pattern[str]:
    """Where `token` occurs as a whole value: not inside a longer run of token characters
    (letters, digits, `_`, `-`, `.`). A token of `MIN_TOKEN_CHARS` or more characters is
    masked anywhere else too (nothing else plausibly contains 16 of its characters); a
    shorter one (`HF_TOKEN=x`) only as a whole word, or every `x` would be masked."""
    if len(token) >= MIN_TOKEN_CHARS:
        return re.compile(re.escape(token))
    return re.compile(rf"(?<![\w.-]){re.escape(token)}(?![\w.-])")


def redact(text: str, token: str | None = None) -> str:
    """`text` with the token value (`_token_pattern`), any `Bearer <value>` and anything
    shaped like an `hf_` token masked."""
    if token:
        text = _token_pattern(token).sub(MASK, text)
    text = _BEARER.sub(lambda m: m.group(1) + MASK, text)
    return _HF_TOKEN_LIKE.sub("hf_" + MASK, text)


def _hint(error: Exception) -> str:
    status = getattr(getattr(error, "response", None), "status_code", None)
    if status == 401:
        return (" (the Hub refused the credentials: set HF_TOKEN or run `hf auth login` "
                "with a token that has write access)")
    if status == 403:
        return " (the token lacks the permission for this repo)"
    return ""


#: loggers whose records may quote requests or answers (httpcore logs response headers at
#: DEBUG, and a server's error header may quote the request's Authorization)
_CLIENT_LOGGERS = ("httpx", "httpcore", "huggingface_hub", "datasets", "urllib3", "fsspec")


class _RedactingFilter(logging.Filter):
    """Rewrites every record it sees with the token masked (and lets it through)."""

    def __init__(self, token: str | None) -> None:
        super().__init__()
        self.token = token

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = redact(message, self.token)
        if masked != message:
            record.msg, record.args = masked, None
        return True


@contextmanager
def _redacted_client_logs() -> Iterator[None]:
    """Mask the token in the client libraries' log records while a Hub call runs. A
    logger's filters see only records logged on that very logger, so the filter goes on
    every existing logger of those libraries (plus httpcore's, created lazily)."""
    names = {n for n in logging.root.manager.loggerDict
             if n.split(".")[0] in _CLIENT_LOGGERS}
    names |= {*_CLIENT_LOGGERS, "httpcore.http11", "httpcore.http2", "httpcore.connection",
              "httpcore.proxy"}
    loggers = [logging.getLogger(n) for n in sorted(names)]
    log_filter = _RedactingFilter(_token())
    for logger in loggers:
        logger.addFilter(log_filter)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(log_filter)


def hub_call(action: str, call: Callable[[], T]) -> T:
    """`call()`, with a client error turned into `HubError("<action>: ...")`, redacted.

    The new error is raised after the `except` block, from a plain function, so it has no
    `__context__`: the original (whose text may quote the server, which may quote the
    request) is not attached for a traceback printer to show.
    """
    import httpx
    from huggingface_hub.errors import EntryNotFoundError

    message: str | None = None
    with _redacted_client_logs():
        try:
            return call()
        except (OSError, ValueError, httpx.HTTPError, EntryNotFoundError) as e:
            message = f"{action}: {type(e).__name__}: {e}{_hint(e)}"
    raise HubError(redact(message, _token()))


def _endpoint() -> str | None:
    return os.environ.get("HF_ENDPOINT") or None


def _api() -> Any:
    from huggingface_hub import HfApi

    return HfApi(endpoint=_endpoint())


def _check_repo_id(repo_id: str) -> None:
    if not _REPO_ID.match(repo_id):
        raise ValueError(f"--repo {repo_id!r}: expected NAMESPACE/NAME (e.g. my-org/my-data)")


# --- one commit per push --------------------------------------------------------------


class _Target(BaseModel):
    repo_id: str
    repo_type: RepoType
    url: str
    revision: str
    head: str
    existing: list[str]


def _prepare(api: Any, repo_id: str, repo_type: RepoType, *, private: bool | None,
             revision: str | None) -> _Target:
    """Create the repo (or find it), set its visibility, create the branch; list its files."""
    _check_repo_id(repo_id)
    branch = revision or "main"
    url = hub_call(f"create {repo_type} repo {repo_id}", lambda: api.create_repo(
        repo_id, repo_type=repo_type, private=private, exist_ok=True))
    if private is not None:
        def visibility() -> None:
            if api.repo_info(repo_id, repo_type=repo_type).private != private:
                api.update_repo_settings(repo_id, repo_type=repo_type, private=private)

        hub_call(f"set the visibility of {repo_id}", visibility)
    if branch != "main":
        hub_call(f"create branch {branch} of {repo_id}", lambda: api.create_branch(
            repo_id, repo_type=repo_type, branch=branch, exist_ok=True))
    info, existing = hub_call(f"read {repo_id}@{branch}", lambda: (
        api.repo_info(repo_id, repo_type=repo_type, revision=branch),
        api.list_repo_files(repo_id, repo_type=repo_type, revision=branch)))
    return _Target(repo_id=url.repo_id, repo_type=repo_type, url=str(url), revision=branch,
                   head=info.sha, existing=list(existing))


def _commit(api: Any, target: _Target, files: dict[str, Path | bytes], message: str,
            stale: Callable[[str], bool]) -> PushResult:
    """Add `files` (path in repo -> local file or bytes) and delete every existing path
    for which `stale(path)` holds and that is not being added, in one commit."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    deleted = sorted(p for p in target.existing if stale(p) and p not in files)
    operations: list[Any] = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=(
        str(source) if isinstance(source, Path) else source))
        for path, source in sorted(files.items())]
    operations += [CommitOperationDelete(path_in_repo=p) for p in deleted]
    info = hub_call(f"commit to {target.repo_id}@{target.revision}", lambda: api.create_commit(
        target.repo_id, operations, commit_message=message, repo_type=target.repo_type,
        revision=target.revision))
    url = target.url if target.revision == "main" else f"{target.url}/tree/{target.revision}"
    return PushResult(repo_id=target.repo_id, repo_type=target.repo_type, url=url,
                      revision=target.revision, commit=info.oid, commit_url=info.commit_url,
                      changed=info.oid != target.head, files=sorted(files), deleted=deleted)


# --- datasets -------------------------------------------------------------------------


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: cannot read it as JSON: {e}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def push_dataset(sources: Sequence[Path], repo_id: str, *, private: bool | None = None,
                 revision: str | None = None, license: str = "mit",
                 message: str | None = None) -> PushResult:
    """Trajectory JSONL files (directories of them, e.g. a QueryGen output directory, or
    files) -> a dataset repo: `data/<split>-00000-of-00001.parquet` per split present and a
    card with the environments, provenance (manifest.json beside the data) and the
    contamination report (contamination.md / .json beside the data) when there is one."""
    from datasets import Dataset, disable_progress_bars

    from leaderboard.hub_data import DATASET_FEATURES

    data = read_splits(sources)
    folders = sorted({p.parent for p in data.files})
    manifests = {f"{d.name}/manifest.json" if len(folders) > 1 else "manifest.json":
                 _read_json(d / "manifest.json")
                 for d in folders if (d / "manifest.json").is_file()}
    report_md = next((d / "contamination.md" for d in folders
                      if (d / "contamination.md").is_file()), None)
    report_json = next((d / "contamination.json" for d in folders
                        if (d / "contamination.json").is_file()), None)
    disable_progress_bars()  # the CLI shows its own progress
    with tempfile.TemporaryDirectory(prefix="envfactory-hub-") as tmp:
        files: dict[str, Path | bytes] = {}
        split_files: dict[str, str] = {}
        num_bytes: dict[str, int] = {}
        for split, trajectories in data.splits.items():
            path_in_repo = f"data/{split}-00000-of-00001.parquet"
            local = Path(tmp) / f"{split}.parquet"
            table = Dataset.from_list([dataset_row(t) for t in trajectories],
                                      features=DATASET_FEATURES)
            table.to_parquet(str(local))
            files[path_in_repo] = local
            split_files[split] = path_in_repo
            num_bytes[split] = table.data.nbytes
        counts = {split: len(ts) for split, ts in data.splits.items()}
        card = cards.dataset_card(cards.DatasetCardInput(
            repo_id=repo_id, license=license, split_files=split_files, counts=counts,
            num_bytes=num_bytes,            environments=data.environments(),
            sources={p.name: file_sha256(p) for p in data.files}, manifests=manifests,
            contamination_md=report_md.read_text(encoding="utf-8") if report_md else None,
            contamination=_read_json(report_json) if report_json else None))
        files["README.md"] = card.encode("utf-8")
        api = _api()
        target = _prepare(api, repo_id, "dataset", private=private, revision=revision)
        summary = ", ".join(f"{s} {n}" for s, n in counts.items())
        return _commit(api, target, files, message or f"envfactory: trajectories ({summary})",
                       stale=lambda p: p.startswith("data/"))


# --- models ---------------------------------------------------------------------------

#: training by-products that are not part of a published model
_SKIP_DIRS = re.compile(r"^(checkpoint-\d+|merged|data|runs|global_step\d+)$")
_SKIP_FILES = re.compile(
    r"^(optimizer\.pt|scheduler\.pt|rng_state.*\.pth|training_args\.bin|README\.md"
    r"|.*\.log|.*\.partial|.*\.tmp)$")


def model_files(checkpoint: Path) -> dict[str, Path]:
    """The files of a model directory to publish (path in repo -> file): everything but
    hidden files, optimizer/RNG state, logs, and the sub-directories a training run keeps
    beside its final model (checkpoint-N, merged, data, runs)."""
    out: dict[str, Path] = {}
    for path in sorted(checkpoint.rglob("*")):
        relative = path.relative_to(checkpoint)
        parts = relative.parts
        if any(part.startswith(".") for part in parts) or not path.is_file():
            continue
        if len(parts) > 1 and _SKIP_DIRS.match(parts[0]):
            continue
        if _SKIP_FILES.match(parts[-1]):
            continue
        out[relative.as_posix()] = path
    return out


def _model_kind(checkpoint: Path) -> tuple[str, str | None]:
    """("model", None) for a transformers directory; ("lora", base) for an adapter."""
    if not checkpoint.is_dir():
        raise ValueError(f"{checkpoint}: no such directory")
    if (checkpoint / "config.json").is_file():
        return "model", None
    adapter = checkpoint / "adapter_config.json"
    if adapter.is_file():
        base = _read_json(adapter).get("base_model_name_or_path")
        return "lora", base if isinstance(base, str) else None
    raise ValueError(f"{checkpoint}: not a model directory: it has neither config.json (a "
                     "transformers model) nor adapter_config.json (a LoRA adapter)")


def _default_logs(checkpoint: Path, provenance: dict[str, Any] | None, log_root: Path
                  ) -> list[Path]:
    """Where `envfactory score run` left this checkpoint's logs:
    `<log_root>/<run_id>/<checkpoint name>/` (run id: the provenance's, else the name; a
    verl step's `global_step_N/actor/huggingface` is named `global_step_N`, as there)."""
    resolved = checkpoint.resolve()
    name = (resolved.parts[-3] if resolved.parts[-2:] == ("actor", "huggingface")
            else resolved.name)
    run_id = (provenance or {}).get("run_id") or name
    folder = log_root / str(run_id) / name
    return [folder] if folder.is_dir() else []


def push_model(checkpoint: Path, repo_id: str, *, logs: Sequence[Path] | None = None,
               log_root: Path = Path("scores"), datasets: Sequence[str] = (),
               private: bool | None = None, revision: str | None = None,
               license: str = "apache-2.0", message: str | None = None) -> PushResult:
    """A checkpoint directory (as `envfactory train sft` leaves it, or any HF model or LoRA
    adapter directory) -> a model repo with a card: provenance, training config, the
    datasets named, and `model-index` results from its auto-scored Inspect logs (`logs`,
    else the `envfactory score run` folder under `log_root`)."""
    checkpoint = checkpoint.expanduser().resolve()
    kind, adapter_base = _model_kind(checkpoint)
    for name in datasets:
        _check_repo_id(name)
    provenance = (_read_json(checkpoint / PROVENANCE_FILE)
                  if (checkpoint / PROVENANCE_FILE).is_file() else None)
    training: dict[str, str] = {}
    for folder in (checkpoint, checkpoint.parent):  # checkpoint-N: the run's config above it
        for name in TRAINING_CONFIGS:
            if name not in training and (folder / name).is_file():
                training[name] = (folder / name).read_text(encoding="utf-8")
    log_files = find_logs(logs if logs is not None
                          else _default_logs(checkpoint, provenance, log_root))
    entries = [log_entry(p, f"{LOGS_DIR}/{p.name}") for p in log_files]
    base = (provenance or {}).get("base_model") or adapter_base
    card = cards.model_card(cards.ModelCardInput(
        repo_id=repo_id, license=license, kind=kind, base_model=base, provenance=provenance,
        training_files=training, datasets=list(datasets), logs=entries))
    files: dict[str, Path | bytes] = dict(model_files(checkpoint))
    files["README.md"] = card.encode("utf-8")
    api = _api()
    target = _prepare(api, repo_id, "model", private=private, revision=revision)
    return _commit(api, target, files, message or f"envfactory: {kind} {checkpoint.name}",
                   stale=lambda p: p != ".gitattributes")


# --- results --------------------------------------------------------------------------


def _remote_index(api: Any, target: _Target) -> list[LogEntry]:
    if INDEX_FILE not in target.existing:
        return []
    with tempfile.TemporaryDirectory(prefix="envfactory-hub-") as tmp:
        path = hub_call(f"read {INDEX_FILE} of {target.repo_id}", lambda: api.hf_hub_download(
            target.repo_id, INDEX_FILE, repo_type="dataset", revision=target.revision,
            local_dir=tmp))
        try:
            return read_records(Path(path), LogEntry.model_validate_json, "index entry")
        except ValueError as e:
            raise HubError(f"{target.repo_id}: {INDEX_FILE} is not an envfactory results "
                           f"index: {e}") from None


def push_results(logs: Sequence[Path], repo_id: str, *, private: bool | None = None,
                 revision: str | None = None, license: str = "mit",
                 message: str | None = None) -> PushResult:
    """Inspect log files (directories searched recursively) -> a dataset repo holding them
    under `logs/<file name>`, an `index.jsonl` of every log the repo then holds (one
    entry per log) and a card. Logs already there stay: results accumulate."""
    log_files = find_logs(logs)
    if not log_files:
        raise ValueError(f"{', '.join(map(str, logs))}: no Inspect logs (.eval / .json)")
    files: dict[str, Path | bytes] = {}
    for path in log_files:
        path_in_repo = f"{LOGS_DIR}/{path.name}"
        held = files.get(path_in_repo)
        if isinstance(held, Path) and held.read_bytes() != path.read_bytes():
            raise ValueError(f"{path} and {held}: two different logs with one file name")
        files[path_in_repo] = path
    entries = {p: log_entry(source, p) for p, source in files.items()
               if isinstance(source, Path)}
    api = _api()
    target = _prepare(api, repo_id, "dataset", private=private, revision=revision)
    kept = {e.path: e for e in _remote_index(api, target) if e.path in target.existing}
    index = sorted({**kept, **entries}.values(), key=lambda e: e.path)
    files[INDEX_FILE] = "".join(e.model_dump_json() + "\n" for e in index).encode("utf-8")
    files["README.md"] = cards.results_card(repo_id, license, index).encode("utf-8")
    return _commit(api, target, files,
                   message or f"envfactory: {len(entries)} Inspect log(s)",
                   stale=lambda p: False)


def _resolve_commit(api: Any, repo_id: str, revision: str) -> str:
    """The commit `revision` names now (a commit names itself; the Hub checks it exists)."""
    info = hub_call(f"download results {repo_id}", lambda: api.repo_info(
        repo_id, repo_type="dataset", revision=revision))
    return str(info.sha)


def download_results(repo_id: str, *, revision: str | None = None) -> Path:
    """The Inspect logs a results repo holds (`logs/`) at `revision` (a branch, a tag or a
    commit; default `main`). A results repo is ours and its `main` moves with every push
    (a leaderboard of the latest results reads it), so the revision is resolved to its
    commit now and read at that commit through `envs.releases.hub_snapshot` (the Hub
    cache, retried, the commit logged): the folder returned is the cache's snapshot of
    that commit, which `snapshot_commit` reads back.
    `envfactory leaderboard build --from-hub REPO` reads its logs from here."""
    _check_repo_id(repo_id)
    commit = _resolve_commit(_api(), repo_id, revision or "main")
    folder, commit = hub_call(f"download results {repo_id}", lambda: hub_snapshot(
        repo_id, commit, option="--revision",
        allow_patterns=[f"{LOGS_DIR}/**", INDEX_FILE]))
    logs = folder / LOGS_DIR
    if not logs.is_dir():
        raise HubError(f"{repo_id}@{commit}: holds no {LOGS_DIR}/ folder; push Inspect logs "
                       "to it with `envfactory hub push-results`")
    return logs


def snapshot_commit(logs: Path) -> str | None:
    """The commit a `download_results` folder was read at (the Hub cache keeps a commit's
    files under `snapshots/<commit>/`, as `hub_snapshot` reads it); None for a folder that
    is not a Hub snapshot's."""
    snapshot = logs.parent
    return snapshot.name if snapshot.parent.name == "snapshots" else None
