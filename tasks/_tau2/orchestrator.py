"""The τ² conversation on Inspect: agent, simulated user and environment taking turns.

Follows upstream's half-duplex orchestrator: the agent greets first; each hop (agent →
user, user → agent, one batch of tool executions) is one step; the world is synced
after every step; the run ends when the user emits a stop token, or — checked only
when nobody is waiting for the environment — at `max_steps` steps (MAX_STEPS) or
`max_errors` failed tool calls (TOO_MANY_ERRORS). The user is the Inspect model role
`user` (default: the agent's model) with roles flipped; in telecom it acts on its own
phone with its own tools, whose results only it sees.

For the `envfactory/oracle` provider, the solver publishes the gold next message before
each model call (`OraclePlan`); any other model ignores it.
"""

from __future__ import annotations

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    Model,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolInfo
from inspect_ai.util import store

from envs.tau2 import data
from envs.tau2.base import tau2_text
from envs.tau2.tasks import Task
from envs.tau2.world import Tau2World
from harness.providers.script import NEXT_KEY, GoldMessage, ScriptedCall
from harness.tool_backends import tool_info
from tasks._tau2.messages import T2Message, T2ToolCall, TerminationReason

__all__ = ["TRAJECTORY_KEY", "agent_system_prompt", "tau2_solver"]

GREETING = "Hi! How can I help you today?"
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
TRAJECTORY_KEY = "tau2:messages"
TERMINATION_KEY = "tau2:termination_reason"
STEPS_KEY = "tau2:steps"
ERRORS_KEY = "tau2:tool_errors"


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
    """The gold path: perform the gold actions in order, each by its requestor, then
    say the required information; the user stops once every action is done."""

    def __init__(self, task: Task) -> None:
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
            return GoldMessage(calls=[ScriptedCall(function=a.name, arguments=a.arguments)])
        return None

    def for_agent(self, solo: bool = False) -> GoldMessage:
        if (gold := self._pending("assistant")) is not None:
            return gold
        if solo:  # the agent acts for the user too, then calls `done`
            if (gold := self._pending("user")) is not None:
                return gold
            return GoldMessage(calls=[ScriptedCall(function=STOP_TOOL)])
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

    def observe(self, requestor: str, name: str) -> None:
        """The pending action is done once its requestor has called that tool (with
        whatever arguments: a scripted deviation must not stall the plan)."""
        if self.cursor < len(self.actions):
            a = self.actions[self.cursor]
            if (a.requestor, a.name) == (requestor, name):
                self.cursor += 1


