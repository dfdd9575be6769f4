"""The release's QueryGen pipeline, offline, with scripted models that answer by agent.

The prompts are the shared release copy's; the fixed texts inside the release's pipeline
code (first inputs, error feedback) come from stand-in pipeline files written here with
our own words at the release's function and variable names, so these tests check the
state machine and never hold release text. Expected requests are built by hand from the
release's rendering rules (`release_prompts` is tested against the release separately).
"""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai.model import ChatMessage, Model, ModelOutput

from envs.world import World
from synthesis.chain import ChainStep, ToolChain
from synthesis.querygen import Kept, preset, synthesize
from synthesis.querygen import release_prompts as rp
from tests.shared_data import SHARED_DATA
from tests.synthesis.querygen_scripted import model, output

RELEASE = SHARED_DATA / "envfactory_release"
pytestmark = pytest.mark.skipif(not (RELEASE / rp.QUERYGEN).is_file(),
                                reason=f"the EnvFactory release copy is not at {RELEASE}")

NON_CONV = '''
def prepare():
    err_msg = f"PLAN-ERR {repr(e)}\\n"
    assert x, "need scenario"
def classify_tools():
    prompt = "CLASSIFY PLEASE"
    err_msg = f"CLS-ERR {repr(e)}\\n"
    assert x, "need user_tools"
def schema_generate():
    assert x, "need schema"
    raise ValueError(f"cannot load {mcp_server}: {tool_response}")
    err_msg = f"SCHEMA-ERR {repr(e)} fix it\\n"
def generate():
    prompt = "WRITE A REQUEST FOR:\\n"
    assert x, "need query"
    assert x, "need user_intent"
    err_msg = f"GEN-ERR {repr(e)}\\n"
def refine():
    prompt = "REFINE THIS:\\n"
    assert x, "need query"
    assert x, "need user_intent"
    err_msg = f"REF-ERR {repr(e)}\\n"
def solve():
    err_msg = f"SOLVE-ERR {repr(e)}\\n"
def filter():
    assert x, "need steps"
    assert x, f"bad role {role}"
    assert x, f"role of {index} differs"
    assert x, f"need name, arguments, masked_arguments"
    err_msg = f"FILTER-ERR {repr(e)}\\n"
def select():
    assert x, "need decision and selection"
    assert x, "decision must be a dict"
    err_msg = f"SELECT-ERR {repr(e)}\\n"
'''
CONV = '''
def interact():
    final_user_response = ""
    tool_responses_text = "OBSERVED:\\n"
    tool_response = f"NOT YOURS {tool["name"]}"
    final_user_response += f"I DID {tool}\\n"
    final_user_response += f"I SAW {tool_response}\\n"
    err_msg = f"USER-ERR {repr(e)}\\n"
def solve():
    tool_response = f"NO TOOL {tool["name"]}"
'''
EXECUTE = '''
def execute():
    err_msg = f"BAD TOOL {tool_call}: {repr(e)}\\n"
'''

CHAIN = ToolChain(seed=1, sampler="topology", steps=[
    ChainStep(env="email", tool="search_messages"), ChainStep(env="email", tool="get_message")],
    turns=[[0, 1]])


@pytest.fixture(autouse=True)
def _release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "release"
    for relative in (rp.QUERYGEN, rp.GRAPH, rp.SCHEMAGEN):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(RELEASE / relative, root / relative)
    (root / rp.NON_CONV).write_text(NON_CONV, encoding="utf-8")
    (root / rp.CONV).write_text(CONV, encoding="utf-8")
    (root / "src/gen/__init__.py").write_text(EXECUTE, encoding="utf-8")
    monkeypatch.setenv("ENVFACTORY_RELEASE_DIR", str(root))


def _database() -> dict[str, Any]:
    """The schema generator's database: the seeded one, Priya's name changed, so a test
    can tell it was used."""
    state = World(["email"]).snapshot()["email"]
    state["mailboxes"]["mb-priya"]["display_name"] = "Priya N. (written)"
    return state


Seen = list[list[ChatMessage]]


