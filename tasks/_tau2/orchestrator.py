"""The τ² conversation on Inspect: agent, simulated user and environment taking turns.

Follows release v0.2.0's half-duplex orchestrator: the agent greets first (the user sees
the greeting; the agent's own requests start [system, user], as upstream's agent never
holds it); each hop (agent → user, user → agent, one batch of tool executions) is one
step; the world is synced after every step; the run ends when the user sends a stop
token in a message without tool calls (with calls, the calls run and the user is asked
again), or — checked after every step — at `max_steps` steps (MAX_STEPS). v0.2.0 never
counts tool errors, so TOO_MANY_ERRORS never happens there; `max_errors` enforces the
limit of later releases. A message with neither text nor tool calls fails upstream's
message validation, which aborts the simulation: here the episode ends as AGENT_ERROR /
USER_ERROR and the sample scores 0. The user is the Inspect model role `user` (default:
the agent's model) with roles flipped; in telecom it acts on its own phone with its own
tools, whose results only it sees.

Sampling follows `tau2 run`'s defaults: temperature 0.0 and, for trial t (epoch t + 1),
the t-th draw of `random.Random(seed).randint(0, 1000000)` with seed 300, the same seed
for the agent and the user on every request (`sampling`).

The conversation runs on the harness episode loop (`harness.episode`); this module
holds τ²'s rules: prompts, greeting, stop tokens, limits, the two toolkits, solo mode,
and `OraclePlan`, the gold policy `envfactory/oracle` plays.
"""

from __future__ import annotations

import random

from inspect_ai.model import ChatMessage, ChatMessageSystem, GenerateConfig, Model, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolInfo

from envs.tau2 import data
from envs.tau2.base import tau2_text
from envs.tau2.tasks import Task
from envs.tau2.world import Tau2World
from harness.episode import Episode, Rules, Side, SimulatedUser, json_decode
from harness.generation_config import role_config
from harness.gold import GoldCall, GoldMessage, Position
from harness.tool_backends import RequestorBackend, tau2_tools
from harness.trajectory import Role

__all__ = ["OraclePlan", "agent_system_prompt", "episode", "read_release_files", "sampling",
           "tau2_solver", "trial_seed"]

GREETING = "Hi! How can I help you today?"
#: `tau2 run` defaults (config.py): temperature of both LLMs, and the run seed
TEMPERATURE = 0.0
SEED = 300
STOP_TOKENS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
# The benchmark's fixed agent instructions (upstream llm_agent.py); the policy follows.
AGENT_INSTRUCTION = (
    "You are a customer service agent that helps the user according to the <policy> "
    "provided below.\nIn each turn you can either:\n- Send a message to the user.\n"
    "- Make a tool call.\nYou cannot do both at the same time.\n\n"
    "Try to be helpful and always follow the policy. Always make sure you generate valid "
    "JSON only."
)
# `mode=oracle_plan` (upstream llm_agent_gt): the agent is told the resolution steps.
AGENT_GT_INSTRUCTION = (
    "You are testing that our user simulator is working correctly.\nUser simulator will have "
    "an issue for you to solve.\nYou must behave according to the <policy> provided below.\n"
    "To make following the policy easier, we give you the list of resolution steps you are "
    "expected to take.\nThese steps involve either taking an action or asking the user to "
    "take an action.\n\nIn each turn you can either:\n- Send a message to the user.\n"
    "- Make a tool call.\nYou cannot do both at the same time.\n\nTry to be helpful and "
    "always follow the policy. Always make sure you generate valid JSON only."
)
# `solo=true` (upstream llm_agent_solo): no user; the agent works from the ticket.
STOP_TOOL = "done"
AGENT_SOLO_INSTRUCTION = (
    "You are a customer service agent that helps the user according to the <policy> "
    "provided below.\nYou will be provided with a ticket that contains the user's request.\n"
    "You will need to plan and call the appropriate tools to solve the ticket.\n\n"
    "You cannot communicate with the user, only make tool calls.\nStop when you consider "
    "that you have solved the ticket.\nTo do so, send a message containing a single tool "
    f"call to the `{STOP_TOOL}` tool. Do not include any other tool calls in this last "
    "message.\n\nAlways follow the policy. Always make sure you generate valid JSON only."
)


def domain_policy(domain: str, solo: bool = False) -> str:
    if domain == "telecom":
        main = data.read_text("domains/telecom/main_policy_solo.md" if solo
                              else "domains/telecom/main_policy.md")
        manual = data.read_text("domains/telecom/tech_support_workflow_solo.md" if solo
                                else "domains/telecom/tech_support_manual.md")
        return (f"<main_policy>\n{main}\n</main_policy>\n"
                f"<tech_support_policy>\n{manual}\n</tech_support_policy>")
    return data.read_text(f"domains/{domain}/policy.md")


