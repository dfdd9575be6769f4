"""Moments and days as State fields: ISO 8601 strings, checked on load.

Pool states keep time as strings ("2026-03-09T09:00") because tools compare and slice
them as text (`now[:10]`, `min(when, now)`) and snapshots stay plain JSON. A bare `str`
field would load "garbage-time" and break every later call that reads the clock, so
these types accept exactly the shapes the tools write and rely on: naive, `T`-separated,
to the minute or to the second (`Timestamp`), or a calendar day (`Day`).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Annotated

from pydantic import AfterValidator

__all__ = ["Day", "Timestamp"]

_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2})?")
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _timestamp(value: str) -> str:
    if not _TIMESTAMP.fullmatch(value):
        raise ValueError("expected a timestamp YYYY-MM-DDTHH:MM or YYYY-MM-DDTHH:MM:SS")
    datetime.fromisoformat(value)  # ValueError names the bad part (month 13, hour 25)
    return value


def _day(value: str) -> str:
    if not _DAY.fullmatch(value):
        raise ValueError("expected a date YYYY-MM-DD")
    date.fromisoformat(value)  # ValueError for 2026-02-30
    return value


Timestamp = Annotated[str, AfterValidator(_timestamp)]
Day = Annotated[str, AfterValidator(_day)]
