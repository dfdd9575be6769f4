"""What `envfactory mcp-atlas doctor` checks: every piece a run needs, each on its own.

A diagnostic that dies on the first missing piece says nothing about the others, and the
first run on a new machine is exactly when several are missing (no network, no servers,
no release files). So each piece is probed separately and becomes a `Check`: what it is,
whether it is there, and how to get it when it is not. A probe reads what a run would
read (and downloads what a run would download); a failed download is reported and the
files after it are not tried again, so an offline machine waits for one failed
download, not one per file.

`required` pieces are those without which `inspect eval tasks/mcp_atlas` cannot start:
the release files, the two upstream source files read as data, the tasks, and at least
one runnable task of the default subset. Servers, keys, network and git repositories
only narrow what runs (their tasks are skipped with reasons), so they are reported, not
required. The judge is bound on `inspect eval`'s command line, so it is checked only
when a model is named (`judge=`).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from envs.release_registry import MCP_ATLAS_ENVIRONMENT, MCP_ATLAS_TEMPLATE
from harness.judge import JUDGE_ROLE, judge_model
from tasks._mcp_atlas.claims import SCORER_FILE, judge_template
from tasks._mcp_atlas.dataset import (
    ENVIRONMENT_MAIN,
    HUB_DATASET,
    HUB_REVISION,
    AtlasTask,
    TaskSource,
    load_tasks,
    tool_name_mappings,
)
from tasks._mcp_atlas.release import release
from tasks._mcp_atlas.selection import SUBSETS, Selection, select
from tasks._mcp_atlas.servers import (
    OFFLINE,
    Availability,
    ServerTemplate,
    availability,
    network_available,
    repo_pins,
    repos_dir,
    servers_dir,
    templates,
)

__all__ = ["Check", "Report", "check", "server_check", "server_status"]

T = TypeVar("T")
#: the console markup some providers' errors carry (`[bold][blue]OPENAI_API_KEY[/blue]...`)
_MARKUP = re.compile(r"\[/?(?:bold|italic|dim|blue|red|green|yellow)\]")

#: the subset `inspect eval tasks/mcp_atlas` runs by default
DEFAULT_SUBSET = "offline"


class Check(BaseModel):
    """One piece: `ok`, what was found (`status`), how to get it when missing (`how`)."""

    piece: str
    ok: bool
    status: str
    how: str = ""
    #: a run cannot start without it
    required: bool = False

    @property
    def missing(self) -> bool:
        return self.required and not self.ok


class Report(BaseModel):
    """Every check, in the order a run needs the pieces."""

    checks: list[Check]

    @property
    def missing(self) -> list[Check]:
        """The required pieces that are not there (the doctor exits 1 when any is)."""
        return [c for c in self.checks if c.missing]


class _Probe:
    """Runs probes that may download; after one download fails, later probes of files
    that are not on disk yet are reported as not tried."""

    def __init__(self) -> None:
        self.download_failed = ""

    def run(self, fn: Callable[[], T], needs_download: bool) -> tuple[T | None, str]:
        """`(value, "")`, or `(None, why)` when `fn` raised or was not tried."""
        if needs_download and self.download_failed:
            return None, "not fetched: the download above failed"
        try:
            return fn(), ""
        except Exception as e:  # noqa: BLE001 - a diagnostic reports every failure
            if isinstance(e, FileNotFoundError) and str(e).startswith("cannot download"):
                self.download_failed = str(e)
            return None, _one_line(e)


def _one_line(error: BaseException) -> str:
    """The error in one short line: a failed download by its network cause alone (its
    message's remedy is the row's `how`)."""
    cause = error.__cause__
    if isinstance(error, FileNotFoundError) and cause is not None:
        reason = str(getattr(cause, "reason", None) or cause)
        return "download failed: " + " ".join(reason.split(". ")[0].split())
    text = error.args[0] if isinstance(error, KeyError) and error.args else str(error)
    return " ".join(_MARKUP.sub("", str(text)).split()) or type(error).__name__


def _absent(relative: str, source: bool = False) -> bool:
    """Whether a run reading this release file would have to download it."""
    files = release().files
    override = files.source_override if source else files.override
    if override and os.environ.get(override):
        return False  # the user's folder: read as is, never downloaded
    root = files.source_root() if source else files.cache_path
    return not (root / relative).is_file()


def _fetch_hint(variable: str, copy: str) -> str:
    return f"set {variable} to {copy}, or run once online (fetched from GitHub at " \
        f"{release().commit[:7]})"


def release_checks(probe: _Probe) -> list[Check]:
    """The release's data files, and the two source files whose literals are read."""
    files = release().files
    data_hint = _fetch_hint(files.override or "MCP_ATLAS_DATA_DIR",
                            f"a folder of {MCP_ATLAS_TEMPLATE} + data/ (upstream's "
                            f"{Path(MCP_ATLAS_ENVIRONMENT).name})")
    source_hint = _fetch_hint(files.source_override or "MCP_ATLAS_SOURCE_DIR",
                              "a checkout of scaleapi/mcp-atlas")
    checks = []
    servers, why = probe.run(lambda: release().template(), _absent(MCP_ATLAS_TEMPLATE))
    checks.append(Check(piece="server template", ok=servers is not None, required=True,
                        status=f"{len(servers)} servers" if servers is not None else why,
                        how="" if servers is not None else data_hint))
    data, why = probe.run(lambda: release().data_dir(),
                          any(_absent(f) for f in files.files if f.startswith("data/")))
    checks.append(Check(piece="data/ files (each sample's /data)", ok=data is not None,
                        required=True, status=str(data) if data is not None else why,
                        how="" if data is not None else data_hint))
    prompt, why = probe.run(judge_template, _absent(SCORER_FILE, source=True))
    checks.append(Check(piece=f"judge prompt ({Path(SCORER_FILE).name})",
                        ok=prompt is not None, required=True,
                        status="read" if prompt is not None else why,
                        how="" if prompt is not None else source_hint))
    tables, why = probe.run(tool_name_mappings, _absent(ENVIRONMENT_MAIN, source=True))
    checks.append(Check(piece=f"tool tables ({Path(ENVIRONMENT_MAIN).name})",
                        ok=tables is not None, required=True,
                        status=f"{len(tables)} old tool names" if tables is not None else why,
                        how="" if tables is not None else source_hint))
    return checks


