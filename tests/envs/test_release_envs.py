"""The EnvFactory release's servers as `release/<Name>` environments (`envs.release_envs`).

Most tests run on `tests/data/release_fixture`: hand-written files in the release's
format (a release-shaped root `envs/{tools,intermediate,metadata}`), so the logic is
tested without `../shared`. `Library` is a well-formed server whose checkpoint has two
starting scenarios, one `validation_error` check, one entry without `expected_behavior`
and one "pass" scenario its own model refuses (copies -1); `Unparsable` does not parse,
`NoScenarioMethods` has no load/save class, `ImportFails` parses but imports a missing
module and has a checkpoint that is not JSON. Expected values are read off those files.
The last tests run on the shared copy of the release and skip without it; their figures
are the notes' (§5, §16) or counted here from the raw JSON.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
import tarfile
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from envs import registry
from envs.base import ErrorKind
from envs.names import qualify, split_name
from envs.release_envs import (
    PREFIX,
    ReleaseEnvError,
    create_release,
    get_release,
    list_release,
    release_root,
    release_set,
    verified_names,
    verify_record,
)
from envs.release_registry import ENVFACTORY
from envs.world import World
from tests.shared_data import SHARED_DATA

FIXTURE = Path(__file__).parents[1] / "data" / "release_fixture"
CHECKPOINT = FIXTURE / "envs" / "intermediate" / "Library_checkpoint.json"
SHARED_RELEASE = SHARED_DATA / "envfactory_release"
needs_release = pytest.mark.skipif(not (SHARED_RELEASE / "envs" / "tools").is_dir(),
                                   reason=f"EnvFactory release not found at {SHARED_RELEASE}")
runner = CliRunner()


@pytest.fixture
def fixture_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("ENVFACTORY_RELEASE_DIR", str(FIXTURE))
    monkeypatch.setenv("ENVFACTORY_RELEASE_VERIFY_DIR", str(tmp_path / "verify"))
    return FIXTURE


# --- listing -------------------------------------------------------------------------

def test_listing_reads_tools_without_importing_and_names_broken_files() -> None:
    before = set(sys.modules)
    entries = {e.name: e for e in list_release(FIXTURE)}
    assert sorted(entries) == ["ImportFails", "Library", "NoScenarioMethods", "Unparsable"]
    assert not [m for m in set(sys.modules) - before if "envfactory_import" in m
                or "missing_module" in m]  # nothing was imported
    library = entries["Library"]
    assert (library.tool_count, library.tools, library.write_count) == (
        2, ("borrow_book", "get_book"), 1)  # get_ is a read by the importer's rule
    assert library.problem is None and library.qualified == "release/Library"
    assert library.metadata == FIXTURE / "envs" / "metadata" / "Library_metadata.json"
    assert library.checkpoint == CHECKPOINT
    assert library.description() == "A small lending library: look books up and borrow copies."
    unparsable = entries["Unparsable"].problem
    assert unparsable is not None and unparsable.startswith(
        f"{FIXTURE / 'envs' / 'tools' / 'Unparsable.py'}: does not parse: SyntaxError")
    assert entries["NoScenarioMethods"].problem == (
        f"{FIXTURE / 'envs' / 'tools' / 'NoScenarioMethods.py'}: no class defines both "
        "load_scenario() and save_scenario()")
    # ImportFails parses: only importing it fails, and only when it is created
    assert entries["ImportFails"].problem is None and entries["ImportFails"].tool_count == 1
    assert entries["NoScenarioMethods"].checkpoint is None
    assert entries["NoScenarioMethods"].scenarios() == []
    assert entries["NoScenarioMethods"].llm_verdict() is None


def test_scenarios_with_expected_behaviour_and_one_line_per_malformed_entry() -> None:
    library = get_release("release/Library", FIXTURE)
    scenarios = library.scenarios()
    assert [(s.scenario_id, s.expected_behavior, s.complexity_level) for s in scenarios] == [
        ("scenario_001", "pass", "simple"), ("scenario_002", "pass", "boundary"),
        ("scenario_003", "validation_error", "boundary"), ("scenario_005", "pass", "complex")]
    assert scenarios[0].data == {"books": {"b1": {"book_id": "b1", "title": "Dune",
                                                  "copies": 2}},
                                 "current_time": "2026-01-01T09:00:00"}
    assert library.scenario_problems() == [
        f"{CHECKPOINT}: scenarios[3] (scenario_004): expected_behavior: Field required"]
    assert library.llm_verdict() is True  # the last round ("final"), not the first
    broken = get_release("ImportFails", FIXTURE)
    with pytest.raises(ReleaseEnvError, match=r"ImportFails_checkpoint\.json: not JSON"):
        broken.scenarios()


def test_checkpoints_are_read_again_when_they_change(tmp_path: Path) -> None:
    root = tmp_path / "release"
    shutil.copytree(FIXTURE, root)
    checkpoint = root / "envs" / "intermediate" / "Library_checkpoint.json"
    assert get_release("Library", root).scenarios()[0].description == "One book with two copies"
    document = json.loads(checkpoint.read_text())
    document["scenarios"][0]["description"] = "changed"
    document["scenarios"].append(document["scenarios"][0])  # a repeated id
    document["validation_results"] = {}
    checkpoint.write_text(json.dumps(document))
    stat = checkpoint.stat()
    os.utime(checkpoint, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    entry = get_release("Library", root)
    assert entry.scenarios()[0].description == "changed"
    assert entry.scenario_problems()[-1] == (
        f"{checkpoint}: scenarios[5]: scenario_id 'scenario_001' repeats an earlier one")
    assert entry.llm_verdict() is None


def test_a_server_that_cannot_be_read_is_its_own_entry_only(tmp_path: Path) -> None:
    root = tmp_path / "release"
    shutil.copytree(FIXTURE, root)
    (root / "envs" / "tools" / "Binary.py").write_bytes(b"\x00\x01 not python")
    entries = {e.name: e for e in list_release(root)}
    assert "does not parse" in str(entries["Binary"].problem)
    assert entries["Library"].problem is None  # the rest still listed


# --- starting states -----------------------------------------------------------------

def test_default_and_named_starting_states_through_the_servers_own_load_scenario() -> None:
    default = create_release("release/Library", FIXTURE)
    assert default.name == "release/Library"
    assert default.snapshot() == {"books": {}, "current_time": ""}  # the server's default
    one = create_release("release/Library@scenario_001", FIXTURE)
    other = create_release("release/Library@scenario_001", FIXTURE)
    assert one.call("borrow_book", {"book_id": "b1"}).content == {"book_id": "b1",
                                                                 "copies_left": 1}
    assert other.call("get_book", {"book_id": "b1"}).content["copies"] == 2  # isolated
    empty = create_release("Library@scenario_002", FIXTURE)
    refused = empty.call("borrow_book", {"book_id": "b2"})
    assert refused.error == "No copies of b2 left" and refused.kind is ErrorKind.FAILED


def test_a_failed_write_in_a_default_state_that_fails_its_own_model_changes_nothing() -> None:
    env = create_release("release/Library", FIXTURE)  # current_time "" breaks its pattern
    result = env.call("borrow_book", {"book_id": "zz"})
    assert (result.error, result.kind) == ("Book zz not found", ErrorKind.FAILED)
    assert env.snapshot() == {"books": {}, "current_time": ""}
    with pytest.raises(ValueError):
        env.restore({"books": {}, "current_time": "noon"})
    assert env.snapshot() == {"books": {}, "current_time": ""}  # a refused restore: as it was


def test_scenarios_that_cannot_start_are_refused_naming_the_checkpoint() -> None:
    with pytest.raises(ReleaseEnvError) as check:
        create_release("release/Library@scenario_003", FIXTURE)
    assert str(check.value) == (
        f"{CHECKPOINT}: scenario 'scenario_003' expects a validation error (it checks that "
        "the environment refuses it); it is not a starting state")
    with pytest.raises(ReleaseEnvError) as invalid:
        create_release("release/Library@scenario_005", FIXTURE)
    assert str(invalid.value) == (
        f"{CHECKPOINT}: scenario 'scenario_005' is refused by Library.py's load_scenario: "
        "books.b3.copies: Input should be greater than or equal to 0")
    with pytest.raises(ReleaseEnvError, match="no scenario 'scenario_004' .known: "
                       "scenario_001, scenario_002, scenario_003, scenario_005"):
        create_release("release/Library@scenario_004", FIXTURE)  # malformed: not listed
    with pytest.raises(ReleaseEnvError, match=r"importing it failed: ModuleNotFoundError"):
        create_release("release/ImportFails", FIXTURE)
    with pytest.raises(ReleaseEnvError, match="does not parse"):
        create_release("release/Unparsable", FIXTURE)
    with pytest.raises(ReleaseEnvError, match=r"envs/tools: no server Nope\.py"):
        create_release("release/Nope", FIXTURE)
    with pytest.raises(ReleaseEnvError, match=r"no server \.\./Library\.py"):
        get_release("release/../Library", FIXTURE)


# --- names the model sees ------------------------------------------------------------

def test_release_tools_are_named_as_the_releases_datasets_name_them() -> None:
    env = create_release("release/Library@scenario_001", FIXTURE)
    world = World(envs={"release/Library": env})
    assert world.tool_names() == ["Library-borrow_book", "Library-get_book"]
    assert world.call_qualified("Library-get_book", {"book_id": "b1"}).content["title"] == "Dune"
    assert qualify("release/Library", "get_book") == "Library-get_book"
    assert qualify("release/Library@scenario_001", "get_book") == "Library-get_book"
    assert qualify("calendar", "add_event") == "calendar-add_event"  # ours unchanged
    assert split_name("Library-get_book", {"release/Library": env}) == ("release/Library",
                                                                        "get_book")
    assert split_name("release/Library-get_book", {"release/Library": env}) is None
    unknown = world.call_qualified("release/Library-get_book", {})
    assert unknown.kind is ErrorKind.UNKNOWN_TOOL and "Library-get_book" in str(unknown.error)


# --- the registry --------------------------------------------------------------------

def test_the_registry_lists_and_resolves_release_environments(fixture_root: Path) -> None:
    names = {e.name for e in registry.all_entries()}
    assert {f"{PREFIX}{n}" for n in ("ImportFails", "Library", "NoScenarioMethods",
                                     "Unparsable")} <= names
    entry = registry.get("release/Library")
    assert (entry.source, entry.description) == (
        "EnvFactory release eff3b22", "A small lending library: look books up and borrow copies.")
    assert [s.name for s in entry.specs()] == ["borrow_book", "get_book"]
    assert registry.benchmark_of("release/Library") is None  # training data, not a benchmark
    started = registry.get("release/Library@scenario_001")
    assert started.factory().snapshot()["books"]["b1"]["copies"] == 2
    world = World(["release/Library@scenario_001"])
    assert world.tool_names() == ["Library-borrow_book", "Library-get_book"]
    with pytest.raises(KeyError, match="expects a validation error"):
        registry.get("release/Library@scenario_003")
    with pytest.raises(KeyError, match="does not parse"):
        registry.get("release/Unparsable")
    with pytest.raises(KeyError, match=r"no server Nope\.py"):
        registry.get("release/Nope")


def test_without_a_release_listing_shows_none_and_a_name_tries_to_fetch_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ENVFACTORY_RELEASE_DIR", raising=False)
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path))
    monkeypatch.setenv("ENVFACTORY_GITHUB_ARCHIVE", (tmp_path / "offline").as_uri())
    assert release_root() is None and list_release() == []  # listing fetches nothing
    assert not [e for e in registry.all_entries() if e.name.startswith(PREFIX)]
    assert not (tmp_path / "envfactory_release").exists()
    with pytest.raises(KeyError, match="no EnvFactory release here and it could not be "
                       "fetched .cannot download EnvFactory archive at eff3b22 .*set "
                       "ENVFACTORY_RELEASE_DIR"):
        registry.get("release/Airline")


# --- verified ------------------------------------------------------------------------

def _record(folder: Path, verdicts: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    criteria = {"interface": True, "executability": True, "behaviour": True, "state": True}
    (folder / "summary.json").write_text(json.dumps({"environments": {
        name: {"verdict": v, "criteria": criteria, "report": f"{name}/report.json"}
        for name, v in verdicts.items()}}))


def test_verified_names_and_the_release_set(fixture_root: Path, tmp_path: Path) -> None:
    verify = tmp_path / "verify"
    assert verified_names() is None and verify_record() is None
    # nothing recorded: every entry that can be read
    assert release_set() == ["release/ImportFails", "release/Library"]
    _record(verify, {"release/Library": "passed", "release/ImportFails": "failed"})
    assert verified_names() == {"release/Library"}
    assert verify_record() == {"release/Library": "passed", "release/ImportFails": "failed"}
    assert release_set() == ["release/Library"]
    assert release_set(verified_only=False) == ["release/ImportFails", "release/Library"]
    (verify / "summary.json").write_text(json.dumps(
        {"environments": {"release/Library": {"verdict": "maybe"}}}))
    with pytest.raises(ReleaseEnvError, match=r"summary\.json: environments\.release/Library"
                       r"\.verdict: Input should be 'passed' or 'failed'"):
        verified_names()


# --- fetched on first use ------------------------------------------------------------

def _archive(path: Path, *, folders: tuple[str, ...] = ("tools", "intermediate", "metadata"),
             extra: dict[str, bytes] | None = None) -> None:
    """A GitHub-style archive of the fixture (`EnvFactory-eff3b22/envs/...`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for folder in folders:
            tar.add(FIXTURE / "envs" / folder, arcname=f"EnvFactory-eff3b22/envs/{folder}")
        for name, body in (extra or {}).items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    path.write_bytes(buffer.getvalue())


@pytest.fixture
def archive_mirror(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """`file://` stands in for codeload.github.com; returns where the archive goes."""
    monkeypatch.delenv("ENVFACTORY_RELEASE_DIR", raising=False)
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("ENVFACTORY_GITHUB_ARCHIVE", (tmp_path / "mirror").as_uri())
    monkeypatch.setattr("envs.downloads.time.sleep", lambda seconds: None)
    return tmp_path / "mirror" / "LARK-AI-Lab" / "EnvFactory" / "tar.gz" / "eff3b22"


def test_the_folders_are_fetched_from_the_commits_archive_on_first_use(
        archive_mirror: Path, tmp_path: Path) -> None:
    _archive(archive_mirror, extra={"EnvFactory-eff3b22/envs/tools/../../escape.py": b"x",
                                    "EnvFactory-eff3b22/src/other.py": b"y"})
    cache = tmp_path / "cache" / "envfactory_release" / "eff3b22"
    assert release_root() is None  # not fetched by asking
    assert release_root(fetch=True) == cache
    assert sorted(e.name for e in list_release()) == [
        "ImportFails", "Library", "NoScenarioMethods", "Unparsable"]
    assert not (tmp_path / "cache" / "envfactory_release" / "escape.py").exists()
    assert not (cache / "src").exists() and not list(cache.glob("*.tar.gz"))
    assert ENVFACTORY.local_status().state == "partial"  # the six single files are separate
    archive_mirror.unlink()  # offline from now on
    assert ENVFACTORY.path("envs/metadata/Library_metadata.json").is_file()
    assert create_release("release/Library@scenario_001").snapshot()["books"]["b1"]["copies"] == 2


def test_a_file_of_the_folders_fetches_them_all(archive_mirror: Path) -> None:
    _archive(archive_mirror)
    path = ENVFACTORY.path("envs/tools/Library.py")
    assert path.is_file() and ENVFACTORY.folders_present()
    with pytest.raises(FileNotFoundError, match=r"envs/tools/Nope\.py is not in "
                       r"LARK-AI-Lab/EnvFactory@eff3b22"):
        ENVFACTORY.path("envs/tools/Nope.py")


def test_a_broken_archive_is_one_error_and_leaves_nothing_half_there(
        archive_mirror: Path, tmp_path: Path) -> None:
    archive_mirror.parent.mkdir(parents=True)
    archive_mirror.write_bytes(b"not a tarball")
    with pytest.raises(FileNotFoundError, match="not a readable tar.gz archive of "
                       "LARK-AI-Lab/EnvFactory@eff3b22"):
        release_root(fetch=True)
    assert not ENVFACTORY.folders_present()
    _archive(archive_mirror, folders=("tools", "intermediate"))
    with pytest.raises(FileNotFoundError, match="the archive has no envs/metadata/"):
        release_root(fetch=True)
    assert not ENVFACTORY.folders_present()
    assert not (tmp_path / "cache" / "envfactory_release" / "eff3b22" / "envs").exists()
    archive_mirror.unlink()
    with pytest.raises(FileNotFoundError, match="cannot download EnvFactory archive at eff3b22"
                       ".*set ENVFACTORY_RELEASE_DIR to a checkout"):
        release_root(fetch=True)
    _archive(archive_mirror)  # the mirror comes back: a retry completes
    assert release_root(fetch=True) is not None


# --- the CLI -------------------------------------------------------------------------

def _rows(output: str) -> dict[str, list[str]]:
    return {cells[0]: cells for line in output.splitlines() if line.count("│") >= 5
            for cells in [[c.strip() for c in line.split("│")[1:-1]]] if cells[0]}


def test_env_list_shows_each_release_entry_and_each_problem_in_one_line(
        fixture_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    result = runner.invoke(app, ["env", "list"])
    assert result.exit_code == 0, result.output
    rows = _rows(result.output)
    assert rows["release/Library"] == ["release/Library", "2", "1", "EnvFactory release eff3b22",
                                       "3 start, 1 check (1 malformed)"]
    assert rows["release/ImportFails"][4] == "unreadable"
    assert rows["release/Unparsable"][1:4] == ["-", "-", "EnvFactory release eff3b22 (broken)"]
    problems = [x for x in result.output.splitlines() if x.startswith("problem: ")]
    assert len(problems) == 4 and any("Unparsable.py: does not parse" in p for p in problems)
    assert ("4 release environments (2 broken): 3 tools, 3 starting scenarios, 1 validation "
            "checks") in result.output
    assert "verified" not in result.output  # no verify record, no column
    _record(Path(os.environ["ENVFACTORY_RELEASE_VERIFY_DIR"]), {"release/Library": "passed"})
    rows = _rows(runner.invoke(app, ["env", "list"]).output)
    assert rows["release/Library"][5] == "passed" and rows["release/ImportFails"][5] == "-"


def test_env_show_lists_scenarios_and_the_releases_verdict(
        fixture_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    result = runner.invoke(app, ["env", "show", "release/Library"])
    assert result.exit_code == 0, result.output
    assert "the release's LLM validation (last round): all scenarios passed" in result.output
    assert "envgen verify: not run" in result.output
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[1:-1]]
            for line in result.output.splitlines() if line.count("│") == 5}
    assert rows["release/Library@scenario_001"][1:3] == ["simple", "pass"]
    assert rows["scenario_003 (a check)"][2] == "validation_error"
    assert "scenarios[3] (scenario_004): expected_behavior: Field required" in result.output
    as_json = runner.invoke(app, ["env", "show", "release/Library", "--json"])
    assert [s["name"] for s in json.loads(as_json.output)] == ["borrow_book", "get_book"]
    refused = runner.invoke(app, ["env", "show", "release/Library@scenario_003"])
    assert refused.exit_code == 1 and "expects a validation error" in refused.output
    typo = runner.invoke(app, ["env", "show", "release/Librar"])
    assert typo.exit_code == 1 and "did you mean release/Library?" in typo.output


# --- the shared copy of the release --------------------------------------------------

@needs_release
def test_the_shared_release_lists_86_servers_673_tools_and_their_scenarios() -> None:
    entries = list_release(SHARED_RELEASE)
    assert len(entries) == 86 and not [e.problem for e in entries if e.problem]
    assert sum(e.tool_count for e in entries) == 673  # notes §5 and §16
    # the last round's all_passed per server: notes §16 (59 true, 13 false, 14 without)
    assert Counter(e.llm_verdict() for e in entries) == {True: 59, False: 13, None: 14}
    raw = 0
    for path in (SHARED_RELEASE / "envs" / "intermediate").glob("*_checkpoint.json"):
        if (SHARED_RELEASE / "envs" / "tools" / path.name.replace("_checkpoint.json",
                                                                  ".py")).is_file():
            raw += len(json.loads(path.read_text())["scenarios"])
    assert sum(len(e.scenarios()) for e in entries) == raw
    assert not [p for e in entries for p in e.scenario_problems()]


@needs_release
def test_a_shared_release_scenario_starts_and_names_tools_by_file_stem() -> None:
    airline = get_release("Airline", SHARED_RELEASE)
    first = airline.scenarios()[0]
    env = create_release(f"release/Airline@{first.scenario_id}", SHARED_RELEASE)
    assert set(env.snapshot()) == set(first.data)
    assert len(env.tools()) == airline.tool_count
    # Calendar's FastMCP object is "CalendarAPI"; the release's config and datasets say
    # "Calendar" (configs/mcp_server.json keys are the file stems)
    config = json.loads((SHARED_RELEASE / "configs" / "mcp_server.json").read_text())
    assert config["mcpServers"]["Calendar"]["tool_path"] == "envs/tools/Calendar.py"
    calendar = World(envs={"release/Calendar": create_release("release/Calendar",
                                                              SHARED_RELEASE)})
    assert all(n.startswith("Calendar-") for n in calendar.tool_names())


# --- the tool backends ---------------------------------------------------------------

@pytest.mark.slow
async def test_in_process_and_mcp_backends_offer_and_run_the_same_release_tools(
        fixture_root: Path) -> None:
    from harness.tool_backends import InProcessBackend, McpBackend

    state = get_release("Library", FIXTURE).scenario("scenario_001").data
    inprocess = InProcessBackend(["release/Library"], {"release/Library": state})
    async with McpBackend.for_environments(["release/Library"],
                                           {"release/Library": state}) as mcp:
        for backend in (inprocess, mcp):
            assert sorted(t.name for t in backend.tools()) == ["Library-borrow_book",
                                                               "Library-get_book"]
        borrowed = [await b.call("Library-borrow_book", {"book_id": "b1"})
                    for b in (inprocess, mcp)]
        assert [o.ok for o in borrowed] == [True, True]
        assert json.loads(borrowed[0].text) == json.loads(borrowed[1].text) == {
            "book_id": "b1", "copies_left": 1}
        missing = [await b.call("Library-borrow_book", {"book_id": "zz"})
                   for b in (inprocess, mcp)]
        assert not missing[0].ok and missing[0].text == missing[1].text
        assert await inprocess.snapshot() == await mcp.snapshot()
        assert list(await mcp.snapshot()) == ["release/Library"]
