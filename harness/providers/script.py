"""`envfactory/script`: a model that answers from a script file — a plumbing check.

It lets every role (agent/solver, simulated user, judge, QueryGen's synth, EnvGen's
searcher, coder and tester) run without an API or a local model, to see that a command or
a task goes end to end on this machine: what is offered, what is logged, what is written.
Its answers are whatever the file says, so the scores of such a run mean nothing; each
model logs a warning saying so when it loads its file.

    inspect eval tasks/vitabench --model envfactory/script -M path=script.yaml \\
        --model-role user=envfactory/script/user --model-role judge=envfactory/script/judge

The file (YAML or JSON) is a list of responses; for each call the first entry whose
conditions all hold answers (an entry without conditions answers anything), and a call no
entry answers fails naming the file and the call's last message:

    # envfactory/script: a plumbing check, not a model
    responses:
      - role: judge                  # only for envfactory/script/judge
        text: '[]'
      - role: user
        turn: 0                      # only when the conversation holds 0 assistant messages
        text: I need some food delivered.
      - role: user
        text: "That's all. ###STOP###"
      - match: "(?i)weather"         # a regular expression searched in the last message
        tool_calls:
          - function: get_weather
            arguments: {city: Paris}
      - text: Done.

`role` is the part after `envfactory/script/` in the model's name (a role bound with
`--model-role ROLE=envfactory/script/ROLE`); `turn` counts the assistant messages the
conversation already holds (the speaker's own turns, so concurrent samples each get the
whole script). The file is `-M path=FILE`, or `ENVFACTORY_SCRIPT` for models given by name
alone (`--model-role` takes no model arguments).
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from harness.providers.responder import fresh_ids, own_turns, reply

__all__ = ["SCRIPT_VAR", "Script", "ScriptAPI", "ScriptCall", "ScriptEntry", "is_script",
           "load_script"]

#: the script file of `envfactory/script` models given without `-M path=`
SCRIPT_VAR = "ENVFACTORY_SCRIPT"
_NAME = "script"

logger = logging.getLogger(__name__)


class ScriptCall(BaseModel):
    """One tool call of a scripted answer."""

    model_config = ConfigDict(extra="forbid")

    function: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)


class ScriptEntry(BaseModel):
    """One response and the calls it answers."""

    model_config = ConfigDict(extra="forbid")

    #: a regular expression searched in the text of the call's last message
    match: str | None = None
    #: only for `envfactory/script/<role>`
    role: str | None = None
    #: only when the conversation holds this many assistant messages
    turn: int | None = Field(default=None, ge=0)
    text: str = ""
    tool_calls: list[ScriptCall] = Field(default_factory=list)

    @field_validator("match")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as e:
                raise ValueError(f"not a regular expression ({e})") from None
        return value

    @model_validator(mode="after")
    def _says_something(self) -> ScriptEntry:
        if not self.text and not self.tool_calls:
            raise ValueError("give text, tool_calls or both")
        return self

    def answers(self, role: str | None, messages: Sequence[ChatMessage]) -> bool:
        if self.role is not None and self.role != role:
            return False
        if self.turn is not None and self.turn != own_turns(messages):
            return False
        last = messages[-1].text if messages else ""
        return self.match is None or re.search(self.match, last) is not None


class Script(BaseModel):
    """A script file: its responses, tried in order."""

    model_config = ConfigDict(extra="forbid")

    responses: list[ScriptEntry] = Field(min_length=1)

    def answer(self, role: str | None, messages: Sequence[ChatMessage]) -> ScriptEntry | None:
        return next((e for e in self.responses if e.answers(role, messages)), None)


def _where(loc: Sequence[int | str]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc
                   ).lstrip(".")


def load_script(path: Path) -> Script:
    """The script at `path`; a bad file is one `ValueError` naming the file and field."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ValueError(f"envfactory/script: cannot read -M path={path} ({e.strerror})") from e
    try:
        raw = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as e:
        first = str(e).splitlines()[0]
        raise ValueError(f"{path}: not {'JSON' if path.suffix == '.json' else 'YAML'} "
                         f"({first})") from e
    try:
        return Script.model_validate(raw)
    except ValidationError as e:
        error = e.errors()[0]
        field = _where(error["loc"]) or "the file"
        message = error["msg"].removeprefix("Value error, ")
        raise ValueError(f"{path}: {field}: {message} (a script is `responses:`, a list of "
                         "entries with text and/or tool_calls, optionally match/role/turn)"
                         ) from None


def is_script(model_name: str) -> bool:
    """Whether an `envfactory/<model_name>` model is a script (`script`, `script/ROLE`)."""
    return model_name == _NAME or model_name.startswith(_NAME + "/")


class ScriptAPI(ModelAPI):
    """`envfactory/script[/ROLE]`: answers each call from the script file."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 - Inspect's signature
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        self.role = model_name.partition("/")[2] or None
        path = model_args.pop("path", None) or os.environ.get(SCRIPT_VAR)
        if not path:
            raise ValueError(f"envfactory/{model_name} needs a script: -M path=FILE, or "
                             f"{SCRIPT_VAR}=FILE for a model given by name alone")
        if model_args:
            raise ValueError(f"envfactory/{model_name}: unknown model argument(s) "
                             f"{', '.join(sorted(model_args))}; it takes path=FILE")
        self.path = Path(path)
        self.script = load_script(self.path)
        logger.warning("envfactory/%s answers from %s: a plumbing check, not a model "
                       "(its scores mean nothing)", model_name, self.path)

    def max_connections(self) -> int:
        return 10_000

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        entry = self.script.answer(self.role, input)
        if entry is None:
            last = input[-1].text if input else ""
            shown = " ".join(last.split())[:120]
            raise ValueError(
                f"{self.path}: no response answers this call of envfactory/{self.model_name} "
                f"(turn {own_turns(input)}, last message: {shown!r}); add an entry "
                "without conditions as a fallback")
        calls = [ToolCall(id=f"script_{i}", function=c.function, arguments=dict(c.arguments))
                 for i, c in enumerate(entry.tool_calls, 1)]
        return fresh_ids(reply(entry.text, calls or None), input, prefix="script_")
