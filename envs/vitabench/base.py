"""What every VitaBench environment shares: the contract, the shared toolkit, tool messages.

State is the domain database (a `VitaDB` subclass) loaded from a task's `environment`;
each instance has a language ("zh" | "en"), which picks the tool descriptions (and the
holiday table of `get_holiday_date`, as upstream's process-wide language does).

Calls behave as upstream's `Environment.get_response` around `ToolKitBase.use_tool(name,
**arguments)`: arguments reach the tool unconverted; a call that does not bind fails with
the `TypeError` Python raises for upstream's method; an unknown name fails with
"Tool '<name>' not found."; an `AssertionError` inside a tool is *not* a failure but the
tool's answer (upstream's `is_tool` wrapper returns `str(e)`); any other exception reads
"Error: <exception>". Results become the tool message as upstream's `to_json_str` makes
it: strings unchanged, numbers via `str()`, containers as JSON whose numbers are strings.

Upstream's per-thread model registries are the instance's `registry` (`models.Registry`),
built from the state whenever one is adopted. There is no rollback: as upstream, a write
that fails keeps what it changed before it failed.
"""

from __future__ import annotations

import copy
import inspect
import json
import math
import os
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any, ClassVar, Self

import holidays
from pydantic import BaseModel
from thefuzz import fuzz, process

from envs.base import Environment, ErrorKind, ToolError, ToolResult, ToolSpec, tool
from envs.binding import binding_error
from envs.vitabench import tool_objects as objects
from envs.vitabench.models import Registry, VitaDB
from envs.vitabench.release import DEFAULT_REVISION, LANGUAGES, Language, release
from envs.vitabench.search import fuzzy_ratio_match, rerank_scored

__all__ = ["Refusal", "VitaEnvironment", "check_time_format", "require", "vita_text"]

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
#: the language of `get_date_holiday_info`'s names. Upstream calls `holidays.China()`
#: without one, so `holidays` picks it through gettext from the process locale (LANGUAGE,
#: LC_ALL, LC_MESSAGES, LANG): "National Day" under C or en_US, "国庆节" under zh_CN. Pinned
#: to what upstream answers under the C/en locales (identical to holidays' en_US names).
HOLIDAY_NAMES = "en_US"


class Refusal(AssertionError):
    """A tool's refusal (upstream's `assert`): its message is the tool's answer."""


def require(condition: object, message: str) -> None:
    """Upstream's `assert condition, message` inside a tool (never stripped by -O)."""
    if not condition:
        raise Refusal(message)


def check_time_format(value: Any, fmt: str = TIME_FORMAT) -> bool:
    """Upstream `check_time_format`: a ValueError is False; a non-string still raises."""
    try:
        datetime.strptime(value, fmt)
        return True
    except ValueError:
        return False


def vita_text(result: Any) -> str:
    """Upstream `Environment.to_json_str`: the tool message of a result."""
    if isinstance(result, str):
        return result
    return json.dumps(_process(result), default=str, ensure_ascii=False)