class Conversation:
    """Upstream's turn-taking state machine over Inspect models."""

    def __init__(self, task: Task, domain: str, agent: Model, user: Model,
                 mode: str, max_steps: int, max_errors: int, solo: bool = False) -> None:
        if solo and (self.user_world_missing(domain) or task.ticket is None):
            raise ValueError(f"τ² {domain} task {task.id}: solo mode needs a ticket and a "
                             "user-side toolkit (telecom)")
        self.solo = solo
        self.task, self.domain = task, domain
        self.agent_model, self.user_model = agent, user
        self.max_steps, self.max_errors = max_steps, max_errors
        self.world = Tau2World(domain)
        self.world.initialize(task.initial_state)
        self.oracle = OraclePlan(task)
        self.agent_tools = [tool_info(s.name, s) for s in self.world.agent.tools()]
        self.user_tools = ([tool_info(s.name, s) for s in self.world.user.tools()]
                           if self.world.user is not None else [])
        self.agent_messages: list[ChatMessage] = [
            ChatMessageSystem(content=agent_system_prompt(domain, task, mode, solo))]
        self.user_messages: list[ChatMessage] = [
            ChatMessageSystem(content=user_system_prompt(task, bool(self.user_tools))),
            ChatMessageUser(content=GREETING)]
        self.trajectory: list[T2Message] = []
        if solo:  # no user and no greeting: the agent starts, with every tool and `done`
            self.user_tool_names = {t.name for t in self.user_tools}
            self.agent_tools = self.agent_tools + self.user_tools + [ToolInfo(
                name=STOP_TOOL, description="Call this function when you are done with the task.")]
            self.from_role, self.to_role = "user", "assistant"
        else:
            self.agent_messages.append(ChatMessageAssistant(content=GREETING))
            self.trajectory.append(T2Message(role="assistant", content=GREETING))
            self.from_role, self.to_role = "assistant", "user"
        self.pending: ChatMessageAssistant | None = None
        self.steps = self.errors = 0
        self.done = False
        self.reason: TerminationReason | None = None

    @staticmethod
    def user_world_missing(domain: str) -> bool:
        return Tau2World(domain).user is None

    async def run(self) -> None:
        while not self.done:
            await self.step()
            self.check_termination()

    async def _generate(self, model: Model, messages: list[ChatMessage],
                        tools: list[ToolInfo], gold: GoldMessage) -> ChatMessageAssistant:
        store().set(NEXT_KEY, gold.model_dump())
        output = await model.generate(messages, tools=tools)
        return output.message

    async def step(self) -> None:
        if self.to_role == "user":
            message = await self._generate(self.user_model, self.user_messages,
                                           self.user_tools, self.oracle.for_user())
            self.user_messages.append(message)
            self._record("user", message)
            if any(token in message.text for token in STOP_TOKENS):
                self.done, self.reason = True, TerminationReason.USER_STOP
            self._route("user", message, self.agent_messages)
        elif self.to_role == "assistant":
            message = await self._generate(self.agent_model, self.agent_messages,
                                           self.agent_tools, self.oracle.for_agent(self.solo))
            self.agent_messages.append(message)
            self._record("assistant", message)
            self._route("assistant", message, self.user_messages)
            if self.solo and any(tc.function == STOP_TOOL for tc in message.tool_calls or []):
                self.done, self.reason = True, TerminationReason.AGENT_STOP
            elif self.solo and not message.tool_calls:  # solo agents may only call tools
                self.done, self.reason = True, TerminationReason.AGENT_ERROR
        else:  # the environment answers the tool calls of `from_role`
            assert self.pending is not None
            self._execute(self.from_role, self.pending)
            self.from_role, self.to_role = "env", self.from_role
        self.steps += 1

    def _route(self, sender: str, message: ChatMessageAssistant,
               other: list[ChatMessage]) -> None:
        self.from_role = sender
        if message.tool_calls:
            self.to_role, self.pending = "env", message
        else:
            self.to_role = "user" if sender == "assistant" else "assistant"
            other.append(ChatMessageUser(content=message.text))

    def _record(self, role: str, message: ChatMessageAssistant) -> None:
        calls = [T2ToolCall(id=tc.id, name=tc.function,
                            arguments={} if tc.parse_error else dict(tc.arguments),
                            requestor=self._side(role, tc.function))  # type: ignore[arg-type]
                 for tc in message.tool_calls or []]
        self.trajectory.append(T2Message(role=role,  # type: ignore[arg-type]
                                         content=message.text or None,
                                         tool_calls=calls or None))

    def _side(self, requestor: str, tool: str) -> str:
        """Whose toolkit runs a call (solo: the agent's calls to phone tools run on the
        user's side)."""
        return "user" if self.solo and tool in self.user_tool_names else requestor

    def _execute(self, requestor: str, message: ChatMessageAssistant) -> None:
        history = self.agent_messages if requestor == "assistant" else self.user_messages
        for tc in message.tool_calls or []:
            if tc.parse_error:
                text, error = f"Error: {tc.parse_error}", True
            else:
                side = self._side(requestor, tc.function)
                result = self.world.execute(side, tc.function, tc.arguments)
                text, error = tau2_text(result), not result.ok
                self.oracle.observe(side, tc.function)
            self.errors += error
            history.append(ChatMessageTool(content=text, tool_call_id=tc.id,
                                           function=tc.function))
            self.trajectory.append(T2Message(role="tool", content=text, tool_call_id=tc.id,
                                             requestor=requestor,  # type: ignore[arg-type]
                                             error=error))

    def check_termination(self) -> None:
        if self.to_role == "env":
            return
        if self.steps >= self.max_steps:
            self.done, self.reason = True, TerminationReason.MAX_STEPS
        if self.errors >= self.max_errors:
            self.done, self.reason = True, TerminationReason.TOO_MANY_ERRORS


@solver
def tau2_solver(domain: str, mode: str = "default", max_steps: int = 200,
                max_errors: int = 10, solo: bool = False) -> Solver:
    """Run one τ² conversation and leave its upstream-format trajectory in the store."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = Task.model_validate(state.metadata["task"])
        agent = get_model()
        user = get_model(role="user", default=agent)
        conversation = Conversation(task, domain, agent, user, mode, max_steps, max_errors,
                                    solo=solo)
        await conversation.run()
        state.messages = conversation.agent_messages
        state.store.set(TRAJECTORY_KEY, [m.model_dump() for m in conversation.trajectory])
        reason = conversation.reason or TerminationReason.AGENT_ERROR
        state.store.set(TERMINATION_KEY, reason.value)
        state.store.set(STEPS_KEY, conversation.steps)
        state.store.set(ERRORS_KEY, conversation.errors)
        return state

    return solve
