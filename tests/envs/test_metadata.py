"""EnvFactory metadata files load into tool specs (shared test data: 88 files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envs.metadata import load_metadata, load_metadata_dir
from tests.shared_data import SHARED_DATA

METADATA = SHARED_DATA / "envfactory_metadata"


@pytest.mark.skipif(not METADATA.is_dir(), reason=f"test data not found at {METADATA}")
def test_all_official_metadata_files_load() -> None:
    envs = load_metadata_dir(METADATA)
    assert len(envs) == 88
    assert sum(len(e.tools) for e in envs) == 683
    for env in envs:
        for tool in env.tools:
            assert tool.input_schema.get("type") == "object", (env.class_name, tool.name)


def test_errors_name_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "X_metadata.json"
    bad.write_text(json.dumps({"class_name": "X", "description": "d", "tools": [{"name": 1}]}))
    with pytest.raises(ValueError, match=r"X_metadata.json: field 'tools.0.name'"):
        load_metadata(bad)
    bad.write_text("{")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_metadata(bad)
