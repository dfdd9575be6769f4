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
the checker reads (`underscore_to_dot`) is registered instead (`_ensure_model_config`).
`bfcl_eval.utils` / `constants.eval_config` (which create folders) are never imported.
"""

from __future__ import annotations

import decimal
import json
import re
import sys
import types
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    get_model,
)
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    accuracy,
    metric,
    scorer,
    stderr,
    value_to_float,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from envs.bfcl import package
from envs.bfcl.categories import (
    AST_CATEGORIES,
    LIVE_CATEGORIES,
    NON_LIVE_CATEGORIES,
    RELEVANCE_CATEGORIES,
    SINGLE_TURN_CATEGORIES,
    V3_NAMES,
)
from envs.jsonl import read_objects
from harness import raw_arguments
from harness.episode import message_record
from harness.gold import GoldCall, GoldMessage, Position, publish
from tasks._bfcl.common import check_version, model_result, official_tools, select_categories

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
    "check_version",
    "decode_ast",
    "gold_calls",
    "load_dataset",
    "load_entries",
    "leaderboard_summary",
    "model_result",
    "official_ast_checker",
    "resolve_categories",
]

CATEGORIES = SINGLE_TURN_CATEGORIES

_COLLECTIONS = {
    "all": CATEGORIES,
    "single_turn": CATEGORIES,
    "non_live": NON_LIVE_CATEGORIES,
    "live": LIVE_CATEGORIES,
    "ast": AST_CATEGORIES,
    "relevance": RELEVANCE_CATEGORIES,
    "python": tuple(c for c in CATEGORIES if c not in ("java", "javascript")),
    "non_python": ("java", "javascript"),
}

_LANGUAGE = {"java": "Java", "javascript": "JavaScript"}  # everything else: Python

#: A model of bfcl-eval's MODEL_CONFIG_MAPPING with `underscore_to_dot=True` (in every
#: release): our tool names are sanitised "." → "_", so the checker must compare GT
#: names the same way. Contains no "_", so the checker's "_"→"/" unescaping is a no-op.
CHECKER_MODEL_NAME = "gpt-4o-2024-11-20-FC"

#: Store key: the official-format model result (`[{name: args_json}]` or the text).
MODEL_RESULT_KEY = "bfcl:model_result"

_MODEL_CONFIG_MODULE = "bfcl_eval.constants.model_config"


def resolve_categories(category: str | Sequence[str]) -> list[str]:
    """"all", a collection (non_live, live, ast, relevance, python, non_python) or a comma
    list of categories, by our (v3) names or bfcl-eval V4's (`simple_python`, ...)."""
    return select_categories(
        category,
        lambda name: _COLLECTIONS.get(name, (V3_NAMES.get(name, name),)),
        CATEGORIES,
        lambda _, cat: (f"unknown BFCL single-turn category {cat!r}; choose from "
                        f"{', '.join(CATEGORIES)} or {', '.join(_COLLECTIONS)}"),
        "no BFCL single-turn category selected")


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Entry:
    id: str
    category: str  # v3 name (simple, java, ...)
    test_category: str  # as the official code derives it from the id (V4: simple_python)
    messages: list[dict[str, Any]]
    functions: list[dict[str, Any]]
    ground_truth: list[dict[str, Any]] | None  # None for the relevance categories

    @property
    def language(self) -> str:
        return _LANGUAGE.get(self.category, "Python")


def _test_category(entry_id: str) -> str:
    # official: test_entry["id"].rsplit("_", 1)[0]
    return entry_id.rsplit("_", 1)[0]


@cache
def load_entries(category: str) -> tuple[Entry, ...]:
    """Questions joined with possible answers (by id) for one v3 category."""
    if category not in CATEGORIES:
        raise ValueError(f"unknown BFCL single-turn category {category!r}")
    questions = read_objects(package.data_file(category))
    answers: dict[str, list[dict[str, Any]]] = {}
    if category not in RELEVANCE_CATEGORIES:
        for row in read_objects(package.data_file(category, possible_answer=True)):
            answers[row["id"]] = row["ground_truth"]
    entries = []
    for q in questions:
        if category not in RELEVANCE_CATEGORIES and q["id"] not in answers:
            raise ValueError(f"{q['id']}: no possible answer in the installed bfcl-eval")
        entries.append(
            Entry(
                id=q["id"],
                category=category,
                test_category=_test_category(q["id"]),
                messages=list(q["question"][0]),
                functions=list(q["function"]),
                ground_truth=answers.get(q["id"]),
            )
        )
    return tuple(entries)


