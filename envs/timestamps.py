"""Moments and days as State fields: ISO 8601 strings, checked on load.

Pool states keep time as strings ("2026-03-09T09:00") because tools compare and slice
them as text (`now[:10]`, `min(when, now)`) and snapshots stay plain JSON. A bare `str`
field would load "garbage-time" and break every later call that reads the clock, so
these types accept exactly the shapes the tools write and rely on: naive, `T`-separated,
to the minute or to the second (`Timestamp`), or a calendar day (`Day`).

The clock helpers below are the one way a pool environment reads its state's clock
(`current_moment`, `current_day`) and writes a moment back (`stamp`), so every
environment agrees on the shape of the strings it stores.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Annotated, Any, Literal, Protocol

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

__all__ = ["Clocked", "Day", "Timestamp", "current_day", "current_moment", "stamp"]

# Real calendar days (month lengths; 29 February in any year), 24-hour clock. Checked by
# pydantic-core's regex engine, not a Python validator: restore() runs on every episode's
# reset and a pool state holds hundreds of these fields.
_DAY = (r"[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
        r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-9]))")
_TIME = r"(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9])?"


@dataclass(frozen=True)
class _Shaped:
    """A `str` that must fully match `pattern`; a mismatch reads as `message`."""

    pattern: str
    message: str

    def __get_pydantic_core_schema__(self, source: Any,
                                     handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.custom_error_schema(
            core_schema.str_schema(pattern=f"^{self.pattern}$"),
            custom_error_type="iso_format", custom_error_message=self.message)

    def __get_pydantic_json_schema__(self, schema: CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return handler(core_schema.str_schema())


Timestamp = Annotated[str, _Shaped(f"{_DAY}T{_TIME}",
                                   "expected a timestamp YYYY-MM-DDTHH:MM or YYYY-MM-DDTHH:MM:SS")]
Day = Annotated[str, _Shaped(_DAY, "expected a date YYYY-MM-DD")]


class Clocked(Protocol):
    """A pool state: its `now` is a `Timestamp`."""

    @property
    def now(self) -> str: ...


def current_moment(state: Clocked) -> datetime:
    """The state's clock as a (naive) datetime."""
    return datetime.fromisoformat(state.now)


def current_day(state: Clocked) -> date:
    """The calendar day of the state's clock."""
    return current_moment(state).date()


def stamp(moment: datetime, timespec: Literal["minutes", "seconds"] = "seconds") -> str:
    """`moment` as a `Timestamp` string, to the second or (calendar events) the minute."""
    return moment.isoformat(timespec=timespec)
