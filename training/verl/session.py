"""The environment side of a verl rollout: one `World` per trajectory, state in the trajectory.

verl 0.9.1 creates a tool instance per *call* (create -> execute -> release), so nothing a
tool instance holds survives to the next call of the same trajectory. What does survive is
the trajectory's `AgentData`: its `request_id`, the row's `tools_kwargs` and
`extra_fields`, which verl hands to the reward function at the end (as `extra_info`). So:

- the row's `extra_info.tools_kwargs["envfactory"]` carries the environments (any registry
  name: pool, generated, the release's `release/<Name>` or `release/<Name>@<scenario>`)
  and the turn's start state (`ROW_KEY`);
- the first call of a trajectory builds a `World` from it; later calls reuse it from a
  per-process cache keyed by `request_id` (bounded, since verl has no end-of-trajectory
  hook to release it; an evicted world is rebuilt from the last recorded state, so
  eviction changes cost, never results; a cached world is only reused once the
  trajectory has recorded a state, because verl may reuse a request id);
- after every call the executed call (name, arguments, accepted or not, and a failure's
  `error_kind`) and the world's snapshot are written into `extra_fields` (`CALLS_KEY`,
  `STATE_KEY`), which is where the reward reads the agent's final state and calls; a
  call that cannot have changed the world (`World.may_have_changed`: a read, a call
  that never ran, a rolled-back write) keeps the state already recorded instead of
  dumping the whole world again.

Calls run through `World.call_qualified`, the call evaluation's in-process backend makes
(`harness.tool_backends.InProcessBackend`), so a mistake reads the same in a GRPO rollout
as in an evaluation episode, byte for byte (no train/eval skew in the error text).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import MutableMapping
from typing import Any

from envs.world import World

__all__ = ["CALLS_KEY", "ROW_KEY", "STATE_KEY", "RolloutSessions", "row_tools_kwargs"]

ROW_KEY = "envfactory"
STATE_KEY = "envfactory_final_state"
CALLS_KEY = "envfactory_calls"


def row_tools_kwargs(environments: list[str],
                     start_state: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `extra_info.tools_kwargs` of an RL row: what a trajectory's world starts from.

    Without `start_state`, the environments' own starting states, snapshotted now: a
    release environment named with its scenario (`release/Airline@scenario_002`) starts
    from that scenario, loaded through the server's `load_scenario`; the row still records
    the state, since the reward scores against where the trajectory began."""
    if start_state is None:
        start_state = World(list(environments)).snapshot()
    return {ROW_KEY: {"environments": list(environments),
                      "start_state": json.dumps(start_state, ensure_ascii=False)}}


class RolloutSessions:
    """Worlds of the trajectories a rollout worker is running, keyed by request id."""

    def __init__(self, max_worlds: int = 512) -> None:
        self.max_worlds = max_worlds
        self._worlds: OrderedDict[str, World] = OrderedDict()

    def _world(self, request_id: str, tools_kwargs: MutableMapping[str, Any],
               extra_fields: MutableMapping[str, Any]) -> World:
        world = self._worlds.get(request_id)
        # a trajectory's first call has no recorded state yet: a world cached under its id
        # then belongs to an earlier trajectory (verl reuses ids: `det-<priority>` under
        # full_determinism), never to this one
        if world is not None and STATE_KEY in extra_fields:
            self._worlds.move_to_end(request_id)
            return world
        row = tools_kwargs.get(ROW_KEY)
        if not row:
            raise ValueError(f"the row has no extra_info.tools_kwargs[{ROW_KEY!r}]; export it "
                             "with `envfactory train export`")
        state = extra_fields.get(STATE_KEY) or json.loads(row["start_state"])
        world = World(list(row["environments"]), state)
        self._worlds[request_id] = world
        while len(self._worlds) > self.max_worlds:
            self._worlds.popitem(last=False)
        return world

    def call(self, request_id: str, name: str, arguments: dict[str, Any],
             tools_kwargs: MutableMapping[str, Any],
             extra_fields: MutableMapping[str, Any]) -> str:
        """Run one qualified tool call in the trajectory's world; returns the text the model
        sees (`ToolResult.text()`, as at evaluation time) and records call and state."""
        world = self._world(request_id, tools_kwargs, extra_fields)
        result = world.call_qualified(name, arguments)
        record: dict[str, Any] = {"name": name, "arguments": arguments, "ok": result.ok}
        if result.kind is not None:
            record["error_kind"] = result.kind.value
        extra_fields.setdefault(CALLS_KEY, []).append(record)
        if STATE_KEY not in extra_fields or world.may_have_changed(name, result):
            extra_fields[STATE_KEY] = world.snapshot()
        return result.text()

    def release(self, request_id: str) -> None:
        self._worlds.pop(request_id, None)
