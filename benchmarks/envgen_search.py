"""EnvGen corpus index: build time, refresh time and query latency (SQLite FTS5, BM25).

    python benchmarks/envgen_search.py [--quick] [--docs N] [--queries Q]

A synthetic corpus of N API documents (default 2,000; `--quick` 200) is written to a
temporary directory: Markdown guides (60 %), OpenAPI YAML documents (20 %),
reStructuredText (10 %) and HTML (10 %), each with 4-10 sections of API words plus
filler drawn from a Zipf-like vocabulary of 5,000 words, so term frequencies look like
text and BM25 has real work to do. Everything is seeded: two runs index the same bytes.

Measured with `synthesis.envgen.corpus.Corpus`: the cold build (split + index every
file), a refresh with nothing changed (what every `envgen search` pays on open), a
refresh after one file changed (each the median of 5), and the latency of `search()`
over Q free-text queries of 2-5 words (k = 10). Prints a table and ends with one JSON
line.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from synthesis.envgen.corpus import Corpus  # noqa: E402

RESOURCES = ["event", "invitation", "calendar", "invoice", "charge", "refund", "book", "loan",
             "member", "note", "tag", "order", "shipment", "ticket", "user", "account",
             "payment", "message", "channel", "file", "folder", "forecast", "alert", "city",
             "reservation", "flight", "hotel", "patient", "appointment", "repository"]
#: refreshes timed per kind (the median is reported: the machine may be shared)
REPEATS = 5
VERBS = ["create", "list", "get", "update", "delete", "cancel", "search", "send", "respond",
         "archive", "restore", "assign", "approve", "reject", "export"]


def vocabulary(rng: random.Random, size: int = 5000) -> tuple[list[str], list[float]]:
    """Made-up words with Zipf weights (rank r has weight 1/r)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = sorted({"".join(rng.choice(letters) for _ in range(rng.randint(3, 9)))
                    for _ in range(size * 2)})[:size]
    rng.shuffle(words)
    return words, [1.0 / (r + 1) for r in range(len(words))]


class Writer:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.words, self.weights = vocabulary(self.rng)

    def sentence(self, n: int) -> str:
        filler = self.rng.choices(self.words, self.weights, k=n)
        filler[self.rng.randrange(n)] = self.rng.choice(RESOURCES)
        return " ".join(filler).capitalize() + "."

    def paragraph(self) -> str:
        return " ".join(self.sentence(self.rng.randint(6, 16))
                        for _ in range(self.rng.randint(2, 6)))

    def operation(self) -> tuple[str, str]:
        return self.rng.choice(VERBS), self.rng.choice(RESOURCES)

    def markdown(self, title: str) -> str:
        parts = [f"# {title}\n\n{self.paragraph()}\n"]
        for _ in range(self.rng.randint(4, 10)):
            verb, res = self.operation()
            parts.append(f"## {verb.capitalize()} a {res}\n\n`POST /{res}s` {self.paragraph()}\n")
        return "\n".join(parts)

    def rst(self, title: str) -> str:
        parts = [f"{title}\n{'=' * len(title)}\n\n{self.paragraph()}\n"]
        for _ in range(self.rng.randint(4, 10)):
            verb, res = self.operation()
            head = f"{verb.capitalize()} {res}"
            parts.append(f"{head}\n{'-' * len(head)}\n\n{self.paragraph()}\n")
        return "\n".join(parts)

    def html(self, title: str) -> str:
        parts = [f"<html><head><title>{title}</title></head><body><h1>{title}</h1>"
                 f"<p>{self.paragraph()}</p>"]
        for _ in range(self.rng.randint(4, 10)):
            verb, res = self.operation()
            parts.append(f"<h2>{verb.capitalize()} a {res}</h2><p>{self.paragraph()}</p>")
        return "".join(parts) + "</body></html>"

    def openapi(self, title: str) -> str:
        lines = ["openapi: 3.0.3", "info:", f"  title: {title}",
                 f"  description: {json.dumps(self.paragraph())}", "paths:"]
        for i in range(self.rng.randint(4, 10)):
            verb, res = self.operation()
            lines += [f"  /{res}s/{i}:", "    post:", f"      operationId: {verb}_{res}_{i}",
                      f"      summary: {verb.capitalize()} a {res}",
                      f"      description: {json.dumps(self.paragraph())}",
                      "      parameters:", f"        - name: {res}_id", "          in: query",
                      f"          description: {json.dumps(self.sentence(8))}",
                      "          schema: {type: string}",
                      "      responses:", "        '200':",
                      f"          description: {json.dumps(self.sentence(6))}"]
        return "\n".join(lines) + "\n"


