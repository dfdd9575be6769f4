"""The reported row -> released checkpoint mapping (issue 27 §2).

Expected ids are the ones the authors' own pages name (checked by hand, cited in
`leaderboard/checkpoints.json`): the EnvFactory README's release table, EnvScaler's README
model table, AWM's README resources table, and the Qwen3 model pages.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leaderboard.baselines import BASELINES_FILE, load_baselines
from leaderboard.checkpoints import CHECKPOINTS_FILE, load_checkpoints, released, reported_row_of

#: (system, size) -> Hub id, as the authors' pages name them; None: no public weights
EXPECTED = {
    ("Qwen3", "1.7B"): "Qwen/Qwen3-1.7B", ("Qwen3", "4B"): "Qwen/Qwen3-4B",
    ("Qwen3", "8B"): "Qwen/Qwen3-8B",
    ("AWM", "4B"): "Snowflake/Arctic-AWM-4B", ("AWM", "8B"): "Snowflake/Arctic-AWM-8B",
    ("EnvScaler", "1.7B"): "XXHStudyHard/EnvScaler-Qwen3-1.7B",
    ("EnvScaler", "4B"): "XXHStudyHard/EnvScaler-Qwen3-4B",
    ("EnvScaler", "8B"): "XXHStudyHard/EnvScaler-Qwen3-8B",
    ("EnvFactory", "1.7B"): "LARK-Lab/EnvFactory-1.7B",
    ("EnvFactory", "4B"): "LARK-Lab/EnvFactory-4B", ("EnvFactory", "8B"): "LARK-Lab/EnvFactory-8B",
    ("EnvFactory (SFT only)", "1.7B"): None, ("EnvFactory (SFT only)", "4B"): None,
    ("EnvFactory (SFT only)", "8B"): None,
}


def test_every_reported_row_has_its_checkpoint() -> None:
    data = load_checkpoints()
    got = {(e.system, e.size): e.hub_id for e in data.checkpoints}
    assert got == EXPECTED
    rows = {(r.system, r.size) for r in load_baselines().rows}
    assert set(got) == rows
    for entry in data.checkpoints:
        assert (entry.source is not None) == (entry.hub_id is not None)
        if entry.hub_id is not None:
            assert f"huggingface.co/{entry.hub_id}" in (entry.source or "")


@pytest.mark.parametrize("name", ["envfactory-4b", "EnvFactory 4B", "reported:EnvFactory 4B",
                                  "  ENVFACTORY-4B "])
def test_released_by_id_or_label(name: str) -> None:
    entry = released(name)
    assert (entry.hub_id, entry.revision, entry.reported_key) == (
        "LARK-Lab/EnvFactory-4B", None, "reported:EnvFactory 4B")


def test_released_refuses_unknown_and_unpublished_rows() -> None:
    with pytest.raises(ValueError, match=r"no reported row 'envfactory-14b'.*envfactory-4b"):
        released("envfactory-14b")
    with pytest.raises(ValueError, match="envfactory-sft-4b.*no public checkpoint"):
        released("envfactory-sft-4b")


def test_reported_row_of_a_hub_id() -> None:
    entry = reported_row_of("snowflake/arctic-awm-8b")
    assert entry is not None and entry.reported_key == "reported:AWM 8B"
    assert reported_row_of("Snowflake/Arctic-AWM-14B") is None  # released, but no paper row


def _write(tmp_path: Path, edit: dict[str, object], drop: int | None = None) -> Path:
    data = json.loads(CHECKPOINTS_FILE.read_text(encoding="utf-8"))
    if drop is not None:
        data["checkpoints"].pop(drop)
    data["checkpoints"][0].update(edit)
    path = tmp_path / "checkpoints.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(("edit", "drop", "message"), [
    ({"hub_id": "not an id"}, None, r"checkpoints\[0\] \(qwen3-1.7b\): hub_id 'not an id'"),
    ({"revision": "main"}, None, "revision 'main' is not a 40-hex commit"),
    ({"source": None}, None, "has no source"),
    ({"hub_id": None, "source": None, "note": ""}, None, "hub_id is null without a note"),
    ({"size": "32B"}, None, "'Qwen3 32B' is no row of"),
    ({"row": "qwen3-4b"}, None, "row id used twice"),
    ({}, 5, r"no entry for the reported row\(s\) \['reported:EnvScaler 1.7B'\]"),
])
def test_bad_files_are_named(tmp_path: Path, edit: dict[str, object], drop: int | None,
                             message: str) -> None:
    path = _write(tmp_path, edit, drop)
    with pytest.raises(ValueError, match=message):
        load_checkpoints(path, BASELINES_FILE)
