"""BFCL's executable backends behind our `Environment` contract.

Each backend class (GorillaFileSystem, TradingBot, ...) becomes one `BfclEnvironment`
owning one backend instance: no module-level state, one instance per sample and epoch.
Calls are executed by bfcl-eval's own executor (`execute_multi_turn_func_call`), so
results and error strings are byte-for-byte the official ones. That executor looks
instances up in its module globals; we lend it ours under a unique key for the
duration of one call and take them back, so nothing is left in bfcl-eval's cache.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
import re
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from typing import Any

from pydantic import BaseModel, JsonValue

from envs.base import SnapshotEnvironment, ToolError, ToolSpec
from envs.bfcl import codec, package
from envs.jsonl import read_objects

__all__ = ["WRITE_TOOLS", "BfclEnvironment", "execute_official", "forget_instances", "is_write",
           "official_executor"]

ERROR_PREFIX = "Error during execution: "

#: The tools of each backend that may change its state, from reading bfcl-eval's
#: backend code; BFCL itself does not declare read/write. It feeds our tool graph and
#: decides which calls run atomically. tests/envs/test_bfcl_environment.py executes the
#: gold calls of bfcl-eval's multi-turn data and checks that every tool observed to change
#: what the official state checker compares (public attributes) is listed here. `cd`
#: changes only the private working directory, which later calls depend on: a write.
WRITE_TOOLS: dict[str, frozenset[str]] = {
    "GorillaFileSystem": frozenset({"cd", "cp", "echo", "mkdir", "mv", "rm", "rmdir",
                                    "touch"}),
    "MathAPI": frozenset(),
    "MessageAPI": frozenset({"add_contact", "delete_message", "message_login",
                             "send_message"}),
    "TwitterAPI": frozenset({"authenticate_twitter", "comment", "follow_user", "mention",
                             "post_tweet", "retweet", "unfollow_user"}),
    "TicketAPI": frozenset({"close_ticket", "create_ticket", "edit_ticket", "logout",
                            "resolve_ticket", "ticket_login"}),
    "TradingBot": frozenset({"add_to_watchlist", "cancel_order", "fund_account",
                             "make_transaction", "place_order", "remove_stock_from_watchlist",
                             "trading_login", "trading_logout", "update_market_status",
                             "update_stock_price"}),
    "TravelAPI": frozenset({"authenticate_travel", "book_flight", "cancel_booking",
                            "purchase_insurance", "register_credit_card",
                            "set_budget_limit"}),
    "VehicleControlAPI": frozenset({"activateParkingBrake", "adjustClimateControl",
                                    "fillFuelTank", "lockDoors", "pressBrakePedal",
                                    "releaseBrakePedal", "setCruiseControl", "setHeadlights",
                                    "set_navigation", "startEngine"}),
}


def is_write(class_name: str, tool: str) -> bool:
    """Whether `tool` of backend `class_name` may change its state (unknown class: yes)."""
    writes = WRITE_TOOLS.get(class_name)
    return True if writes is None else tool in writes


class BfclState(BaseModel):
    """Snapshot of one backend: every attribute, encoded by `envs.bfcl.codec`."""

    backend: str
    attributes: dict[str, JsonValue]


@cache
def official_function_docs(class_name: str) -> tuple[dict[str, Any], ...]:
    """The official function docs of a backend class (as shipped in bfcl-eval)."""
    path = package.func_doc_file(class_name)
    return tuple(read_objects(path))


def official_executor() -> Any:
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    return multi_turn_utils


def new_backend(class_name: str, scenario: Mapping[str, Any] | None, long_context: bool) -> Any:
    """A fresh backend instance loaded as the official executor loads it."""
    module = importlib.import_module(package.class_module(class_name))
    instance = getattr(module, class_name)()
    if class_name not in package.stateless_classes():
        instance._load_scenario(copy.deepcopy(dict(scenario or {})), long_context=long_context)
    return instance


def _instance_keys(run_key: str, entry_id: str, class_name: str) -> tuple[str, str]:
    """The globals() keys under which the official executor looks an instance up.

    ≤2025.8.6.2: `{model}_{id}_{class.lower()}_instance`, "-./" → "_" in the model name;
    V4 (2026.3.23): `{model}_{id}_{Class}_instance`, "-./:" → "_" in the whole key.
    Instances are lent under both spellings, so either release finds them.
    """
    mangled = run_key
    for ch in "-./:":
        mangled = mangled.replace(ch, "_")
    v3 = f"{mangled}_{entry_id}_{class_name.lower()}_instance"
    v4 = re.sub(r"[-./:]", "_", f"{run_key}_{entry_id}_{class_name}_instance")
    return v3, v4


def _instance_key(run_key: str, entry_id: str, class_name: str) -> str:
    return _instance_keys(run_key, entry_id, class_name)[0]


def forget_instances(run_key: str) -> int:
    """Drop every instance the official code cached for `run_key`; returns how many."""
    g = vars(official_executor())
    prefix = _instance_key(run_key, "", "").removesuffix("__instance")
    stale = [k for k in g if k.startswith(prefix) and k.endswith("_instance")]
    for k in stale:
        del g[k]
    return len(stale)


def new_run_key() -> str:
    """A model_name for the official code that no other sample or epoch shares."""
    return f"envfactory_{uuid.uuid4().hex}"


@contextmanager
def _lent(instances: Mapping[str, Any], entry_id: str) -> Iterator[str]:
    run_key = new_run_key()
    g = vars(official_executor())
    keys = {c: _instance_keys(run_key, entry_id, c) for c in instances}
    for c, names in keys.items():
        for key in names:
            g[key] = instances[c]
    try:
        yield run_key
    finally:
        for names in keys.values():
            for key in names:
                g.pop(key, None)
    if forget_instances(run_key):  # the executor built its own: it did not find ours
        raise RuntimeError(
            "bfcl-eval's executor did not use the lent backend instances; its instance "
            "key format is not one envs.bfcl.environment knows"
        )


def execute_official(
    instances: Mapping[str, Any], calls: list[str], entry_id: str, long_context: bool
) -> list[str]:
    """Run decoded call strings on `instances` (class name -> backend) with bfcl-eval's own
    executor, lending it the instances for the duration of the calls."""
    with _lent(instances, entry_id) as run_key:
        results, _ = official_executor().execute_multi_turn_func_call(
            func_call_list=calls,
            initial_config={},
            involved_classes=list(instances),
            model_name=run_key,
            test_entry_id=entry_id,
            long_context=long_context,
            is_evaL_run=False,
        )
    return list(results)


def call_string(name: str, arguments: Mapping[str, Any]) -> str:
    """`name(k=repr(v), ...)`, the form bfcl-eval's FC decoder produces."""
    return f"{name}({','.join(f'{k}={v!r}' for k, v in arguments.items())})"