def write_corpus(root: Path, n: int, seed: int = 0) -> None:
    writer = Writer(seed)
    for i in range(n):
        title = f"{writer.rng.choice(RESOURCES).capitalize()} API {i}"
        kind = writer.rng.random()
        folder = root / f"group{i % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        if kind < 0.6:
            (folder / f"doc{i}.md").write_text(writer.markdown(title))
        elif kind < 0.8:
            (folder / f"api{i}.yaml").write_text(writer.openapi(title))
        elif kind < 0.9:
            (folder / f"doc{i}.rst").write_text(writer.rst(title))
        else:
            (folder / f"doc{i}.html").write_text(writer.html(title))


def queries(n: int, seed: int = 1) -> list[str]:
    writer = Writer(0)
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = [rng.choice(VERBS), rng.choice(RESOURCES)]
        words += rng.choices(writer.words[:500], k=rng.randint(0, 3))
        out.append(" ".join(words))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="200 documents, 100 queries")
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args(argv)
    if args.quick:
        args.docs, args.queries = 200, 100
    console = Console()
    with tempfile.TemporaryDirectory() as d:
        root, index = Path(d) / "corpus", Path(d) / "index" / "index.sqlite"
        write_corpus(root, args.docs)
        corpus_mb = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 1e6
        with Corpus(root, index) as corpus:
            built = corpus.refresh()
        with Corpus(root, index) as corpus:
            noops = [corpus.refresh() for _ in range(REPEATS)]
            ones = []
            for changed in sorted(root.rglob("*.md"))[:REPEATS]:
                changed.write_text(changed.read_text() + "\n## Extra\n\nOne more section.\n")
                ones.append(corpus.refresh())
            latencies = []
            hits = 0
            for q in queries(args.queries):
                start = time.perf_counter()
                hits += len(corpus.search(q, k=10))
                latencies.append((time.perf_counter() - start) * 1000)
        index_mb = index.stat().st_size / 1e6
    noop_s = statistics.median(st.seconds for st in noops)
    one_s = statistics.median(st.seconds for st in ones)
    latencies.sort()
    p50 = statistics.median(latencies)
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
    table = Table(title=f"EnvGen corpus index: {args.docs} synthetic documents")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("files / sections", f"{built.files} / {built.sections}")
    table.add_row("corpus / index size", f"{corpus_mb:.1f} MB / {index_mb:.1f} MB")
    table.add_row("cold build", f"{built.seconds:.2f} s ({built.files / built.seconds:.0f} "
                                f"files/s)")
    table.add_row(f"refresh, nothing changed (median of {REPEATS})", f"{noop_s * 1000:.1f} ms")
    table.add_row(f"refresh, one file changed (median of {REPEATS})", f"{one_s * 1000:.1f} ms")
    table.add_row(f"query latency p50 / p95 ({args.queries} queries, k=10)",
                  f"{p50:.2f} / {p95:.2f} ms")
    table.add_row("mean hits per query", f"{hits / args.queries:.1f}")
    console.print(table)
    payload = {"benchmark": "envgen_search", "quick": args.quick, "docs": built.files,
               "sections": built.sections, "corpus_mb": round(corpus_mb, 2),
               "index_mb": round(index_mb, 2), "build_s": built.seconds,
               "files_per_s": round(built.files / built.seconds, 1),
               "noop_refresh_ms": round(noop_s * 1000, 2),
               "one_file_refresh_ms": round(one_s * 1000, 2),
               "query_p50_ms": round(p50, 3), "query_p95_ms": round(p95, 3)}
    print(json.dumps(payload, separators=(",", ":")))
    ok = (all(st.indexed == 0 for st in noops) and all(st.indexed == 1 for st in ones)
          and built.files == args.docs and hits > 0)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
