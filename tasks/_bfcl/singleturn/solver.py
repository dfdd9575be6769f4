"""Inference as `OpenAICompletionsHandler.inference_single_turn_FC`: one chat call with the
official tools, the gold message published for `envfactory/oracle`, the official-format
model result recorded in the store.
"""

from __future__ import annotations

from inspect_ai.model import get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from harness import raw_arguments
from harness.episode import message_record
from harness.gold import GoldMessage, Position, publish
from tasks._bfcl.common import model_result, official_tools
from tasks._bfcl.reasoning_options import official_reasoning_options
from tasks._bfcl.singleturn.dataset import Entry
from tasks._bfcl.singleturn.gold import gold_calls

#: Store key: the official-format model result (`[{name: args_json}]` or the text).
MODEL_RESULT_KEY = "bfcl:model_result"


@solver
def bfcl_singleturn_solver() -> Solver:
    """One model call with the official tools, as `inference_single_turn_FC`.

    Publishes the gold message for `envfactory/oracle` and records the official-format
    model result in the store (`MODEL_RESULT_KEY`).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        entry = Entry(id=str(state.sample_id), category=meta["category"],
                      test_category=meta["test_category"], messages=[],
                      functions=meta["functions"], ground_truth=meta["ground_truth"])
        calls = gold_calls(entry)
        # no gold call: the oracle answers in text
        publish(Position(role="assistant", turn=0, step=0),
                GoldMessage(calls=calls, text="" if calls else "Done."))
        tools = official_tools(entry.functions, entry.test_category)
        model = raw_arguments.install(get_model())
        with raw_arguments.capture() as raw, official_reasoning_options():
            output = await model.generate(state.messages, tools=tools)
        state.output = output
        state.messages.append(output.message)
        state.store.set(MODEL_RESULT_KEY,
                        model_result(message_record(output.message, "assistant", raw)))
        return state

    return solve
