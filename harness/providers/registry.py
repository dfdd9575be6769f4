"""Inspect entry point: registers the `envfactory` model API (lazy import), and the
`hf/local` label's model info (`harness/hf_local.py`: no Hub lookups for local models)."""

from inspect_ai.model import modelapi

from harness import hf_local

hf_local.register()


@modelapi(name="envfactory")
def envfactory() -> type:
    from harness.providers.gold_players import GoldPlayerAPI

    return GoldPlayerAPI
