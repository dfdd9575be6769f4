"""VitaBench's model-facing text: the release's prompt templates, rendered as upstream.

The templates are data (`prompts/*.yaml` of the pinned release, through
`envs.vitabench.release`), each with a `chinese:` and an `english:` entry. What is filled
in is upstream's: the agent's `{time}` is the task database's time, a space and the
weekday in the run's language (`星期六` / `Saturday`); the user's `{persona}` is `str()`
of the task's user profile (a Python dict repr) and `{instructions}` the task's
instructions. The agent's fixed first message is the orchestrator's constant.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from envs.vitabench.release import UPSTREAM_LANGUAGE, Language, Release

__all__ = ["GREETING", "agent_system_prompt", "template", "user_system_prompt", "weekday"]

#: upstream's default first agent message, by language (orchestrator.py)
GREETING: dict[Language, str] = {"zh": "你好，请问需要什么服务？",
                                 "en": "Hello, how can I help you?"}

_WEEKDAYS_EN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
                "Sunday")
_WEEKDAYS_ZH = ("一", "二", "三", "四", "五", "六", "日")
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def weekday(time: str, language: Language) -> str:
    """The weekday of a `YYYY-MM-DD HH:MM:SS` time, as upstream writes it."""
    day = datetime.strptime(time, TIME_FORMAT).weekday()
    return _WEEKDAYS_EN[day] if language == "en" else f"星期{_WEEKDAYS_ZH[day]}"


@cache
def _templates(path: Path) -> dict[str, Any]:
    """One template file, parsed once per path (pointing `VITABENCH_DATA_DIR` elsewhere
    reads the other file)."""
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(loaded, dict):
        raise ValueError(f"{path}: expected a mapping of languages to templates")
    return loaded


def template(release: Release, name: str, language: Language) -> str:
    """One prompt template (`agent_system_prompt`, `user_system_prompt`,
    `sliding_window_eval_template`, ...) in one language."""
    path = release.data_path(f"prompts/{name}.yaml")
    templates = _templates(path)
    key = UPSTREAM_LANGUAGE[language]
    if not isinstance(templates.get(key), str):
        raise ValueError(f"{path}: no {key!r} template (VitaBench "
                         f"{release.revision.name})")
    return str(templates[key])


def agent_system_prompt(release: Release, task: dict[str, Any], language: Language) -> str:
    time = task["environment"]["time"]
    return template(release, "agent_system_prompt", language).format(
        time=f"{time} {weekday(time, language)}")


def user_system_prompt(release: Release, task: dict[str, Any], language: Language) -> str:
    return template(release, "user_system_prompt", language).format(
        persona=str(task["user_scenario"]["user_profile"]),
        instructions=str(task["instructions"]))
