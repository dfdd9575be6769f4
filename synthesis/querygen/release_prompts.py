"""The EnvFactory release's QueryGen, graph and schema-generation prompts, read as data.

The project rule is that model-facing text of a release is data read from the pinned
release, never a copy in this repository (the release has no licence). Each prompt is a
module-level string constant in one of the release's prompt modules; it is found by name
with `ast` (the module is parsed, never executed or imported) from
`envs.release_registry.ENVFACTORY.source_text`, which reads `ENVFACTORY_RELEASE_DIR` when
set and the pinned commit's file otherwise.

The release renders its prompts in three ways, and each differs on edge cases, so every
prompt is rendered exactly the way the release's pipeline renders it:

- ``format``: `str.format` with keyword arguments (``{{`` becomes ``{``; a value is inserted
  once; a placeholder the call does not pass raises);
- ``replace``: a chain of ``text.replace("{name}", value)`` in the release's order (braces
  stay as they are, and a value holding a later placeholder is itself replaced);
- ``verbatim``: used as written (an agent's fixed instructions).

`USES` records, per prompt, how and with which variables the release's code renders it
(`src/gen/query_gen/utils.py`, `query_gen_non_conv.py`, `query_gen_conv.py`,
`src/graph/tool_graph.py`, `src/graph/tool_node.py`, `src/gen/mcp_schema_gen.py` at eff3b22);
the render functions below take exactly those variables.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from envs.release_registry import ENVFACTORY

__all__ = [
    "GRAPH", "QUERYGEN", "SCHEMAGEN", "USES", "PromptUse", "ReleasePromptError",
    "assistant", "build_tool_dependency", "end_conversation", "get_user_provided",
    "interaction_rule1", "interaction_rule2", "module_constants", "query_generator",
    "query_generator_solvability", "query_refiner", "render", "scenario_planner_system",
    "scenario_planner_user", "schema_design_system", "schema_gen_system", "schema_gen_user",
    "schema_generator_system", "schema_generator_user", "solution_selector_filter",
    "solution_selector_system", "solution_selector_user", "step_selector", "text",
    "user", "user_tools_classification", "user_verifier", "user_with_tools",
]

#: the release's prompt modules (paths in the repository)
QUERYGEN = "src/gen/query_gen/prompts.py"
GRAPH = "src/graph/prompts.py"
SCHEMAGEN = "src/gen/prompts.py"

How = Literal["verbatim", "format", "replace"]


class ReleasePromptError(ValueError):
    """A prompt the release's file does not define as a string, or a render call whose
    variables are not the release's; the message names the file and the prompt."""


@dataclass(frozen=True)
class PromptUse:
    """How the release's code renders one prompt."""

    module: str
    name: str
    how: How
    #: the variables the release passes, in the order its `replace` chain applies them
    variables: tuple[str, ...] = ()


def _uses(*uses: PromptUse) -> dict[str, PromptUse]:
    return {u.name: u for u in uses}


_CONTEXT = ("mcp_server_config", "mcp_server_tools", "scenario")

