"""The tool objects VitaBench offers the agent, and the other tables of its tool code, as data.

What a model reads about a tool (name, description with pre- and postconditions,
parameter schema, order) is part of the benchmark, so it comes from the pinned release:

1. `tools/<set>_<lang>.json` (a list of OpenAI chat tool objects in the order offered) in
   `VITABENCH_DATA_DIR` when that folder has it, else in the revision's cache;
2. otherwise derived from the release's description tables (`TOOL_DESCRIPTIONS_ZH/_EN` in
   `src/vita/domains/<domain>/tools_schema.py`, `TOOLKIT_TOOL_DESCRIPTIONS_ZH/_EN` in
   `src/vita/environment/toolkit_schema.py`), read with `ast.literal_eval` and never
   executed, and written to the cache as in 1.

Derivation rebuilds upstream's path (`ToolKitBase._update_tool_descriptions`,
`generate_tool_docstring`, `Tool.parse_data`, `Tool.openai_schema`): the table entry of a
tool (its domain's table, else the toolkit's) becomes a docstring "description /
Preconditions: / Postconditions: / Args: / Returns:", which `docstring_parser` splits into
short and long description and argument texts; the parameters are a Pydantic model named
`parameters` built from the tool's signature (ours, with upstream's annotations and
defaults) and those argument texts, whose `model_json_schema()` has each `anyOf` collapsed
to its first typed option (so an optional enum loses its values, as upstream's does).

The same mechanism serves the holiday table of `get_holiday_date` (a literal in upstream's
toolkit code): `tables/holiday_dates.json`, else read from `src/vita/environment/toolkit.py`.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docstring_parser
from pydantic import Field, create_model

from envs.vitabench.release import UPSTREAM_LANGUAGE, Language, release

__all__ = ["DESCRIPTION_TABLES", "TOOLKIT_SOURCE", "description_table",
           "holiday_dates", "openai_tool_object", "release_json", "tool_docstring"]

#: domain -> (release file, Chinese table, English table)
DESCRIPTION_TABLES: dict[str, tuple[str, str, str]] = {
    "toolkit": ("src/vita/environment/toolkit_schema.py",
                "TOOLKIT_TOOL_DESCRIPTIONS_ZH", "TOOLKIT_TOOL_DESCRIPTIONS_EN"),
    "delivery": ("src/vita/domains/delivery/tools_schema.py",
                 "TOOL_DESCRIPTIONS_ZH", "TOOL_DESCRIPTIONS_EN"),
    "instore": ("src/vita/domains/instore/tools_schema.py",
                "TOOL_DESCRIPTIONS_ZH", "TOOL_DESCRIPTIONS_EN"),
    "ota": ("src/vita/domains/ota/tools_schema.py",
            "TOOL_DESCRIPTIONS_ZH", "TOOL_DESCRIPTIONS_EN"),
}
TOOLKIT_SOURCE = "src/vita/environment/toolkit.py"


def release_json(relative: str, derive: Callable[[], Any], revision: str) -> Any:
    """A JSON data file of the release: `VITABENCH_DATA_DIR/<relative>` if present, else
    the cache's copy, else `derive()` written to the cache."""
    override = os.environ.get("VITABENCH_DATA_DIR")
    if override and (Path(override) / relative).is_file():
        return json.loads((Path(override) / relative).read_text(encoding="utf-8"))
    cached = release(revision).cache / relative
    if cached.is_file():
        return json.loads(cached.read_text(encoding="utf-8"))
    value = derive()
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = cached.with_suffix(".partial")
    partial.write_text(json.dumps(value, ensure_ascii=False, indent=1), encoding="utf-8")
    partial.replace(cached)
    return value


def _literal(source: str, name: str, where: str) -> Any:
    """The value of the top-level assignment `name = <literal>` in `source`."""
    for node in ast.parse(source).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name):
            return ast.literal_eval(node.value)
    raise ValueError(f"{where} has no table {name}: not a VitaBench release this port knows")


