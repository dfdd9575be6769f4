"""Hand-written task specs -> canonical Trajectories, and the validator that guards them.

A spec names its environments and, per user turn, the user's words and the gold calls.
`build` replays the gold calls from each environment's default state to record the
initial state, the gold state after every turn and the gold final state, so no state
in a task file is ever typed by hand. `check` rejects a task when

* a gold call fails on replay;
* a turn with a write call leaves the state unchanged (AWM's false positive: a
  verifier that can pass without the agent doing anything);
* a non-masked argument value is neither in the user's words so far nor in the
  result of an earlier gold call (the task would need hidden knowledge);
* the recorded gold states drift from what replay produces now.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from envs.world import World
from harness.trajectory import Call, Provenance, Trajectory, Turn

__all__ = ["TaskSpec", "build", "check", "load_specs"]

PATTERNS = ("implicit_reference", "action_compression", "reasonable_ambiguity",
            "goal_expansion")


class SpecTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    user: str
    gold_calls: list[Call] = Field(min_length=1, max_length=5)


class TaskSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    environments: list[str] = Field(min_length=1)
    patterns: list[str] = Field(default_factory=list)
    turns: list[SpecTurn] = Field(min_length=2, max_length=5)
    ignore_state_paths: dict[str, list[str]] = Field(default_factory=dict)


def load_specs(paths: Iterable[Path]) -> list[TaskSpec]:
    specs = []
    for path in paths:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise ValueError(f"{path}: a spec file is a JSON list of tasks")
        for i, raw in enumerate(data):
            try:
                specs.append(TaskSpec.model_validate(raw))
            except ValueError as e:
                task_id = raw.get("id", "?") if isinstance(raw, dict) else "?"
                raise ValueError(f"{path}: task #{i} ({task_id}): {e}") from e
    return specs


def _write_tools(world: World) -> set[tuple[str, str]]:
    return {(env, spec.name) for env, e in world.envs.items() for spec in e.tools()
            if spec.write}


def build(spec: TaskSpec, split: str, domains: dict[str, str]) -> Trajectory:
    """Replay the gold calls and record every gold state (raises if a call fails)."""
    world = World(spec.environments)
    initial = world.snapshot()
    turns = []
    for t, spec_turn in enumerate(spec.turns):
        for call in spec_turn.gold_calls:
            result = world.call(call.env, call.name, call.arguments)
            if not result.ok:
                raise ValueError(f"task {spec.id}: turn {t}: gold call {call.qualified_name} "
                                 f"failed: {result.error}")
        turns.append(Turn(user=spec_turn.user, gold_calls=spec_turn.gold_calls,
                          gold_state_after=world.snapshot()))
    env_domains = sorted({domains.get(e, "") for e in spec.environments})
    return Trajectory(
        id=spec.id,
        environments=spec.environments,
        initial_state=initial,
        turns=turns,
        final_state=world.snapshot(),
        ignore_state_paths=spec.ignore_state_paths,
        provenance=Provenance(source="hand-written", split=split,
                              domain="+".join(env_domains), patterns=spec.patterns),
    )


def _mentions(value: Any, text: str) -> bool:
    """Is `value` stated in `text`? (strings case-insensitively, numbers as written)."""
    if isinstance(value, bool) or value is None:
        return True  # implied by the words, not quotable
    if isinstance(value, (int, float)):
        if value in (0, 1):
            return True  # "a", "the", "none": implied by ordinary words
        # whole numbers as written ("1,850.00" states 1850; "10%" does not state 1)
        return any(math.isclose(float(n.replace(",", "")), value)
                   for n in re.findall(r"(?<![\d.])\d[\d,]*(?:\.\d+)?", text))
    if isinstance(value, str):
        return value.lower() in text.lower()
    if isinstance(value, list):
        return all(_mentions(v, text) for v in value)
    if isinstance(value, dict):
        return all(_mentions(v, text) for v in value.values())
    return False


def check(task: Trajectory) -> list[str]:
    """Problems with one task (empty list = valid)."""
    problems: list[str] = []
    world = World(task.environments, task.initial_state)
    writes = _write_tools(world)
    enums = _enum_values(world)
    said = ""
    observed = ""
    for t, turn in enumerate(task.turns):
        said += "\n" + turn.user
        before = world.snapshot()
        for call in turn.gold_calls:
            masked = set(call.masked_arguments)
            for arg, value in call.arguments.items():
                if arg in masked or value in enums.get((call.env, call.name, arg), ()):
                    continue
                if not (_mentions(value, said) or _mentions(value, observed)):
                    problems.append(
                        f"turn {t}: {call.qualified_name}: argument {arg}={value!r} is neither "
                        "in the user's words nor in an earlier call's result")
            result = world.call(call.env, call.name, call.arguments)
            if not result.ok:
                problems.append(f"turn {t}: gold call {call.qualified_name} failed: "
                                f"{result.error}")
            observed += "\n" + json.dumps(result.content, ensure_ascii=False)
        after = world.snapshot()
        if any((c.env, c.name) in writes for c in turn.gold_calls) and after == before:
            problems.append(f"turn {t}: has write calls but the gold state does not change")
        if turn.gold_state_after is not None and turn.gold_state_after != after:
            problems.append(f"turn {t}: recorded gold state drifts from replay")
    if task.final_state is not None and task.final_state != world.snapshot():
        problems.append("recorded gold final state drifts from replay")
    return problems


def _enum_values(world: World) -> dict[tuple[str, str, str], list[Any]]:
    """(env, tool, argument) -> the argument's enum choices: a choice among fixed options
    (a Literal parameter) counts as implied by the user's words."""
    values: dict[tuple[str, str, str], list[Any]] = {}
    for env, e in world.envs.items():
        for spec in e.tools():
            for arg, prop in spec.parameters.get("properties", {}).items():
                options = list(prop.get("enum", [])) + [
                    v for alt in prop.get("anyOf", []) for v in alt.get("enum", [])]
                if options:
                    values[(env, spec.name, arg)] = options
    return values


