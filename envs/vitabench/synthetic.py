"""Large OTA task databases made from a small one, for load and search-latency measurements.

No OTA task file is in the shared snapshot, and the release's largest domain is OTA (its
2026 README counts 1,437 providers and 9,693 products over the 100 tasks). To see how the
tools scale, `scaled_ota_environment` takes one task `environment` (e.g. the hand-made
`tests/data/vitabench/official/ota_environment.json`) and builds a bigger one,
deterministically from `seed`: `n_hotels` hotels made from its hotels (names, tags and
cities varied, coordinates jittered around the template's), each with `rooms` room types
over the base's hotel dates; optionally `attractions`, `flights` and `trains` likewise
made from the base's (new ids, names and cities; their products copied with new ids).
Tables not scaled are the base's own. The base's hotel orders are dropped (their hotels
are gone); its other orders are kept.

The texts are made up, not the release's: only the shapes (the fields upstream's `OTADB`
loads) are the benchmark's.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping
from typing import Any

__all__ = ["scaled_ota_environment"]

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
_SIGHTS = ["Temple", "Museum", "Garden", "Pagoda", "Old Street", "Park", "Gallery",
           "Water Town", "Zoo", "Tower"]
_AIRLINES = ["Air China", "China Eastern", "China Southern", "Hainan Airlines",
             "Sichuan Airlines", "Spring Airlines"]


def scaled_ota_environment(base: Mapping[str, Any], n_hotels: int, rooms: int = 7,
                           seed: int = 0, *, attractions: int | None = None,
                           flights: int | None = None, trains: int | None = None
                           ) -> dict[str, Any]:
    """`base` (an OTA task environment, not modified) with `n_hotels` generated hotels in
    place of its own, and, where a count is given, that many generated attractions,
    flights and trains in place of the base's."""
    rng = random.Random(seed)
    environment = copy.deepcopy(dict(base))
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
        hotel["location"] = _place(rng, hotel["location"], f"No. {rng.randint(1, 999)} Road {i}",
                                   district, city, province)
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
    # each table from its own stream, so that adding one leaves the others as they were
    if attractions is not None:
        environment["attractions"] = _attractions(environment["attractions"], attractions,
                                                  random.Random(f"{seed}-attractions"))
    if flights is not None:
        environment["flights"] = _trips(environment["flights"], flights, "flight",
                                        random.Random(f"{seed}-flights"))
    if trains is not None:
        environment["trains"] = _trips(environment["trains"], trains, "train",
                                       random.Random(f"{seed}-trains"))
    return environment


def _place(rng: random.Random, near: Mapping[str, Any], *parts: str) -> dict[str, Any]:
    """A location named by `parts` (empty ones left out), jittered around `near`."""
    return {"address": ", ".join(p for p in parts if p),
            "longitude": round(near["longitude"] + rng.uniform(-0.2, 0.2), 6),
            "latitude": round(near["latitude"] + rng.uniform(-0.2, 0.2), 6)}


def _renumbered(products: list[dict[str, Any]], owner: str, letter: str,
                rng: random.Random) -> list[dict[str, Any]]:
    """`products` with ids of `owner`, prices varied by up to 20%."""
    return [{**p, "product_id": f"{owner}_{letter}{n:03d}",
             "price": round(p["price"] * rng.uniform(0.8, 1.2), 1)}
            for n, p in enumerate(products, start=1)]


def _attractions(table: Mapping[str, Any], count: int, rng: random.Random
                 ) -> dict[str, Any]:
    templates = list(table.values())
    out: dict[str, Any] = {}
    for i in range(count):
        item = copy.deepcopy(templates[i % len(templates)])
        city, province = _CITIES[i % len(_CITIES)]
        item_id = f"A{900000000 + i}"
        item["attraction_id"] = item_id
        item["attraction_name"] = f"{city} {rng.choice(_BRANDS)} {rng.choice(_SIGHTS)} No.{i}"
        item["score"] = round(rng.uniform(3.5, 5.0), 1)
        item["location"] = _place(rng, item["location"], f"No. {rng.randint(1, 999)} Lane {i}",
                                  f"District {rng.randint(1, 12)}", city, province)
        item["products"] = _renumbered(item["products"], item_id, "T", rng)
        out[item_id] = item
    return out


def _trips(table: Mapping[str, Any], count: int, kind: str, rng: random.Random
           ) -> dict[str, Any]:
    """Flights or trains between two different cities, renumbered."""
    templates = list(table.values())
    where = "airport" if kind == "flight" else "station"
    out: dict[str, Any] = {}
    for i in range(count):
        item = copy.deepcopy(templates[i % len(templates)])
        (start, _), (end, _) = rng.sample(_CITIES, 2)
        item_id = f"{kind[0].upper()}{900000 + i}"
        item[f"{kind}_id"] = item_id
        prefix = rng.choice(["CA", "MU", "CZ", "HU"]) if kind == "flight" else rng.choice("GDK")
        item[f"{kind}_number"] = f"{prefix}{rng.randint(100, 9999)}"
        item["departure_city"], item["arrival_city"] = start, end
        for side, city in (("departure", start), ("arrival", end)):
            key = f"{side}_{where}_location"
            item[key] = _place(rng, item[key], f"{city} {where.title()} No.{i}", city)
        hour = rng.randint(6, 21)
        item["departure_time"] = f"{hour:02d}:{rng.choice(['00', '15', '30', '45'])}"
        item["arrival_time"] = f"{min(hour + rng.randint(1, 3), 23):02d}:{rng.randint(0, 59):02d}"
        if kind == "flight":
            item["tags"] = ["direct", rng.choice(_AIRLINES)]
        item["products"] = _renumbered(item["products"], item_id, "S", rng)
        out[item_id] = item
    return out
