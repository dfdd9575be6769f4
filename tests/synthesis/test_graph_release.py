"""The tool graph over the EnvFactory release's executable servers (`release/<Name>`).

The executable servers' wrappers return a bare `dict`, so their result schemas are what
their docstrings' `Returns:` sections declare (`declared_output_schema`). Expected values
are read by hand from the release's `envs/tools/Airline.py` at eff3b22 (its ten
`@mcp.tool()` wrappers besides load/save and their `Args:`/`Returns:` sections) or from
docstrings written here.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from synthesis.graph import ToolGraph, build_graph, declared_output_schema, specs_from_registry
from tests.shared_data import SHARED_DATA

RELEASE = SHARED_DATA / "envfactory_release"
needs_release = pytest.mark.skipif(not (RELEASE / "envs" / "tools").is_dir(),
                                   reason=f"no EnvFactory release copy at {RELEASE}")

AIRLINE_TOOLS = ["book_reservation", "cancel_reservation", "get_flight_status",
                 "get_reservation_details", "get_user_details", "list_airports",
                 "search_flights", "update_reservation_baggage",
                 "update_reservation_flights", "update_reservation_passengers"]


class NameEmbedder:
    """One axis per parameter name (the text before " ("): cosine 1 for equal names, 0
    otherwise, so every edge can be checked by reading the names."""

    name = "names"
    threshold = 0.5

    def __init__(self) -> None:
        self.axes: dict[str, int] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 4096), dtype=np.float32)
        for row, text in enumerate(texts):
            axis = self.axes.setdefault(text.split(" (")[0].split(".")[-1], len(self.axes))
            assert axis < out.shape[1], "more names than axes"
            out[row, axis] = 1.0
        return out


# -- the docstring's Returns: section ------------------------------------------------------

def test_declared_output_schema_reads_typed_fields_and_stops_at_the_next_section() -> None:
    doc = """Create a reservation.

Args:
    user_id (str): The customer.

Returns:
    reservation_id (str): The new reservation ID.
    total_price (float): The total price
        charged, taxes included.
    seats (List[dict]): Seats held.
    note (Optional[str]): A remark.
    build (ChampionBuild): A model class.
    flags (bool, optional): Whether flagged.

Raises:
    ValueError: when the user is unknown."""
    assert declared_output_schema(doc) == {"type": "object", "properties": {
        "reservation_id": {"type": "string", "description": "The new reservation ID."},
        "total_price": {"type": "number",
                        "description": "The total price charged, taxes included."},
        "seats": {"type": "array", "description": "Seats held."},
        "note": {"type": "string", "description": "A remark."},
        "build": {"description": "A model class."},
        "flags": {"type": "boolean", "description": "Whether flagged."}}}


def test_declared_output_schema_untyped_bulleted_and_unnamed_results() -> None:
    bullets = "Find games.\n\nReturns:\n    Properties:\n    - app_id (int): The id.\n" \
              "    studies: Matching studies.\n"
    assert declared_output_schema(bullets) == {"type": "object", "properties": {
        "app_id": {"type": "integer", "description": "The id."},
        "studies": {"description": "Matching studies."}}}
    # no field named: the whole result, which the graph turns into one `result` parameter
    assert declared_output_schema("Price.\n\nReturns:\n    Cryptocurrency price data.\n") == {
        "description": "Cryptocurrency price data."}
    assert declared_output_schema("Price.\n\nArgs:\n    coin (str): Which.\n") is None


# -- the graph over release servers --------------------------------------------------------

@pytest.fixture
def release_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A release-shaped root with two of the release's servers (copied at run time),
    and no `envgen verify` record."""
    root = tmp_path / "release"
    for folder, pattern in (("tools", "{}.py"), ("metadata", "{}_metadata.json"),
                            ("intermediate", "{}_checkpoint.json")):
        (root / "envs" / folder).mkdir(parents=True)
        for name in ("Airline", "HotelBooking"):
            source = RELEASE / "envs" / folder / pattern.format(name)
            if source.is_file():
                shutil.copy(source, root / "envs" / folder / source.name)
    monkeypatch.setenv("ENVFACTORY_RELEASE_DIR", str(root))
    monkeypatch.setenv("ENVFACTORY_RELEASE_VERIFY_DIR", str(tmp_path / "no-verify-record"))
    return root


