"""One World for every benchmark: requestors, the post-call hook, τ² and BFCL worlds."""

from __future__ import annotations

import pytest

from envs.base import ToolResult
from envs.bfcl.world import BfclWorld
from envs.world import USER, World
from tests.envs.ledger import Ledger
from tests.shared_data import needs_tau2


class Counting(World):
    def __init__(self) -> None:
        super().__init__(envs={"bank": Ledger(), "phone": Ledger()},
                         requestors={"phone": USER})
        self.seen: list[tuple[str, str, bool]] = []

    def after_call(self, env: str, tool: str, result: ToolResult) -> None:
        self.seen.append((env, tool, result.ok))


def test_requestors_own_their_environments_and_the_hook_runs() -> None:
    world = Counting()
    assert [q for q, _ in world.tools("assistant")] == [
        f"bank-{s.name}" for s in Ledger.tool_specs()]
    assert world.call("bank", "open_account", {"owner": "a"}).ok
    denied = world.call("phone", "open_account", {"owner": "a"})
    # another requestor's tool is not in this one's toolkit: an unknown tool, as in τ²
    assert denied.kind == "unknown_tool" and denied.error == (
        "Unknown tool 'phone-open_account'. Available tools: "
        + ", ".join(sorted(q for q, _ in world.tools("assistant"))) + ".")
    assert world.call_qualified("phone-open_account", {"owner": "b"}, requestor=USER).ok
    assert world.seen == [("bank", "open_account", True), ("phone", "open_account", True)]
    snap = world.snapshot()
    world.call("bank", "open_account", {"owner": "c"})
    world.restore(snap)
    assert world.snapshot() == snap


def test_bfcl_world_is_a_world() -> None:
    world = BfclWorld("t", {}, ["MathAPI"])
    assert isinstance(world, World)
    assert world.call_qualified("MathAPI-add", {"a": 1, "b": 2}).content == {"result": 3}


@needs_tau2
@pytest.mark.usefixtures("use_tau2_data")
def test_tau2_world_and_registry() -> None:
    from envs import registry
    from envs.tau2.world import Tau2World

    world = Tau2World("telecom")
    assert isinstance(world, World) and world.owned_by(USER) == ["telecom_user"]
    assert world.execute("user", "check_status_bar", {}).ok
    assert not world.execute("assistant", "check_status_bar", {}).ok
    assert Tau2World("airline").execute("user", "x", {}).error == "User tools not available"
    env = registry.create("tau2/airline")
    assert {"book_reservation", "get_user_details"} <= {s.name for s in env.tools()}
