"""Which models can play a synthesis role: anything that generates, not the gold players.

`envfactory/oracle` and `envfactory/replay` (`harness.providers.gold_players`) answer a
call only with the gold message a benchmark's episode loop published for it; QueryGen,
EnvGen, the graph passes and the search agent publish none, so those models would fail on
their first call, deep inside a run. The commands check their role bindings up front.
"""

from __future__ import annotations

from collections.abc import Mapping

from inspect_ai.model import Model

from harness.providers.gold_players import GoldPlayerAPI

__all__ = ["gold_player_problem"]


def gold_player_problem(models: Mapping[str, Model], pipeline: str) -> str | None:
    """One line naming the gold players among `models` (role -> model) and the roles they
    were given, with what can play them; None when every role has a generating model."""
    bound: dict[str, list[str]] = {}
    for role, model in models.items():
        if isinstance(model.api, GoldPlayerAPI):
            bound.setdefault(str(model), []).append(role)
    if not bound:
        return None
    named = "; ".join(f"{name} cannot play the {pipeline} role{'s' if len(roles) > 1 else ''} "
                      f"{', '.join(roles)}" for name, roles in bound.items())
    return (f"{named}: it only replays the gold a benchmark episode publishes, and "
            f"{pipeline} has none; give a model that generates (openai/<name> with "
            "--model-arg base_url=..., vllm/<name>, or hf/<local path> offline; "
            "envfactory/script -M path=FILE for an offline plumbing check)")