def _chat_message(message: dict[str, Any]) -> ChatMessage:
    role, content = message["role"], message["content"]
    if role == "system":
        return ChatMessageSystem(content=content)
    if role == "assistant":
        return ChatMessageAssistant(content=content)
    if role == "user":
        return ChatMessageUser(content=content)
    raise ValueError(f"unexpected message role {role!r} in BFCL data")


def to_sample(entry: Entry) -> Sample:
    return Sample(
        id=entry.id,
        input=[_chat_message(m) for m in entry.messages],
        target=json.dumps(entry.ground_truth) if entry.ground_truth is not None else "",
        metadata={
            "category": entry.category,
            "test_category": entry.test_category,
            "language": entry.language,
            "functions": entry.functions,
            "ground_truth": entry.ground_truth,
        },
    )


def load_dataset(categories: Iterable[str]) -> MemoryDataset:
    cats = list(categories)
    samples = [to_sample(e) for cat in cats for e in load_entries(cat)]
    return MemoryDataset(samples, name="bfcl_singleturn:" + ",".join(cats))


# --------------------------------------------------------------------------- gold


def _first(allowed: Any) -> Any:
    """First allowed value of a GT list (GT values are lists of alternatives)."""
    return allowed[0] if isinstance(allowed, list) and allowed else allowed


def _pick_dict(gt: dict[str, Any]) -> dict[str, Any]:
    """A GT dict value is {key: [allowed...]}; "" first → the key is optional, omit it."""
    out = {}
    for key, allowed in gt.items():
        if isinstance(allowed, list) and not allowed:
            continue
        value = _first(allowed)
        if value == "":
            continue
        out[key] = value
    return out


def _pick(value: Any, schema: dict[str, Any]) -> Any:
    """Turn a chosen GT value into a concrete value (dicts inside hold alternatives)."""
    typ = schema.get("type")
    if typ in ("dict", "HashMap") and isinstance(value, dict):
        return _pick_dict(value)
    if isinstance(value, list) and all(isinstance(v, dict) for v in value) and value:
        items_type = (schema.get("items") or {}).get("type")
        if items_type == "dict":
            return [_pick_dict(v) for v in value]
    return value


def _java_scalar(value: Any, typ: str | None) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if typ == "long" and isinstance(value, int):
        return f"{value}L"
    if typ == "float" and isinstance(value, (int, float)):
        return f"{float(value)!r}f"
    if typ == "double" and isinstance(value, (int, float)):
        return repr(float(value))
    return str(value)


def _java_literal(value: Any) -> str:
    """A Java literal that `parse_java_value` reads back as `value`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def encode_java(value: Any, schema: dict[str, Any]) -> str:
    """A Python GT value as the Java-syntax string the checker's converter parses back."""
    typ = schema.get("type")
    nested = (schema.get("items") or {}).get("type")
    if typ == "Array" and isinstance(value, list):
        # parse_array: java_type_converter(element, nested) on the comma-split body
        return "new Object[]{" + ", ".join(_java_scalar(v, nested) for v in value) + "}"
    if typ == "ArrayList" and isinstance(value, list):
        if not value:
            return "new ArrayList<>()"
        if nested in ("String", "char"):
            body = ", ".join(f'"{v}"' for v in value)  # quotes are stripped by the parser
        else:
            body = ", ".join(_java_scalar(v, nested) for v in value)
        return f"new ArrayList<>(Arrays.asList({body}))"
    if typ == "HashMap" and isinstance(value, dict):
        if not value:
            return "new HashMap<>()"
        puts = " ".join(f'put("{k}", {_java_literal(v)});' for k, v in value.items())
        return "new HashMap<String, Object>() {{ " + puts + " }}"
    return _java_scalar(value, typ)


