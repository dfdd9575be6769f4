"""Failure modes read from transcripts: upstream's mode names, each labelled mode on a
hand-made run, and the sample tasks' reference runs (which show none)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from harness.episode import Termination
from harness.trajectory import Message, MessageCall
from tasks._mcp_atlas.dataset import load_tasks
from tasks._mcp_atlas.release import release
from tasks._mcp_atlas.taxonomy import (
    ALL_MODES,
    COGNITIVE_MODES,
    JUDGE_ONLY,
    LABELLED,
    TOOL_CALL_MODES,
    diagnose,
)
from tests.shared_data import needs_mcp_atlas
from tests.tasks.mcp_atlas.official import TAXONOMY_FILE, recorded

SERVERS = ["calculator", "filesystem", "git", "memory", "wikipedia", "mcp-server-code-runner"]
ENABLED = ["calculator_calculate", "filesystem_read_file", "filesystem_list_directory",
           "wikipedia_search_wikipedia"]


def upstream_modes() -> dict[str, list[str]]:
    """The keys of upstream's TOOL_CALL_MODES and COGNITIVE_MODES, in order (recorded)."""
    tables = recorded("tables")
    return {name: list(tables[name]) for name in ("TOOL_CALL_MODES", "COGNITIVE_MODES")}


def test_recorded_modes_are_the_real_files(official_source: Path) -> None:
    """The recording (`upstream_modes`) equals the literals of upstream's taxonomy file."""
    source = (official_source / TAXONOMY_FILE).read_text(encoding="utf-8")
    found = {target.id: list(ast.literal_eval(node.value)) for node in ast.parse(source).body
             if isinstance(node, ast.Assign) for target in node.targets
             if isinstance(target, ast.Name) and target.id in ("TOOL_CALL_MODES",
                                                               "COGNITIVE_MODES")}
    assert found == upstream_modes()


def test_mode_names_are_upstreams() -> None:
    modes = upstream_modes()
    assert list(TOOL_CALL_MODES) == modes["TOOL_CALL_MODES"]
    assert list(COGNITIVE_MODES) == modes["COGNITIVE_MODES"]
    assert len(ALL_MODES) == 11
    assert set(LABELLED) | set(JUDGE_ONLY) == set(ALL_MODES)
    assert not set(LABELLED) & set(JUDGE_ONLY)


def call(id: str, name: str, parse_error: str | None = None, **arguments: Any) -> MessageCall:
    return MessageCall(id=id, name=name, arguments=arguments, parse_error=parse_error,
                       raw_arguments="{bad" if parse_error else None)


def run(*steps: tuple[MessageCall, str, bool], answer: str = "Done.") -> list[Message]:
    """A user turn, then each call with its result (text, error), then the answer."""
    messages = [Message(role="user", content="task")]
    for c, text, error in steps:
        messages += [Message(role="assistant", content="", tool_calls=[c]),
                     Message(role="tool", content=text, tool_call_id=c.id, error=error)]
    return [*messages, Message(role="assistant", content=answer)]


def modes(messages: list[Message], termination: Termination = Termination.AGENT_STOP,
          required: tuple[str, ...] = ("filesystem", "calculator")) -> dict[str, str]:
    diagnosis = diagnose(messages, termination, enabled_tools=ENABLED,
                         required_servers=required, servers=SERVERS)
    assert diagnosis.not_labelled == list(JUDGE_ONLY)
    return {f.mode: f.evidence for f in diagnosis.failures}


READ = call("r", "filesystem_read_file", path="/data/a.csv")
CALC = call("c", "calculator_calculate", expression="1+1")


def test_a_clean_run_shows_nothing() -> None:
    assert modes(run((READ, "a,b", False), (CALC, "2", False))) == {}


def test_no_tool_use() -> None:
    found = modes(run())
    assert list(found) == ["no_tool_use"]
    assert "calculator, filesystem" in found["no_tool_use"]
    assert modes(run(), required=()) == {}  # the reference needed no tool either