def _process(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, int | float | bool):
        return str(value)
    if isinstance(value, list):
        return [_process(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_process(item) for item in value)
    if isinstance(value, dict):
        return {k: _process(v) for k, v in value.items()}
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise ValueError(f"Unsupported type: {type(value)}")


class VitaEnvironment(Environment):
    """One VitaBench toolkit over one task's database.

    Subclasses set `State`, `tool_set` (the stem of the tool-objects file: "delivery",
    "instore", "ota", "cross"), and on each class that defines tools `upstream_class`
    (upstream's toolkit class, the qualifier of binding errors) and `description_domain`
    (whose description table those tools' texts come from)."""

    State: ClassVar[type[BaseModel]] = VitaDB
    tool_set: ClassVar[str] = ""
    upstream_class: ClassVar[str] = "ToolKitBase"
    description_domain: ClassVar[str] = "toolkit"
    strict_state = False  # a database loads as upstream's lax Pydantic models load it
    #: the registries (`models.Registry`) index the database's objects, so tools change
    #: the state through references the touched-field tracking does not see
    copy_on_write = False

    def __init__(self, state: BaseModel | Mapping[str, Any] | None = None,
                 language: Language = "zh", revision: str = DEFAULT_REVISION) -> None:
        if language not in LANGUAGES:
            raise ValueError(f"unknown VitaBench language {language!r}; choose zh or en")
        self.language: Language = language
        self.revision = revision
        super().__init__(state)

    @classmethod
    def from_environment(cls, environment: Mapping[str, Any], language: Language = "zh",
                         revision: str = DEFAULT_REVISION) -> Self:
        """The environment of a task's `environment` dict, as upstream's domain
        `get_environment` builds it: only the database's own keys are kept."""
        return cls(cls.database_fields(environment), language, revision)

    @classmethod
    def database_fields(cls, environment: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in environment.items() if k in cls.State.model_fields}

    # -- the database and its registries -------------------------------------------

    @property
    def db(self) -> Any:
        """The live database (for tools; outside code reads `state`)."""
        return self._state

    def _adopt(self, model: BaseModel) -> None:
        super()._adopt(model)
        self.registry = Registry.of(model)

    def _needs_checkpoint(self, tool: Any) -> bool:
        """Never: upstream has no rollback, so a write that fails keeps what it changed
        before failing (a delivery order whose note is no string has already registered
        its products, with their new count, and its address)."""
        return False

    def get_now(self, fmt: str = TIME_FORMAT) -> str:
        """Upstream `ToolKitBase.get_now`: the database's time, else the wall clock."""
        if self.db.time:
            return str(self.db.time)
        return datetime.now().strftime(fmt)

    # -- what the model is shown ----------------------------------------------------

    @classmethod
    def tool_order(cls) -> list[str]:
        """Tool names in upstream's order: a toolkit class's own tools in definition
        order, then its base classes' (upstream's `_func_tools`)."""
        order: list[str] = []
        for klass in cls.__mro__:
            if not (isinstance(klass, type) and issubclass(klass, VitaEnvironment)):
                continue
            order += [name for name in klass.__dict__
                      if name in cls._tools and name not in order]
        return order

    @classmethod
    def defining_class(cls, name: str) -> type[VitaEnvironment]:
        for klass in cls.__mro__:
            if name in klass.__dict__:
                return klass  # type: ignore[no-any-return]
        raise KeyError(name)

    @classmethod
    def derive_tool_objects(cls, language: Language,
                            revision: str = DEFAULT_REVISION) -> list[dict[str, Any]]:
        """The tool objects built from the release's description tables (see
        `tool_objects`): each tool's text from its defining class's table, else the
        toolkit's."""
        toolkit = objects.description_table("toolkit", language, revision)
        tables: dict[str, dict[str, Any]] = {"toolkit": toolkit}
        result = []
        for name in cls.tool_order():
            domain = cls.defining_class(name).description_domain
            if domain not in tables:
                tables[domain] = objects.description_table(domain, language, revision)
            entry = tables[domain].get(name) or toolkit.get(name)
            doc = objects.tool_docstring(entry) if entry else None
            result.append(objects.openai_tool_object(name, getattr(cls, name), doc))
        return result

    @classmethod
    def official_tool_objects(cls, language: Language,
                              revision: str = DEFAULT_REVISION) -> list[dict[str, Any]]:
        return _official(cls, language, revision)

    def tool_objects(self) -> list[dict[str, Any]]:
        """The exact OpenAI chat tool objects upstream sends the agent, in its order."""
        return copy.deepcopy(self.official_tool_objects(self.language, self.revision))

    def tools(self) -> list[ToolSpec]:
        """The tools as upstream offers them in this instance's language."""
        return self.specs_for(self.language, self.revision)

    @classmethod
    def tool_specs(cls) -> list[ToolSpec]:
        """Class-level metadata: the tools as offered in upstream's default language."""
        return cls.specs_for("zh")

    @classmethod
    def specs_for(cls, language: Language,
                  revision: str = DEFAULT_REVISION) -> list[ToolSpec]:
        functions = [o["function"] for o in cls.official_tool_objects(language, revision)]
        offered = [f["name"] for f in functions]
        if set(offered) != set(cls._tools):
            raise ValueError(f"{cls.__name__}: the release's {cls.tool_set} tools "
                             f"{sorted(set(offered) - set(cls._tools))} are not implemented, "
                             f"{sorted(set(cls._tools) - set(offered))} are not the release's")
        return [ToolSpec(name=f["name"], description=f["description"],
                         parameters=f["parameters"], write=cls._tools[f["name"]].write)
                for f in functions]

    # -- calls ------------------------------------------------------------------------

    def _call(self, name: Any, arguments: Any) -> ToolResult:
        if not isinstance(name, str) or name not in self._tools:
            return ToolResult.failure(ErrorKind.UNKNOWN_TOOL, f"Tool '{name}' not found.")
        return super()._call(name, arguments)

    def _parse(self, bound: Any, arguments: Mapping[str, Any]) -> dict[str, Any]:
        method = getattr(type(self), bound.method_name)
        qualifier = self.defining_class(bound.method_name).upstream_class
        problem = binding_error(f"{qualifier}.{bound.method_name}",
                                inspect.signature(method), arguments)
        if problem is not None:
            raise ToolError(problem)
        return dict(arguments)

    def _execute(self, bound: Any, kwargs: dict[str, Any]) -> Any:
        try:
            result = getattr(self, bound.method_name)(**kwargs)
        except AssertionError as refusal:
            result = str(refusal)
        return vita_text(result)

    def _failure_message(self, name: str, error: BaseException) -> str:
        return str(error)

    # -- the shared toolkit (upstream ToolKitBase) ------------------------------------

    @tool
    def longitude_latitude_to_distance(self, longitude1: float, latitude1: float,
                                       longitude2: float, latitude2: float) -> float:
        if longitude1 == longitude2 and latitude1 == latitude2:
            return 0.0
        lon1, lat1, lon2, lat2 = map(math.radians, [longitude1, latitude1, longitude2, latitude2])
        a = (math.sin((lat2 - lat1) / 2) ** 2
             + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2)
        return round(6371000 * 2 * math.asin(math.sqrt(a)), 0)

    @tool
    def weather(self, address: str, date_start: str, date_end: str) -> str:
        require(check_time_format(date_start, "%Y-%m-%d"),
                f"Invalid date_start format. Expected yyyy-mm-dd, got: {date_start}")
        require(check_time_format(date_end, "%Y-%m-%d"),
                f"Invalid date_end format. Expected yyyy-mm-dd, got: {date_end}")
        cities = {w.city: w.city for w in self.db.weather}
        city, _, score = rerank_scored(address, cities)[0]
        if score < 50:
            raise ValueError(f"Weather information not found for {address}")
        start = datetime.strptime(date_start, "%Y-%m-%d").date()
        end = datetime.strptime(date_end, "%Y-%m-%d").date()
        found = [w for w in self.db.weather if w.city == city
                 and start <= datetime.strptime(w.datetime, "%Y-%m-%d").date() <= end]
        if not found:
            return f"No weather information found for {city} between {date_start} and {date_end}"
        found.sort(key=lambda w: w.datetime)
        return "\n".join(repr(w) for w in found)

    @tool
    def address_to_longitude_latitude(self, address: str) -> tuple[float, float]:
        known = self.registry.locations
        best, _, score = rerank_scored(address, {a: a for a in known})[0]
        if score < 30 or not fuzzy_ratio_match(address, best):
            raise ValueError(f"Longitude and latitude not found for address {address}")
        place = known[best]
        return [place.longitude, place.latitude]  # type: ignore[return-value]  # upstream: a list

    @tool
    def get_date_holiday_info(self, date: str) -> str:
        require(check_time_format(date, "%Y-%m-%d"),
                f"Date format error, should be yyyy-mm-dd, actual: {date}")
        day = datetime.strptime(date, "%Y-%m-%d")
        name = holidays.China(years=day.year, language=HOLIDAY_NAMES).get(day)
        return name if name is not None else f"Date {date} is not a holiday"

    @tool
    def get_holiday_date(self, year: str, holiday_name: str) -> str:
        table = objects.holiday_dates(self.language, self.revision)
        if year not in table:
            return f"Holiday data for year {year} not found"
        dates = table[year]
        matched = process.extract(holiday_name, list(dates), limit=None, scorer=fuzz.partial_ratio)
        if matched and matched[0][1] >= 80:
            return dates[matched[0][0]]
        return f"Holiday named '{holiday_name}' not found in year {year}"

    @tool
    def get_user_historical_behaviors(self) -> str:
        return str(self.db.user_historical_behaviors)

    @tool
    def get_user_all_orders(self) -> str:
        if self.db.orders is None:
            return "User currently has no order information"
        return "\n".join(repr(order) for order in self.db.orders.values())

    @tool
    def get_nearby(self, longitude: float, latitude: float, range: float) -> str:  # noqa: A002
        found: list[str] = []
        distance = self.longitude_latitude_to_distance
        for field in ("stores", "shops", "hotels", "attractions"):
            if hasattr(self.db, field):
                for place in getattr(self.db, field).values():
                    if distance(longitude, latitude, place.location.longitude,
                                place.location.latitude) <= range:
                        found.append(str(place))
        for field, ends in (("flights", ("departure_airport_location", "arrival_airport_location")),
                            ("trains", ("departure_station_location", "arrival_station_location"))):
            if hasattr(self.db, field):
                for trip in getattr(self.db, field).values():
                    for end in ends:
                        spot = getattr(trip, end)
                        if distance(longitude, latitude, spot.longitude, spot.latitude) <= range:
                            found.append(str(trip))
                            break
        return "\n".join(found) if found else "No search results found"


#: (class, language, revision, data folder, cache) -> the objects as JSON text
_OFFICIAL: dict[tuple[type, str, str, str | None, str], str] = {}


def _official(cls: type[VitaEnvironment], language: Language,
              revision: str) -> list[dict[str, Any]]:
    """The tool objects of `cls` (memoised per data folder and cache)."""
    key = (cls, language, revision, os.environ.get("VITABENCH_DATA_DIR"),
           str(release(revision).cache))
    if key not in _OFFICIAL:
        loaded = objects.release_json(f"tools/{cls.tool_set}_{language}.json",
                                      lambda: cls.derive_tool_objects(language, revision),
                                      revision)
        _OFFICIAL[key] = json.dumps(loaded, ensure_ascii=False)
    result: list[dict[str, Any]] = json.loads(_OFFICIAL[key])
    return result