def server_status(status: Availability) -> str:
    """A server's state in a few words."""
    if status.ok:
        return "ready"
    parts = []
    if not status.installed:
        parts.append(f"install failed: {status.install_failure}" if status.install_failure
                     else "not installed")
    if status.missing_keys:
        parts.append(f"needs {', '.join(status.missing_keys)}")
    if status.no_network:
        parts.append("no network")
    return "; ".join(parts) or status.reason


def _server_how(t: ServerTemplate, status: Availability) -> str:
    if status.ok:
        return ""
    steps = []
    if status.install_failure:
        steps.append(f"`envfactory mcp-atlas install {t.name}` once the failure is "
                     "cured (its tasks are skipped until then)")
    elif not status.installed:
        steps.append(f"`envfactory mcp-atlas install {t.name}`")
    if status.missing_keys:
        steps.append(f"set {', '.join(status.missing_keys)}")
    if status.no_network:
        steps.append("a network connection")
    return "; ".join(steps)


def server_check(t: ServerTemplate) -> Check:
    """One server's row (never required: its tasks are skipped when it cannot start)."""
    status = availability(t.name)
    return Check(piece=f"server {t.name}", ok=status.ok, status=server_status(status),
                 how=_server_how(t, status))


def _group_check(label: str, group: list[ServerTemplate]) -> Check:
    states = [availability(t.name) for t in group]
    down = [s for s in states if not s.ok]
    causes = {"not installed": sum(not s.installed for s in down),
              "keys unset": sum(bool(s.missing_keys) for s in down),
              "no network": sum(s.no_network for s in down)}
    shown = "".join(f"; {cause} {n}" for cause, n in causes.items() if n)
    return Check(piece=f"{label} ({len(group)})", ok=not down,
                 status=f"{len(states) - len(down)} ready{shown}",
                 how="`envfactory mcp-atlas doctor --servers-only` lists each" if down else "")


def server_checks(every: bool) -> list[Check]:
    """Every server on its own (`every`), else the local ones on their own and the web
    and key servers as one row per group."""
    all_servers = templates()
    if every:
        return [server_check(t) for t in all_servers]
    local = [t for t in all_servers if t.name in OFFLINE]
    web = [t for t in all_servers if t.name not in OFFLINE and not t.key_vars]
    keyed = [t for t in all_servers if t.key_vars]
    return [*map(server_check, local), _group_check("web servers, keyless", web),
            _group_check("servers needing keys", keyed)]