def _synth(seen: Seen, *, bad_schema_first: bool = False, select: str = "0",
           masks: bool = False) -> Model:
    bad = itertools.count()

    def respond(input: list[ChatMessage]) -> ModelOutput:
        seen.append(input)
        system, last = input[0].text, input[-1].text
        if system == rp.scenario_planner_system():
            return output("<scenario>Priya looks for an invoice.</scenario>")
        if system == rp.schema_generator_system():
            if bad_schema_first and next(bad) == 0:
                return output('<schema>{"mailboxes": 3}</schema>')
            return output(f"<schema>{json.dumps(_database())}</schema>")
        if "WRITE A REQUEST" in last:
            return output("<user_intent>find it</user_intent><query>Find the invoice.</query>")
        if "REFINE THIS" in last:
            return output("<user_intent>find it</user_intent><query>That invoice?</query>")
        if "CLASSIFY" in last:
            return output("<user_tools>[]</user_tools>")
        if system == rp.solution_selector_system() and "## Solution" in last:
            return output(f'<decision>{{"0": true, "1": true}}</decision>'
                          f"<selection>{select}</selection>")
        if system == rp.solution_selector_system():
            calls = [{"name": "email-search_messages", "arguments": {"query": "invoice"},
                      "masked_arguments": ["query"] if masks else []}]
            return output('<steps>[{"index": 1, "role": "tool_call", "content": '
                          f'{json.dumps(calls)}}}]</steps>')
        raise AssertionError(f"unexpected request: {system[:80]!r} / {last[:80]!r}")

    return model(respond)


def _solver(seen: Seen) -> Model:
    def respond(input: list[ChatMessage]) -> ModelOutput:
        seen.append(input)
        steps = sum(m.role == "assistant" for m in input)
        plan = [{"name": "email-search_messages", "arguments": {"query": "invoice"}},
                {"name": "email-get_message", "arguments": {"message_id": "msg-0036"}}]
        if steps < len(plan):
            return output(f"<tool_call>{json.dumps(plan[steps])}</tool_call>")
        return output("The invoice is from Brightline Plumbing.")

    return model(respond)


def _run(name: str, models: dict[str, Model], **overrides: Any) -> Any:
    config = preset(name, pass_k=2, **overrides)
    return anyio.run(lambda: synthesize(CHAIN, config, traj_id="r-1", models=models))