def test_malformed_call() -> None:
    undecodable = call("u", "calculator_calculate", parse_error="Expecting ',' delimiter")
    rejected = call("v", "filesystem_read_file")
    found = modes(run((READ, "a,b", False), (undecodable, "Error: bad JSON", True),
                      (rejected, "MCP error -32602: Invalid arguments for tool read_file: "
                       "path Required", True), (CALC, "2", False)))
    assert list(found) == ["malformed_call"]
    assert found["malformed_call"].startswith("1 undecodable, 1 rejected")
    # an error about the data, not the arguments, is no malformed call
    assert "malformed_call" not in modes(run(
        (call("x", "filesystem_read_file", path="/nope"), "Error: ENOENT: no such file", True),
        (READ, "a,b", False), (CALC, "2", False)))


def test_wrong_tool() -> None:
    unoffered = call("g", "git_git_log", repo_path="/data/repos/x")
    found = modes(run((unoffered, "log", False), (READ, "a,b", False), (CALC, "2", False)))
    assert found == {"wrong_tool": "called tools not offered: git_git_log"}
    wiki = call("w", "wikipedia_search_wikipedia", query="profit")
    found = modes(run((wiki, "results", False)))
    assert list(found) == ["wrong_tool"]
    assert found["wrong_tool"] == ("called only wikipedia; the reference needed calculator, "
                                   "filesystem")


def test_err_recovery() -> None:
    failing = call("f", "calculator_calculate", expression="1/0")
    again = call("f2", "calculator_calculate", expression="1/0")
    found = modes(run((READ, "a,b", False), (failing, "Error: division by zero", True),
                      (again, "Error: division by zero", True), (CALC, "2", False)))
    assert found == {"err_recovery": "repeated a failed call unchanged: calculator_calculate"}
    found = modes(run((READ, "a,b", False), (failing, "Error: division by zero", True)))
    assert found == {"err_recovery": "ended right after a tool error (Error: division by zero)"}
    # changing the arguments after an error is recovering
    assert modes(run((READ, "a,b", False), (failing, "Error: division by zero", True),
                     (CALC, "2", False))) == {}


def test_early_termination() -> None:
    found = modes(run((READ, "a,b", False)))
    assert found == {"early_termination": "answered without calling calculator, which the "
                                          "reference needed"}
    found = modes(run((READ, "a,b", False), (CALC, "2", False)),
                  termination=Termination.MAX_TOOL_CALLS)
    assert list(found) == ["early_termination"]
    assert found["early_termination"].startswith("stopped at the tool-call limit (2 calls")


def as_messages(trajectory: list[dict[str, Any]]) -> list[Message]:
    """A reference trajectory (OpenAI messages) as canonical messages."""
    out = []
    for m in trajectory:
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        calls = [MessageCall(id=c["id"], name=c["function"]["name"],
                             arguments=json.loads(c["function"]["arguments"] or "{}"))
                 for c in m.get("tool_calls") or []]
        out.append(Message(role=m["role"], content=content, tool_calls=calls or None,
                           tool_call_id=m.get("tool_call_id")))
    return out


@needs_mcp_atlas
def test_reference_runs_show_no_failure(use_mcp_atlas_data: Path) -> None:
    tasks, _ = load_tasks()
    servers = list(release().template())
    assert len(tasks) == 10
    for task in tasks:
        diagnosis = diagnose(as_messages(task.trajectory), Termination.AGENT_STOP,
                             enabled_tools=task.enabled_tools,
                             required_servers=task.required_servers(servers), servers=servers)
        assert diagnosis.failures == [], (task.task_id, diagnosis.failures)
        assert diagnosis.tool_calls == len(task.reference_tools())


@pytest.mark.parametrize("ending", [Termination.LIMIT, Termination.ERROR])
def test_an_episode_cut_before_any_call(ending: Termination) -> None:
    messages = [Message(role="user", content="task")]
    assert modes(messages, termination=ending) == {"no_tool_use": "no tool call; the "
                                                   "reference needed calculator, filesystem"}