#: every prompt a stage of the release's pipeline sends, by its name in the release
USES: dict[str, PromptUse] = _uses(
    # the planner (utils.get_planner_instruction; non_conv.prepare)
    PromptUse(QUERYGEN, "ScenarioPlanner_System_Prompt", "verbatim"),
    PromptUse(QUERYGEN, "ScenarioPlanner_System_Prompt_Split_Turn", "verbatim"),
    PromptUse(QUERYGEN, "ScenarioPlanner_User_Prompt", "format", ("tool_call_trace",)),
    # the schema generator (non_conv.schema_generate)
    PromptUse(QUERYGEN, "SchemaGenerator_System_Prompt", "verbatim"),
    PromptUse(QUERYGEN, "SchemaGenerator_User_Prompt", "format",
              ("scenario", "generated_schemas", "schema")),
    # the query generator and refiner (utils.get_generator/refiner_instruction)
    PromptUse(QUERYGEN, "QueryGenerator_Solvability", "verbatim"),
    PromptUse(QUERYGEN, "QueryGenerator_System_Prompt", "format",
              (*_CONTEXT, "conversation", "solvability")),
    PromptUse(QUERYGEN, "QueryRefiner_System_Prompt", "format",
              (*_CONTEXT, "user_intent", "conversation")),
    # the solver (utils.get_assistant_instruction)
    PromptUse(QUERYGEN, "Interaction_Rule1", "verbatim"),
    PromptUse(QUERYGEN, "Interaction_Rule2", "replace", ("user_tools",)),
    PromptUse(QUERYGEN, "Assistant_Prompt", "replace",
              ("interaction_rule1", "interaction_rule2", "conversation", "tools")),
    # the conversation judge, the simulated user and its verifier (utils.get_*; conv)
    PromptUse(QUERYGEN, "End_Conversation_Prompt", "format",
              ("scenario", "user_intent", "conversation")),
    PromptUse(QUERYGEN, "User_with_Tools_Prompt", "replace",
              ("scenario", "user_intent", "conversation", "mcp_server_config",
               "mcp_server_tools")),
    PromptUse(QUERYGEN, "User_Prompt", "replace",
              ("scenario", "user_intent", "conversation", "user_knowledge",
               "mcp_server_config")),
    PromptUse(QUERYGEN, "UserVerifier_Prompt", "format",
              ("scenario", "mcp_server_config", "user_knowledge", "conversation")),
    PromptUse(QUERYGEN, "User_Tools_Classification", "replace", ("tools",)),
    # the selector and its two step passes (non_conv.select / filter / classify)
    PromptUse(QUERYGEN, "SolutionSelector_System_Prompt", "verbatim"),
    PromptUse(QUERYGEN, "SolutionSelector_User_Prompt", "format",
              ("conversation", "solutions")),
    PromptUse(QUERYGEN, "SolutionSelector_Filter_Prompt", "replace", ("trajectory",)),
    PromptUse(QUERYGEN, "StepSelector_Prompt", "replace", ("trajectory",)),
    # the graph passes (tool_node.batch_get_user_provided; tool_graph's LLM edge pass)
    PromptUse(GRAPH, "Get_User_Provided_Prompt", "format", ("tool_context", "text")),
    PromptUse(GRAPH, "Build_Tool_Dependency_Prompt", "format", ("tool_desc", "adjacency_map")),
    # schema generation of environments (mcp_schema_gen)
    PromptUse(SCHEMAGEN, "SchemaDesign_System_Prompt", "verbatim"),
    PromptUse(SCHEMAGEN, "SchemaGen_System_Prompt", "verbatim"),
    PromptUse(SCHEMAGEN, "SchemaGen_User_Prompt", "format", ("data_source_content",)),
)


@lru_cache(maxsize=8)
def _constants(relative: str, source: str) -> dict[str, str]:
    tree = ast.parse(source, filename=relative)
    found: dict[str, str] = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            found[node.targets[0].id] = node.value.value
    return found


def module_constants(relative: str) -> dict[str, str]:
    """Every module-level `NAME = "..."` string of the release file `relative`."""
    return _constants(relative, ENVFACTORY.source_text(relative))


def text(name: str) -> str:
    """The release's prompt `name` as written in its module (before rendering)."""
    use = _use(name)
    constants = module_constants(use.module)
    if name not in constants:
        raise ReleasePromptError(f"{use.module}: no string constant {name}")
    return constants[name]


def _use(name: str) -> PromptUse:
    if name not in USES:
        raise ReleasePromptError(f"unknown release prompt {name!r}")
    return USES[name]


def render(name: str, **values: str) -> str:
    """Prompt `name` rendered as the release renders it, from exactly its variables."""
    use = _use(name)
    if set(values) != set(use.variables):
        raise ReleasePromptError(
            f"{use.module}: {name} takes {', '.join(use.variables) or 'no variables'}; "
            f"got {', '.join(sorted(values)) or 'none'}")
    template = text(name)
    if use.how == "format":
        try:
            return template.format(**values)
        except KeyError as e:
            raise ReleasePromptError(
                f"{use.module}: {name} has placeholder {e} the release never passes "
                "(its own .format call raises here)") from None
    if use.how == "replace":
        for variable in use.variables:
            template = template.replace("{" + variable + "}", values[variable])
    return template


# --- one function per prompt, taking exactly the release's variables -------------------

def scenario_planner_system(*, split_turns: bool = False) -> str:
    return render("ScenarioPlanner_System_Prompt_Split_Turn" if split_turns
                  else "ScenarioPlanner_System_Prompt")


def scenario_planner_user(*, tool_call_trace: str) -> str:
    return render("ScenarioPlanner_User_Prompt", tool_call_trace=tool_call_trace)


def schema_generator_system() -> str:
    return render("SchemaGenerator_System_Prompt")


def schema_generator_user(*, scenario: str, generated_schemas: str, schema: str) -> str:
    return render("SchemaGenerator_User_Prompt", scenario=scenario,
                  generated_schemas=generated_schemas, schema=schema)


def query_generator_solvability() -> str:
    return render("QueryGenerator_Solvability")


