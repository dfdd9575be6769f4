"""`envfactory data ...`: every file a benchmark downloads, fetched ahead, so runs work offline.

A benchmark's first run downloads the pinned release files it reads (τ², VitaBench and
MCP-Atlas from GitHub at a pinned commit, MCP-Atlas's tasks from the Hub). `data fetch`
fetches them all now, into the same cache a run reads (`ENVFACTORY_CACHE`), through the
same pinned releases and the one downloader (`envs.downloads`: resumable `.part` files,
retries), with a progress bar of files and bytes; files already there are skipped (a file
is there only when its download completed). `data fetch --list` says, per benchmark, each
file, where it comes from, its size and whether it is cached, downloading nothing.

Which files a benchmark needs is not listed here: each comes from the benchmark's own
module (its `PinnedRelease.files`, the source files its code reads as data, the tool
objects τ² derives from its release's modules, the Hub dataset MCP-Atlas's tasks load).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.filesize import decimal
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Column, Table

from envfactory.cli.errors import CommandError
from envs.downloads import observed
from envs.releases import PinnedRelease, ReleaseFile

__all__ = ["BENCHMARKS", "Benchmark", "data_app", "plan"]

data_app = typer.Typer(help="Benchmark data: fetch every release file ahead, for offline runs.",
                       no_args_is_help=True)
console = Console()
errors = Console(stderr=True)


@dataclass(frozen=True)
class Derived:
    """A file a benchmark builds from release files on first use (τ²'s tool objects from
    its release's modules); building it fetches what it reads."""

    label: str
    local: Path
    build: Callable[[], object]
    source: str


@dataclass(frozen=True)
class HubData:
    """A Hub dataset at a pinned commit, kept in the Hugging Face cache."""

    repo_id: str
    revision: str

    def url(self) -> str:
        return f"hf://datasets/{self.repo_id}@{self.revision[:12]}"

    def cached(self) -> bool:
        from huggingface_hub import snapshot_download

        try:
            snapshot_download(self.repo_id, repo_type="dataset", revision=self.revision,
                              local_files_only=True)
        except Exception:  # noqa: BLE001 - the client's "not cached" errors share no base
            return False
        return True

    def fetch(self) -> None:
        from envs.releases import hub_snapshot

        try:
            hub_snapshot(self.repo_id, self.revision, option="the benchmark's revision")
        except Exception as e:  # noqa: BLE001 - offline, gated, missing: one clear line
            raise OSError(f"cannot fetch the Hub dataset {self.repo_id}@{self.revision} "
                          f"({type(e).__name__}: {e})") from e


@dataclass
class Benchmark:
    """What one benchmark downloads: release files, derived files, Hub datasets."""

    name: str
    files: list[tuple[PinnedRelease, ReleaseFile]] = field(default_factory=list)
    derived: list[Derived] = field(default_factory=list)
    hub: list[HubData] = field(default_factory=list)
    #: what needs no download, or a folder this command cannot fetch
    notes: list[str] = field(default_factory=list)


def _described(release: PinnedRelease, relatives: Sequence[str], *, source: bool = False
               ) -> list[tuple[PinnedRelease, ReleaseFile]]:
    return [(release, release.describe(r, source=source)) for r in relatives]


def _bfcl() -> Benchmark:
    from envs.bfcl import package

    return Benchmark("bfcl", notes=[
        f"nothing to download: the data ships in the bfcl-eval package "
        f"(pinned {package.PINNED_VERSION}, installed by `make install`)"])


def _tau2() -> Benchmark:
    from envs.tau2 import data, tool_objects

    # the split files are pinned at a later tag than the rest: they are SPLITS' files
    files = [(release, release.describe(relative)) for relative in data.TAU2.files
             for release in [data.SPLITS if relative in data.SPLITS.files else data.TAU2]]
    # the NL-assertion judge's prompt and settings, read from upstream's source as data
    files += _described(data.TAU2, [data.NL_ASSERTIONS_SOURCE, data.CONFIG_SOURCE], source=True)

    def derive(toolkit: str) -> Callable[[], object]:
        return lambda: tool_objects.official_tools(toolkit)

    # official_tools reads a data root's tools/ first (TAU2_DATA_DIR may hold them), then
    # the cache's, where it writes what it derives
    roots = [data.data_dir(), data.cache_dir()]

    def local(toolkit: str) -> Path:
        paths = [root / "tools" / f"{toolkit}.json" for root in roots]
        return next((p for p in paths if p.is_file()), paths[-1])

    derived = [Derived(f"tools/{toolkit}.json", local(toolkit), derive(toolkit),
                       f"derived from {module} at {data.RELEASE} (its src/ modules fetched)")
               for toolkit, module in tool_objects.TOOLKITS.items()]
    return Benchmark("tau2", files, derived)


def _vitabench() -> Benchmark:
    from envs.vitabench import tool_objects
    from envs.vitabench.release import DEFAULT_REVISION, REVISIONS, release

    pinned = release(DEFAULT_REVISION).pinned
    sources = [path for path, _zh, _en in tool_objects.DESCRIPTION_TABLES.values()]
    others = [name for name in REVISIONS if name != DEFAULT_REVISION]
    return Benchmark(
        "vitabench", [*_described(pinned, pinned.files),
                      *_described(pinned, [*sources, tool_objects.TOOLKIT_SOURCE], source=True)],
        notes=[f"revision {DEFAULT_REVISION} (the default); "
               + "; ".join(f"{n}: {REVISIONS[n].description}" for n in others)])


def _mcp_atlas() -> Benchmark:
    from tasks._mcp_atlas.claims import SCORER_FILE
    from tasks._mcp_atlas.dataset import ENVIRONMENT_MAIN, HUB_DATASET, HUB_REVISION
    from tasks._mcp_atlas.release import release

    pinned = release().files
    return Benchmark(
        "mcp-atlas", [*_described(pinned, pinned.files),
                      *_described(pinned, [SCORER_FILE, ENVIRONMENT_MAIN], source=True)],
        hub=[HubData(HUB_DATASET, HUB_REVISION)],
        notes=["the MCP servers themselves are npm/PyPI packages: `make install-mcp-atlas`"])


def _envfactory_release() -> Benchmark:
    from envs.release_registry import ENVFACTORY

    folders = Derived(label=", ".join(f + "/" for f in ENVFACTORY.folders),
                      local=ENVFACTORY.folders_marker, build=ENVFACTORY.fetch_folders,
                      source=f"from the {ENVFACTORY.ref} archive")
    if ENVFACTORY.override and os.environ.get(ENVFACTORY.override):
        # the override is the release root: its folders are read there, never fetched
        return Benchmark("envfactory-release", _described(ENVFACTORY, ENVFACTORY.files),
                         notes=[f"its folders are read from {ENVFACTORY.override}"])
    return Benchmark("envfactory-release", _described(ENVFACTORY, ENVFACTORY.files),
                     derived=[folders])


#: benchmark -> what it downloads, in the order they are listed and fetched
BENCHMARKS: dict[str, Callable[[], Benchmark]] = {
    "bfcl": _bfcl, "tau2": _tau2, "vitabench": _vitabench, "mcp-atlas": _mcp_atlas,
    "envfactory-release": _envfactory_release}


def plan(names: Sequence[str]) -> list[Benchmark]:
    """The benchmarks named (all when none), each with what it downloads."""
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        raise typer.BadParameter(f"unknown benchmark {', '.join(map(repr, unknown))}; "
                                 f"choose from {', '.join(BENCHMARKS)}", param_hint="BENCH")
    return [BENCHMARKS[n]() for n in dict.fromkeys(names or BENCHMARKS)]


def _size(size: int | None) -> str:
    if size is None:
        return "-"
    if size < 1000:
        return f"{size} B"
    return f"{size / 1000:.1f} KB" if size < 1_000_000 else f"{size / 1_000_000:.1f} MB"


def _repository(urls: Sequence[str]) -> str:
    """What the files' base URLs share, up to a `/`: the repository they come from."""
    common = os.path.commonprefix(list(urls))
    return common[:common.rfind("/") + 1] if "/" in common else common


def _list(benchmarks: Sequence[Benchmark]) -> None:
    """One table per benchmark (a terminal of 80 columns shows each row on one line): its
    files with the ref they are pinned to, the size where known and whether the cache
    (or the override folder) has them; where they come from is the table's title."""
    for bench in benchmarks:
        if not (bench.files or bench.derived or bench.hub):
            console.print(f"[bold]{bench.name}[/bold]: " + "; ".join(bench.notes))
            continue
        urls = [f.url.removesuffix(f.relative) for _release, f in bench.files]
        repository = _repository(urls)
        title = f"{bench.name}" + (f": files from {repository}" if urls else "")
        table = Table(title=title, title_justify="left", caption="; ".join(bench.notes)
                      or None, caption_justify="left")
        for col in ("file", "ref", "size", "cached"):
            table.add_column(col, overflow="fold")
        for _release, f in bench.files:
            cached = (f"[green]yes[/green]{f' ({f.override})' if f.override else ''}"
                      if f.cached else
                      f"[red]no: {f.override} lacks it[/red]" if f.override else "no")
            pinned = f.url[len(repository):].split("/", 1)[0]  # the commit or tag fetched
            ref = f.label if pinned == f.label else f"{f.label} @ {pinned[:7]}"
            table.add_row(f.relative, ref, _size(f.size), cached)
        for d in bench.derived:
            there = d.local.is_file()
            table.add_row(f"{d.label} ({d.source})", "", _size(
                d.local.stat().st_size if there else None), "yes" if there else "no")
        for h in bench.hub:
            table.add_row(f"Hub dataset {h.repo_id}", h.revision[:12], "-",
                          "yes" if h.cached() else "no (needs the Hub)")
        console.print(table)
    console.print("[dim]ENVFACTORY_CACHE holds what is fetched; `envfactory data fetch "
                  "[BENCH...]` fetches what is missing[/dim]")


def _short(what: str, width: int = 44) -> str:
    """The end of a long file name (the part that tells files apart)."""
    return what if len(what) <= width else "…" + what[-(width - 1):]


@dataclass
class _Tally:
    present: int = 0
    fetched: int = 0
    failed: list[str] = field(default_factory=list)


def _fetch(benchmarks: Sequence[Benchmark], hub: bool) -> dict[str, _Tally]:
    """Fetch what is missing, one benchmark after another, going on past a failure."""
    steps: list[tuple[str, str, Callable[[], object]]] = []
    tallies = {b.name: _Tally() for b in benchmarks}
    for bench in benchmarks:
        for release, f in bench.files:
            if f.cached:
                tallies[bench.name].present += 1
                continue
            steps.append((bench.name, f"{release.title} {f.relative}",
                          partial(release.fetch, f.relative, source=f.kind == "source")))
        for d in bench.derived:
            if d.local.is_file():
                tallies[bench.name].present += 1
            else:
                steps.append((bench.name, f"{bench.name} {d.label}", d.build))
        for h in bench.hub if hub else []:
            if h.cached():
                tallies[bench.name].present += 1
            else:
                steps.append((bench.name, h.url(), h.fetch))
    # one bar counts files, the other the bytes of the file downloading now
    progress = Progress(TextColumn("{task.description}", table_column=Column(width=44,
                                                                             no_wrap=True)),
                        BarColumn(), TextColumn("{task.fields[amount]}"),
                        TimeElapsedColumn(), console=errors, transient=True)
    with progress:
        files = progress.add_task("files", total=len(steps), amount=f"0/{len(steps)} files")
        current = progress.add_task("", total=None, visible=False, amount="")

        def on_bytes(what: str, done: int, total: int | None) -> None:
            amount = decimal(done) + (f" / {decimal(total)}" if total is not None else "")
            progress.update(current, description=_short(what), completed=done, total=total,
                            visible=True, amount=amount)

        with observed(on_bytes):
            for n, (bench_name, what, step) in enumerate(steps, 1):
                progress.update(current, description=_short(what), completed=0, total=None,
                                amount="")
                try:
                    step()
                except (OSError, ValueError) as e:
                    tallies[bench_name].failed.append(f"{what}: {e}")
                else:
                    tallies[bench_name].fetched += 1
                progress.update(files, completed=n, amount=f"{n}/{len(steps)} files")
    return tallies


@data_app.command("fetch")
def data_fetch(
    benchmarks: Annotated[list[str] | None, typer.Argument(
        metavar="BENCH", help=f"Benchmarks to fetch ({', '.join(BENCHMARKS)}); "
                                   "default all.")] = None,
    list_only: Annotated[bool, typer.Option(
        "--list", help="Show each file, its source, size and whether it is cached; "
                       "download nothing.")] = False,
    hub: Annotated[bool, typer.Option(
        "--hub/--no-hub", help="Also fetch the Hub datasets (MCP-Atlas's tasks) into the "
                               "Hugging Face cache; they need the Hub.")] = True,
) -> None:
    """Download every pinned release file the benchmarks read into the cache (resumable;
    cached files are skipped), so that later runs need no network."""
    chosen = plan(benchmarks or [])
    if list_only:
        _list(chosen)
        return
    tallies = _fetch(chosen, hub)
    table = Table(title="envfactory data fetch")
    for col in ("benchmark", "already cached", "fetched", "failed"):
        table.add_column(col)
    for bench in chosen:
        t = tallies[bench.name]
        table.add_row(bench.name, str(t.present), str(t.fetched),
                      f"[red]{len(t.failed)}[/red]" if t.failed else "0")
    console.print(table)
    failures = [line for t in tallies.values() for line in t.failed]
    for line in failures:
        errors.print(f"not fetched: {line}", markup=False, highlight=False, soft_wrap=True)
    if failures:
        total = sum(t.present + t.fetched + len(t.failed) for t in tallies.values())
        hub_failed = any(line.startswith("hf://") for line in failures)
        raise CommandError(f"{len(failures)} of {total} files not fetched (each named above); "
                           "a rerun fetches only what is missing"
                           + ("; --no-hub leaves the Hub datasets out" if hub_failed else ""))
