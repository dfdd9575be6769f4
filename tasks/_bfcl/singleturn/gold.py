"""One correct answer per entry, for `envfactory/oracle`: the first allowed value of each
ground-truth parameter (Java / JavaScript values in the string syntax the checker's
converters parse back), a placeholder call for live_relevance, no call for irrelevance.
"""

from __future__ import annotations

import decimal
import json
import re
from typing import Any

from harness.gold import GoldCall
from tasks._bfcl.singleturn.dataset import Entry


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
