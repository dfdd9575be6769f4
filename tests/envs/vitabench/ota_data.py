"""OTA task databases for tests and benchmarks.

`fixture_environment(language)` is the hand-made OTA task environment of
`tests/data/vitabench/official/ota_environment.json` (no OTA task file is in the shared
snapshot), or its Chinese twin `ota_environment_zh.json` (every text translated, ids and
numbers kept): six hotels, three attractions, four flights and four trains in Hangzhou,
Shanghai and Beijing over 2025-07-19..21, five orders of the user (paid train, hotel and
flight orders, an unpaid attraction order, a cancelled hotel order), weather, locations and
history, in the field shapes upstream's `OTADB` loads and with orders shaped as the shipped
tasks' (products as plain dicts).

`synthetic_ota_environment(n_hotels)` scales it up, deterministically
(`envs.vitabench.synthetic.scaled_ota_environment` on the English fixture): the fixture's
attractions, flights, trains and non-hotel orders plus `n_hotels` hotels built from its
hotels, each with `rooms` room types over the fixture's three dates.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from envs.vitabench.synthetic import scaled_ota_environment

OFFICIAL = Path(__file__).resolve().parents[2] / "data" / "vitabench" / "official"


@cache
def _fixture_text(language: str) -> str:
    name = "ota_environment.json" if language == "en" else f"ota_environment_{language}.json"
    return (OFFICIAL / name).read_text(encoding="utf-8")


def fixture_environment(language: str = "en") -> dict[str, Any]:
    """A fresh copy of the hand-made OTA task environment ("en" or "zh")."""
    loaded: dict[str, Any] = json.loads(_fixture_text(language))
    return loaded


def synthetic_ota_environment(n_hotels: int, rooms: int = 7, seed: int = 0) -> dict[str, Any]:
    """The fixture environment with `n_hotels` generated hotels in place of its six."""
    return scaled_ota_environment(fixture_environment(), n_hotels, rooms, seed)
