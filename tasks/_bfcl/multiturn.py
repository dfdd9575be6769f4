"""BFCL v3 multi-turn on Inspect: the official inference rules and the official checker.

The solver replays `base_handler.inference_multi_turn_FC` step for step: tools from
the official function docs, user turns fed one at a time, held-out functions revealed
with the official message, every decoded call executed by bfcl-eval's own executor
(on our per-sample `BfclWorld`), at most `MAXIMUM_STEP_LIMIT` executed steps per turn
before the entry is force-terminated. The scorer hands the decoded calls to the
official `multi_turn_checker` under a run key no other sample shares and clears
bfcl-eval's instance cache afterwards.
"""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Sequence
from functools import cache
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    get_model,
)
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Score,
    Scorer,
    Target,
    accuracy,
    grouped,
    scorer,
    stderr,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from envs.bfcl import package
from envs.bfcl.environment import (
    BfclWorld,
    forget_instances,
    new_backend,
    new_run_key,
    official_function_docs,
)
from harness.providers.script import (
    POSITIONAL_KEY,
    SCRIPT_KEY,
    TURN_KEY,
    Script,
    parse_call,
)
from tasks._bfcl.common import (
    hint_applied_by_loader,
    language_hint,
    model_result,
    official_tools,
    raw_tool_arguments,
)

__all__ = [
    "CATEGORIES",
    "MAXIMUM_STEP_LIMIT",
    "bfcl_multi_turn_scorer",
    "bfcl_multi_turn_solver",
    "decode_step",
    "load_dataset",
    "score_decoded",
]

CATEGORIES = ("base", "miss_func", "miss_param", "long_context")
MAXIMUM_STEP_LIMIT = 20  # bfcl_eval.constants.default_prompts.MAXIMUM_STEP_LIMIT
HOLDOUT_MESSAGE = "I have updated some more functions you can choose from. What about now?"

DECODED_KEY = "bfcl:decoded_turns"
RAW_KEY = "bfcl:raw_turns"
FORCE_QUIT_KEY = "bfcl:force_quit"


def _check_official_constants() -> None:
    """Fail loudly if a future bfcl-eval changes the rules we mirror."""
    from bfcl_eval.constants import default_prompts

    assert default_prompts.MAXIMUM_STEP_LIMIT == MAXIMUM_STEP_LIMIT
    assert default_prompts.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC == HOLDOUT_MESSAGE


# -- data ------------------------------------------------------------------------------


@cache
def _entries(category: str) -> tuple[tuple[dict[str, Any], list[list[str]]], ...]:
    name = f"multi_turn_{category}"
    questions = package.load_jsonl(package.data_file(name))
    answers = {a["id"]: a["ground_truth"] for a in package.load_jsonl(
        package.data_file(name, possible_answer=True))}
    return tuple((q, answers[q["id"]]) for q in questions)


def load_dataset(categories: Sequence[str]) -> MemoryDataset:
    """Samples whose ids are the official entry ids (`multi_turn_base_12`)."""
    samples = []
    for category in categories:
        if category not in CATEGORIES:
            raise ValueError(
                f"unknown BFCL multi-turn category {category!r}; use one of "
                f"{', '.join(CATEGORIES)} or 'all'"
            )
        for entry, ground_truth in _entries(category):
            first_turn = entry["question"][0] if entry["question"] else []
            samples.append(
                Sample(
                    id=entry["id"],
                    input=first_turn[0]["content"] if first_turn else "",
                    target=json.dumps(ground_truth),
                    metadata={
                        "category": category,
                        "question": entry["question"],
                        "initial_config": entry["initial_config"],
                        "involved_classes": entry["involved_classes"],
                        "missed_function": entry.get("missed_function", {}),
                        "ground_truth": ground_truth,
                    },
                )
            )
    return MemoryDataset(samples, name="bfcl_multi_turn")


def _functions_for(classes: Sequence[str]) -> list[dict[str, Any]]:
    """All function docs of the involved classes, in class order (a fresh copy)."""
    return [copy.deepcopy(doc) for c in classes for doc in official_function_docs(c)]


@cache
def _positional_order(class_name: str) -> dict[str, list[str]]:
    """Parameter order of each public backend method, to bind `sort('a.pdf')`."""
    backend = new_backend(class_name, None, long_context=False)
    return {
        name: [p for p in inspect.signature(method).parameters]
        for name, method in inspect.getmembers(backend, inspect.ismethod)
        if not name.startswith("_")
    }


def gold_script(ground_truth: list[list[str]], classes: Sequence[str]) -> Script:
    """The gold calls as one step per turn, positional arguments bound by name."""
    positional: dict[str, list[str]] = {}
    for c in classes:
        positional.update(_positional_order(c))
    return Script(turns=[[[parse_call(c, positional) for c in turn]] if turn else []
                         for turn in ground_truth])


# -- decoding (bfcl-eval's OpenAI FC handler) ----------------------------------------


def decode_step(result: list[dict[str, str]] | str) -> list[str] | None:
    """Decode one step's official model result as `decode_execute` does; None if it fails.

    `result` is what the FC handler records (`model_result`): text, or `{name: raw
    arguments JSON}` per call. Text fails to decode; arguments that are not valid JSON
    fail the whole step (the official `json.loads` raises); otherwise each call becomes
    `name(k=repr(v),...)` via the official `convert_to_function_call`.
    """
    from bfcl_eval.model_handler.utils import convert_to_function_call

    try:
        return list(convert_to_function_call(result))
    except Exception:  # noqa: BLE001 - the official runner treats any failure as text
        return None


