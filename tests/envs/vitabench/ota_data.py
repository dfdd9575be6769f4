"""OTA task databases for tests and benchmarks.

`fixture_environment(language)` is the hand-made OTA task environment of
`tests/data/vitabench/official/ota_environment.json` (no OTA task file is in the shared
snapshot), or its Chinese twin `ota_environment_zh.json` (every text translated, ids and
numbers kept): six hotels, three attractions, four flights and four trains in Hangzhou,
Shanghai and Beijing over 2025-07-19..21, five orders of the user (paid train, hotel and
flight orders, an unpaid attraction order, a cancelled hotel order), weather, locations and
history, in the field shapes upstream's `OTADB` loads and with orders shaped as the shipped
tasks' (products as plain dicts).

`synthetic_ota_environment(n_hotels)` scales it up, deterministically, for the search
latency benchmark: the fixture's attractions, flights, trains and orders plus `n_hotels`
hotels built from its hotels (names, tags and cities varied, coordinates jittered), each
with `rooms` room types over the fixture's three dates. The largest OTA domain of the
2026 README counts 1,437 providers and 9,693 products over its 100 tasks.
"""

from __future__ import annotations

import copy
import json
import random
from functools import cache
from pathlib import Path
from typing import Any

OFFICIAL = Path(__file__).resolve().parents[2] / "data" / "vitabench" / "official"

_CITIES = [("Hangzhou", "Zhejiang Province"), ("Shanghai", ""), ("Beijing", ""),
           ("Suzhou", "Jiangsu Province"), ("Chengdu", "Sichuan Province"),
           ("Xi'an", "Shaanxi Province"), ("Guangzhou", "Guangdong Province"),
           ("Kunming", "Yunnan Province")]
_BRANDS = ["Grand", "Garden", "Riverside", "Lakeview", "Heritage", "Business", "Youth",
           "Boutique", "Airport", "Station", "Mountain", "Harbour"]
_KINDS = ["Hotel", "Inn", "Resort", "Apartment Hotel", "Hostel", "Suites"]
_TAGS = ["free wifi", "swimming pool", "breakfast included", "parking", "lake view",
         "river view", "gym", "spa", "pet friendly", "near subway", "kitchen", "quiet",
         "business center", "family rooms", "airport shuttle", "tea house"]
_ROOMS = ["Standard Double Room", "Deluxe King Room", "Twin Room", "Family Suite",
          "Executive Suite", "Bunk Bed in 4-Bed Dorm", "Lake View Twin Room"]


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
    rng = random.Random(seed)
    environment = fixture_environment()
    templates = list(environment["hotels"].values())
    dates = sorted({p["date"] for h in templates for p in h["products"]})
    hotels: dict[str, Any] = {}
    for i in range(n_hotels):
        hotel = copy.deepcopy(templates[i % len(templates)])
        city, province = _CITIES[i % len(_CITIES)]
        hotel_id = f"H{900000000 + i}"
        hotel["hotel_id"] = hotel_id
        hotel["hotel_name"] = f"{city} {rng.choice(_BRANDS)} {rng.choice(_KINDS)} No.{i}"
        hotel["score"] = round(rng.uniform(3.5, 5.0), 1)
        hotel["star_rating"] = rng.randint(2, 5)
        district = f"District {rng.randint(1, 12)}"
        hotel["location"] = {
            "address": ", ".join(x for x in (f"No. {rng.randint(1, 999)} Road {i}", district,
                                             city, province) if x),
            "longitude": round(hotel["location"]["longitude"] + rng.uniform(-0.2, 0.2), 6),
            "latitude": round(hotel["location"]["latitude"] + rng.uniform(-0.2, 0.2), 6)}
        hotel["tags"] = rng.sample(_TAGS, rng.randint(2, 6))
        hotel["products"] = [
            {"product_id": f"{hotel_id}_R{n:03d}", "price": float(rng.randint(12, 300) * 10),
             "quantity": rng.randint(0, 9), "date": date, "room_type": room_type}
            for n, (room_type, date) in enumerate(
                ((r, d) for r in rng.sample(_ROOMS, min(rooms, len(_ROOMS))) for d in dates),
                start=1)]
        hotels[hotel_id] = hotel
    environment["hotels"] = hotels
    environment["orders"] = {oid: o for oid, o in environment["orders"].items()
                             if o["order_type"] != "hotel"}
    return environment