def query_generator(*, mcp_server_config: str, mcp_server_tools: str, scenario: str,
                    conversation: str, solvability: str) -> str:
    return render("QueryGenerator_System_Prompt", mcp_server_config=mcp_server_config,
                  mcp_server_tools=mcp_server_tools, scenario=scenario,
                  conversation=conversation, solvability=solvability)


def query_refiner(*, mcp_server_config: str, mcp_server_tools: str, scenario: str,
                  user_intent: str, conversation: str) -> str:
    return render("QueryRefiner_System_Prompt", mcp_server_config=mcp_server_config,
                  mcp_server_tools=mcp_server_tools, scenario=scenario,
                  user_intent=user_intent, conversation=conversation)


def interaction_rule1() -> str:
    return render("Interaction_Rule1")


def interaction_rule2(*, user_tools: str) -> str:
    return render("Interaction_Rule2", user_tools=user_tools)


def assistant(*, interaction_rule1: str, interaction_rule2: str, conversation: str,
              tools: str) -> str:
    return render("Assistant_Prompt", interaction_rule1=interaction_rule1,
                  interaction_rule2=interaction_rule2, conversation=conversation, tools=tools)


def end_conversation(*, scenario: str, user_intent: str, conversation: str) -> str:
    return render("End_Conversation_Prompt", scenario=scenario, user_intent=user_intent,
                  conversation=conversation)


def user_with_tools(*, scenario: str, user_intent: str, conversation: str,
                    mcp_server_config: str, mcp_server_tools: str) -> str:
    return render("User_with_Tools_Prompt", scenario=scenario, user_intent=user_intent,
                  conversation=conversation, mcp_server_config=mcp_server_config,
                  mcp_server_tools=mcp_server_tools)


def user(*, scenario: str, user_intent: str, conversation: str, user_knowledge: str,
         mcp_server_config: str) -> str:
    return render("User_Prompt", scenario=scenario, user_intent=user_intent,
                  conversation=conversation, user_knowledge=user_knowledge,
                  mcp_server_config=mcp_server_config)


def user_verifier(*, scenario: str, mcp_server_config: str, user_knowledge: str,
                  conversation: str) -> str:
    """Raises `ReleasePromptError` on the release's file: its template has a `{query}` the
    release's `.format` call does not pass (verification is off in every preset)."""
    return render("UserVerifier_Prompt", scenario=scenario,
                  mcp_server_config=mcp_server_config, user_knowledge=user_knowledge,
                  conversation=conversation)


def user_tools_classification(*, tools: str) -> str:
    return render("User_Tools_Classification", tools=tools)


def solution_selector_system() -> str:
    return render("SolutionSelector_System_Prompt")


def solution_selector_user(*, conversation: str, solutions: str) -> str:
    return render("SolutionSelector_User_Prompt", conversation=conversation,
                  solutions=solutions)


def solution_selector_filter(*, trajectory: str) -> str:
    return render("SolutionSelector_Filter_Prompt", trajectory=trajectory)


def step_selector(*, trajectory: str) -> str:
    return render("StepSelector_Prompt", trajectory=trajectory)


def get_user_provided(*, tool_context: str, text: str) -> str:
    return render("Get_User_Provided_Prompt", tool_context=tool_context, text=text)


def build_tool_dependency(*, tool_desc: str, adjacency_map: str) -> str:
    """`adjacency_map` as the release inserts it: `str()` of its dict."""
    return render("Build_Tool_Dependency_Prompt", tool_desc=tool_desc,
                  adjacency_map=adjacency_map)


def schema_design_system() -> str:
    return render("SchemaDesign_System_Prompt")


def schema_gen_system() -> str:
    return render("SchemaGen_System_Prompt")


def schema_gen_user(*, data_source_content: str) -> str:
    return render("SchemaGen_User_Prompt", data_source_content=data_source_content)


# --- fixed texts inside the release's pipeline code -----------------------------------

#: the release's pipeline modules, whose inline instructions and error texts are read too
NON_CONV = "src/gen/query_gen/query_gen_non_conv.py"
CONV = "src/gen/query_gen/query_gen_conv.py"


