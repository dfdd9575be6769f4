"""A local document corpus with a real full-text index: SQLite FTS5, ranked by BM25.

Any directory of API docs (Markdown, reStructuredText, HTML, text, JSON/YAML, OpenAPI) is
cut into sections (`doc_split`) and indexed in one SQLite file. The index is kept beside
the user's other caches, not written into their documents, and is brought up to date on
every open: a file whose size and mtime are unchanged is trusted, one whose bytes hash the
same is only re-stamped, and only changed, new or deleted files are re-indexed, so opening
a large corpus twice costs a directory walk, not a rebuild.

Queries are free text: words are quoted and OR-ed, so BM25 ranks by how many query words a
section has and how rare they are (a plain FTS5 MATCH would AND them and read punctuation
as syntax). Titles weigh more than bodies: a section called "Invitations" beats one that
mentions an invitation once.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import sqlite3
import time
from pathlib import Path, PurePosixPath
from types import TracebackType

from pydantic import BaseModel

from envs.hashing import text_sha256
from envs.release_registry import ENVGEN_INDEX
from synthesis.envgen.doc_split import SUFFIXES, DocumentError, split_document

__all__ = ["Corpus", "CorpusError", "Hit", "IndexStats", "default_index_path"]

#: bump when the schema, tokenizer or splitting changes: older index files are rebuilt
INDEX_VERSION = "4"
#: BM25 column weights (path, ordinal, title, body): a title hit counts as four body hits
_TITLE_WEIGHT, _BODY_WEIGHT = 4.0, 1.0
#: files larger than this are reported and skipped (an API doc is not a data dump)
MAX_FILE_BYTES = 4_000_000
#: marks around matched words in `Hit.snippet`
MARK_OPEN, MARK_CLOSE = "«", "»"
_SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", ".venv"})
_STOPWORDS = frozenset(
    "a an and are as at be by can for from how i in is it of on or that the this to "
    "with what which who will".split())


class CorpusError(ValueError):
    """A corpus directory or a document reference that cannot be used; says which."""


class Hit(BaseModel):
    """One ranked section: where it is, a snippet with the matched words marked, its score
    (minus FTS5's bm25(): higher is better)."""

    path: str
    section: str
    snippet: str
    score: float


class IndexStats(BaseModel):
    """What one `Corpus.refresh` did."""

    files: int
    sections: int
    indexed: int  # files (re)split and written this time
    removed: int
    unchanged: int
    seconds: float
    problems: list[str]  # files skipped, each "path: reason"


def default_index_path(root: Path) -> Path:
    """`cache_dir("envgen_index")/<name>-<hash of the corpus path>.sqlite`."""
    key = text_sha256(str(root.resolve()))[:16]
    return ENVGEN_INDEX.path() / f"{root.resolve().name}-{key}.sqlite"


class Corpus:
    """An indexed directory of documents. `refresh()` first (the CLI and agent do), then
    `search()` and `read()`; use as a context manager or `close()` it."""

    def __init__(self, root: Path, index_path: Path | None = None) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise CorpusError(f"corpus {self.root}: not a directory")
        self.index_path = Path(index_path) if index_path else default_index_path(self.root)
        self.index_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.index_path)
            self._prepare()
        except sqlite3.DatabaseError as e:
            raise CorpusError(f"index {self.index_path}: {e} (delete it to rebuild)") from e

    def __enter__(self) -> Corpus:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def _prepare(self) -> None:
        """Create the tables, or drop an index written by another version or corpus."""
        db = self.db
        # a cache that can be rebuilt: WAL without a sync per commit is still never corrupt
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        wanted = {"version": INDEX_VERSION, "root": str(self.root.resolve())}
        if meta != wanted:
            db.execute("DROP TABLE IF EXISTS files")
            db.execute("DROP TABLE IF EXISTS sections")
            db.execute("DROP TABLE IF EXISTS section_rows")
            db.execute("DELETE FROM meta")
            db.executemany("INSERT INTO meta VALUES (?, ?)", wanted.items())
        db.execute("CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, mtime_ns INTEGER, "
                   "size INTEGER, sha256 TEXT, problem TEXT)")
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS sections USING fts5(path UNINDEXED, "
                   "ordinal UNINDEXED, title, body, tokenize='porter unicode61')")
        # which FTS rows belong to a file: FTS5 cannot index `path`, and a filter on an
        # unindexed column scans the whole table
        db.execute("CREATE TABLE IF NOT EXISTS section_rows (id INTEGER PRIMARY KEY, "
                   "path TEXT NOT NULL)")
        db.execute("CREATE INDEX IF NOT EXISTS section_rows_path ON section_rows (path)")
        db.commit()

    # -- building ---------------------------------------------------------------------

    def _walk(self) -> list[tuple[str, str]]:
        """(path relative to the root with `/`, full path) of every indexable file, sorted;
        plain strings, since pathlib costs more than the stat itself on large corpora."""
        found = []
        base = os.path.join(str(self.root), "")
        for top, dirs, files in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
            for name in sorted(files):
                if not name.startswith(".") and os.path.splitext(name)[1].lower() in SUFFIXES:
                    full = os.path.join(top, name)
                    found.append((full[len(base):].replace(os.sep, "/"), full))
        return found

    def refresh(self) -> IndexStats:
        """Bring the index up to date with the directory (see the module docstring)."""
        start = time.perf_counter()
        db = self.db
        known = {row[0]: row[1:] for row in
                 db.execute("SELECT path, mtime_ns, size, sha256 FROM files")}
        seen: set[str] = set()
        indexed = unchanged = 0
        with db:  # one transaction: a killed refresh leaves the previous index intact
            for rel, full in self._walk():
                seen.add(rel)
                stat = os.stat(full)
                old = known.get(rel)
                if old and old[0] == stat.st_mtime_ns and old[1] == stat.st_size:
                    unchanged += 1
                    continue
                data = Path(full).read_bytes() if stat.st_size <= MAX_FILE_BYTES else b""
                sha = hashlib.sha256(data).hexdigest()
                if old and old[2] == sha and stat.st_size <= MAX_FILE_BYTES:
                    db.execute("UPDATE files SET mtime_ns = ?, size = ? WHERE path = ?",
                               (stat.st_mtime_ns, stat.st_size, rel))
                    unchanged += 1
                    continue
                if old:
                    self._drop_sections(rel)
                self._index_file(rel, data, stat.st_size, stat.st_mtime_ns, sha)
                indexed += 1
            gone = [p for p in known if p not in seen]
            for rel in gone:
                self._drop_sections(rel)
                db.execute("DELETE FROM files WHERE path = ?", (rel,))
        problems = [f"{p}: {why}" for p, why in
                    db.execute("SELECT path, problem FROM files WHERE problem IS NOT NULL "
                               "ORDER BY path")]
        (sections,) = db.execute("SELECT count(*) FROM section_rows").fetchone()
        return IndexStats(files=len(seen), sections=sections, indexed=indexed,
                          removed=len(gone), unchanged=unchanged,
                          seconds=round(time.perf_counter() - start, 4), problems=problems)

    def _drop_sections(self, rel: str) -> None:
        self.db.execute("DELETE FROM sections WHERE rowid IN "
                        "(SELECT id FROM section_rows WHERE path = ?)", (rel,))
        self.db.execute("DELETE FROM section_rows WHERE path = ?", (rel,))

    def _index_file(self, rel: str, data: bytes, size: int, mtime_ns: int, sha: str) -> None:
        problem = None
        sections = []
        if size > MAX_FILE_BYTES:
            problem = f"skipped: {size} bytes is over the {MAX_FILE_BYTES}-byte limit"
        elif b"\0" in data[:8192]:
            problem = "skipped: binary content"
        else:
            try:
                sections = split_document(PurePosixPath(rel),
                                          data.decode("utf-8", errors="replace"))
            except DocumentError as e:
                problem = str(e).removeprefix(f"{rel}: ")
            except RecursionError:
                problem = "skipped: nested too deeply to parse"
        for i, section in enumerate(sections):
            row = self.db.execute("INSERT INTO section_rows (path) VALUES (?)", (rel,)).lastrowid
            self.db.execute("INSERT INTO sections (rowid, path, ordinal, title, body) "
                            "VALUES (?, ?, ?, ?, ?)", (row, rel, i, section.title, section.text))
        self.db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)",
                        (rel, mtime_ns, size, sha, problem))

    # -- reading ----------------------------------------------------------------------

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The `k` best sections for free text `query`, best first ([] if no word matches)."""
        if k < 1:
            raise CorpusError(f"k must be at least 1, got {k}")
        match = fts_query(query)
        if not match:
            return []
        rows = self.db.execute(
            "SELECT path, title, snippet(sections, 3, ?, ?, '…', 24), "
            f"bm25(sections, 0, 0, {_TITLE_WEIGHT}, {_BODY_WEIGHT}) AS rank "
            "FROM sections WHERE sections MATCH ? ORDER BY rank, path, ordinal LIMIT ?",
            (MARK_OPEN, MARK_CLOSE, match, k)).fetchall()
        return [Hit(path=p, section=t, snippet=" ".join(s.split()), score=round(-r, 4))
                for p, t, s, r in rows]

    def paths(self) -> list[str]:
        return [p for (p,) in self.db.execute("SELECT path FROM files ORDER BY path")]

    def sections_of(self, path: str) -> list[tuple[str, str]]:
        """(title, text) of every section of an indexed file, in document order."""
        rows = self.db.execute("SELECT title, body FROM sections WHERE rowid IN (SELECT id "
                               "FROM section_rows WHERE path = ?) ORDER BY rowid",
                               (path,)).fetchall()
        if not rows and path not in self.paths():
            near = difflib.get_close_matches(path, self.paths(), n=3, cutoff=0.4)
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise CorpusError(f"no document {path!r} in the corpus{hint}")
        return [(t, b) for t, b in rows]

    def read(self, path: str, section: str = "", max_chars: int = 12_000) -> str:
        """Text of part of a document, cut at `max_chars` with a note saying so: the section
        titled `section`; else every section under a heading called that (a heading and
        its subsections); else the one section whose title contains it; with no `section`,
        the whole document."""
        sections = self.sections_of(path)
        if section:
            wanted = section.casefold()
            exact = [s for s in sections if s[0] == section]
            under = [s for s in sections
                     if wanted in (part.casefold() for part in s[0].split(" > "))]
            partial = [s for s in sections if wanted in s[0].casefold()]
            if not (exact or under or len(partial) == 1):
                titles = "; ".join(t for t, _ in sections[:30])
                count = f"{len(partial)} titles contain" if partial else "no title contains"
                raise CorpusError(f"section {section!r} of {path!r}: {count} it; "
                                  f"sections: {titles}")
            sections = exact or under or partial
        text = "\n\n".join(f"## {t}\n{b}" for t, b in sections)
        if len(text) > max_chars:
            text = (text[:max_chars] + f"\n[... cut at {max_chars} of {len(text)} characters; "
                    "read one section at a time for the rest]")
        return text


def fts_query(text: str) -> str:
    """An FTS5 MATCH expression for free text: its words, quoted, OR-ed (stopwords dropped
    unless nothing else is left)."""
    words = list(dict.fromkeys(re.findall(r"\w+", text.casefold())))
    content = [w for w in words if w not in _STOPWORDS] or words
    return " OR ".join(f'"{w}"' for w in content)