def environment_checks() -> list[Check]:
    """Network and the git repositories some tasks read (neither required)."""
    online = network_available()
    checks = [Check(piece="network", ok=online, status="yes" if online else "no",
                    how="" if online else "the web servers' tasks are skipped offline "
                    "(MCP_ATLAS_NETWORK=1 says there is network)")]
    try:
        pins = repo_pins()
    except Exception as e:  # noqa: BLE001 - a diagnostic reports every failure
        return [*checks, Check(piece="git repositories", ok=False, status=_one_line(e),
                               how="needs the data/ files (above)")]
    cloned = [p for p in pins if (repos_dir() / p.name).is_dir()]
    checks.append(Check(piece="git repositories", ok=len(cloned) == len(pins),
                        status=f"{len(cloned)} of {len(pins)} in {repos_dir()}",
                        how="" if len(cloned) == len(pins) else
                        "`envfactory mcp-atlas install --repos` (needs GitHub)"))
    return checks


def judge_check(judge: str | None) -> Check:
    """The judge: resolved when named (provider known, package and key present); else
    a reminder that `inspect eval` needs it (the task refuses to start without it)."""
    how = f"`--model-role {JUDGE_ROLE}=<model>` on `inspect eval`"
    if judge is None:
        return Check(piece="judge", ok=True, status=f"not checked: a run needs {how} "
                     "(`--judge MODEL` checks one here)")
    try:
        judge_model(judge)
    except Exception as e:  # noqa: BLE001 - a diagnostic reports every failure
        return Check(piece=f"judge {judge}", ok=False, required=True, status=_one_line(e),
                     how=f"a model Inspect can reach; then {how}")
    return Check(piece=f"judge {judge}", ok=True, required=True, status="resolves", how=how)


def _causes(selection: Selection) -> str:
    counts = Counter(c for causes in selection.blocked_by.values() for c in causes)
    return ", ".join(f"{cause} x{n}" for cause, n in counts.most_common(4)) + (
        f", +{len(counts) - 4} more" if len(counts) > 4 else "")


def task_checks(data_dir: str | None, probe: _Probe, release_ok: bool) -> list[Check]:
    """The tasks and, when the release is there, what each subset would run."""
    how = (f"set MCP_ATLAS_TASKS (or --data-dir) to a local CSV/parquet/JSONL copy, or "
           f"run once online (the Hub dataset {HUB_DATASET}@{HUB_REVISION[:7]})")
    loaded, why = probe.run(lambda: load_tasks(data_dir), needs_download=False)
    if loaded is None:
        return [Check(piece="tasks", ok=False, required=True, status=why, how=how)]
    tasks, source = loaded
    checks = [_tasks_check(tasks, source)]
    if not release_ok:
        return checks
    for subset in SUBSETS:
        selection, why = probe.run(partial(select, tasks, subset), needs_download=False)
        default = subset == DEFAULT_SUBSET
        if selection is None:
            checks.append(Check(piece=f"subset {subset}", ok=False, required=default,
                                status=why))
            continue
        runnable = len(selection.runnable)
        checks.append(Check(
            piece=f"subset {subset}" + (" (the default)" if default else ""),
            ok=runnable > 0, required=default,
            status=f"{runnable} of {selection.population} runnable"
            + (f"; skipped for {_causes(selection)}" if selection.skipped else ""),
            how="" if not selection.skipped else
            "install or enable what the skipped tasks need (rows above); the log's "
            "mcp_atlas_skipped lists each with its reason"))
    return checks


def _tasks_check(tasks: list[AtlasTask], source: TaskSource) -> Check:
    return Check(piece="tasks", ok=bool(tasks), required=True,
                 status=f"{len(tasks)} from {source.origin} ({source.revision})",
                 how="" if tasks else "the task file holds no rows")


def check(*, data_dir: str | None = None, servers_only: bool = False,
          judge: str | None = None) -> Report:
    """Every check, in the order a run needs the pieces; never raises for a missing one.
    `servers_only`: the release files and every server on its own, no task report."""
    probe = _Probe()
    files = release_checks(probe)
    template, _data, _prompt, tables = files
    checks = [*files, Check(piece="servers folder", ok=True, status=str(servers_dir()))]
    if template.ok:
        checks += server_checks(every=servers_only)
        checks += environment_checks()
    if not servers_only:
        checks.append(judge_check(judge))
        checks += task_checks(data_dir, probe, template.ok and tables.ok)
    return Report(checks=checks)