def _template(node: ast.expr, where: str) -> str:
    """A string literal as a `str.format` template: an f-string's holes become `{}`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.replace("{", "{{").replace("}", "}}")
    if isinstance(node, ast.JoinedStr):
        return "".join(str(v.value).replace("{", "{{").replace("}", "}}")
                       if isinstance(v, ast.Constant) else "{}" for v in node.values)
    raise ReleasePromptError(f"{where} is not a string literal")


@lru_cache(maxsize=8)
def _functions(relative: str, source: str) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = ast.parse(source, filename=relative)
    found = {n.name: n for n in ast.walk(tree)
             if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    # a method also as `Class.method` (two classes may both define `__str__`)
    found.update({f"{c.name}.{n.name}": n for c in ast.walk(tree) if isinstance(c, ast.ClassDef)
                  for n in c.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)})
    return found


_LITERAL = r'(f?)"(.*)"\s*$'


def _assigned_by_lines(relative: str, source: str, function: str, variable: str,
                       nth: int) -> str:
    """`inline` for a file this Python cannot parse (`query_gen_conv.py` nests quotes in
    f-strings, which only Python 3.12 reads): the one-line literals assigned to `variable`
    between `def function(` and the next `def`."""
    body = re.split(rf"\n\s*(?:async\s+)?def {re.escape(function)}\(", source, maxsplit=1)
    if len(body) < 2:
        raise ReleasePromptError(f"{relative}: no function {function}")
    region = re.split(r"\n\s*(?:async\s+)?def \w+\(", body[1], maxsplit=1)[0]
    found = re.findall(rf"^\s*{re.escape(variable)}\s*\+?=\s*{_LITERAL}", region, flags=re.M)
    if nth >= len(found):
        raise ReleasePromptError(f"{relative}: {function}: string {nth} assigned to {variable} "
                                 "not found")
    is_f, body_text = found[nth]
    if is_f:  # holes first: they may hold quotes, which the literal cannot
        body_text = re.sub(r"\{[^{}]*\}", "\uE000", body_text)
    text = str(ast.literal_eval(f'"{body_text}"')).replace("{", "{{").replace("}", "}}")
    return text.replace("\uE000", "{}")


def _ordered(function: ast.AST) -> list[ast.AST]:
    return sorted(ast.walk(function), key=lambda n: (getattr(n, "lineno", 0),
                                                      getattr(n, "col_offset", 0)))


def inline(relative: str, function: str, *, assigned: str | None = None,
           asserted: int | None = None, raised: int | None = None,
           returned: int | None = None, nth: int = 0) -> str:
    """A string literal inside function `function` (or method `Class.method`) of release
    file `relative`, as a format template (`{}` per f-string hole): the `nth` literal
    assigned (`=` or `+=`) to the variable `assigned`, or the message of the `asserted`-th
    assert, or of the `raised`-th raise, or the `returned`-th returned literal, counted in
    source order."""
    source = ENVFACTORY.source_text(relative)
    try:
        functions = _functions(relative, source)
    except SyntaxError:
        if assigned is None:
            raise
        return _assigned_by_lines(relative, source, function, assigned, nth)
    if function not in functions:
        raise ReleasePromptError(f"{relative}: no function {function}")
    where = f"{relative}: {function}"
    nodes = _ordered(functions[function])
    if assigned is not None:
        values = [n.value for n in nodes
                  if (isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == assigned
                                                        for t in n.targets))
                  or (isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)
                      and n.target.id == assigned)]
        values = [v for v in values if isinstance(v, ast.Constant | ast.JoinedStr)]
        label = f"{where}: string {nth} assigned to {assigned}"
    elif asserted is not None:
        values = [n.msg for n in nodes if isinstance(n, ast.Assert) and n.msg is not None]
        nth, label = asserted, f"{where}: assert {asserted}"
    elif raised is not None:
        values = [n.exc.args[0] for n in nodes if isinstance(n, ast.Raise)
                  and isinstance(n.exc, ast.Call) and n.exc.args]
        nth, label = raised, f"{where}: raise {raised}"
    elif returned is not None:
        values = [n.value for n in nodes if isinstance(n, ast.Return)
                  and isinstance(n.value, ast.Constant | ast.JoinedStr)]
        nth, label = returned, f"{where}: return {returned}"
    else:
        raise TypeError("inline() needs assigned=, asserted=, raised= or returned=")
    if nth >= len(values):
        raise ReleasePromptError(f"{label} not found")
    return _template(values[nth], label)


#: every release file the release pipeline reads
SOURCES = (QUERYGEN, GRAPH, SCHEMAGEN, NON_CONV, CONV, "src/gen/__init__.py")


def source_problem(sources: Sequence[str] = SOURCES, *, reader: str = "the release pipeline",
                   instead: str = "run with --pipeline ours") -> str | None:
    """One line naming the release files `reader` cannot read (None when all can be), so a
    run can refuse up front instead of failing on every chain or pass; `instead` is the
    way round it (our own variant)."""
    missing = []
    for relative in sources:
        try:
            ENVFACTORY.source_text(relative)
        except (OSError, RuntimeError) as e:
            missing.append(f"{relative} ({e})")
    if not missing:
        return None
    return (f"{reader} cannot read " + "; ".join(missing)
            + f"; {instead}, or point ENVFACTORY_RELEASE_DIR at a full checkout")
