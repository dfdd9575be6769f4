"""`envfactory/script`: the script-file model every role can be played by, offline.

The file format's rules (first matching entry, role from the model's name, turn from the
conversation, a regular expression on the last message), its one-line errors, and two
end-to-end paths through Inspect's model registry: the judge helper, and a VitaBench
episode whose agent, simulated user and judge are all scripted.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    get_model,
)

from harness.judge import judge_json
from harness.providers.script import SCRIPT_VAR, load_script
from tests.shared_data import needs_vitabench

SCRIPT = """\
# envfactory/script: a plumbing check, not a model
responses:
  - role: judge
    text: '```json\\n{"verdict": "pass", "score": 1}\\n```'
  - role: user
    turn: 0
    text: I need some food delivered.
  - role: user
    text: "That's all. ###STOP###"
  - match: "(?i)weather in (paris|rome)"
    tool_calls:
      - function: get_weather
        arguments: {city: Paris}
  - text: Done.
"""


@pytest.fixture
def script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "script.yaml"
    path.write_text(SCRIPT)
    monkeypatch.delenv(SCRIPT_VAR, raising=False)
    return path


def _generate(model_name: str, path: Path | None, *messages: str) -> ChatMessageAssistant:
    args: dict[str, Any] = {"path": str(path)} if path else {}
    model = get_model(model_name, memoize=False, **args)
    history: list[ChatMessage] = [
        ChatMessageUser(content=m) if i % 2 == 0 else ChatMessageAssistant(content=m)
        for i, m in enumerate(messages)]
    return asyncio.run(model.generate(history)).message


def test_entries_answer_by_role_turn_and_last_message(script: Path) -> None:
    weather = _generate("envfactory/script", script, "What is the weather in Rome?")
    assert weather.text == "" and weather.tool_calls is not None
    assert [(c.function, c.arguments) for c in weather.tool_calls] == [
        ("get_weather", {"city": "Paris"})]
    assert _generate("envfactory/script", script, "Hello").text == "Done."  # the fallback
    assert _generate("envfactory/script/user", script, "Hi, how can I help?").text == (
        "I need some food delivered.")
    assert _generate("envfactory/script/user", script, "Hi", "I need food", "Here it is"
                     ).text == "That's all. ###STOP###"  # one own turn: the turn-0 entry skips


def test_a_repeated_tool_call_gets_a_new_id(script: Path) -> None:
    model = get_model("envfactory/script", memoize=False, path=str(script))
    first = asyncio.run(model.generate("weather in paris?")).message
    assert first.tool_calls is not None
    again = asyncio.run(model.generate(
        [ChatMessageUser(content="weather in paris?"), first,
         ChatMessageTool(content="sunny", tool_call_id=first.tool_calls[0].id,
                         function="get_weather"),
         ChatMessageUser(content="and the weather in Rome?")])).message
    assert again.tool_calls is not None
    assert again.tool_calls[0].id != first.tool_calls[0].id


def test_the_file_comes_from_the_environment_for_a_model_given_by_name(
        script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match=f"needs a script: -M path=FILE, or {SCRIPT_VAR}"):
        get_model("envfactory/script/judge", memoize=False)
    monkeypatch.setenv(SCRIPT_VAR, str(script))
    assert '"verdict": "pass"' in _generate("envfactory/script/judge", None, "Grade this.").text


def test_a_call_no_entry_answers_names_the_file_and_the_message(tmp_path: Path) -> None:
    path = tmp_path / "only.yaml"
    path.write_text("responses:\n  - match: hello\n    text: hi\n")
    with pytest.raises(ValueError, match=r"only.yaml: no response answers this call .*"
                                         r"last message: 'goodbye now'"):
        _generate("envfactory/script", path, "goodbye now")


@pytest.mark.parametrize(("body", "message"), [
    ("responses: []", "only.yaml: responses: List should have at least 1 item"),
    ("responses:\n  - role: judge\n", r"only.yaml: responses\[0\]: give text, tool_calls"),
    ("responses:\n  - match: '('\n    text: x\n",
     r"only.yaml: responses\[0\].match: not a regular expression"),
    ("responses:\n  - text: x\n    when: y\n", r"responses\[0\].when: Extra inputs"),
    ("responses:\n  - text: x\n    tool_calls: [{arguments: {}}]\n",
     r"responses\[0\].tool_calls\[0\].function: Field required"),
    ("responses: [", "only.yaml: not YAML"),
])
def test_a_bad_file_is_one_line_naming_the_field(tmp_path: Path, body: str, message: str
                                                 ) -> None:
    path = tmp_path / "only.yaml"
    path.write_text(body)
    with pytest.raises(ValueError, match=message) as caught:
        load_script(path)
    assert "\n" not in str(caught.value)


def test_an_unknown_model_argument_is_refused(script: Path) -> None:
    with pytest.raises(ValueError, match="unknown model argument.*seed; it takes path=FILE"):
        get_model("envfactory/script", memoize=False, path=str(script), seed=1)


def test_the_judge_helper_runs_on_a_scripted_judge(script: Path) -> None:
    judge = get_model("envfactory/script/judge", memoize=False, path=str(script))
    verdict = asyncio.run(judge_json(judge, "You grade.", "Did the agent do it?"))
    assert verdict == {"verdict": "pass", "score": 1}


@needs_vitabench
@pytest.mark.usefixtures("use_vitabench_data")
def test_a_vitabench_episode_runs_with_every_role_scripted(
        script: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Agent, simulated user and judge all from one file: the episode ends on the user's
    stop and the judge is asked, offline, end to end through `inspect eval`."""
    from tasks.vitabench.vitabench import vitabench_delivery

    script.write_text(script.read_text().replace(
        '''    text: '```json\\n{"verdict": "pass", "score": 1}\\n```\'''', "    text: '[]'"))
    monkeypatch.setenv(SCRIPT_VAR, str(script))
    (log,) = inspect_eval(vitabench_delivery(language="en"), model="envfactory/script",
                          model_roles={"user": "envfactory/script/user",
                                       "judge": "envfactory/script/judge"},
                          limit=1, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    (sample,) = log.samples or []
    texts = [m.text for m in sample.messages]
    assert "I need some food delivered." in texts and "Done." in texts
    score = next(iter((sample.scores or {}).values()))
    assert score.metadata is not None
    assert score.metadata["termination_reason"] == "user_stop"
    models = {getattr(e, "model", "") for e in sample.events if getattr(e, "event", "") == "model"}
    assert "envfactory/script/judge" in models, models  # the judge was asked
