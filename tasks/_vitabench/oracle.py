"""VitaBench's gold path for `envfactory/oracle` (a `harness.gold.GoldPolicy`).

VitaBench has no gold actions: a task states the orders it wants made
(`expected_states[*].required_orders`) and the judge reads rubrics. The feasibility
recreators (`RECREATORS` of `envs.vitabench.{delivery,instore,ota}`, run by
`envs.vitabench.feasibility.check_task`) already reach those orders through `env.call`,
the agent's own path. The oracle runs them once on a scratch copy of the task's world,
records the calls they make, and publishes those calls to the agent one message each, in
order, then a closing text; the user says the task's instructions, then stops once every
call has run. Order ids hash the database's clock and its count of orders
(`VitaDB.assign_order_id`), so the episode's world, built the same way and sent the same
calls, gets the same ids the recorded calls name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from envs.base import ToolResult
from envs.vitabench.base import VitaEnvironment
from envs.vitabench.feasibility import check_task, known_recreators
from harness.gold import GoldCall, GoldMessage, Position
from harness.trajectory import Role

__all__ = ["VitaOracle", "recreating_calls"]


class _Recorder:
    """The scratch environment with its `call`s written down (everything else, such as
    `db` and `get_now`, is the environment's own)."""

    def __init__(self, env: VitaEnvironment) -> None:
        self._env = env
        self.calls: list[GoldCall] = []

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        self.calls.append(GoldCall(function=name, arguments=dict(arguments or {})))
        return self._env.call(name, arguments)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)


def recreating_calls(task: Mapping[str, Any], env: VitaEnvironment) -> list[GoldCall]:
    """The calls the recreators make to bring `env` (the task's initial world, changed
    in place) to the task's required orders, failed calls included (replaying them
    leaves the same world: a failed write keeps what it changed, as upstream)."""
    recorder = _Recorder(env)
    check_task(task, cast(VitaEnvironment, recorder), known_recreators())
    return recorder.calls


class VitaOracle:
    """Gold for both roles: the agent makes the recreators' calls, one per message,
    then says it is done; the user opens with the task's instructions and ends with
    `stop_token` once every call has run. The calls are worked out at the first model
    call (a scratch world from `make_env`, the factory the episode's world comes from)."""

    def __init__(self, task: Mapping[str, Any], make_env: Callable[[], VitaEnvironment],
                 stop_token: str) -> None:
        self.task = task
        self.make_env = make_env
        self.stop_token = stop_token
        self._calls: list[GoldCall] | None = None
        self.cursor = 0
        self.user_spoke = False

    @property
    def calls(self) -> list[GoldCall]:
        if self._calls is None:
            self._calls = recreating_calls(self.task, self.make_env())
        return self._calls

    def next(self, position: Position) -> GoldMessage:
        if position.role == "assistant":
            if self.cursor < len(self.calls):
                return GoldMessage(calls=[self.calls[self.cursor]])
            return GoldMessage(text=f"Done: {len(self.calls)} operations made.")
        if not self.user_spoke:
            self.user_spoke = True
            return GoldMessage(text=str(self.task.get("instructions") or ""))
        if self.cursor >= len(self.calls):
            return GoldMessage(text=self.stop_token)
        return GoldMessage(text="Please go on.")

    def observe(self, requestor: Role, name: str) -> None:
        """The pending call is done once the agent has called that tool (whatever the
        arguments: a deviating agent must not stall the plan)."""
        if requestor == "assistant" and self.cursor < len(self.calls) \
                and self.calls[self.cursor].function == name:
            self.cursor += 1
