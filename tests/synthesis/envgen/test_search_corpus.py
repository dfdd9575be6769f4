"""The EnvGen document corpus: splitting, the FTS5/BM25 index, incremental refresh.

Expected rankings were checked by hand against `tests/data/envgen_corpus` (each query's
top section is the only one whose title and body name what the query asks for).
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
from pathlib import Path, PurePosixPath

import pytest

from synthesis.envgen.corpus import Corpus, CorpusError, fts_query
from synthesis.envgen.doc_split import DocumentError, split_document

CORPUS = Path(__file__).resolve().parents[2] / "data" / "envgen_corpus"


@pytest.fixture
def corpus(tmp_path: Path) -> Corpus:
    c = Corpus(CORPUS, tmp_path / "index.sqlite")
    c.refresh()
    return c


def test_fts5_with_bm25_ships_with_this_python() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    db.executemany("INSERT INTO t VALUES (?)", [("cats and dogs",), ("dogs",), ("birds",)])
    rows = db.execute("SELECT body FROM t WHERE t MATCH 'dogs' ORDER BY bm25(t)").fetchall()
    assert rows == [("dogs",), ("cats and dogs",)]  # the shorter document ranks first


@pytest.mark.parametrize(("query", "path", "section"), [
    ("send an invitation to an event", "calendar/README.md",
     "Calendar API > Invitations > Send an invitation"),
    ("return a borrowed book", "library_api.yaml",
     "Library Loans API > POST /loans/{loan_id}/return (Return a borrowed book)"),
    ("refund a charge", "payments.md", "Payments API > Refunds > Create a refund"),
    ("severe weather alerts", "weather.rst", "Weather Service > Alerts"),
    ("tag a note", "notes.html", "Notes API > Tag a note"),
])
def test_the_right_section_ranks_first(corpus: Corpus, query: str, path: str,
                                       section: str) -> None:
    hits = corpus.search(query, k=5)
    assert (hits[0].path, hits[0].section) == (path, section)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].score > 0


def test_snippets_mark_the_matched_words_and_k_caps_hits(corpus: Corpus) -> None:
    hits = corpus.search("severe weather alerts", k=2)
    assert len(hits) == 2
    assert "«severe» «weather» «alerts»" in hits[0].snippet
    assert corpus.search("zyzzyva") == []
    assert fts_query("the and of") == '"the" OR "and" OR "of"'  # only stopwords: kept
    with pytest.raises(CorpusError, match="k must be at least 1"):
        corpus.search("book", k=0)


def test_free_text_is_quoted_so_punctuation_is_not_fts_syntax(corpus: Corpus) -> None:
    assert fts_query('events AND "NOT" (invitations)*') == '"events" OR "not" OR "invitations"'
    hits = corpus.search('POST /refunds: "charge_id"?', k=1)
    assert hits[0].section == "Payments API > Refunds > Create a refund"


def test_openapi_is_split_per_operation_with_parameters_and_schemas(corpus: Corpus) -> None:
    titles = [t for t, _ in corpus.sections_of("library_api.yaml")]
    assert titles == [
        "Library Loans API",
        "Library Loans API > GET /books (Search the catalogue)",
        "Library Loans API > GET /books/{book_id} (Get one book)",
        "Library Loans API > POST /loans (Borrow a book)",
        "Library Loans API > POST /loans/{loan_id}/return (Return a borrowed book)",
        "Library Loans API > GET /members/{member_id} (Get a member)",
        "Library Loans API > schema Book",
        "Library Loans API > schema Loan",
        "Library Loans API > schema Member",
    ]
    text = corpus.read("library_api.yaml", "GET /books/{book_id}")
    # the path-level parameter is shared by the operation; the $ref'd response is expanded
    assert "parameter book_id (path, string, required): The book's catalogue identifier." in text
    assert "response 200.copies_available (integer): Copies on the shelf now." in text
    borrow = corpus.read("library_api.yaml", "POST /loans (Borrow")
    assert "body.member_id (string, required): The borrowing member." in borrow
    assert "response 409: No copy available, or the member has 5 loans already." in borrow
    loan = corpus.read("library_api.yaml", "schema Loan")
    assert "fine_cents (integer): Late fine, 0 if returned on time." in loan
    assert "status (string) one of open, returned" in loan


def test_markdown_rst_and_html_split_at_headings() -> None:
    md = split_document(PurePosixPath("a.md"),
                        "intro\n# A\nx\n## B\ny\n```\n# not a heading\n```\n# C\nz\n")
    assert [(s.title, s.text) for s in md] == [
        ("a", "intro"), ("A", "x"), ("A > B", "y\n```\n# not a heading\n```"), ("C", "z")]
    rst = split_document(PurePosixPath("w.rst"),
                         "=====\nTitle\n=====\n\nhello\n\nPart\n----\n\nbody\n")
    assert [(s.title, s.text) for s in rst] == [("Title", "hello"), ("Title > Part", "body")]
    html = split_document(PurePosixPath("n.html"),
                          "<title>T</title><p>top</p><h2>Sub <b>x</b></h2><p>a</p>"
                          "<script>hidden()</script><p>b</p>")
    assert [(s.title, s.text) for s in html] == [("T", "top"), ("Sub x", "a\nb")]


def test_script_text_is_not_indexed(corpus: Corpus) -> None:
    # notes.html has "search invitations calendar" only inside a <script>
    assert all(h.path != "notes.html" for h in corpus.search("console log", k=10))


def test_read_errors_name_the_document_and_its_sections(corpus: Corpus) -> None:
    with pytest.raises(CorpusError, match=r"no document 'payment.md'.*did you mean payments.md"):
        corpus.read("payment.md")
    with pytest.raises(CorpusError, match=r"section 'taxes' of 'payments.md': no title contains "
                                          r"it; sections: Payments API; Payments API > Charges"):
        corpus.read("payments.md", "taxes")
    with pytest.raises(CorpusError, match="'create' of 'payments.md': 2 titles contain"):
        corpus.read("payments.md", "create")
    assert corpus.read("payments.md", "Void").startswith(
        "## Payments API > Invoices > Void an invoice\n`POST /invoices/{invoice_id}/void`")
    assert "[... cut at 50 of" in corpus.read("payments.md", max_chars=50)
    # a heading: all its subsections, in order
    assert re.findall(r"^## (.*)$", corpus.read("payments.md", "charges"), re.M) == [
        "Payments API > Charges > Create a charge", "Payments API > Charges > Retrieve a charge"]
    with pytest.raises(CorpusError, match="not a directory"):
        Corpus(CORPUS / "payments.md")


def test_refresh_reindexes_only_changed_new_and_deleted_files(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(CORPUS, docs)
    index = tmp_path / "idx" / "index.sqlite"
    with Corpus(docs, index) as c:
        first = c.refresh()
        assert (first.files, first.indexed, first.unchanged) == (6, 6, 0)
    with Corpus(docs, index) as c:  # reopened: nothing to do
        again = c.refresh()
        assert (again.indexed, again.unchanged, again.removed) == (0, 6, 0)
        assert again.sections == first.sections
    weather = docs / "weather.rst"
    os.utime(weather, ns=(1, 1))  # touched, same bytes: re-stamped, not re-split
    (docs / "payments.md").write_text("# Payments API\n\n## Payouts\n\nSend money to a bank.\n")
    (docs / "extra.txt").write_text("Geocoding turns an address into coordinates.\n")
    shutil.rmtree(docs / "calendar")
    with Corpus(docs, index) as c:
        stats = c.refresh()
        assert (stats.indexed, stats.removed, stats.unchanged) == (2, 1, 4)
        assert [h.path for h in c.search("refund")] == ["changelog.txt"]
        assert c.search("invitation") == []
        assert c.search("payouts bank")[0].section == "Payments API > Payouts"
        assert c.search("geocoding")[0].path == "extra.txt"


def test_bad_files_are_reported_and_skipped_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_text("# Shipping\nTrack a parcel.\n")
    (tmp_path / "bad.json").write_text('{"openapi": ')
    (tmp_path / "bad.yaml").write_text("a: [1,\n")
    (tmp_path / "blob.txt").write_bytes(b"\0\1\2binary")
    (tmp_path / ".hidden.md").write_text("# Secret\nparcel\n")
    with Corpus(tmp_path, tmp_path / ".cache" / "i.sqlite") as c:
        stats = c.refresh()
        assert stats.files == 4
        assert [p.split(":")[0] for p in stats.problems] == ["bad.json", "bad.yaml", "blob.txt"]
        assert "not valid JSON" in stats.problems[0] and "not valid YAML" in stats.problems[1]
        assert stats.problems[2] == "blob.txt: skipped: binary content"
        assert [h.path for h in c.search("parcel")] == ["ok.md"]
        assert c.refresh().problems == stats.problems  # still reported on later opens
    with pytest.raises(DocumentError, match="x.json: not valid JSON"):
        split_document(PurePosixPath("x.json"), "[")


def test_an_index_of_another_corpus_or_version_is_rebuilt(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x.md").write_text("# Alpha\nalpha words\n")
    (b / "y.md").write_text("# Beta\nbeta words\n")
    index = tmp_path / "shared.sqlite"
    with Corpus(a, index) as c:
        c.refresh()
    with Corpus(b, index) as c:
        stats = c.refresh()
        assert (stats.files, stats.indexed) == (1, 1)
        assert c.search("alpha") == [] and c.search("beta")[0].path == "y.md"
    index.write_text("not a database")
    with pytest.raises(CorpusError, match="shared.sqlite.*delete it to rebuild"):
        Corpus(b, index)
