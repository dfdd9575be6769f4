"""The reproduction gap: a released checkpoint scored here, against the number its paper
reported for it.

A measured row is paired with a reported row when it was scored from the checkpoint that
produced the reported number (`leaderboard.checkpoints`: its logs' `envfactory_hub_id`, or
a row named by that Hub id, as `inspect eval --model hf/<id>` names it). Each column both
rows have gets measured − reported, with the interval the measured cell's 95% interval
gives it (the reported number has none), and the settings that keep the two from being
the same measurement: a subset (`--limit`, `--sample-id`, a task option such as
MCP-Atlas's reachable servers) or no user/judge role bound (known to differ from the
paper), and the user/judge models the paper does not name (unconfirmed). A gap over a
subset is still shown, marked, since it is what a first reproduction looks like.
"""

from __future__ import annotations

from leaderboard.baselines import PaperProtocol
from leaderboard.checkpoints import CheckpointFile, reported_row_of
from leaderboard.columns import ROLES
from leaderboard.records import Cell, GapCell, GapRow, LogRecord, RowInfo

__all__ = ["gap_cell", "reproduction_gaps", "settings_against_paper"]


def _atlas_subset(settings: dict[str, str]) -> str:
    """MCP-Atlas's subset as its log records it (`tasks/mcp_atlas`: `subset` defaults to
    the tasks needing only keyless local servers, and tasks it cannot run are skipped):
    "" for all tasks, all run."""
    subset = settings.get("mcp_atlas_subset")
    runnable, population = settings.get("mcp_atlas_runnable"), settings.get("mcp_atlas_population")
    if subset is None:
        return ""
    ran = (f"{runnable} of {population} tasks run" if runnable and population
           and runnable != population else "")
    if subset == "all" and not ran:
        return ""
    return f"subset {subset}" + (f", {ran} (the others skipped, listed in the log)"
                                 if ran else "")


def settings_against_paper(records: list[LogRecord], protocol: PaperProtocol
                           ) -> tuple[list[str], list[str]]:
    """(settings known to differ from the paper's, settings the paper does not state)
    over the logs behind one cell, each said once."""
    differs: list[str] = []
    unconfirmed: list[str] = []

    def add(out: list[str], text: str) -> None:
        if text not in out:
            out.append(text)

    for rec in records:
        where = rec.benchmark
        settings = rec.comparability
        paper_subset = f" (the paper: {protocol.subset or 'every sample'})"
        if rec.limit is not None and "sample_id" not in settings:
            add(differs, f"{where}: subset --limit {rec.limit}{paper_subset}")
        if "sample_id" in settings:
            add(differs, f"{where}: subset --sample-id {settings['sample_id']}")
        options = [f"{k}={v}" for k, v in rec.options_passed.items()]
        if options:
            add(differs, f"{where}: task option(s) {', '.join(options)} (the paper: the "
                         f"benchmark as shipped)")
        atlas = _atlas_subset(settings)
        if atlas:
            add(differs, f"{where}: {atlas}{paper_subset}")
        for role in ROLES.get(rec.benchmark, ()):
            model = settings.get(f"role.{role}")
            paper = getattr(protocol, role, None)
            if model is None:
                add(differs, f"{where}: no {role} role bound"
                    + (" (the checkpoint played its own user)" if role == "user" else ""))
            elif paper is None:
                add(unconfirmed, f"{where}: {role} {model} (the paper names none)")
            elif paper != model:
                add(differs, f"{where}: {role} {model} (the paper: {paper})")
    return differs, unconfirmed


def gap_cell(measured: Cell, reported: Cell, records: list[LogRecord],
             protocol: PaperProtocol) -> GapCell:
    """measured − reported for one column (fractions), with its interval and marks."""
    gap = measured.value - reported.value
    low = high = None
    inside = None
    if measured.ci_low is not None and measured.ci_high is not None:
        low, high = measured.ci_low - reported.value, measured.ci_high - reported.value
        inside = measured.ci_low <= reported.value <= measured.ci_high
    differs, unconfirmed = settings_against_paper(records, protocol)
    if not reported.comparable and reported.note:
        differs.append(f"reported value: {reported.note}")
    return GapCell(measured=measured.value, reported=reported.value, gap=gap, gap_low=low,
                   gap_high=high, n=measured.n, epochs=measured.epochs,
                   reported_in_interval=inside, differs=differs, unconfirmed=unconfirmed,
                   note=measured.note if not measured.comparable else None,
                   logs=list(measured.logs))


def reproduction_gaps(rows: list[RowInfo], records: list[LogRecord],
                      checkpoints: CheckpointFile, protocol: PaperProtocol) -> list[GapRow]:
    """A gap row for every measured row scored from a released checkpoint whose reported
    row is in `rows`, in the order of the reported rows."""
    by_path = {rec.path: rec for rec in records}
    reported = {r.key: r for r in rows if r.kind == "reported"}
    out = []
    for row in rows:
        if row.kind != "measured":
            continue
        entry = reported_row_of(row.hub_id or row.key, checkpoints)
        if entry is None or entry.reported_key not in reported:
            continue
        paper = reported[entry.reported_key]
        cells: dict[str, GapCell] = {}
        for key, cell in row.cells.items():
            if key in paper.cells:
                cells[key] = gap_cell(cell, paper.cells[key],
                                      [by_path[p] for p in cell.logs if p in by_path],
                                      protocol)
        if not cells:
            continue
        logs = {p for c in row.cells.values() for p in c.logs if p in by_path}
        revisions = sorted({str(by_path[p].provenance["hub_revision"]) for p in logs
                            if by_path[p].provenance.get("hub_revision")})
        out.append(GapRow(key=f"gap:{row.key}", label=f"{row.label} − {paper.label}",
                          measured_row=row.key, reported_row=paper.key,
                          checkpoint_row=entry.row, hub_id=entry.hub_id or row.key,
                          revisions=revisions, source=entry.source, cells=cells))
    order = list(reported)
    out.sort(key=lambda g: (order.index(g.reported_row), g.measured_row))
    return out
