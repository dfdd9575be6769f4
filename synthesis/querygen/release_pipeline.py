"""QueryGen as the release runs it: one chain through its per-turn state machine.

The release (`src/gen/query_gen/query_gen_non_conv.py`, `query_gen_conv.py` at eff3b22)
drives its agents with openai-agents: an agent's instructions are its system prompt, built
afresh for every call; each agent keeps a session per request id whose user inputs and
replies come before the new input; a reply that fails a check is answered, as the next
input, with the release's "Error attempt: <repr(e)>" text. Here each agent call is one
Inspect `Model.generate` with exactly those messages, so any provider plays the roles
(`synth` for the planner, schema generator, query generator, refiner, selector and tool
classifier; `solver`; `user` for the simulated user; `judge` for the end-of-conversation
check). Per chain:

1. the planner writes the scenario from the chain's tool trace; with user tools
   (`sft_conv`) a classifier marks the tools only the user can run;
2. turn 0 starts from a database the schema generator writes per server, from the
   server's `Scenario_Schema` source, checked by loading it into the environment (the
   server's own `load_scenario` for release environments); later turns start from the
   previous turn's chosen final state;
3. the query generator writes `<user_intent>` and `<query>`; `sft_conv` refines it;
4. k solver rollouts in fresh worlds, tool calls as `<tool_call>` text, results as
   `<tool_response>` user messages; non-conversational rollouts pass when they made a
   call, conversational ones when the judge says `###STOP###`;
5. the SolutionSelector picks one passing candidate; its steps and final state become the
   turn; `rl_nonconv` filters its steps and masks arguments; a turn without a pick ends
   the chain (the decided turns before it are kept, as the release saves them).

`select` adds our state-agreement rule beside the release's LLM choice: `state` keeps the
largest group of passing candidates with equal final states (at least two) and takes its
first; `both` asks the selector among that group only. Which ran is in the provenance.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
)

import synthesis.querygen.release_context as rc
import synthesis.querygen.release_prompts as rp
from envs import registry
from envs.names import qualify, split_name
from envs.world import World
from harness.trajectory import Call, Message, MessageCall, Provenance, Trajectory, Turn
from synthesis.chain import ToolChain
from synthesis.querygen.config import QueryGenConfig
from synthesis.querygen.outcome import Kept, Outcome, Rejected
from synthesis.querygen.rollout import run_isolated
from synthesis.task_specs import check

__all__ = ["RELEASE_SETTINGS", "STOP_TOKEN", "release_synthesize"]

#: the release's model settings (GenConfig: temperature 1.0, top_p 0.95, presence 1.5)
RELEASE_SETTINGS = GenerateConfig(temperature=1.0, top_p=0.95, presence_penalty=1.5)
#: the end-of-conversation judge's stop token (utils.STOP_TOKEN)
STOP_TOKEN = "###STOP###"


class _Retry(Exception):
    """A reply the release's code would reject (its assert or raise); the message is the
    release's own, so `repr` of this exception is what the agent is shown next."""


class AssertionRetry(_Retry, AssertionError):
    pass


def _error(template: str, error: BaseException) -> str:
    inner = error.args[0] if isinstance(error, _Retry) else None
    shown = (f"{'AssertionError' if isinstance(error, AssertionError) else 'ValueError'}"
             f"({inner!r})") if inner is not None else repr(error)
    return template.format(shown)


@dataclass
class _Agent:
    """One agent of one request id: its model and its session (prior inputs and replies)."""

    model: Model
    session: list[ChatMessage] = field(default_factory=list)
    #: the inputs queued for it (the release's context_manager prompts; the last is sent)
    prompts: list[str] = field(default_factory=list)

    async def run(self, instructions: str, prompt: str) -> dict[str, Any]:
        messages = [ChatMessageSystem(content=instructions), *self.session,
                    ChatMessageUser(content=prompt)]
        output = await self.model.generate(messages, config=RELEASE_SETTINGS)
        text = output.completion
        self.session += [ChatMessageUser(content=prompt), ChatMessageAssistant(content=text)]
        return rc.parse_structured_output(text)


