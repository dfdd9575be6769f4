"""The held-out EnvFactory episode: the harness loop with the task's user turns fed one at
a time (`ScriptedUser`) and, within a turn, the model calling tools (qualified `env-tool`
names) until it answers in text or hits the per-turn step limit. Calls run in-process on
the sample's own `World`, or through per-sample MCP servers (`transport="mcp"`).
"""

from __future__ import annotations

from inspect_ai.model import ChatMessageSystem, ChatMessageUser, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from harness.episode import Episode, Rules, ScriptedUser, Side, UserTurn
from harness.gold import GoldCall, Script, ScriptPolicy
from harness.prompts import AGENT_SYSTEM_PROMPT
from harness.tool_backends import InProcessBackend, McpBackend, ToolBackend
from harness.trajectory import Trajectory

SYSTEM_PROMPT = AGENT_SYSTEM_PROMPT


def gold_script(task: Trajectory) -> Script:
    return Script.of_calls([[[GoldCall(function=c.qualified_name, arguments=c.arguments)
                              for c in turn.gold_calls]] for turn in task.turns])


def _backend(transport: str, task: Trajectory) -> ToolBackend:
    if transport == "inprocess":
        return InProcessBackend(task.environments, task.initial_state)
    if transport == "mcp":
        return McpBackend.for_environments(task.environments, task.initial_state)
    raise ValueError(f"unknown transport {transport!r}; use inprocess or mcp")


@solver
def envfactory_solver(transport: str = "inprocess", max_turn_steps: int = 10,
                      max_steps: int | None = None) -> Solver:
    """Feed each user turn; let the model act until it answers (at most `max_turn_steps`
    tool-calling messages per turn, EnvFactory's max_assistant_turns; at most `max_steps`
    hops in the whole episode when set, as in τ² and VitaBench)."""
    rules = Rules(turn_step_limit=max_turn_steps, max_steps=max_steps)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = Trajectory.model_validate(state.metadata["trajectory"])
        async with _backend(transport, task) as backend:
            state.messages = [ChatMessageSystem(content=SYSTEM_PROMPT)]
            agent = Side(role="assistant", model=get_model(), history=state.messages,
                         tools=backend.tools())
            user = ScriptedUser([UserTurn(messages=[ChatMessageUser(content=t.user)])
                                 for t in task.turns])
            await Episode(agent, backend, rules, user=user,
                          gold=ScriptPolicy(gold_script(task))).run()
        return state

    return solve
