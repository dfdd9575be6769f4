"""The scaled OTA databases of `envs.vitabench.synthetic` (what the OTA search-latency
benchmark loads): the requested tables, unique ids, loadable as upstream's `OTADB`
shapes, the same database for the same seed, the base left as it was."""

from __future__ import annotations

import copy
from pathlib import Path

from envs.vitabench.ota import OTAEnvironment
from envs.vitabench.synthetic import scaled_ota_environment
from tests.envs.vitabench.ota_data import fixture_environment

TABLES = {"hotels": "hotel_id", "attractions": "attraction_id", "flights": "flight_id",
          "trains": "train_id"}


def test_every_table_scales_and_loads(vita_data: Path) -> None:
    base = fixture_environment()
    untouched = copy.deepcopy(base)
    environment = scaled_ota_environment(base, 40, rooms=2, attractions=30, flights=20,
                                         trains=10)
    assert base == untouched
    assert {t: len(environment[t]) for t in TABLES} == {
        "hotels": 40, "attractions": 30, "flights": 20, "trains": 10}
    for table, key in TABLES.items():
        assert all(k == v[key] for k, v in environment[table].items())
        products = [p["product_id"] for v in environment[table].values() for p in v["products"]]
        assert len(products) == len(set(products))
    # 2 room types over the fixture's three hotel dates
    assert {len(h["products"]) for h in environment["hotels"].values()} == {6}
    for flight in environment["flights"].values():
        assert flight["departure_city"] != flight["arrival_city"]
        assert flight["arrival_city"] in flight["arrival_airport_location"]["address"]
    assert all(o["order_type"] != "hotel" for o in environment["orders"].values())
    env = OTAEnvironment.from_environment(environment, "en")
    assert len(env.db.attractions) == 30 and len(env.db.trains) == 10
    answer = env.call("attractions_search_recommend", {"city_name": "Hangzhou",
                                                       "key_words": ["temple"]})
    assert answer.ok and answer.text().startswith("Attraction(")


def test_the_same_seed_gives_the_same_database() -> None:
    base = fixture_environment()
    one = scaled_ota_environment(base, 10, attractions=5, flights=5, trains=5, seed=3)
    assert one == scaled_ota_environment(base, 10, attractions=5, flights=5, trains=5, seed=3)
    assert one != scaled_ota_environment(base, 10, attractions=5, flights=5, trains=5, seed=4)
    # a table left unscaled is the base's own; adding one leaves the hotels as they were
    assert scaled_ota_environment(base, 10, seed=3)["flights"] == base["flights"]
    assert scaled_ota_environment(base, 10, seed=3)["hotels"] == one["hotels"]
