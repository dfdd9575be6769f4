"""VitaBench's conversation on the harness episode loop (upstream 96f3b85's orchestrator).

What upstream does, and the `Rules` that say it:

- The agent opens with the fixed greeting of the run's language; the user simulator
  sees it, the agent's own requests never hold it (its history starts empty): its first
  request is [system, user].
- Each hop (agent → user, user → agent, one batch of tool executions) is one step; after
  every step — a pending tool call included — `max_steps` (300) ends the run as
  MAX_STEPS, overwriting a stop on that same step.
- The agent ends the run with `###STOP###` anywhere in its text, tool calls or not (the
  calls of that message never run); the user with `###STOP###`, `###TRANSFER###` or
  `###OUT-OF-SCOPE###` in a message.
- An agent message with neither text nor tool calls is generated again, three
  generations in all; still empty, the run ends as INVALID_AGENT_MESSAGE.
- Upstream counts no tool errors (`num_errors` is never incremented), so there is no
  error limit.
- Where upstream's simulation raises — an empty user message fails its validation,
  tool-call arguments that are not JSON fail `json.loads` — `run_task` runs the whole
  task again from scratch, up to 3 more times. Here the episode ends as USER_ERROR /
  AGENT_ERROR and the solver starts a fresh episode, as often (`TASK_RETRIES`).
- Sampling: upstream's request body carries the model's `models.yaml` entry, whose
  default temperature is 0.0, and no seed; `harness.generation_config` lets the user override.

Tools are the release's objects (`VitaEnvironment.tool_objects()`), sent unchanged to
OpenAI-compatible providers, executed on the task's own database.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageSystem, GenerateConfig, Model, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import store_as

from envs.base import ToolResult
from envs.vitabench import tool_objects
from envs.vitabench.factory import environment_for
from envs.vitabench.release import Language, release
from harness import raw_arguments
from harness.episode import (
    Episode,
    EpisodeProgress,
    Rules,
    Side,
    SimulatedUser,
    Termination,
    json_decode,
)
from harness.generation_config import role_config
from harness.tool_backends import RequestorBackend, official_tool_info
from harness.trajectory import Role
from tasks._vitabench.dataset import load_tasks, task_by_id
from tasks._vitabench.oracle import VitaOracle
from tasks._vitabench.prompts import (
    GREETING,
    agent_system_prompt,
    template,
    user_system_prompt,
)

__all__ = ["MAX_STEPS", "TASK_RETRIES", "TEMPERATURE", "episode", "read_release_files",
           "upstream_termination", "vitabench_solver"]

#: upstream defaults (config.py)
MAX_STEPS = 300
TEMPERATURE = 0.0
#: `run_task`'s retries of a simulation that raised
TASK_RETRIES = 3
#: agent generations of one message before INVALID_AGENT_MESSAGE (orchestrator.py)
AGENT_GENERATIONS = 3
AGENT_STOP_TOKEN = "###STOP###"
USER_STOP_TOKENS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
#: the terminations upstream's run would have retried (its simulation raised)
CRASHES = (Termination.AGENT_ERROR, Termination.USER_ERROR)

def upstream_termination(termination: Termination | None) -> str:
    """Upstream's `TerminationReason` name for how a run ended (ours carry the same
    values); ours where upstream has none (a crash through every retry, an Inspect
    limit)."""
    return termination.value if termination is not None else "none"


def episode(task: Mapping[str, Any], language: Language, agent: Model, user: Model,
            revision: str, max_steps: int = MAX_STEPS,
            history: list[ChatMessage] | None = None,
            agent_config: GenerateConfig | None = None,
            user_config: GenerateConfig | None = None) -> Episode:
    """One VitaBench conversation: the task's environment behind a backend, upstream's
    prompts and rules, and the gold `envfactory/oracle` plays (`tasks._vitabench.oracle`)."""
    files = release(revision)
    env = environment_for(dict(task), language, revision)
    offered: dict[Role, list[tuple[Any, Role]]] = {
        "assistant": [(official_tool_info(o), "assistant") for o in env.tool_objects()]}

    def execute(_: Role, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        return env.call(name, arguments)

    backend = RequestorBackend(execute, offered,
                               snapshot=lambda: {"vitabench": env.snapshot()})
    rules = Rules(max_steps=max_steps, max_errors=None, limits_wait_for_env=False,
                  greeting=GREETING[language], greeting_in_agent_requests=False,
                  agent_stop_tokens=(AGENT_STOP_TOKEN,), stop_token_with_calls=True,
                  empty_retries=AGENT_GENERATIONS - 1, empty_message="invalid",
                  decode=json_decode, undecodable_call="end")
    history = history if history is not None else []
    history.append(ChatMessageSystem(content=agent_system_prompt(files, dict(task), language)))
    agent_side = Side(role="assistant", model=agent, history=history,
                      tools=backend.tools("assistant"), config=agent_config)
    simulated = SimulatedUser(
        Side(role="user", model=user,
             history=[ChatMessageSystem(content=user_system_prompt(files, dict(task),
                                                                   language))],
             config=user_config),
        stop_tokens=USER_STOP_TOKENS)
    gold = VitaOracle(task, lambda: environment_for(dict(task), language, revision),
                      USER_STOP_TOKENS[0])
    return Episode(agent_side, backend, rules, user=simulated, gold=gold)


def read_release_files(task_set: str, language: Language, revision: str) -> None:
    """Read every release file a sample of `task_set` reads — the task file, the agent,
    user and judge templates, the tool objects (or the description tables they are
    derived from) and the holiday table of `get_holiday_date` — once, when the task is
    built: a missing file then stops the run before any sample starts
    (`FileNotFoundError`), instead of failing every sample while `inspect eval` still
    exits 0. What is read stays cached for the samples."""
    files = release(revision)
    first = dict(load_tasks(files, task_set, language)[0])
    environment_for(first, language, revision).tools()
    agent_system_prompt(files, first, language)
    user_system_prompt(files, first, language)
    template(files, "sliding_window_eval_template", language)
    tool_objects.holiday_dates(language, revision)


@solver
def vitabench_solver(task_set: str, language: Language, revision: str,
                     max_steps: int = MAX_STEPS, temperature: float = TEMPERATURE) -> Solver:
    """Run one VitaBench conversation (again from scratch after a crash, as upstream);
    its record is the episode's progress in the store. The sampling each role was sent
    and the attempts made are in the sample's metadata."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = task_by_id(release(revision), task_set, language, str(state.sample_id))
        agent = get_model()
        user = get_model(role="user", default=agent)
        agent_config = role_config(agent, temperature)
        user_config = role_config(user, temperature)
        state.metadata["sampling"] = {
            "assistant": agent_config.model_dump(exclude_none=True),
            "user": user_config.model_dump(exclude_none=True)}
        crashes: list[str] = []
        for attempt in range(1, 2 + TASK_RETRIES):
            state.messages = []
            store_as(EpisodeProgress).detail = None
            # upstream re-sends a message's content as the provider gave it (null
            # beside tool calls) and its calls' arguments as `json.dumps` of the parse
            with raw_arguments.resend(arguments=False):
                done = await episode(task, language, agent, user, revision, max_steps,
                                     history=state.messages, agent_config=agent_config,
                                     user_config=user_config).run()
            state.metadata["attempts"] = attempt
            if done.termination not in CRASHES:
                break
            crashes.append(f"{done.termination}: {done.detail}")
        state.metadata["crashes"] = crashes
        return state

    return solve
