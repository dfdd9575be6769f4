"""BFCL v3 single-turn categories on Inspect, scored by the official checkers.

What the official pipeline does, and where it is replicated here:

- **Inference** (`OpenAICompletionsHandler.inference_single_turn_FC`): one chat call, no
  system prompt of its own, the entry's `question[0]` messages as-is, tools compiled by
  `func_doc_language_specific_pre_processing` + `convert_to_tool` ("." → "_" in names),
  temperature 0.001. → `bfcl_singleturn_solver` (tools from `common.official_tools`).
- **Result recording** (`_parse_query_response_FC`): `[{name: arguments_json_string}]`
  per tool call, or the message text when there is no tool call. → `model_result()`,
  which uses the provider's raw argument strings when the model call recorded them and
  otherwise Inspect's parsed arguments (a tool call Inspect could not parse = a string
  that fails `json.loads`).
- **Decoding** (`decode_ast` of FC models): `{name: json.loads(arguments)}` per call;
  any exception = decode failure. → `decode_ast()`.
- **Scoring** (`eval_runner.ast_file_runner` / `relevance_file_runner`): AST categories:
  decode failure → `ast_decoder:decoder_failed`, non `[{name: {..}}]` shape →
  `ast_decoder:decoder_wrong_output_format`, else the official `ast_checker` (called
  directly, language by category). irrelevance / live_irrelevance pass iff decoding
  fails or yields no call; live_relevance passes iff it yields ≥ 1 call. → `check()`.
- **Leaderboard** (`eval_runner_helper.generate_leaderboard_csv`): non-live overall =
  unweighted mean of [simple = mean(python, java, js), multiple, parallel,
  parallel_multiple, irrelevance]; live overall = sample-weighted over the six live
  categories. → `bfcl_leaderboard` metric and `leaderboard_summary()`.

The AST checker imports `bfcl_eval.constants.model_config`, which imports every
provider SDK; under the light (`--no-deps`) install a stub with the one model config
the checker reads (`underscore_to_dot`) is registered instead (`ensure_model_config`).
`bfcl_eval.utils` / `constants.eval_config` (which create folders) are never imported.

The package, by concern: `dataset` (entries, samples, categories), `gold` (the oracle's
answer), `checking` (decoding and the official checker), `solver` (inference) and
`scoring` (scorer and leaderboard metric); the names the task and tests use are
re-exported here.
"""

from envs.bfcl.categories import (
    AST_CATEGORIES,
    LIVE_CATEGORIES,
    NON_LIVE_CATEGORIES,
    RELEVANCE_CATEGORIES,
)
from tasks._bfcl.common import check_version, model_result
from tasks._bfcl.singleturn.checking import (
    CHECKER_MODEL_NAME,
    check,
    check_entry,
    decode_ast,
    ensure_model_config,
    official_ast_checker,
)
from tasks._bfcl.singleturn.dataset import (
    CATEGORIES,
    Entry,
    load_dataset,
    load_entries,
    resolve_categories,
    to_sample,
)
from tasks._bfcl.singleturn.gold import encode_java, encode_javascript, gold_calls, tool_name
from tasks._bfcl.singleturn.scoring import (
    bfcl_leaderboard,
    bfcl_singleturn_scorer,
    leaderboard_summary,
)
from tasks._bfcl.singleturn.solver import MODEL_RESULT_KEY, bfcl_singleturn_solver

__all__ = [
    "AST_CATEGORIES",
    "CATEGORIES",
    "CHECKER_MODEL_NAME",
    "LIVE_CATEGORIES",
    "MODEL_RESULT_KEY",
    "NON_LIVE_CATEGORIES",
    "RELEVANCE_CATEGORIES",
    "Entry",
    "bfcl_leaderboard",
    "bfcl_singleturn_scorer",
    "bfcl_singleturn_solver",
    "check",
    "check_entry",
    "check_version",
    "decode_ast",
    "encode_java",
    "encode_javascript",
    "ensure_model_config",
    "gold_calls",
    "leaderboard_summary",
    "load_dataset",
    "load_entries",
    "model_result",
    "official_ast_checker",
    "resolve_categories",
    "to_sample",
    "tool_name",
]
