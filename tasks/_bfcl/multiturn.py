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
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    ModelOutput,
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
from inspect_ai.util import store_as

from envs.bfcl import package
from envs.bfcl.categories import MULTI_TURN_CATEGORIES
from envs.bfcl.environment import (
    forget_instances,
    new_backend,
    new_run_key,
    official_function_docs,
)
from envs.bfcl.world import BfclWorld
from envs.jsonl import read_objects
from harness import raw_arguments
from harness.episode import (
    Episode,
    EpisodeProgress,
    Invocation,
    Rules,
    ScriptedUser,
    Side,
    UserTurn,
)
from harness.gold import Script, ScriptPolicy, parse_call
from harness.tool_backends import BfclBackend
from harness.trajectory import Message
from tasks._bfcl.common import (
    hint_applied_by_loader,
    language_hint,
    model_result,
    official_tools,
    select_categories,
)
from tasks._bfcl.reasoning_options import official_reasoning_options

__all__ = [
    "CATEGORIES",
    "MAXIMUM_STEP_LIMIT",
    "bfcl_multi_turn_scorer",
    "bfcl_multi_turn_solver",
    "decode_step",
    "load_dataset",
    "resolve_categories",
    "score_decoded",
]

CATEGORIES = MULTI_TURN_CATEGORIES
MAXIMUM_STEP_LIMIT = 20  # bfcl_eval.constants.default_prompts.MAXIMUM_STEP_LIMIT
HOLDOUT_MESSAGE = "I have updated some more functions you can choose from. What about now?"



def _check_official_constants() -> None:
    """Fail loudly if a future bfcl-eval changes the rules we mirror."""
    from bfcl_eval.constants import default_prompts

    assert default_prompts.MAXIMUM_STEP_LIMIT == MAXIMUM_STEP_LIMIT
    assert default_prompts.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC == HOLDOUT_MESSAGE


# -- data ------------------------------------------------------------------------------


@cache
def _entries(category: str) -> tuple[tuple[dict[str, Any], list[list[str]]], ...]:
    name = f"multi_turn_{category}"
    questions = read_objects(package.data_file(name))
    answers = {a["id"]: a["ground_truth"] for a in read_objects(
        package.data_file(name, possible_answer=True))}
    return tuple((q, answers[q["id"]]) for q in questions)


#: bfcl-eval's collection names for all four categories (`TEST_COLLECTION_MAPPING`)
_ALL = ("all", "multi_turn")


def resolve_categories(category: str | Sequence[str]) -> list[str]:
    """Short names (`base`, `miss_func`, ...), the official ones (`multi_turn_base`, ...),
    "all" or the official collection "multi_turn"; comma-separated or a list."""
    return select_categories(
        category,
        lambda name: CATEGORIES if name in _ALL else (name.removeprefix("multi_turn_"),),
        CATEGORIES,
        lambda name, _: (f"unknown BFCL multi-turn category {name!r}; use one of "
                         f"{', '.join(CATEGORIES)} (or multi_turn_<name>), 'all' or "
                         "'multi_turn'"),
        "no BFCL multi-turn category selected")


