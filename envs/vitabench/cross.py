"""VitaBench's cross-domain environment (upstream `get_cross_environment`, `MergedDB`): the
delivery, instore and OTA toolkits over one task's merged database, 66 tools.

Upstream builds each domain's environment from the same task `environment`, then copies
every domain's tools and private helpers onto a bare `ToolKitBase` (a name already there
is kept, so the first domain's helper wins) and wraps the domain databases in a
`MergedDB`, whose fields are, attribute by attribute, the *last* domain database's that has
them. What that amounts to, and what this class reproduces:

- Tools in upstream's order: the shared toolkit first, then delivery's, instore's and OTA's
  own tools (a single domain lists its own tools first and the shared ones after).
- One database: the three domain databases are loaded from the same dict, so their shared
  fields (time, user, weather, locations, orders) are equal; every tool reads and writes
  the OTA database's orders through the merge, so every domain's orders are one table.
  Each domain's own tables (stores; shops, books, reservations; hotels, attractions,
  flights, trains) come from that domain.
- Registries as upstream's three loads leave them: delivery's models first, then instore's,
  then OTA's, each load registering the shared fields again (see `merged_registry`).
- Helpers of the same name resolve to the first domain's (Python's method order here is
  delivery, instore, OTA, as upstream's copy order); `get_nearby` sees every table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from envs.vitabench.base import VitaEnvironment
from envs.vitabench.delivery import RECREATORS as DELIVERY_RECREATORS
from envs.vitabench.delivery import DeliveryDB, DeliveryEnvironment
from envs.vitabench.instore import RECREATORS as INSTORE_RECREATORS
from envs.vitabench.instore import InStoreEnvironment
from envs.vitabench.instore_models import InStoreDB
from envs.vitabench.models import Registry
from envs.vitabench.ota import RECREATORS as OTA_RECREATORS
from envs.vitabench.ota import OTAEnvironment
from envs.vitabench.ota_models import OTADB
from envs.vitabench.recreation import Recreator

__all__ = ["CROSS_DOMAIN", "DOMAINS", "RECREATORS", "CrossDB", "CrossEnvironment",
           "merged_registry"]

#: upstream's domain string of the cross-domain task set, and its parts in merge order
CROSS_DOMAIN = "delivery,instore,ota"
DOMAINS: tuple[type[VitaEnvironment], ...] = (DeliveryEnvironment, InStoreEnvironment,
                                              OTAEnvironment)


class CrossDB(DeliveryDB, InStoreDB, OTADB):
    """Upstream's `MergedDB` of delivery, instore and OTA: the shared fields and every
    domain's own tables."""


def merged_registry(db: CrossDB) -> Registry:
    """The registries after upstream's three loads of the task: delivery's database, then
    instore's, then OTA's, each registering its models (shared fields included) in its
    own construction order, so a later load's model replaces an earlier one's at the
    place the first one took."""
    registry = Registry()
    for domain in DOMAINS:
        state: Any = domain.State
        view = state.model_construct(**{name: getattr(db, name) for name in state.model_fields})
        loaded = Registry.of(view)
        for table in (loaded.locations, loaded.stores, loaded.products):
            for model in table.values():
                registry.register(model)
    return registry


class CrossEnvironment(DeliveryEnvironment, InStoreEnvironment, OTAEnvironment):
    """Upstream's merged toolkit of `delivery,instore,ota` over one task's database."""

    name = "vitabench_cross"
    description = "VitaBench cross-domain: delivery, in-store and OTA tools on one database."
    State = CrossDB  # type: ignore[assignment]  # (the three bases each name their own)
    tool_set: ClassVar[str] = "cross"

    @classmethod
    def database_fields(cls, environment: Mapping[str, Any]) -> dict[str, Any]:
        """Each domain's `get_environment` view of the task (its keys and empty
        defaults), merged."""
        fields: dict[str, Any] = {}
        for domain in DOMAINS:
            fields.update(domain.database_fields(environment))
        return fields

    @property
    def db(self) -> CrossDB:
        """The live database (for tools)."""
        return self._state  # type: ignore[no-any-return]

    @property
    def registry(self) -> Registry:
        return self._merged_registry

    @registry.setter
    def registry(self, _: Registry) -> None:
        # VitaEnvironment assigns Registry.of(state) whenever it adopts or rolls back a
        # state; the merge registers as upstream's three loads do instead
        self._merged_registry = merged_registry(self.db)

    @classmethod
    def tool_order(cls) -> list[str]:
        """Upstream's merged order: the shared toolkit, then each domain's own tools."""
        order = [name for name in VitaEnvironment.__dict__ if name in cls._tools]
        for domain in DOMAINS:
            order += [name for name in domain.tool_order() if name not in order]
        return order


#: what `envs.vitabench.feasibility` uses to re-create a cross-domain task's records
RECREATORS: dict[str, Recreator] = {**DELIVERY_RECREATORS, **INSTORE_RECREATORS,
                                    **OTA_RECREATORS}