def _js_number(value: float) -> str:
    """Positional notation (the JS float regex has no exponent)."""
    text = format(decimal.Decimal(repr(float(value))), "f")
    return text if "." in text else text + ".0"


def _js_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, float):
        return _js_number(value)
    if isinstance(value, list):
        return "[" + ", ".join(_js_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_js_literal(v)}" for k, v in value.items()) + "}"
    return str(value)


def encode_javascript(value: Any, schema: dict[str, Any]) -> str:
    """A Python GT value as the JavaScript-syntax string `js_type_converter` parses back."""
    typ = schema.get("type")
    if isinstance(value, bool):
        return "true" if value else "false"
    if typ == "Bigint" and isinstance(value, int):
        return f"{value}n"
    if typ == "float" and isinstance(value, (int, float)):
        return _js_number(value)
    if typ in ("array", "dict") and isinstance(value, (list, dict)):
        return _js_literal(value)
    return str(value)


def _function_doc(functions: list[dict[str, Any]], name: str) -> dict[str, Any]:
    for f in functions:
        if f["name"] == name:
            return f
    return {"name": name, "parameters": {"properties": {}}}


def tool_name(function_name: str) -> str:
    """The name the model sees (`convert_to_tool`: "." → "_")."""
    return re.sub(r"\.", "_", function_name)


def gold_calls(entry: Entry) -> list[GoldCall]:
    """One correct answer: first allowed value per parameter, "" (optional) → omitted
    (see `_choose` for the two data quirks it steers around).

    AST categories: the calls of the possible answer (Java/JavaScript values as their
    string syntax). live_relevance (no possible answer: any call passes): the first
    tool with its required parameters filled from the schema. irrelevance: no call.
    """
    if entry.ground_truth is None:
        if entry.category == "live_relevance" and entry.functions:
            return [_placeholder_call(entry.functions[0])]
        return []
    calls = []
    for gt in entry.ground_truth:
        ((name, params),) = gt.items()
        doc = _function_doc(entry.functions, name)["parameters"]
        properties, required = doc.get("properties", {}), doc.get("required", [])
        arguments: dict[str, Any] = {}
        for param, allowed in params.items():
            value = _choose(allowed, known=param in properties, required=param in required)
            if value is _OMIT:
                continue
            schema = properties.get(param, {})
            value = _pick(value, schema)
            if entry.language == "Java":
                value = encode_java(value, schema)
            elif entry.language == "JavaScript":
                value = encode_javascript(value, schema)
            arguments[param] = value
        calls.append(GoldCall(function=tool_name(name), arguments=arguments))
    return calls


_OMIT = object()


def _choose(allowed: Any, *, known: bool, required: bool) -> Any:
    """The value the oracle sends for one GT parameter, or `_OMIT`.

    The first allowed value; "" (= optional) → omitted. Two data quirks are steered
    around where the GT itself allows it: a required parameter whose first alternative
    is "" gets its first concrete alternative, and a GT parameter the function does not
    declare is omitted when "" is allowed.
    """
    if not isinstance(allowed, list) or not allowed:
        return _OMIT  # unsatisfiable GT (no alternatives): leave it out
    if not known and "" in allowed:
        return _OMIT
    if allowed[0] == "" and required:
        concrete = [v for v in allowed if v != ""]
        return concrete[0] if concrete else _OMIT
    return _OMIT if allowed[0] == "" else allowed[0]


_PLACEHOLDER = {"string": "", "integer": 0, "float": 0.0, "number": 0.0, "boolean": False,
                "array": [], "tuple": [], "dict": {}, "object": {}}


def _placeholder_call(function: dict[str, Any]) -> GoldCall:
    params = function.get("parameters", {})
    properties = params.get("properties", {})
    arguments = {}
    for name in params.get("required", []):
        schema = properties.get(name, {})
        if "default" in schema:
            arguments[name] = schema["default"]
        elif schema.get("enum"):
            arguments[name] = schema["enum"][0]
        else:
            arguments[name] = _PLACEHOLDER.get(schema.get("type", "string"), "")
    return GoldCall(function=tool_name(function["name"]), arguments=arguments)


# --------------------------------------------------------------------------- decoding