def resolution_steps(task: Task) -> str:
    """`mode=oracle_plan`: the gold actions as steps in the agent's prompt."""
    lines = []
    actions = task.evaluation_criteria.actions if task.evaluation_criteria else None
    for i, action in enumerate(actions or []):
        who = "Assistant" if action.requestor == "assistant" else "User"
        lines.append(f"[Step {i + 1}] {who} action: {action.name}({action.arguments})")
    return "\n".join(lines)


def agent_system_prompt(domain: str, task: Task, mode: str = "default",
                        solo: bool = False) -> str:
    if solo:
        return (f"<instructions>\n{AGENT_SOLO_INSTRUCTION}\n</instructions>\n"
                f"<policy>\n{domain_policy(domain, solo=True)}\n</policy>\n"
                f"<ticket>\n{task.ticket}\n</ticket>")
    instruction = AGENT_GT_INSTRUCTION if mode == "oracle_plan" else AGENT_INSTRUCTION
    prompt = (f"<instructions>\n{instruction}\n</instructions>\n"
              f"<policy>\n{domain_policy(domain)}\n</policy>")
    if mode == "oracle_plan":
        prompt += f"\n<resolution_steps>\n{resolution_steps(task)}\n</resolution_steps>"
    return prompt


def user_system_prompt(task: Task, with_tools: bool) -> str:
    name = "simulation_guidelines_tools.md" if with_tools else "simulation_guidelines.md"
    guidelines = data.read_text(f"user_simulator/{name}")
    return f"{guidelines}\n\n<scenario>\n{task.user_scenario.render()}\n</scenario>"


class OraclePlan:
    """The gold path (a `GoldPolicy`): perform the gold actions in order, each by its
    requestor, then say the required information; the user stops once every action is
    done."""

    def __init__(self, task: Task, solo: bool = False) -> None:
        self.solo = solo
        criteria = task.evaluation_criteria
        self.actions = list(criteria.actions or []) if criteria else []
        self.info = list(criteria.communicate_info or []) if criteria else []
        self.task = task
        self.cursor = 0
        self.informed = False
        self.user_spoke = False

    def _pending(self, requestor: str) -> GoldMessage | None:
        if self.cursor < len(self.actions) and self.actions[self.cursor].requestor == requestor:
            a = self.actions[self.cursor]
            return GoldMessage(calls=[GoldCall(function=a.name, arguments=a.arguments)])
        return None

    def next(self, position: Position) -> GoldMessage:
        return self.for_agent(self.solo) if position.role == "assistant" else self.for_user()

    def for_agent(self, solo: bool = False) -> GoldMessage:
        if (gold := self._pending("assistant")) is not None:
            return gold
        if solo:  # the agent acts for the user too, then calls `done`
            if (gold := self._pending("user")) is not None:
                return gold
            return GoldMessage(calls=[GoldCall(function=STOP_TOOL)])
        if self.cursor < len(self.actions):
            a = self.actions[self.cursor]
            return GoldMessage(text=f"Please do this on your phone: {a.name} {a.arguments}.")
        if self.info and not self.informed:
            self.informed = True
            return GoldMessage(text="; ".join(self.info))
        return GoldMessage(text="Is there anything else I can help you with?")

    def for_user(self) -> GoldMessage:
        if (gold := self._pending("user")) is not None:
            return gold
        if self.cursor >= len(self.actions) and (self.informed or not self.info):
            return GoldMessage(text="###STOP###")
        if not self.user_spoke:
            self.user_spoke = True
            return GoldMessage(text=self.task.user_scenario.render())
        return GoldMessage(text="Done. What next?")

    def observe(self, requestor: Role, name: str) -> None:
        """The pending action is done once its requestor has called that tool (with
        whatever arguments: a scripted deviation must not stall the plan)."""
        if self.cursor < len(self.actions):
            a = self.actions[self.cursor]
            if (a.requestor, a.name) == (requestor, name):
                self.cursor += 1


def _done_tool() -> ToolInfo:
    return ToolInfo(name=STOP_TOOL,
                    description="Call this function when you are done with the task.")


def trial_seed(seed: int, epoch: int) -> int:
    """The per-request seed of trial `epoch - 1`: upstream seeds `random` with the run
    seed and draws one `randint(0, 1000000)` per trial, used by the agent and the user."""
    draw = random.Random(seed)
    return [draw.randint(0, 1000000) for _ in range(epoch)][-1]


