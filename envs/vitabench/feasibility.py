"""Can every task's required orders be made with the tools, from the task's initial world?

VitaBench never compares `expected_states[*].required_orders` programmatically (they only
inspire rubrics), so nothing upstream checks that they are reachable. This runner does:
for each task it builds the environment from the task's `environment`, and for each
required order (the last state's copy of each order id) asks the domain's *recreator* to
bring the world to it through `env.call` — the agent's own path — and to say what, if
anything, still differs. A task is feasible when every required order is.

Statuses an agent cannot set are read in agent terms: an order the merchant has taken on
(`processed`, `in-progress`, `delivered`) is one the agent paid, so a recreator pays it;
the rest of its life is the merchant's.

Two verdicts per order: *feasible* — the tools reach it (the calls succeed and the order
has the expected store, products, counts, attributes, address, note and status); *exact*
— besides, what the tools compute (unit prices from the store, the total, the address's
coordinates, shipping and delivery times) equals the values written in the task. The
second fails where the task data disagree with the task's own database or with upstream's
formulas; upstream's judge sees only what the tools return, so it is reported, not hidden.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from envs.vitabench import delivery, instore, ota
from envs.vitabench.base import VitaEnvironment
from envs.vitabench.factory import environment_for
from envs.vitabench.recreation import Outcome, Recreator
from envs.vitabench.release import DEFAULT_REVISION, LANGUAGES, TASK_SETS, Language, release

__all__ = ["ID_FIELDS", "OrderCheck", "Report", "TaskFeasibility", "check_task",
           "check_tasks", "known_recreators", "main", "record_id", "record_type",
           "required_orders"]


class OrderCheck(BaseModel):
    order_id: str
    order_type: str
    existing: bool
    problems: list[str]
    computed: list[str]

    @property
    def feasible(self) -> bool:
        return not self.problems

    @property
    def exact(self) -> bool:
        return not self.problems and not self.computed


class TaskFeasibility(BaseModel):
    task_id: str
    orders: list[OrderCheck]
    error: str = ""

    @property
    def feasible(self) -> bool:
        return not self.error and all(check.feasible for check in self.orders)

    @property
    def exact(self) -> bool:
        return not self.error and all(check.exact for check in self.orders)


class Report(BaseModel):
    language: str
    tasks: list[TaskFeasibility]

    @property
    def feasible(self) -> int:
        return sum(task.feasible for task in self.tasks)

    @property
    def exact(self) -> int:
        return sum(task.exact for task in self.tasks)

    @property
    def total(self) -> int:
        return len(self.tasks)

    def exceptions(self) -> list[str]:
        """One line per infeasible order (or task that could not be set up)."""
        lines = []
        for task in self.tasks:
            if task.error:
                lines.append(f"{task.task_id}: {task.error}")
            lines += [f"{task.task_id} {check.order_id}: {'; '.join(check.problems)}"
                      for check in task.orders if not check.feasible]
        return lines

    def differences(self) -> list[str]:
        """One line per feasible order whose computed values differ from the task's."""
        return [f"{task.task_id} {check.order_id}: {'; '.join(check.computed)}"
                for task in self.tasks for check in task.orders
                if check.feasible and check.computed]


#: the id fields of a required record (instore's books and reservations have their own)
ID_FIELDS = ("order_id", "book_id", "reservation_id")


def record_type(record: Mapping[str, Any]) -> str:
    """The key of a record's recreator: its `order_type`, else "book" / "reservation"."""
    if record.get("order_type"):
        return str(record["order_type"])
    for field in ID_FIELDS[1:]:
        if field in record:
            return field.removesuffix("_id")
    return "?"


def record_id(record: Mapping[str, Any]) -> str:
    for field in ID_FIELDS:
        if record.get(field):
            return str(record[field])
    return json.dumps(record, sort_keys=True, ensure_ascii=False)


def required_orders(task: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each required record once (by id), as the last expected state that lists it has it."""
    orders: dict[str, dict[str, Any]] = {}
    for state in (task.get("evaluation_criteria") or {}).get("expected_states") or []:
        for order in state.get("required_orders") or []:
            orders[record_id(order)] = order
    return list(orders.values())


def check_task(task: Mapping[str, Any], env: VitaEnvironment,
               recreators: Mapping[str, Recreator]) -> TaskFeasibility:
    initial = set((env.db.orders or {}).keys())
    checks = []
    for order in required_orders(task):
        order_type = record_type(order)
        recreate = recreators.get(order_type)
        if recreate is None:
            outcome = Outcome(problems=[f"no recreator for order type {order_type!r}"])
        else:
            try:
                outcome = recreate(env, order)
            except Exception as e:  # noqa: BLE001 - a data problem, reported as such
                outcome = Outcome(problems=[f"recreator failed: {type(e).__name__}: {e}"])
        checks.append(OrderCheck(order_id=record_id(order), order_type=order_type,
                                 existing=record_id(order) in initial,
                                 problems=outcome.problems, computed=outcome.computed))
    return TaskFeasibility(task_id=str(task["id"]), orders=checks)


def check_tasks(tasks: Iterable[Mapping[str, Any]], language: Language,
                environment_for: Callable[[Mapping[str, Any], Language], VitaEnvironment],
                recreators: Mapping[str, Recreator]) -> Report:
    results = []
    for task in tasks:
        try:
            env = environment_for(task, language)
        except Exception as e:  # noqa: BLE001 - the task's world does not load
            results.append(TaskFeasibility(task_id=str(task["id"]), orders=[],
                                           error=f"environment: {type(e).__name__}: {e}"))
            continue
        results.append(check_task(task, env, recreators))
    return Report(language=language, tasks=results)


def known_recreators() -> dict[str, Recreator]:
    """Every domain module's `RECREATORS` (by order type)."""
    return {**delivery.RECREATORS, **instore.RECREATORS, **ota.RECREATORS}


def main(argv: list[str] | None = None) -> int:
    """`python -m envs.vitabench.feasibility --set delivery --language zh`: the figure
    and its exceptions for one task set (files from `envs.vitabench.release`)."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--set", choices=list(TASK_SETS), default="delivery")
    parser.add_argument("--language", choices=list(LANGUAGES), default="zh")
    parser.add_argument("--revision", default=DEFAULT_REVISION)
    args = parser.parse_args(argv)
    files = release(args.revision)
    tasks = json.loads(files.tasks_path(args.set, args.language).read_text(encoding="utf-8"))
    report = check_tasks(tasks, args.language,
                         lambda task, language: environment_for(task, language, args.revision),
                         known_recreators())
    orders = [check for task in report.tasks for check in task.orders]
    print(f"{args.set} {args.language}: {report.feasible}/{report.total} tasks feasible "
          f"({report.exact} exact), {sum(c.feasible for c in orders)}/{len(orders)} orders")
    for line in report.exceptions():
        print(f"  infeasible  {line}")
    for line in report.differences():
        print(f"  computed    {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