@cache
def _methods(class_name: str) -> frozenset[str]:
    """Public methods of a backend class: the tools the official executor can call."""
    cls = getattr(importlib.import_module(package.class_module(class_name)), class_name)
    return frozenset(n for n, _ in inspect.getmembers(cls, inspect.isfunction)
                     if not n.startswith("_"))


class _ExecutorError(Exception):
    """An exception bfcl-eval's executor caught while running a call (its message)."""


class BfclEnvironment(SnapshotEnvironment):
    """One BFCL backend instance as an environment (adapter over bfcl-eval's classes)."""

    State = BfclState

    def __init__(
        self,
        class_name: str,
        scenario: Mapping[str, Any] | None = None,
        *,
        long_context: bool = False,
    ) -> None:
        self.class_name = class_name
        self.long_context = long_context
        self.backend = new_backend(class_name, scenario, long_context)

    @property
    def name(self) -> str:  # type: ignore[override]  # per instance, not per class
        return f"bfcl/{self.class_name}"

    def public_state(self) -> dict[str, Any]:
        """Public attributes (the ones BFCL's state checker compares), JSON-encoded."""
        return {
            k: codec.encode(v) for k, v in vars(self.backend).items() if not k.startswith("_")
        }

    @classmethod
    def specs_for(cls, class_name: str) -> list[ToolSpec]:
        """Tool specs from the official docs, converted to JSON schema as bfcl-eval does."""
        from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI
        from bfcl_eval.model_handler.utils import _cast_to_openai_type

        specs = []
        for doc in official_function_docs(class_name):
            doc = copy.deepcopy(doc)
            params = doc["parameters"]
            params["type"] = "object"
            params["properties"] = _cast_to_openai_type(params["properties"], GORILLA_TO_OPENAPI)
            params.setdefault("required", [])
            specs.append(
                ToolSpec(
                    name=doc["name"],
                    description=doc["description"],
                    parameters=params,
                    write=is_write(class_name, doc["name"]),
                )
            )
        return specs

    def tools(self) -> list[ToolSpec]:
        return self.specs_for(self.class_name)

    # -- Environment hooks: the contract's call() over the official executor ------------

    def _tool_names(self) -> frozenset[str]:
        return _methods(self.class_name)

    def _lookup(self, name: str) -> str | None:
        return name if name in self._tool_names() else None

    def _needs_checkpoint(self, tool: str) -> bool:
        return is_write(self.class_name, tool)

    def _parse(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Arguments as given (the official executor passes them on unchecked), as long
        as they can be written as keyword arguments of a call string."""
        if not all(isinstance(k, str) for k in arguments):
            raise ToolError(f"Arguments for tool {tool!r} must be an object.")
        bad = [k for k in arguments if not k.isidentifier()]
        if bad:
            raise ToolError(f"Invalid argument names for {tool!r}: {bad}.")
        return dict(arguments)

    def _execute(self, tool: str, kwargs: dict[str, Any]) -> Any:
        (result,) = execute_official(
            {self.class_name: self.backend}, [call_string(tool, kwargs)],
            "single", self.long_context,
        )
        if result.startswith(ERROR_PREFIX):
            raise _ExecutorError(result.removeprefix(ERROR_PREFIX))
        try:
            return json.loads(result)
        except json.JSONDecodeError:
            return result

    def _failure_message(self, name: str, error: BaseException) -> str:
        """The executor's own message for an exception it caught (kind `failed`: the
        backends refuse by returning `{"error": ...}`, which is a result, not a failure)."""
        if isinstance(error, _ExecutorError):
            return str(error)
        return super()._failure_message(name, error)

    def snapshot(self) -> dict[str, Any]:
        """Every attribute of the backend (private ones too: the current directory, the
        random generator), so that `restore` resumes the episode exactly."""
        state = BfclState(backend=self.class_name, attributes=codec.encode(vars(self.backend)))
        return state.model_dump(mode="json")

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        state = BfclState.model_validate(snapshot)
        if state.backend != self.class_name:
            raise ValueError(
                f"snapshot is of backend {state.backend!r}, not {self.class_name!r}"
            )
        backend = new_backend(self.class_name, None, self.long_context)
        backend.__dict__.clear()
        backend.__dict__.update(codec.decode(state.attributes))
        self.backend = backend