def decode_ast(result: Any) -> list[dict[str, Any]]:
    """The FC handlers' `decode_ast`: raises on anything it cannot decode."""
    decoded = []
    for invoked_function in result:
        name = list(invoked_function.keys())[0]
        params = json.loads(invoked_function[name])
        decoded.append({name: params})
    return decoded


def is_function_calling_format_output(decoded: Any) -> bool:
    """`bfcl_eval.utils.is_function_calling_format_output` (not imported: it pulls in
    eval_config, which creates folders)."""
    if type(decoded) is not list:
        return False
    for item in decoded:
        if type(item) is not dict or len(item) != 1:
            return False
        if type(list(item.values())[0]) is not dict:
            return False
    return True


def is_empty_output(decoded: Any) -> bool:
    """`bfcl_eval.utils.is_empty_output`."""
    if not is_function_calling_format_output(decoded):
        return True
    if len(decoded) == 0:
        return True
    return len(decoded) == 1 and len(decoded[0]) == 0


# --------------------------------------------------------------------------- checking


def _ensure_model_config() -> None:
    """Make `bfcl_eval.constants.model_config` importable without the provider SDKs.

    The real module (full install) is used when something already imported it; otherwise
    a stub holding the one model config the AST checker reads is registered.
    """
    if _MODEL_CONFIG_MODULE in sys.modules:
        return
    stub = types.ModuleType(_MODEL_CONFIG_MODULE)
    stub.__doc__ = "envfactory stub: provider SDKs are not installed (bfcl-eval --no-deps)."
    stub.MODEL_CONFIG_MAPPING = {  # type: ignore[attr-defined]
        CHECKER_MODEL_NAME: types.SimpleNamespace(
            model_name=CHECKER_MODEL_NAME, underscore_to_dot=True, is_fc_model=True
        )
    }
    sys.modules[_MODEL_CONFIG_MODULE] = stub


@cache
def official_ast_checker() -> Any:
    _ensure_model_config()
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    return ast_checker


@cache
def _language_argument(language: str) -> Any:
    """2025.8.6.2 takes "Python"/"Java"/"JavaScript"; V4 the `Language` enum."""
    try:
        from bfcl_eval.constants.enums import Language
    except ImportError:
        return language
    return {"Python": Language.PYTHON, "Java": Language.JAVA,
            "JavaScript": Language.JAVASCRIPT}[language]


def check(
    category: str,
    functions: list[dict[str, Any]],
    ground_truth: list[dict[str, Any]] | None,
    result: Any,
    test_category: str | None = None,
) -> dict[str, Any]:
    """Official verdict for one entry: {"valid", "error", "error_type", "decoded"}."""
    test_category = test_category or category
    if category in RELEVANCE_CATEGORIES:
        try:
            decoded: Any = decode_ast(result)
            contains_call = not is_empty_output(decoded)
            decode_error = None
        except Exception as e:  # noqa: BLE001 - official catches everything
            decoded, contains_call, decode_error = None, False, str(e)
        if "irrelevance" in category:
            if not contains_call:
                return {"valid": True, "error": [], "error_type": None, "decoded": decoded}
            return {"valid": False,
                    "error": ["Valid syntax. Successfully decode AST when it should not."],
                    "error_type": "irrelevance_error:decoder_success", "decoded": decoded}
        if contains_call:
            return {"valid": True, "error": [], "error_type": None, "decoded": decoded}
        return {"valid": False,
                "error": ["Invalid syntax. Failed to decode AST when it should have. "
                          f"{decode_error}"],
                "error_type": "relevance_error:decoder_failed", "decoded": decoded}

    try:
        decoded = decode_ast(result)
    except Exception as e:  # noqa: BLE001
        return {"valid": False, "error": [f"Invalid syntax. Failed to decode AST. {e}"],
                "error_type": "ast_decoder:decoder_failed", "decoded": None}
    if not is_function_calling_format_output(decoded):
        return {"valid": False,
                "error": ["Did not output in the specified format. Note: the model_result "
                          "is wrapped in a string to ensure json serializability."],
                "error_type": "ast_decoder:decoder_wrong_output_format", "decoded": decoded}
    verdict = official_ast_checker()(
        functions,
        decoded,
        ground_truth,
        _language_argument(_LANGUAGE.get(category, "Python")),
        test_category,
        CHECKER_MODEL_NAME,
    )
    return {"valid": bool(verdict["valid"]), "error": verdict.get("error", []),
            "error_type": None if verdict["valid"] else verdict.get("error_type"),
            "decoded": decoded}