@dataclass
class _Node:
    """One turn (the release's ToolQueryNode)."""

    targets: list[str]
    servers: list[str]
    initial: dict[str, Any] | None = None
    steps: list[rc.Step] = field(default_factory=list)
    query: str | None = None
    user_intent: str | None = None
    final: dict[str, Any] | None = None
    decision: bool | None = None
    accuracy: float | None = None
    traces: dict[int, list[rc.Step]] = field(default_factory=dict)
    scenarios: dict[int, dict[str, Any]] = field(default_factory=dict)
    decisions: dict[int, bool] = field(default_factory=dict)


class _Run:
    """The state of one chain (the release's QueryGenContext and ToolQueryChain)."""

    def __init__(self, chain: ToolChain, config: QueryGenConfig, models: Mapping[str, Model]):
        self.chain, self.config, self.models = chain, config, models
        self.envs = chain.environments
        self.nodes = [_Node(targets=[qualify(s.env, s.tool) for s in chain.turn_steps(t)],
                            servers=list(dict.fromkeys(s.env for s in chain.turn_steps(t))))
                      for t in range(len(chain.turns))]
        self.scenario: str | None = None
        self.user_tools: dict[str, str] = {}
        self.user_tool_use = config.user_interaction
        self.rejections: list[str] = []
        self.agents: dict[tuple[str, str], _Agent] = {}

    def agent(self, name: str, request: str, role: str = "synth") -> _Agent:
        key = (name, request)
        if key not in self.agents:
            self.agents[key] = _Agent(self.models[role])
        return self.agents[key]

    # -- the texts each instruction is built from ---------------------------------

    def conversation(self, idx: int) -> str:
        return rc.conversation([n.steps for n in self.nodes], [n.targets for n in self.nodes],
                               idx)

    def config_text(self, idx: int) -> str:
        node = self.nodes[idx]
        return rc.server_scenario({_shown(e): v for e, v in (node.initial or {}).items()},
                                  [_shown(e) for e in node.servers])

    def tools_text(self, idx: int) -> str:
        return rc.tool_list(self.nodes[idx].servers)

    # -- 1. prepare ----------------------------------------------------------------

    async def prepare(self) -> bool:
        """One attempt (the chain loop retries): True once the scenario is written."""
        planner = self.agent("ScenarioPlanner", "0")
        prompt = planner.prompts[-1] if planner.prompts else rp.scenario_planner_user(
            tool_call_trace=rc.tool_trace([rc.graph_tool(s.env, _spec(s.env, s.tool))
                                           for s in self.chain.steps]))
        try:
            out = await planner.run(rp.scenario_planner_system(), prompt)
            if "scenario" not in out:
                raise AssertionRetry(rp.inline(rp.NON_CONV, "prepare", asserted=0))
            self.scenario = str(out["scenario"])
        except Exception as e:  # noqa: BLE001 - the release retries on any error
            planner.prompts.append(_error(rp.inline(rp.NON_CONV, "prepare",
                                                    assigned="err_msg"), e))
            return False
        await self.classify_tools()
        return True

    async def classify_tools(self) -> None:
        if not self.user_tool_use:
            return
        classifier = self.agent("UserToolClassifier", "0")
        prompt = rp.inline(rp.NON_CONV, "classify_tools", assigned="prompt").format()
        instructions = rp.user_tools_classification(tools=self.tools_text(0))
        known = {qualify(e, s.name) for e in self.envs for s in registry.get(e).specs()}
        for _ in range(self.config.max_retry):
            try:
                out = await classifier.run(instructions, prompt)
                if "user_tools" not in out:
                    raise AssertionRetry(rp.inline(rp.NON_CONV, "classify_tools", asserted=0))
                tools = {}
                for entry in out["user_tools"]:
                    if entry["name"] not in known:
                        raise KeyError(entry["name"])
                    tools[entry["name"]] = entry["description"]
                self.user_tools = tools
                if not tools:
                    self.user_tool_use = False
                return
            except Exception as e:  # noqa: BLE001
                prompt = _error(rp.inline(rp.NON_CONV, "classify_tools", assigned="err_msg"), e)
        self.rejections.append("the tool classifier gave no usable reply (no user tools)")

    # -- 2. start: the schema generator's databases -----------------------------------

    async def schema_generate(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for i, env in enumerate(self.envs):
            agent = self.agent("SchemaGenerator", str(i))
            for _ in range(self.config.max_retry):
                prompt = agent.prompts[-1] if agent.prompts else rp.schema_generator_user(
                    scenario=str(self.scenario),
                    generated_schemas=rc.generated_schemas(
                        {_shown(e): v for e, v in result.items()}),
                    schema=rc.scenario_schema_source(env))
                try:
                    out = await agent.run(rp.schema_generator_system(), prompt)
                    if "schema" not in out:
                        raise AssertionRetry(rp.inline(rp.NON_CONV, "schema_generate",
                                                       asserted=0))
                    if "scenario" in out:
                        self.scenario = str(out["scenario"])
                    problem = _load_problem(env, out["schema"])
                    if problem is not None:
                        raise _Retry(rp.inline(rp.NON_CONV, "schema_generate", raised=0)
                                     .format(_shown(env), problem))
                    result[env] = out["schema"]
                    break
                except Exception as e:  # noqa: BLE001
                    agent.prompts.append(_error(rp.inline(rp.NON_CONV, "schema_generate",
                                                          assigned="err_msg"), e))
            else:
                self.rejections.append(f"schema generator gave no loadable database for {env}")
        return result

    async def start(self, idx: int) -> bool:
        initial = await self.schema_generate() if idx == 0 else self.nodes[idx - 1].final
        if initial and all(e in initial for e in self.envs):
            self.nodes[idx].initial = {e: _state(e, initial[e]) for e in self.envs}
            return True
        return False

    # -- 3. generate and refine --------------------------------------------------------

    async def generate(self, idx: int, refiner: bool) -> bool:
        node = self.nodes[idx]
        name, function = ("QueryRefiner", "refine") if refiner else ("QueryGenerator", "generate")
        agent = self.agent(name, str(idx))
        if agent.prompts:
            prompt = agent.prompts[-1]
        elif refiner:
            prompt = rp.inline(rp.NON_CONV, "refine", assigned="prompt").format() + str(node.query)
        else:
            prompt = rp.inline(rp.NON_CONV, "generate", assigned="prompt").format() + "".join(
                f"- Target Tool Name {j + 1}: {t}\n" for j, t in enumerate(node.targets))
        common = dict(mcp_server_config=self.config_text(idx),
                      mcp_server_tools=self.tools_text(idx), scenario=str(self.scenario),
                      conversation=self.conversation(idx))
        instructions = (rp.query_refiner(**common, user_intent=str(node.user_intent)) if refiner
                        else rp.query_generator(**common, solvability="" if
                                                self.config.user_interaction
                                                else rp.query_generator_solvability()))
        try:
            out = await agent.run(instructions, prompt)
            for n, tag in enumerate(("query", "user_intent")):
                if tag not in out:
                    raise AssertionRetry(rp.inline(rp.NON_CONV, function, asserted=n))
            node.query, node.user_intent = str(out["query"]), str(out["user_intent"])
            node.steps = [{"role": "user", "content": node.query}]
            return True
        except Exception as e:  # noqa: BLE001
            agent.prompts.append(_error(rp.inline(rp.NON_CONV, function, assigned="err_msg"), e))
            return False

    # -- 4. solve ---------------------------------------------------------------------

    def solver_instructions(self, idx: int) -> str:
        users = "".join(f"{n}: {d}\n" for n, d in self.user_tools.items())
        rule2 = rp.interaction_rule2(user_tools=users) if self.user_tool_use else ""
        return rp.assistant(
            interaction_rule1=rp.interaction_rule1() if self.config.user_interaction else "",
            interaction_rule2=rule2, conversation=self.conversation(idx),
            tools=rc.tool_list(self.nodes[idx].servers, without=set(self.user_tools)))

    def execute(self, world: World, tool: Any, *, user: bool = False) -> str:
        try:
            name = tool["name"]
            if not user and name in self.user_tools:
                return rp.inline(rp.CONV, "solve", assigned="tool_response").format(name)
            parts = split_name(name, {e: None for e in world.envs})
            result = world.call_qualified(name, tool.get("arguments")) if parts is None \
                else world.call(*parts, tool.get("arguments") or {})
            # a success as the release's MCP client reads it back; failures keep our text
            return rc.mcp_text(result.content) if result.ok else result.text()
        except Exception as e:  # noqa: BLE001 - the release's execute() answers any error
            return rp.inline("src/gen/__init__.py", "execute", assigned="err_msg").format(
                tool, repr(e))

    async def solve(self, idx: int, k: int) -> None:
        node = self.nodes[idx]
        agent = self.agent(f"QuerySolver_{k}", f"{idx}{k}", "solver")
        trace: list[rc.Step] = [{"role": "user", "content": node.query}]
        node.traces[k] = trace
        assert node.initial is not None
        world = World(self.envs, node.initial)
        instructions = self.solver_instructions(idx)
        for _ in range(self.config.max_solve):
            prompt = agent.prompts[-1] if agent.prompts else str(node.query)
            try:
                out = await agent.run(instructions, prompt)
                if "tool_call" in out:
                    tools = out["tool_call"] if isinstance(out["tool_call"], list) \
                        else [out["tool_call"]]
                    responses = [self.execute(world, t) for t in tools]
                    trace.append({"role": "tool_call", "content": tools,
                                  "think": out.get("think")})
                    trace.append({"role": "tool_response", "content": responses})
                    agent.prompts.append("".join(f"<tool_response>\n{r}\n</tool_response>\n"
                                                 for r in responses))
                    continue
                said = out.get("non_think")
                if not self.config.user_interaction:
                    node.decisions[k] = len(trace) > 1
                    trace.append({"role": "assistant", "content": said, "think": out.get("think")})
                    break
                reply = await self.interact(idx, k, world, str(said))
                trace.append({"role": "assistant", "content": said, "think": out.get("think")})
                if STOP_TOKEN in reply:
                    node.decisions[k] = True
                    break
                trace.append({"role": "user", "content": reply})
                agent.prompts.append(reply)
            except Exception as e:  # noqa: BLE001
                agent.prompts.append(_error(rp.inline(rp.NON_CONV, "solve", assigned="err_msg"),
                                            e))
        node.scenarios[k] = world.snapshot()

    async def interact(self, idx: int, k: int, world: World, message: str) -> str:
        """The judge, then the simulated user (with its tools), for one assistant text."""
        node = self.nodes[idx]
        end = self.agent(f"EndConversation_{k}", f"{idx}{k}", "judge")
        out = await end.run(rp.end_conversation(
            scenario=str(self.scenario), user_intent=str(node.user_intent),
            conversation=self.conversation(idx)), end.prompts[-1] if end.prompts else message)
        if STOP_TOKEN in out["non_think"]:
            return str(out["non_think"])
        user = self.agent(f"User_{k}", f"{idx}{k}", "user")
        final = ""
        for _ in range(self.config.max_interaction):
            prompt = user.prompts[-1] if user.prompts else message
            try:
                reply = await user.run(self.user_instructions(idx), prompt)
                if "tool_call" in reply:
                    tools = reply["tool_call"] if isinstance(reply["tool_call"], list) \
                        else [reply["tool_call"]]
                    text = rp.inline(rp.CONV, "interact", assigned="tool_responses_text").format()
                    for tool in tools:
                        if tool["name"] not in self.user_tools:
                            response = rp.inline(rp.CONV, "interact",
                                                 assigned="tool_response").format(tool["name"])
                        else:
                            response = self.execute(world, tool, user=True)
                            final += rp.inline(rp.CONV, "interact", assigned="final_user_response",
                                               nth=1).format(tool)
                            final += rp.inline(rp.CONV, "interact", assigned="final_user_response",
                                               nth=2).format(response)
                        text += f"<tool_response>\n{response}\n</tool_response>\n"
                    user.prompts.append(text)
                    continue
                final += str(reply["non_think"])
                break
            except Exception as e:  # noqa: BLE001
                user.prompts.append(_error(rp.inline(rp.CONV, "interact", assigned="err_msg"), e))
        return final

    def user_instructions(self, idx: int) -> str:
        node = self.nodes[idx]
        common = dict(scenario=str(self.scenario), user_intent=str(node.user_intent),
                      conversation=self.conversation(idx), mcp_server_config=self.config_text(idx))
        if self.user_tool_use:
            return rp.user_with_tools(**common, mcp_server_tools=rc.tool_list(
                node.servers, only=set(self.user_tools)))
        return rp.user(**common, user_knowledge=rc.user_knowledge(self.chain.environments, {}))

    # -- 5. select ----------------------------------------------------------------------

    async def select(self, idx: int) -> None:
        node = self.nodes[idx]
        passing = [k for k in sorted(node.traces) if node.decisions.get(k)]
        if self.config.select in ("state", "both"):
            group = _agreeing(passing, node.scenarios)
            if not group:
                self.rejections.append(f"turn {idx}: no two passing candidates agree on the "
                                       "final state")
                return
            if self.config.select == "state":
                self._choose(idx, group[0], len(group))
                return
            node.decisions = {k: k in group for k in node.decisions}
        agent = self.agent("SolutionSelector", str(idx))
        for _ in range(self.config.max_retry):
            prompt = agent.prompts[-1] if agent.prompts else rp.solution_selector_user(
                conversation=self.conversation(idx),
                solutions=rc.solutions(node.traces, node.decisions))
            try:
                out = await agent.run(rp.solution_selector_system(), prompt)
                if "decision" not in out or "selection" not in out:
                    raise AssertionRetry(rp.inline(rp.NON_CONV, "select", asserted=0))
                if not isinstance(out["decision"], dict):
                    raise AssertionRetry(rp.inline(rp.NON_CONV, "select", asserted=1))
                try:
                    chosen: Any = int(out["selection"])
                except (TypeError, ValueError):
                    chosen = out["selection"]
                if isinstance(chosen, int):
                    await self._chosen(idx, chosen, sum(1 for v in out["decision"].values() if v))
                else:
                    node.accuracy = 0
                    self.rejections.append(f"turn {idx}: the selector chose none ({chosen!r})")
                return
            except Exception as e:  # noqa: BLE001
                agent.prompts.append(_error(rp.inline(rp.NON_CONV, "select", assigned="err_msg"),
                                            e))
        self.rejections.append(f"turn {idx}: the selector gave no usable reply")

    async def _chosen(self, idx: int, k: int, accepted: int) -> None:
        node = self.nodes[idx]
        if k not in node.scenarios:
            raise KeyError(k)  # the release indexes pass_k_scenario[selected] the same way
        trace = node.traces[k]
        if self.config.filter_steps:
            trace = await self.filter(idx, trace)
        self._choose(idx, k, accepted, trace)

    def _choose(self, idx: int, k: int, accepted: int,
                trace: list[rc.Step] | None = None) -> None:
        node = self.nodes[idx]
        node.decision, node.steps = True, trace if trace is not None else node.traces[k]
        node.final = node.scenarios[k]
        node.accuracy = accepted / self.config.pass_k

    async def filter(self, idx: int, trace: list[rc.Step]) -> list[rc.Step]:
        agent = self.agent("SolutionSelector", str(idx))
        prompt = rp.solution_selector_filter(trajectory=rc.trajectory_text(trace))
        for _ in range(self.config.max_retry):
            try:
                out = await agent.run(rp.solution_selector_system(), prompt)
                if "steps" not in out:
                    raise AssertionRetry(rp.inline(rp.NON_CONV, "filter", asserted=0))
                kept = [trace[0]]
                for step in out["steps"]:
                    i, role = int(step["index"]), step["role"]
                    if role not in ("tool_call", "assistant"):
                        raise AssertionRetry(rp.inline(rp.NON_CONV, "filter", asserted=1)
                                             .format(role))
                    if role != trace[i]["role"]:
                        raise AssertionRetry(rp.inline(rp.NON_CONV, "filter", asserted=2)
                                             .format(i))
                    if role == "tool_call":
                        for call in step["content"]:
                            if not {"name", "arguments", "masked_arguments"} <= set(call):
                                raise AssertionRetry(rp.inline(rp.NON_CONV, "filter",
                                                               asserted=3).format())
                        kept += [{"role": "tool_call", "content": step["content"]},
                                 {"role": "tool_response", "content": trace[i + 1]["content"]}]
                    else:
                        kept.append({"role": "assistant", "content": trace[i]["content"]})
                        if i + 1 < len(trace):
                            kept.append({"role": "user", "content": trace[i + 1]["content"]})
                return kept
            except Exception as e:  # noqa: BLE001
                prompt = _error(rp.inline(rp.NON_CONV, "filter", assigned="err_msg"), e)
        return trace

    # -- the chain ----------------------------------------------------------------------

    async def run(self) -> None:
        for _ in range(self.config.max_retry):
            if await self.prepare():
                break
        if self.scenario is None:
            self.rejections.append("the planner gave no scenario")
            return
        for idx in range(len(self.nodes)):
            state = "start"
            for _ in range(self.config.max_iterations):
                if state == "start":
                    state = "generate" if await self.start(idx) else "done"
                elif state == "generate":
                    if await self.generate(idx, refiner=False):
                        state = "refine" if self.config.refine else "solve"
                elif state == "refine":
                    if await self.generate(idx, refiner=True):
                        state = "solve"
                elif state == "solve":
                    await self.solve_all(idx)
                    state = "done"
                else:
                    break
            if not self.nodes[idx].decision:
                if not self.rejections:
                    self.rejections.append(f"turn {idx}: not decided within "
                                           f"{self.config.max_iterations} iterations")
                break

    async def solve_all(self, idx: int) -> None:
        await run_isolated([partial(self.solve, idx, k) for k in range(self.config.pass_k)])
        if any(self.nodes[idx].decisions.values()):
            await self.select(idx)
        else:
            self.rejections.append(f"turn {idx}: no candidate passed")


def _shown(env: str) -> str:
    return qualify(env, "").removesuffix("-")


def _spec(env: str, tool: str) -> Any:
    return next(s for s in registry.get(env).specs() if s.name == tool)


def _load_problem(env: str, data: Any) -> str | None:
    """Why `data` cannot be `env`'s starting database (None when it loads and reads back
    equal, as the release's `load_scenario(check=True)` requires)."""
    if not isinstance(data, dict):
        return f"the schema must be a JSON object, got {type(data).__name__}"
    try:
        world = World([env], {env: data})
    except Exception as e:  # noqa: BLE001 - the environment's own refusal is the reason
        return str(e)
    del world
    return None


def _state(env: str, data: Any) -> dict[str, Any]:
    return World([env], {env: data}).snapshot()[env]


def _agreeing(ks: Sequence[int], scenarios: Mapping[int, Any]) -> list[int]:
    groups: dict[str, list[int]] = {}
    for k in ks:
        groups.setdefault(json.dumps(scenarios.get(k), sort_keys=True), []).append(k)
    best = max(groups.values(), key=len, default=[])
    return best if len(best) >= 2 else []


def _turn_record(run: _Run, idx: int, t_calls: list[Call], msgs: list[Message]) -> Turn:
    node = run.nodes[idx]
    users = [str(s["content"]) for s in node.steps if s["role"] == "user"]
    return Turn(user="\n".join(users), gold_calls=t_calls, gold_state_after=node.final)


def _record(run: _Run, idx: int) -> tuple[Turn, list[Message]]:
    """A decided turn as our Turn (its successful calls are the gold) and messages."""
    node = run.nodes[idx]
    envs = {e: None for e in run.envs}
    calls: list[Call] = []
    messages: list[Message] = []
    for i, step in enumerate(node.steps):
        if step["role"] == "user":
            messages.append(Message(role="user", content=str(step["content"]), turn=idx))
        elif step["role"] == "assistant":
            messages.append(Message(role="assistant", content=str(step["content"]), turn=idx))
        elif step["role"] == "tool_call":
            responses = node.steps[i + 1]["content"] if i + 1 < len(node.steps) else []
            made = []
            for j, tool in enumerate(step["content"]):
                if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                    continue
                parts = split_name(tool["name"], envs)
                given = tool.get("arguments")
                arguments: dict[str, Any] = given if isinstance(given, dict) else {}
                made.append(MessageCall(id=f"call_{idx}_{i}_{j}", name=tool["name"],
                                        arguments=arguments))
                failed = j >= len(responses) or str(responses[j]).startswith("Error")
                if parts is not None and not failed:
                    calls.append(Call(env=parts[0], name=parts[1], arguments=arguments,
                                      masked_arguments=[str(m) for m in
                                                        tool.get("masked_arguments") or []]))
            messages.append(Message(role="assistant", content="", tool_calls=made, turn=idx))
            for j, call in enumerate(made):
                text = str(responses[j]) if j < len(responses) else ""
                messages.append(Message(role="tool", content=text, tool_call_id=call.id,
                                        error=text.startswith("Error"), turn=idx))
    return _turn_record(run, idx, calls, messages), messages


async def release_synthesize(chain: ToolChain, config: QueryGenConfig, *, traj_id: str,
                             models: Mapping[str, Model]) -> Outcome:
    """One chain through the release's pipeline: `Kept` with its decided turns, or
    `Rejected` when no turn was decided (reasons listed)."""
    run = _Run(chain, config, models)
    await run.run()
    decided = [i for i, n in enumerate(run.nodes) if n.decision]
    decided = decided[:next((j for j, i in enumerate(decided) if i != j), len(decided))]
    if not decided:
        return Rejected(reason="no_turn_decided", detail="; ".join(run.rejections) or "none",
                        turn=0)
    turns, messages = [], []
    for i in decided:
        turn, recorded = _record(run, i)
        turns.append(turn)
        messages += recorded
    first = run.nodes[0].initial or {}
    accuracy = [run.nodes[i].accuracy or 0.0 for i in decided]
    trajectory = Trajectory(
        id=traj_id, environments=run.envs, initial_state=first, turns=turns,
        final_state=run.nodes[decided[-1]].final, messages=messages,
        provenance=Provenance.model_validate(dict(
            source="querygen", split=config.split, model=models["solver"].name,
            domain="+".join(sorted({getattr(registry.get(e).factory, "domain", "") or ""
                                    for e in run.envs})),
            preset=config.preset, seed=chain.seed, chain=chain.model_dump(mode="json"),
            models={r: str(m) for r, m in models.items()}, pipeline="release",
            select=config.select, accept_rate=sum(accuracy) / len(accuracy),
            turn_accept_rates=accuracy, scenario=run.scenario,
            user_tools=run.user_tools, turns_planned=len(run.nodes),
            turn_rejections=run.rejections, config=config.model_dump(mode="json"))))
    trajectory.provenance.check_problems = check(trajectory)  # type: ignore[attr-defined]
    return Kept(trajectory=trajectory, accept_rate=sum(accuracy) / len(accuracy))
