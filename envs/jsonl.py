"""JSON Lines and small state files, read and written one way everywhere.

Every folder keeps records as JSONL (trajectories, replay files, BFCL's data files,
re-grading results, QueryGen's kept/rejected chains, a trainer's log) and small JSON
state beside them (manifests, checkpoints, provenance). The rules live here, in the
lowest folder, so that no layer grows its own copy:

* reading names the file and line of a record that does not parse (`numbered_records`);
* a run that was killed mid-write leaves at most one cut-off last line, which a resumed
  run drops (`complete_lines`) before it appends more (`append_line`);
* a state file is replaced atomically (`write_atomic`): a reader, or a run interrupted
  while saving, sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = [
    "append_line",
    "complete_lines",
    "numbered_records",
    "read_objects",
    "read_records",
    "write_atomic",
]


def numbered_records(path: Path, parse: Callable[[str], T], what: str
                     ) -> list[tuple[int, T]]:
    """The one JSONL reader: each non-blank line of `path` through `parse`, with its line
    number; a line `parse` refuses (ValueError, which pydantic's and json's errors are)
    is reported with the file and line number as an invalid `what`."""
    out = []
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.strip():
                try:
                    out.append((lineno, parse(line)))
                except ValueError as e:
                    raise ValueError(f"{path}:{lineno}: invalid {what}: {e}") from e
    return out


def read_records(path: Path, parse: Callable[[str], T], what: str) -> list[T]:
    """`numbered_records` without the line numbers."""
    return [record for _, record in numbered_records(path, parse, what)]


def read_objects(path: Path, what: str = "JSON line") -> list[Any]:
    """Each non-blank line of `path` decoded as JSON (BFCL's data files, trainer logs)."""
    return read_records(path, json.loads, what)


def complete_lines(path: Path, *, trim: bool = True) -> list[str]:
    """The lines of `path` that were written whole (none when it does not exist).

    A last line without its newline was cut off mid-write: with `trim` (a run resuming
    its own output) it is removed from the file, so the next append starts on a fresh
    line; without (a file another process is still writing) it is only left out."""
    if not path.exists():
        return []
    data = path.read_bytes()
    complete = data[:data.rfind(b"\n") + 1]
    if trim and len(complete) != len(data):
        with path.open("r+b") as f:
            f.truncate(len(complete))
    return complete.decode("utf-8").splitlines()


def append_line(path: Path, record: Mapping[str, Any]) -> None:
    """Append `record` as one JSON line and sync it to disk, so a result counted as done
    by a resumed run was really written."""
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    with path.open("ab") as f:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())


def write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """Replace `path` by `text` (a string, or chunks written as they come: a large JSONL
    file need not be held in memory) through a unique temporary file beside it (synced,
    then renamed; removed if writing or a chunk fails, the error raised), so concurrent
    writers never share a temporary file and a reader never sees a half-written one.
    Creates the parent folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # a name of our own rather than mkstemp's: the file keeps the umask's mode (mkstemp's
    # is 0600), as a file written in place would
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.partial")
    try:
        with tmp.open("x", encoding="utf-8") as f:
            for chunk in (text,) if isinstance(text, str) else text:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
