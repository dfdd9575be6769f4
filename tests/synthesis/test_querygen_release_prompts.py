"""The release's prompts, read by `ast` from the shared copy and rendered as the release does.

Expected texts come from the release itself: its prompt modules are run here (test only;
the product never executes them) and rendered with the very call the release's pipeline
makes (`.format(...)` or its `.replace` chain, as written in `src/gen/query_gen/utils.py`,
`query_gen_non_conv.py`, `src/graph/*.py` at eff3b22). The values are chosen to expose
the differences between the two ways: braces in values, a value holding a placeholder.
"""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest

from synthesis.querygen import release_prompts as rp
from tests.shared_data import SHARED_DATA

RELEASE = SHARED_DATA / "envfactory_release"
pytestmark = pytest.mark.skipif(not (RELEASE / rp.QUERYGEN).is_file(),
                                reason=f"the EnvFactory release copy is not at {RELEASE}")


@pytest.fixture(autouse=True)
def _release(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVFACTORY_RELEASE_DIR", str(RELEASE))


def _module(relative: str) -> dict[str, Any]:
    return runpy.run_path(str(Path(RELEASE) / relative))


#: values with braces and a value that holds another prompt's placeholder
TRICKY = {"scenario": "Ann moves {house} on {{Monday}}",
          "conversation": "[Turn 1] (Current)\n- Target Tool Name 1: Airline-book",
          "user_intent": "book {conversation} now",
          "mcp_server_config": "## MCP Server Airline\n{'flights': []}\n",
          "mcp_server_tools": "{'name': 'Airline-book', 'parameters': {}}\n"}


def test_every_prompt_is_found_by_name_as_written() -> None:
    for relative in (rp.QUERYGEN, rp.GRAPH, rp.SCHEMAGEN):
        released = {k: v for k, v in _module(relative).items()
                    if isinstance(v, str) and not k.startswith("__")}
        for name, use in rp.USES.items():
            if use.module == relative:
                assert rp.text(name) == released[name]


def test_query_generator_and_refiner_use_format() -> None:
    p = _module(rp.QUERYGEN)
    values = {k: TRICKY[k] for k in ("mcp_server_config", "mcp_server_tools", "scenario",
                                     "conversation")}
    for solvability in (p["QueryGenerator_Solvability"], ""):
        assert rp.query_generator(**values, solvability=solvability) == \
            p["QueryGenerator_System_Prompt"].format(**values, solvability=solvability)
    refined = rp.query_refiner(**values, user_intent=TRICKY["user_intent"])
    assert refined == p["QueryRefiner_System_Prompt"].format(
        **values, user_intent=TRICKY["user_intent"])
    # the release's refiner prompt has no placeholders: the four rules are its whole text
    assert refined == p["QueryRefiner_System_Prompt"]


def test_the_user_prompts_use_a_replace_chain_in_the_release_order() -> None:
    p = _module(rp.QUERYGEN)
    expected = p["User_with_Tools_Prompt"]
    for key in ("scenario", "user_intent", "conversation", "mcp_server_config",
                "mcp_server_tools"):
        expected = expected.replace("{" + key + "}", TRICKY[key])
    got = rp.user_with_tools(**{k: TRICKY[k] for k in (
        "scenario", "user_intent", "conversation", "mcp_server_config", "mcp_server_tools")})
    assert got == expected
    # the intent's "{conversation}" was itself replaced (the chain runs in order)
    assert "book {conversation} now" not in got and "book [Turn 1]" in got
    # braces of the template and of the scenario survive a replace chain
    assert "{{Monday}}" in got
    knowledge = "The User Providable parameters are: city\n"
    expected = p["User_Prompt"]
    for key, value in (("scenario", TRICKY["scenario"]), ("user_intent", "go"),
                       ("conversation", "c"), ("user_knowledge", knowledge),
                       ("mcp_server_config", TRICKY["mcp_server_config"])):
        expected = expected.replace("{" + key + "}", value)
    assert rp.user(scenario=TRICKY["scenario"], user_intent="go", conversation="c",
                   user_knowledge=knowledge,
                   mcp_server_config=TRICKY["mcp_server_config"]) == expected


def test_the_solver_prompt_as_the_release_assembles_it() -> None:
    p = _module(rp.QUERYGEN)
    users = "Airline-check_in: the passenger checks in at the desk\n"
    rule2 = p["Interaction_Rule2"].replace("{user_tools}", users)
    assert rp.interaction_rule2(user_tools=users) == rule2
    expected = (p["Assistant_Prompt"].replace("{interaction_rule1}", p["Interaction_Rule1"])
                .replace("{interaction_rule2}", rule2)
                .replace("{conversation}", TRICKY["conversation"])
                .replace("{tools}", TRICKY["mcp_server_tools"]))
    got = rp.assistant(interaction_rule1=rp.interaction_rule1(), interaction_rule2=rule2,
                       conversation=TRICKY["conversation"], tools=TRICKY["mcp_server_tools"])
    assert got == expected
    # the non-conversational solver: both rules empty
    assert rp.assistant(interaction_rule1="", interaction_rule2="", conversation="x",
                        tools="t") == (p["Assistant_Prompt"].replace("{interaction_rule1}", "")
                                       .replace("{interaction_rule2}", "")
                                       .replace("{conversation}", "x").replace("{tools}", "t"))


def test_selector_judge_planner_schema_and_step_prompts() -> None:
    p = _module(rp.QUERYGEN)
    assert rp.solution_selector_user(conversation="c {x}", solutions="## Solution 0:\n") == \
        p["SolutionSelector_User_Prompt"].format(conversation="c {x}",
                                                 solutions="## Solution 0:\n")
    trajectory = "- Step 0[user]: book {it}\n- Step 1[tool_call]: [{'name': 'A-b'}]\n"
    assert rp.step_selector(trajectory=trajectory) == \
        p["StepSelector_Prompt"].replace("{trajectory}", trajectory)
    assert rp.solution_selector_filter(trajectory=trajectory) == \
        p["SolutionSelector_Filter_Prompt"].replace("{trajectory}", trajectory)
    assert rp.end_conversation(scenario="s", user_intent="u", conversation="c") == \
        p["End_Conversation_Prompt"].format(scenario="s", user_intent="u", conversation="c")
    assert rp.scenario_planner_user(tool_call_trace="## Tool 0\nA-b\n") == \
        p["ScenarioPlanner_User_Prompt"].format(tool_call_trace="## Tool 0\nA-b\n")
    assert rp.schema_generator_user(scenario="s", generated_schemas="None", schema="class X") \
        == p["SchemaGenerator_User_Prompt"].format(scenario="s", generated_schemas="None",
                                                   schema="class X")
    assert rp.user_tools_classification(tools="{'name': 'A-b'}\n") == \
        p["User_Tools_Classification"].replace("{tools}", "{'name': 'A-b'}\n")
    for split in (False, True):
        name = "ScenarioPlanner_System_Prompt" + ("_Split_Turn" if split else "")
        assert rp.scenario_planner_system(split_turns=split) == p[name]
    assert rp.solution_selector_system() == p["SolutionSelector_System_Prompt"]
    assert rp.schema_generator_system() == p["SchemaGenerator_System_Prompt"]


def test_graph_and_schema_generation_prompts_collapse_doubled_braces() -> None:
    g = _module(rp.GRAPH)
    adjacency = {"Airline-book": ["Airline-pay"]}
    got = rp.build_tool_dependency(tool_desc="Airline-book: books\n", adjacency_map=str(adjacency))
    assert got == g["Build_Tool_Dependency_Prompt"].format(tool_desc="Airline-book: books\n",
                                                          adjacency_map=adjacency)
    labels = rp.get_user_provided(tool_context="### Tool Context\n", text="0. city (string)")
    raw = g["Get_User_Provided_Prompt"]
    assert labels == raw.format(tool_context="### Tool Context\n", text="0. city (string)")
    # hand-checked on the file: its JSON example is written with doubled braces
    assert "{{" in raw and "{{" not in labels
    s = _module(rp.SCHEMAGEN)
    assert rp.schema_gen_user(data_source_content='{"a": 1}') == \
        s["SchemaGen_User_Prompt"].format(data_source_content='{"a": 1}')


def test_wrong_variables_and_the_release_s_broken_verifier_are_one_line() -> None:
    with pytest.raises(rp.ReleasePromptError, match="takes tool_call_trace; got trace"):
        rp.render("ScenarioPlanner_User_Prompt", trace="x")
    with pytest.raises(rp.ReleasePromptError, match="unknown release prompt"):
        rp.render("No_Such_Prompt")
    # the release formats UserVerifier_Prompt without the {query} its template holds
    with pytest.raises(rp.ReleasePromptError, match="placeholder 'query'"):
        rp.user_verifier(scenario="s", mcp_server_config="c", user_knowledge="k",
                         conversation="v")
    with pytest.raises(KeyError):
        _module(rp.QUERYGEN)["UserVerifier_Prompt"].format(
            scenario="s", mcp_server_config="c", user_knowledge="k", conversation="v")
