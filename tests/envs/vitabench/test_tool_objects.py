"""The tool objects offered to the agent are the official ones, exactly.

Ground truth: `tests/data/vitabench/official/tools/<set>_<zh|en>.json`, recorded from the
official release (96f3b85) the way `vita run` builds the agent's tools: a fresh process
per set and language, `run._clear_global_state()`, the set's environment built with the
language (`get_cross_environment` for the cross set), `environment.get_tools()`, and what
`llm_utils` sends, `[tool.openai_schema for tool in tools]`.

Derivation reads the release's description tables: the shared copy
(`../shared/data/vitabench/source`, `tests.shared_data.VITABENCH_SOURCE`) or an extracted
release tree in `VITABENCH_SOURCE_DIR` (`git -C <vitabench clone> archive 96f3b85 src |
tar -x -C <dir>`); without either those tests skip.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from envs.vitabench.base import VitaEnvironment
from envs.vitabench.delivery import DeliveryEnvironment
from envs.vitabench.release import LANGUAGES, Language
from tests.envs.vitabench.conftest import OFFICIAL
from tests.shared_data import VITABENCH_SOURCE as SOURCE
from tests.shared_data import needs_vitabench_source as needs_source

SETS = ("delivery", "instore", "ota", "cross")


def recorded(tool_set: str, language: str) -> list[dict[str, Any]]:
    return list(json.loads((OFFICIAL / "tools" / f"{tool_set}_{language}.json").read_text()))


def environment_class(tool_set: str) -> type[VitaEnvironment]:
    """The port's environment class of a set, wherever its module defines it."""
    for module in ("envs.vitabench.delivery", "envs.vitabench.instore", "envs.vitabench.ota",
                   "envs.vitabench.cross"):
        try:
            loaded = importlib.import_module(module)
        except ImportError:
            continue
        for value in vars(loaded).values():
            if (isinstance(value, type) and issubclass(value, VitaEnvironment)
                    and value.__dict__.get("tool_set") == tool_set):
                return value
    pytest.skip(f"no environment class with tool_set={tool_set!r} yet")


def test_the_recordings_have_upstreams_tool_counts() -> None:
    counts = {s: [len(recorded(s, lang)) for lang in LANGUAGES] for s in SETS}
    assert counts == {"delivery": [20, 20], "instore": [24, 24], "ota": [38, 38],
                      "cross": [66, 66]}


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_cross_set_is_the_union_of_the_domains(language: str) -> None:
    """Upstream's merge keeps each tool object as its domain builds it: the shared
    toolkit first, then delivery's, instore's and ota's own tools."""
    by_name: dict[str, Any] = {}
    for tool_set in ("delivery", "instore", "ota"):
        for obj in recorded(tool_set, language):
            by_name.setdefault(obj["function"]["name"], obj)
    cross = recorded("cross", language)
    assert {o["function"]["name"]: o for o in cross} == by_name
    toolkit = [o["function"]["name"] for o in recorded("delivery", language)][12:]
    assert [o["function"]["name"] for o in cross][:8] == toolkit


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_environment_offers_the_recorded_objects(vita_data: Path,
                                                     language: Language) -> None:
    env = DeliveryEnvironment({"stores": {}, "orders": {}}, language)
    assert env.tool_objects() == recorded("delivery", language)
    specs = env.tools()
    assert [s.name for s in specs] == [o["function"]["name"] for o in recorded("delivery",
                                                                                language)]
    assert {s.name for s in specs if s.write} == {
        "create_delivery_order", "pay_delivery_order", "cancel_delivery_order",
        "modify_delivery_order"}
    assert specs[0].description == recorded("delivery", language)[0]["function"]["description"]


@needs_source
@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("tool_set", SETS)
def test_derived_from_the_release_tables_equals_the_recording(
        tool_set: str, language: Language, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VITABENCH_SOURCE_DIR", str(SOURCE))
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path))
    monkeypatch.delenv("VITABENCH_DATA_DIR", raising=False)
    cls = environment_class(tool_set)
    assert cls.derive_tool_objects(language) == recorded(tool_set, language)


@needs_source
def test_without_a_data_file_the_objects_are_derived_and_cached(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VITABENCH_SOURCE_DIR", str(SOURCE))
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path))
    monkeypatch.delenv("VITABENCH_DATA_DIR", raising=False)
    assert DeliveryEnvironment.official_tool_objects("en") == recorded("delivery", "en")
    cached = tmp_path / "vitabench" / "2025-11" / "tools" / "delivery_en.json"
    assert json.loads(cached.read_text()) == recorded("delivery", "en")


def test_without_data_or_source_the_error_says_where_to_look(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VITABENCH_SOURCE_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("VITABENCH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ENVFACTORY_CACHE", str(tmp_path / "cache"))
    with pytest.raises(FileNotFoundError, match="VITABENCH_SOURCE_DIR"):
        DeliveryEnvironment.official_tool_objects("zh")
