"""Inspect entry point: registers the `envfactory` model API (lazy import)."""

from inspect_ai.model import modelapi


@modelapi(name="envfactory")
def envfactory() -> type:
    from harness.providers.scripted import ScriptedModelAPI

    return ScriptedModelAPI