@needs_release
def test_release_graph_has_the_servers_tools_inputs_and_declared_outputs(
        release_root: Path) -> None:
    graph = build_graph(specs_from_registry(["release/Airline"]), NameEmbedder())
    # model-facing ids are the release's own "Server-tool"; the env is the catalogue name
    assert graph.tools() == [f"Airline-{t}" for t in AIRLINE_TOOLS]
    assert graph.environments() == ["release/Airline"]
    assert graph.inputs("Airline-get_flight_status") == [
        "Airline-get_flight_status:in:date", "Airline-get_flight_status:in:flight_number"]
    assert graph.outputs("Airline-get_reservation_details") == [
        f"Airline-get_reservation_details:out:{p}" for p in
        ("flights", "passengers", "reservation_id", "status", "total_price", "user_id")]
    assert graph.g.nodes["Airline-get_reservation_details:out:total_price"]["type"] == "number"
    # book_reservation returns reservation_id, status, total_price; the five tools taking a
    # reservation_id can follow it (no Airline tool takes a status or a total_price)
    assert graph.successors("Airline-book_reservation") == [
        "Airline-cancel_reservation", "Airline-get_reservation_details",
        "Airline-update_reservation_baggage", "Airline-update_reservation_flights",
        "Airline-update_reservation_passengers"]
    # get_user_details returns user_id (among others) and book_reservation takes one
    assert "Airline-book_reservation" in graph.successors("Airline-get_user_details")


@needs_release
def test_synth_graph_envs_release_is_the_release_set(release_root: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import typer
    from typer.testing import CliRunner

    from envfactory.cli import synth_graph as graph_cli

    monkeypatch.setattr(graph_cli, "get_embedder", lambda spec, threshold: NameEmbedder())
    app = typer.Typer()
    app.command("graph")(graph_cli.graph)
    app.command("other")(lambda: None)  # two commands: typer keeps "graph" as a name

    # no verify record: every listable server, and the console says so
    result = CliRunner().invoke(app, ["graph", "--envs", "release", "--out-dir",
                                      str(tmp_path / "all")])
    assert result.exit_code == 0, result.output
    assert "release: 2 environments (no `envgen verify` record" in result.output
    assert "build time:" in result.output
    saved = ToolGraph.load(tmp_path / "all" / "graph.json")
    assert saved.environments() == ["release/Airline", "release/HotelBooking"]
    stats = json.loads((tmp_path / "all" / "stats.json").read_text())
    assert stats["tools"] == len(saved.tools()) and "sources_s" in stats["timing"]

    # a verify record: only what it passed
    record = tmp_path / "verify"
    record.mkdir()
    (record / "summary.json").write_text(json.dumps({"environments": {
        "release/Airline": {"verdict": "failed"},
        "release/HotelBooking": {"verdict": "passed"}}}))
    monkeypatch.setenv("ENVFACTORY_RELEASE_VERIFY_DIR", str(record))
    result = CliRunner().invoke(app, ["graph", "--envs", "release", "--out-dir",
                                      str(tmp_path / "verified")])
    assert result.exit_code == 0, result.output
    assert "release: 1 environments (those `envgen verify` passed)" in result.output
    assert ToolGraph.load(tmp_path / "verified" / "graph.json").environments() == [
        "release/HotelBooking"]

    # named ones go through the registry too, verified or not
    result = CliRunner().invoke(app, ["graph", "--envs", "release/Airline", "--out-dir",
                                      str(tmp_path / "named")])
    assert result.exit_code == 0, result.output
    assert ToolGraph.load(tmp_path / "named" / "graph.json").environments() == [
        "release/Airline"]


@needs_release
def test_all_takes_the_release_set_with_declared_outputs(release_root: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    from rich.console import Console

    from envfactory.cli.synth_graph import _registry_sources

    record = tmp_path / "verify-all"
    record.mkdir()
    (record / "summary.json").write_text(json.dumps({"environments": {
        "release/HotelBooking": {"verdict": "passed"}}}))
    monkeypatch.setenv("ENVFACTORY_RELEASE_VERIFY_DIR", str(record))
    console = Console(record=True, width=200)
    sources = _registry_sources(["all"], console)
    assert [n for n in sources if n.startswith("release/")] == ["release/HotelBooking"]
    assert "left out 1 release environments outside the release set" in console.export_text()
    # the release tools carry their docstrings' result schemas here too
    assert all(s.output_schema is not None for s in sources["release/HotelBooking"]
               if "Returns:" in s.description)


def test_synth_graph_envs_release_without_a_release_is_a_usage_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import typer
    from typer.testing import CliRunner

    from envfactory.cli import synth_graph as graph_cli

    monkeypatch.delenv("ENVFACTORY_RELEASE_DIR", raising=False)
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("ENVFACTORY_RELEASE_VERIFY_DIR", str(tmp_path / "none"))
    app = typer.Typer()
    app.command("graph")(graph_cli.graph)
    app.command("other")(lambda: None)
    result = CliRunner().invoke(app, ["graph", "--envs", "release", "--out-dir",
                                      str(tmp_path / "g")])
    assert result.exit_code == 2
    assert "no EnvFactory release here" in result.output
    assert not (tmp_path / "g" / "graph.json").exists()