def load_dataset(categories: str | Sequence[str]) -> MemoryDataset:
    """Samples whose ids are the official entry ids (`multi_turn_base_12`), for the
    categories `resolve_categories` accepts."""
    samples = []
    for category in resolve_categories(categories):
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
                        "environments": [f"bfcl/{c}" for c in entry["involved_classes"]],
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
    return Script.of_calls([[[parse_call(c, positional) for c in turn]] if turn else []
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


def official_decode(message: Message) -> list[Invocation] | None:
    """The episode loop's decoder for BFCL: the step runs only if the official decoder
    accepts every call's raw argument string; otherwise the message ends the turn."""
    result = model_result(message)
    if not message.tool_calls or not decode_step(result):
        return None
    assert isinstance(result, list)
    return [Invocation(id=call.id, name=call.name, arguments=json.loads(next(iter(r.values()))))
            for call, r in zip(message.tool_calls, result, strict=True)]


def decoded_turns(messages: Sequence[Message], turns: int) -> list[list[list[str]]]:
    """Per user turn, the decoded calls of each executed step (the checker's input)."""
    out: list[list[list[str]]] = [[] for _ in range(turns)]
    for message in messages:
        if message.role == "assistant" and message.turn is not None and message.turn < turns:
            calls = decode_step(model_result(message)) if message.tool_calls else None
            if calls:
                out[message.turn].append(calls)
    return out


# -- solver ----------------------------------------------------------------------------


def user_turns(meta: dict[str, Any], category: str) -> list[UserTurn]:
    """The entry's turns as the official runner feeds them: held-out functions are
    revealed (tools recompiled, the official message instead of the turn's own)."""
    classes: list[str] = meta["involved_classes"]
    holdout: dict[str, list[str]] = meta["missed_function"]
    held_out_names = {n for names in holdout.values() for n in names}
    all_docs = _functions_for(classes)
    functions = [d for d in all_docs if d["name"] not in held_out_names]
    by_loader = hint_applied_by_loader()  # V4: hint once; held-out docs never
    if by_loader:
        functions = language_hint(functions, category)
    turns = []
    for turn_idx, turn_messages in enumerate(meta["question"]):
        tools = None
        if turn_idx == 0:
            tools = official_tools(functions, category, in_place=True, hint=not by_loader)
        if str(turn_idx) in holdout:
            for name in holdout[str(turn_idx)]:
                functions.extend(d for d in all_docs if d["name"] == name)
            tools = official_tools(functions, category, in_place=True, hint=not by_loader)
            turn_messages = [{"role": "user", "content": HOLDOUT_MESSAGE}]
        messages: list[ChatMessage] = [
            ChatMessageSystem(content=m["content"]) if m["role"] == "system"
            else ChatMessageUser(content=m["content"]) for m in turn_messages]
        turns.append(UserTurn(messages=messages, tools=tools))
    return turns


#: the official runner quits an entry once a turn's executed steps exceed the limit
RULES = Rules(decode=official_decode, turn_step_limit=MAXIMUM_STEP_LIMIT + 1,
              end_episode_at_turn_step_limit=True)


@solver
def bfcl_multi_turn_solver() -> Solver:
    """Run one entry with the official multi-turn FC inference rules."""
    _check_official_constants()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        category = str(state.sample_id).rsplit("_", 1)[0]
        classes: list[str] = meta["involved_classes"]
        world = BfclWorld(str(state.sample_id), meta["initial_config"], classes,
                          long_context="long_context" in category)
        state.messages = []
        agent = Side(role="assistant", model=get_model(), history=state.messages)
        episode = Episode(agent, BfclBackend(world, lambda: agent.tools), RULES,
                          user=ScriptedUser(user_turns(meta, category)),
                          gold=ScriptPolicy(gold_script(meta["ground_truth"], classes)))
        # the official handlers keep the provider's message in their history: each call's
        # arguments go back exactly as the model wrote them (malformed JSON included), each
        # reasoning item as it came; and they ask every model for its reasoning
        with raw_arguments.resend(), official_reasoning_options():
            await episode.run()
        if agent.history and agent.history[-1].role == "assistant":
            state.output = ModelOutput.from_message(agent.history[-1])
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
        progress = store_as(EpisodeProgress)
        decoded = decoded_turns(progress.messages, progress.turn + 1)
        verdict = score_decoded(decoded, meta["ground_truth"], {
            "id": str(state.sample_id), "initial_config": meta["initial_config"],
            "involved_classes": meta["involved_classes"]})
        valid = bool(verdict.get("valid"))
        return Score(
            value=CORRECT if valid else INCORRECT,
            answer=json.dumps(decoded),
            explanation=None if valid else
            f"{verdict.get('error_type')}: {verdict.get('error_message')}",
            metadata={"category": meta["category"], "error_type": verdict.get("error_type"),
                      "termination": progress.termination},
        )

    return score