def check_entry(entry: Entry, result: Any) -> dict[str, Any]:
    return check(entry.category, entry.functions, entry.ground_truth, result,
                 entry.test_category)


# --------------------------------------------------------------------------- Inspect


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
        with raw_arguments.capture() as raw:
            output = await model.generate(state.messages, tools=tools)
        state.output = output
        state.messages.append(output.message)
        state.store.set(MODEL_RESULT_KEY,
                        model_result(message_record(output.message, "assistant", raw)))
        return state

    return solve


def _explanation(verdict: dict[str, Any]) -> str:
    errors = verdict.get("error") or []
    parts = [e if isinstance(e, str) else json.dumps(e, default=str) for e in errors]
    return f"{verdict['error_type']}: " + " ".join(parts)


@metric
def bfcl_leaderboard() -> Metric:
    """Per-category accuracy plus the official v3 aggregates (when all their parts ran).

    `non_live_simple_ast` = mean(simple, java, javascript); `non_live` = unweighted mean
    of [simple_ast, multiple, parallel, parallel_multiple, irrelevance]; `live` =
    sample-weighted accuracy over the six live categories.
    """
    to_float = value_to_float()

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        per_cat: dict[str, list[float]] = {}
        for s in scores:
            category = (s.score.metadata or {}).get("category") or (
                s.sample_metadata or {}).get("category")
            if category is None:
                raise ValueError(f"sample {s.sample_id}: score has no 'category' metadata")
            per_cat.setdefault(category, []).append(to_float(s.score.value))
        counts = {c: (sum(v), len(v)) for c, v in per_cat.items()}
        return leaderboard_summary(counts)

    return compute


def leaderboard_summary(counts: dict[str, tuple[float, int]]) -> dict[str, float]:
    """{category: (correct, total)} → per-category accuracy + official aggregates."""
    acc = {c: (k / n if n else 0.0) for c, (k, n) in counts.items()}
    out = {c: acc[c] for c in CATEGORIES if c in acc}
    out.update({c: v for c, v in acc.items() if c not in out})
    if all(c in acc for c in ("simple", "java", "javascript")):
        out["non_live_simple_ast"] = (acc["simple"] + acc["java"] + acc["javascript"]) / 3
        if all(c in acc for c in NON_LIVE_CATEGORIES):
            parts = [out["non_live_simple_ast"]] + [
                acc[c] for c in ("multiple", "parallel", "parallel_multiple", "irrelevance")
            ]
            out["non_live"] = sum(parts) / len(parts)
    if all(c in acc for c in LIVE_CATEGORIES):
        correct = sum(counts[c][0] for c in LIVE_CATEGORIES)
        total = sum(counts[c][1] for c in LIVE_CATEGORIES)
        out["live"] = correct / total if total else 0.0
    return out


@scorer(metrics=[accuracy(), stderr(), bfcl_leaderboard()])
def bfcl_singleturn_scorer() -> Scorer:
    """The official AST / relevance verdict for the recorded model result."""

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        result = state.store.get(MODEL_RESULT_KEY)
        if result is None:  # another solver ran: derive it from the last output
            result = (model_result(message_record(state.output.message, "assistant", {}))
                      if state.output.choices else "")
        verdict = check(meta["category"], meta["functions"], meta["ground_truth"], result,
                        meta.get("test_category"))
        return Score(
            value=CORRECT if verdict["valid"] else INCORRECT,
            answer=json.dumps(verdict["decoded"], default=str)
            if verdict["decoded"] is not None else (result if isinstance(result, str) else
                                                    json.dumps(result)),
            explanation=None if verdict["valid"] else _explanation(verdict),
            metadata={"category": meta["category"], "error_type": verdict["error_type"]},
        )

    return score