def description_table(domain: str, language: Language, revision: str) -> dict[str, Any]:
    """The release's description table of one domain ("toolkit", "delivery", ...)."""
    path, zh, en = DESCRIPTION_TABLES[domain]
    table = _literal(release(revision).source_text(path), zh if language == "zh" else en, path)
    if not isinstance(table, dict):
        raise ValueError(f"{path}: the description table is not a dict")
    return table


def tool_docstring(entry: dict[str, Any]) -> str:
    """Upstream `generate_tool_docstring` of one table entry."""
    lines = [entry["description"], "Preconditions:", f"    - {entry['preconditions']}",
             "Postconditions:", f"    - {entry['postconditions']}", "", "Args:"]
    lines += [f"    {arg}: {text}" for arg, text in entry["args"].items()]
    lines += ["", "Returns:", f"    {entry['returns']}"]
    return "\n".join(lines)


def openai_tool_object(name: str, function: Callable[..., Any], doc: str | None) -> dict[str, Any]:
    """Upstream `Tool(function).openai_schema` for a method (its `self` left out) whose
    docstring is `doc`."""
    parsed = docstring_parser.parse(doc or "")
    described = {p.arg_name: p for p in parsed.params}
    fields: dict[str, Any] = {}
    signature = inspect.signature(function, eval_str=True)
    for pname, param in list(signature.parameters.items())[1:]:
        annotation = Any if param.annotation is param.empty else param.annotation
        default: Any = ... if param.default is param.empty else param.default
        if pname in described:
            default = Field(default, description=described[pname].description)
        fields[pname] = (annotation, default)
    schema = create_model("parameters", **fields).model_json_schema()
    for pname, prop in list(schema.get("properties", {}).items()):
        if "anyOf" in prop:
            schema["properties"][pname] = _collapse_any_of(prop)
    short, long = parsed.short_description or "", parsed.long_description or ""
    description = name if not short else short if not long else f"{short}\n\n{long}"
    return {"type": "function",
            "function": {"name": name, "description": description, "parameters": schema}}


def _collapse_any_of(prop: dict[str, Any]) -> dict[str, Any]:
    """Upstream's anyOf cleaning: the first option with a type gives the type (and an
    array's items); everything else of the options is dropped."""
    type_info, items = None, None
    for option in prop["anyOf"]:
        if "type" in option:
            type_info = option["type"]
            if type_info == "array" and "items" in option:
                items = option["items"]
            break
    cleaned = {k: v for k, v in prop.items() if k != "anyOf"}
    if type_info:
        cleaned["type"] = type_info
        if type_info == "array" and items:
            cleaned["items"] = items
    return cleaned


def holiday_dates(language: Language, revision: str) -> dict[str, dict[str, str]]:
    """year -> holiday name -> date, the table `get_holiday_date` matches against (upstream
    keeps an English and a Chinese one and picks by the run's language)."""
    def derive() -> dict[str, Any]:
        return _holiday_literals(release(revision).source_text(TOOLKIT_SOURCE))

    tables = release_json("tables/holiday_dates.json", derive, revision)
    return dict(tables[UPSTREAM_LANGUAGE[language]])


def _holiday_literals(source: str) -> dict[str, Any]:
    """The two `holiday_data = {...}` literals of `get_holiday_date`, by the branch of
    `if current_language == 'english':` they sit in."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == "get_holiday_date":
            for branch in ast.walk(node):
                if isinstance(branch, ast.If) and _assigned(branch.body) is not None:
                    english, chinese = _assigned(branch.body), _assigned(branch.orelse)
                    if english is not None and chinese is not None:
                        return {"english": english, "chinese": chinese}
    raise ValueError(f"{TOOLKIT_SOURCE}: no holiday tables in get_holiday_date")


def _assigned(body: list[ast.stmt]) -> Any:
    for stmt in body:
        if (isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == "holiday_data"):
            return ast.literal_eval(stmt.value)
    return None
