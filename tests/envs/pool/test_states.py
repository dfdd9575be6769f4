"""Every pool environment refuses a scenario that is not one of its states: unknown
fields, ill-typed values and a clock that is not a timestamp, each named, the world
left as it was."""

from __future__ import annotations

import json

import pytest

from envs.base import Environment, StateError
from envs.pool import pool_classes

POOL = sorted(pool_classes())


@pytest.fixture(scope="module", params=POOL)
def kind(request: pytest.FixtureRequest) -> type[Environment]:
    return pool_classes()[request.param]


def refused(env: Environment, snapshot: object, named: str) -> None:
    before = env.snapshot()
    with pytest.raises(StateError) as error:
        env.restore(snapshot)  # type: ignore[arg-type]
    assert f"Invalid state of {env.name}: " in str(error.value)
    assert named in str(error.value)
    assert env.snapshot() == before


@pytest.mark.parametrize("now", [
    "garbage-time", "", "2026-03-09", "2026-03-09 09:00", "2026-03-09T09", "2026-02-30T09:00",
    "2026-03-09T24:00", "2026-03-09T09:00+02:00", "2026-03-09T09:00:00.5", "２０２６-03-09T09:00",
])
def test_the_clock_must_be_a_naive_timestamp(kind: type[Environment], now: str) -> None:
    env = kind()
    refused(env, env.snapshot() | {"now": now}, "field 'now'")


@pytest.mark.parametrize("now", ["2026-03-09T09:00", "2026-12-31T23:59:59"])
def test_both_timestamp_precisions_load(kind: type[Environment], now: str) -> None:
    env = kind()
    env.restore(env.snapshot() | {"now": now})
    assert env.snapshot()["now"] == now


def test_unknown_and_ill_typed_fields_are_refused(kind: type[Environment]) -> None:
    env = kind()
    snapshot = json.loads(json.dumps(env.snapshot()))
    refused(env, {"garbage": 1}, "unknown field 'garbage'")
    refused(env, snapshot | {"seed": "0"}, "field 'seed'")
    collection, key = next((name, key) for name, records in snapshot.items()
                           if isinstance(records, dict)
                           for key, record in records.items() if isinstance(record, dict))
    nested = {**snapshot, collection: {**snapshot[collection],
                                       key: {**snapshot[collection][key], "colour": "red"}}}
    refused(env, nested, f"unknown field '{collection}.{key}.colour'")


@pytest.mark.parametrize(("env", "collection", "key", "field", "value"), [
    ("bank_ledger", "accounts", "AC1001", "opened_on", "2026-02-30"),
    ("bank_ledger", "accounts", "AC1001", "opened_on", "2026-03-09T09:00"),
    ("calendar", "events", None, "start", "tomorrow 9am"),
])
def test_dates_and_moments_in_records_are_checked(env: str, collection: str, key: str | None,
                                                   field: str, value: str) -> None:
    instance = pool_classes()[env]()
    snapshot = json.loads(json.dumps(instance.snapshot()))
    key = key or next(iter(snapshot[collection]))
    snapshot[collection][key][field] = value
    refused(instance, snapshot, f"field '{collection}.{key}.{field}'")