def test_sft_nonconv_runs_the_release_state_machine_request_by_request() -> None:
    synth: Seen = []
    solver: Seen = []
    out = _run("sft_nonconv", {"synth": _synth(synth), "solver": _solver(solver)})
    assert isinstance(out, Kept), out
    t = out.trajectory
    assert t.initial_state == {"email": _database()}
    assert [(c.name, c.arguments) for c in t.turns[0].gold_calls] == [
        ("search_messages", {"query": "invoice"}), ("get_message", {"message_id": "msg-0036"})]
    assert t.turns[0].user == "Find the invoice."
    assert t.provenance.model_extra is not None
    assert t.provenance.model_extra["pipeline"] == "release"
    assert t.provenance.model_extra["turn_accept_rates"] == [1.0]  # 2 true of pass_k 2
    # planner, schema generator, query generator, selector: one request each
    assert [m[0].text == s for m, s in zip(synth, (
        rp.scenario_planner_system(), rp.schema_generator_system()), strict=False)] == [True, True]
    assert len(synth) == 4
    planner = synth[0]
    assert [m.role for m in planner] == ["system", "user"]
    # hand-written: the release's trace of the chain's first tool starts like this
    assert planner[1].text.count("## Tool ") == 2
    assert "Tool name: email-search_messages\nTool description: " in planner[1].text
    generator = synth[2]
    assert generator[1].text == ("WRITE A REQUEST FOR:\n- Target Tool Name 1: email-search_messages"
                                 "\n- Target Tool Name 2: email-get_message\n")
    config = f"## MCP Server email\n{_database()}\n"
    assert config in generator[0].text  # str() of the database, as the release inserts it
    assert rp.query_generator_solvability() in generator[0].text  # non-conversational
    # the solver: the assistant prompt with both interaction rules empty, each tool result
    # sent back as a user message of <tool_response> blocks, the session kept
    assert len(solver) == 6
    first = [m for m in solver if len(m) == 2]
    assert len(first) == 2 and all(m[1].text == "Find the invoice." for m in first)
    last = max(solver, key=len)
    assert [m.role for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert last[3].text.startswith("<tool_response>\n") and last[3].text.endswith(
        "\n</tool_response>\n")
    assert last[0].text == rp.assistant(
        interaction_rule1="", interaction_rule2="",
        conversation="[Turn 1] (Current)\n- User: Find the invoice.",
        tools=_tools_part(last[0].text))
    selector = synth[3]
    assert "## Solution 0:\n- Step 0[user]: Find the invoice.\n- Step 1[tool_call]: " \
        in selector[1].text and "## Solution 1:" in selector[1].text


def _tools_part(system: str) -> str:
    """The tool listing inside a rendered solver prompt: one `str()` of a function dict
    per line, as the release lists them."""
    lines = [line + "\n" for line in system.splitlines() if line.startswith("{'name': 'email-")]
    assert len(lines) == 14  # the email environment's tools, load/save excluded
    return "".join(lines)


def test_a_database_that_does_not_load_is_retried_with_the_release_feedback() -> None:
    synth: Seen = []
    out = _run("sft_nonconv", {"synth": _synth(synth, bad_schema_first=True),
                               "solver": _solver([])})
    assert isinstance(out, Kept), out
    schema = [m for m in synth if m[0].text == rp.schema_generator_system()]
    assert len(schema) == 2
    retry = schema[1]
    assert [m.role for m in retry] == ["system", "user", "assistant", "user"]
    # repr() of the raised ValueError (double quotes: the environment's reason quotes)
    assert retry[3].text.startswith('SCHEMA-ERR ValueError("cannot load email: ')
    assert "'mailboxes'" in retry[3].text and retry[3].text.endswith('") fix it\n')


def test_rl_nonconv_filters_the_chosen_steps_and_masks_arguments() -> None:
    synth: Seen = []
    out = _run("rl_nonconv", {"synth": _synth(synth, masks=True), "solver": _solver([])})
    assert isinstance(out, Kept), out
    calls = out.trajectory.turns[0].gold_calls
    assert [(c.name, c.masked_arguments) for c in calls] == [("search_messages", ["query"])]
    # the filter runs in the selector's session, after its choice
    last = synth[-1]
    assert [m.role for m in last] == ["system", "user", "assistant", "user"]
    assert last[3].text.startswith(rp.text("SolutionSelector_Filter_Prompt").split(
        "{trajectory}")[0])


def test_select_state_takes_agreeing_candidates_without_the_selector() -> None:
    synth: Seen = []
    out = _run("sft_nonconv", {"synth": _synth(synth), "solver": _solver([])}, select="state")
    assert isinstance(out, Kept), out
    assert not any("## Solution" in m[-1].text for m in synth)
    assert out.trajectory.provenance.model_extra is not None
    assert out.trajectory.provenance.model_extra["select"] == "state"


def test_no_selection_ends_the_chain_as_a_rejection() -> None:
    out = _run("sft_nonconv", {"synth": _synth([], select="none"), "solver": _solver([])})
    assert out.kind == "rejected" and out.reason == "no_turn_decided"
    assert "the selector chose none" in out.detail


def _user(seen: Seen) -> Model:
    def respond(input: list[ChatMessage]) -> ModelOutput:
        seen.append(input)
        return output("Thanks, that is all.")

    return model(respond)


def _judge(seen: Seen, stop: Callable[[int], bool]) -> Model:
    calls = itertools.count()

    def respond(input: list[ChatMessage]) -> ModelOutput:
        seen.append(input)
        return output("###STOP###" if stop(next(calls)) else "continue")

    return model(respond)


def test_sft_conv_refines_classifies_and_stops_on_the_judge() -> None:
    synth: Seen = []
    judge: Seen = []
    user: Seen = []
    out = _run("sft_conv", {"synth": _synth(synth), "solver": _solver([]),
                            "judge": _judge(judge, lambda n: True), "user": _user(user)})
    assert isinstance(out, Kept), out
    assert out.trajectory.turns[0].user == "That invoice?"  # the refined query
    assert any(m[-1].text == "CLASSIFY PLEASE" for m in synth)
    refine = next(m for m in synth if m[-1].text.startswith("REFINE THIS"))
    assert refine[-1].text == "REFINE THIS:\nFind the invoice."
    assert len(judge) == 2 and user == []
    assert judge[0][0].text == rp.end_conversation(
        scenario="Priya looks for an invoice.", user_intent="find it",
        conversation="[Turn 1] (Current)\n- User: That invoice?")
    assert judge[0][1].text == "The invoice is from Brightline Plumbing."