# -- solver ----------------------------------------------------------------------------


@solver
def bfcl_multi_turn_solver() -> Solver:
    """Run one entry with the official multi-turn FC inference rules."""
    _check_official_constants()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        category = str(state.sample_id).rsplit("_", 1)[0]
        classes: list[str] = meta["involved_classes"]
        holdout: dict[str, list[str]] = meta["missed_function"]
        held_out_names = {n for names in holdout.values() for n in names}
        all_docs = _functions_for(classes)
        functions = [d for d in all_docs if d["name"] not in held_out_names]
        by_loader = hint_applied_by_loader()  # V4: hint once; held-out docs never
        if by_loader:
            functions = language_hint(functions, category)
        tools = official_tools(functions, category, in_place=True, hint=not by_loader)

        world = BfclWorld(str(state.sample_id), meta["initial_config"], classes,
                          long_context="long_context" in category)
        state.store.set(SCRIPT_KEY, gold_script(meta["ground_truth"], classes).model_dump())
        positional: dict[str, list[str]] = {}
        for c in classes:
            positional.update(_positional_order(c))
        state.store.set(POSITIONAL_KEY, positional)

        model = get_model()
        state.messages = []
        decoded_turns: list[list[list[str]]] = []
        raw_turns: list[list[Any]] = []
        force_quit = False
        for turn_idx, turn_messages in enumerate(meta["question"]):
            state.store.set(TURN_KEY, turn_idx)
            if str(turn_idx) in holdout:
                for name in holdout[str(turn_idx)]:
                    functions.extend(d for d in all_docs if d["name"] == name)
                tools = official_tools(functions, category, in_place=True, hint=not by_loader)
                turn_messages = [{"role": "user", "content": HOLDOUT_MESSAGE}]
            for m in turn_messages:
                cls = ChatMessageSystem if m["role"] == "system" else ChatMessageUser
                state.messages.append(cls(content=m["content"]))

            decoded_steps: list[list[str]] = []
            raw_steps: list[Any] = []
            count = 0
            while True:
                output = await model.generate(state.messages, tools=tools)
                state.output = output
                message = output.message
                state.messages.append(message)
                raw = model_result(message, raw_tool_arguments())
                raw_steps.append(raw)
                calls = decode_step(raw)
                if not calls:  # undecodable or empty: the turn ends (text answer)
                    break
                decoded_steps.append(calls)
                results = world.execute(calls)
                for tool_call, result in zip(message.tool_calls or [], results, strict=True):
                    state.messages.append(ChatMessageTool(
                        content=result, tool_call_id=tool_call.id, function=tool_call.function))
                count += 1
                if count > MAXIMUM_STEP_LIMIT:
                    force_quit = True
                    break
            decoded_turns.append(decoded_steps)
            raw_turns.append(raw_steps)
            if force_quit:
                break

        state.store.set(DECODED_KEY, decoded_turns)
        state.store.set(RAW_KEY, raw_turns)
        state.store.set(FORCE_QUIT_KEY, force_quit)
        return state

    return solve


# -- scorer ----------------------------------------------------------------------------


def score_decoded(
    decoded_turns: list[list[list[str]]],
    ground_truth: list[list[str]],
    entry: dict[str, Any],
) -> dict[str, Any]:
    """The official verdict for decoded calls: `multi_turn_checker`, plus the runner's
    force-termination rule. Leaves nothing in bfcl-eval's instance cache."""
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    if len(decoded_turns) != len(ground_truth):
        return {
            "valid": False,
            "error_type": "multi_turn:force_terminated",
            "error_message": "Model was force-terminated during inference phase. The length "
            f"of the model result turns ({len(decoded_turns)}) does not match the length of "
            f"the ground truth turns ({len(ground_truth)}).",
        }
    run_key = new_run_key()
    try:
        return dict(multi_turn_checker(
            decoded_turns, ground_truth,
            {"id": entry["id"], "initial_config": entry["initial_config"],
             "involved_classes": entry["involved_classes"]},
            entry["id"].rsplit("_", 1)[0], run_key,
        ))
    finally:
        forget_instances(run_key)


@scorer(metrics=[grouped(accuracy(), "category", all="groups", all_label="overall"), stderr()])
def bfcl_multi_turn_scorer() -> Scorer:
    """Official multi-turn verdict; `overall` is the unweighted mean over categories."""

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        decoded = state.store.get(DECODED_KEY, [])
        verdict = score_decoded(decoded, meta["ground_truth"], {
            "id": str(state.sample_id), "initial_config": meta["initial_config"],
            "involved_classes": meta["involved_classes"]})
        valid = bool(verdict.get("valid"))
        return Score(
            value=CORRECT if valid else INCORRECT,
            answer=json.dumps(decoded),
            explanation=None if valid else
            f"{verdict.get('error_type')}: {verdict.get('error_message')}",
            metadata={"category": meta["category"], "error_type": verdict.get("error_type")},
        )

    return score
