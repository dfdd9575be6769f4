"""Inspect entry point: registers the `envfactory` model API (lazy import), and the
`hf/local` label's model info (`harness/hf_local.py`: no Hub lookups for local models).

`envfactory/oracle` and `envfactory/replay` are the gold players (`gold_players.py`),
`envfactory/script[/ROLE]` the script file's answers (`script.py`): Inspect instantiates
whatever the registered function returns with the model's name, so one factory picks."""

from typing import Any, cast

from inspect_ai.model import ModelAPI, modelapi

from harness import hf_local

hf_local.register()


@modelapi(name="envfactory")
def envfactory() -> type[ModelAPI]:
    from harness.providers.gold_players import GoldPlayerAPI
    from harness.providers.script import ScriptAPI, is_script

    def create(model_name: str, *args: Any, **kwargs: Any) -> ModelAPI:
        api = ScriptAPI if is_script(model_name) else GoldPlayerAPI
        return api(model_name, *args, **kwargs)

    return cast(type[ModelAPI], create)