def split_of(spec: TaskSpec, splits: dict[str, list[str]]) -> str:
    """The split all of a task's environments belong to (mixing splits is an error)."""
    owners = {name for name, envs in splits.items() for e in spec.environments if e in envs}
    unknown = [e for e in spec.environments if not any(e in v for v in splits.values())]
    if unknown:
        raise ValueError(f"task {spec.id}: environments {unknown} are in no split")
    if len(owners) != 1:
        raise ValueError(f"task {spec.id}: mixes environments of splits {sorted(owners)}")
    return owners.pop()


def build_all(specs_dir: Path, splits_file: Path, out_dir: Path,
              on_progress: Callable[[str, int, int | None], None] | None = None
              ) -> dict[str, int]:
    """Build every spec file into `<out_dir>/<split>.jsonl`; returns task counts.
    `on_progress("replaying gold calls", done, total)` follows the specs replayed."""
    from envs.pool import pool_classes
    from harness.trajectory import write_jsonl

    splits: dict[str, list[str]] = json.loads(Path(splits_file).read_text(encoding="utf-8"))
    domains = {name: cls.domain for name, cls in pool_classes().items()}
    specs = load_specs(sorted(Path(specs_dir).glob("*.json")))
    seen: set[str] = set()
    by_split: dict[str, list[Trajectory]] = {name: [] for name in splits}
    for done, spec in enumerate(specs, 1):
        if spec.id in seen:
            raise ValueError(f"duplicate task id {spec.id!r}")
        seen.add(spec.id)
        by_split[split_of(spec, splits)].append(build(spec, split_of(spec, splits), domains))
        if on_progress is not None:
            on_progress("replaying gold calls", done, len(specs))
    for name, tasks in by_split.items():
        write_jsonl(Path(out_dir) / f"{name}.jsonl", sorted(tasks, key=lambda t: t.id))
    return {name: len(tasks) for name, tasks in by_split.items()}