def sampling(model: Model, epoch: int, temperature: float = TEMPERATURE,
             seed: int = SEED) -> GenerateConfig:
    """Temperature and seed for one role's requests (`harness.generation_config`: what the user
    set wins), with `-T seed` derived per trial as upstream's `--seed`."""
    return role_config(model, temperature, trial_seed(seed, epoch))


def _world(task: Task, domain: str, solo: bool
           ) -> tuple[Tau2World, list[tuple[ToolInfo, Role]], list[tuple[ToolInfo, Role]]]:
    """The task's initialised world and the tools each side is offered."""
    world = Tau2World(domain)
    if solo and (world.user is None or task.ticket is None):
        raise ValueError(f"τ² {domain} task {task.id}: solo mode needs a ticket and a "
                         "user-side toolkit (telecom)")
    world.initialize(task.initial_state)
    agent_tools: list[tuple[ToolInfo, Role]] = [(info, "assistant")
                                                for info in tau2_tools(domain, world.agent)]
    user_tools: list[tuple[ToolInfo, Role]] = (
        [(info, "user") for info in tau2_tools(f"{domain}_user", world.user)]
        if world.user is not None else [])
    return world, agent_tools, user_tools


def read_release_files(task: Task, domain: str, mode: str = "default",
                       solo: bool = False) -> None:
    """Read every release file a sample of `domain` reads (database, tool objects,
    policy, user guidelines), once, when the task is built: a missing file then stops
    the run before any sample starts (`FileNotFoundError`), instead of failing each
    sample while `inspect eval` still exits 0. The files stay cached for the samples."""
    _, _, user_tools = _world(task, domain, solo)
    agent_system_prompt(domain, task, mode, solo)
    if not solo:
        user_system_prompt(task, bool(user_tools))


def episode(task: Task, domain: str, agent: Model, user: Model, mode: str = "default",
            max_steps: int = 200, max_errors: int | None = None, solo: bool = False,
            history: list[ChatMessage] | None = None,
            agent_config: GenerateConfig | None = None,
            user_config: GenerateConfig | None = None) -> Episode:
    """One τ² conversation on the harness loop: upstream's rules as `Rules`, the world's
    two toolkits behind a requestor-aware backend, `OraclePlan` as the gold."""
    world, agent_tools, user_tools = _world(task, domain, solo)
    offered: dict[Role, list[tuple[ToolInfo, Role]]] = {"assistant": agent_tools,
                                                         "user": user_tools}
    if solo:  # no user and no greeting: the agent has every tool and `done`
        offered = {"assistant": [*agent_tools, *user_tools, (_done_tool(), "assistant")]}
    backend = RequestorBackend(world.execute, offered, render=tau2_text)
    rules = Rules(max_steps=max_steps, max_errors=max_errors, limits_wait_for_env=False,
                  greeting=None if solo else GREETING, greeting_in_agent_requests=False,
                  stop_tool=STOP_TOOL if solo else None, stop_token_with_calls=False,
                  empty_message="end", decode=json_decode, undecodable_call="end")
    history = history if history is not None else []
    history.append(ChatMessageSystem(content=agent_system_prompt(domain, task, mode, solo)))
    agent_side = Side(role="assistant", model=agent, history=history,
                      tools=backend.tools("assistant"), config=agent_config,
                      tool_choice="any" if solo else None)  # solo: upstream's "required"
    simulated = None if solo else SimulatedUser(
        Side(role="user", model=user,
             history=[ChatMessageSystem(content=user_system_prompt(task, bool(user_tools)))],
             tools=backend.tools("user"), config=user_config),
        stop_tokens=STOP_TOKENS)
    return Episode(agent_side, backend, rules, user=simulated,
                   gold=OraclePlan(task, solo))


@solver
def tau2_solver(domain: str, mode: str = "default", max_steps: int = 200,
                max_errors: int | None = None, solo: bool = False,
                temperature: float = TEMPERATURE, seed: int = SEED) -> Solver:
    """Run one τ² conversation; its record is the episode's progress in the store. The
    sampling each role was sent is in the sample's metadata (`sampling`)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = Task.model_validate(state.metadata["task"])
        agent = get_model()
        user = get_model(role="user", default=agent)
        agent_config = sampling(agent, state.epoch, temperature, seed)
        user_config = sampling(user, state.epoch, temperature, seed)
        state.metadata["sampling"] = {
            "assistant": agent_config.model_dump(exclude_none=True),
            **({} if solo else {"user": user_config.model_dump(exclude_none=True)})}
        state.messages = []
        await episode(task, domain, agent, user, mode, max_steps, max_errors, solo=solo,
                      history=state.messages, agent_config=agent_config,
                      user_config=user_config).run()
        return state

    return solve
