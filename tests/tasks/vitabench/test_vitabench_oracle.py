"""The VitaBench oracle (`tasks._vitabench.oracle`) through `inspect eval`: played by
`envfactory/oracle` as agent and user, it leaves each feasible task's required orders in
the episode's final state — exactly the tasks the feasibility run
(`envs.vitabench.feasibility`) counts feasible — and an agent that only chats leaves none.

Whether a required order is there is read here from the task data alone: an order in the
final world of the required type, store and products (ids, counts, attributes), address,
note and status, where a status the merchant sets after payment (processed, in progress,
delivered) reads as paid, since that is all an agent can do; an order the world already
held, by its id, with the required status.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import Model

from envs.vitabench.factory import environment_for
from envs.vitabench.feasibility import check_tasks, known_recreators
from tasks.vitabench.vitabench import vitabench_delivery
from testkit.scripted import by_own_turns, constant
from tests.shared_data import VITABENCH_DATA, needs_vitabench

pytestmark = [needs_vitabench, pytest.mark.usefixtures("use_vitabench_data")]

MERCHANT_STATUSES = {"processed", "in-progress", "delivered"}


def tasks(language: str) -> list[dict[str, Any]]:
    name = "tasks.json" if language == "zh" else "tasks_en.json"
    loaded: list[dict[str, Any]] = json.loads(
        (VITABENCH_DATA / "domains" / "delivery" / name).read_text(encoding="utf-8"))
    return loaded


def required(task: dict[str, Any]) -> list[dict[str, Any]]:
    """Each required order once, as the last expected state that lists it has it."""
    orders: dict[str, dict[str, Any]] = {}
    for state in task["evaluation_criteria"].get("expected_states") or []:
        for order in state.get("required_orders") or []:
            orders[order["order_id"]] = order
    return list(orders.values())


def shape(order: dict[str, Any]) -> tuple[Any, ...]:
    status = "paid" if order["status"] in MERCHANT_STATUSES else order["status"]
    products = list((p.get("product_id"), p.get("quantity"), p.get("attributes") or "")
                      for p in order.get("products") or [] if isinstance(p, dict))
    products = sorted(products, key=repr)  # a task's odd entry may have no product id
    address = (order.get("location") or {}).get("address")
    return (order["order_type"], order["store_id"], tuple(products), address,
            order.get("note") or "", status)


def satisfied(task: dict[str, Any], final: dict[str, Any]) -> bool:
    """Every required order has its own match among the final world's orders. A required
    order the world already held (its id is there: the agent's orders get fresh ids) can
    only have changed status, so only its status is compared (the task's copy may name
    an attribute otherwise than the world does, e.g. 10721004 en)."""
    orders = final["orders"]
    left = [shape(o) for o in orders.values()]
    for order in required(task):
        if order["order_id"] in orders:
            if shape(orders[order["order_id"]])[-1] != shape(order)[-1]:
                return False
            continue
        if shape(order) not in left:
            return False
        left.remove(shape(order))
    return True


def run(language: str, agent: Model | str, user: Model | str, log_dir: Path,
        ids: list[str] | None = None) -> EvalLog:
    judge = constant("[]")
    (log,) = inspect_eval(vitabench_delivery(language=language), model=agent,
                          model_roles={"user": user, "judge": judge}, sample_id=ids,
                          log_dir=str(log_dir), display="none", max_samples=16)
    assert log.status == "success", log.error
    return log


def final_states(log: EvalLog) -> dict[str, dict[str, Any]]:
    states = {}
    for sample in log.samples or []:
        final = sample.store.get("EpisodeProgress:final_state")
        assert final is not None, sample.id
        states[str(sample.id)] = final["vitabench"]
    return states


def feasible(language: str, chosen: list[dict[str, Any]]) -> set[str]:
    report = check_tasks(chosen, "zh" if language == "zh" else "en", environment_for,
                         known_recreators())
    return {t.task_id for t in report.tasks if t.feasible}


def check_oracle(language: str, chosen: list[dict[str, Any]], log_dir: Path) -> None:
    log = run(language, "envfactory/oracle", "envfactory/oracle", log_dir,
              [str(t["id"]) for t in chosen])
    states = final_states(log)
    reached = {str(t["id"]) for t in chosen if satisfied(t, states[str(t["id"])])}
    assert reached == feasible(language, chosen)
    for sample in log.samples or []:
        score = next(iter((sample.scores or {}).values()))
        assert score.metadata is not None
        assert score.metadata["termination_reason"] == "user_stop", sample.id


def test_the_oracle_leaves_the_required_orders_of_feasible_tasks(tmp_path: Path) -> None:
    # the first twelve English tasks, and the two the feasibility run finds infeasible
    chosen = [t for i, t in enumerate(tasks("en"))
              if i < 12 or t["id"] in ("30711009", "80715001")]
    check_oracle("en", chosen, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("language", ["zh", "en"])
def test_the_oracle_leaves_the_required_orders_of_every_feasible_task(
        language: str, tmp_path: Path) -> None:
    check_oracle(language, tasks(language), tmp_path)


def test_an_agent_that_only_chats_leaves_no_required_order(tmp_path: Path) -> None:
    chosen = tasks("en")[:12]
    chatter = constant("Could you tell me more about what you would like?")
    user = by_own_turns(["I need some food delivered.", "I need some food delivered.",
                         "That's all. ###STOP###"]).model
    states = final_states(run("en", chatter, user, tmp_path, [str(t["id"]) for t in chosen]))
    for task in chosen:
        initial = environment_for(task, "en").snapshot()
        assert states[str(task["id"])]["orders"] == initial["orders"], task["id"]
        assert not satisfied(task, states[str(task["id"])]), task["id"]
