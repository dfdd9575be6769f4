"""What EnvGen builds from: one API description, read from any of its three sources.

An EnvFactory metadata file, an OpenAPI document and a search-agent sketch all become the
same `ApiDescription` (tool names, descriptions, parameter and return JSON schemas, and a
read/write flag), so the code agent, the test agent and the interface checks never need
to know where a description came from. A sketch is parsed with `ast` only: it is
model-written code and is never imported or executed here.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from envs.metadata import load_metadata
from envs.schemas import inline_refs, ref_target

__all__ = ["ApiDescription", "DescriptionError", "ToolDescription", "from_metadata",
           "from_openapi", "from_sketch", "load_description", "snake_case"]

READ_METHODS = ("get", "head", "options")


class DescriptionError(ValueError):
    """A description file that cannot be read; the message names the file and the part."""


class ToolDescription(BaseModel):
    name: str
    description: str = ""
    #: JSON schema of the arguments object (`type: object`, `properties`, `required`)
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object",
                                                                "properties": {}})
    returns: dict[str, Any] | None = None
    #: True if the tool may change state
    write: bool = False
    #: "declared" when the source says so (sketch markers, HTTP methods); "guessed" from
    #: the name for metadata files, which carry no flag
    write_source: Literal["declared", "guessed"] = "declared"

    def required(self) -> list[str]:
        return list(self.parameters.get("required") or [])

    def properties(self) -> dict[str, Any]:
        return dict(self.parameters.get("properties") or {})


class ApiDescription(BaseModel):
    """One API to turn into an environment."""

    name: str
    description: str
    tools: list[ToolDescription] = Field(min_length=1)
    #: "environment": an existing environment's own tool list (what `envgen verify` checks
    #: a pool or generated environment against, having no separate description)
    source: Literal["metadata", "openapi", "sketch", "environment"]
    source_path: str

    @property
    def env_name(self) -> str:
        """The snake_case name the environment is written and registered under."""
        return snake_case(self.name)

    def tool(self, name: str) -> ToolDescription | None:
        return next((t for t in self.tools if t.name == name), None)

    def interface_text(self) -> str:
        """The interface as the agents read it: every tool with its schemas and flag."""
        lines = [f"API: {self.name}", f"Description: {self.description}", "", "Tools:"]
        for t in self.tools:
            kind = "write (may change state)" if t.write else "read-only"
            lines += [f"- {t.name} [{kind}]: {t.description}",
                      f"  parameters: {json.dumps(t.parameters, ensure_ascii=False)}",
                      f"  returns: {json.dumps(t.returns, ensure_ascii=False)}"]
        return "\n".join(lines)


def snake_case(name: str) -> str:
    """`UUPaoTui` -> `uu_pao_tui`, `GitHubServer` -> `git_hub_server`."""
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    s = re.sub(r"\W+", "_", s).strip("_").lower()
    return s or "api"


# -- metadata ------------------------------------------------------------------------------

def from_metadata(path: Path) -> ApiDescription:
    """An EnvFactory `{Class}_metadata.json` (envfactory.md §4). The format has no read/write
    flag: the name heuristic `envs.metadata` uses marks writes as guessed."""
    meta = load_metadata(path)  # ValueError naming the file and field
    tools = [ToolDescription(name=t.name, description=t.description,
                             parameters=_object_schema(t.input_schema),
                             returns=t.output_schema or None, write=t.write,
                             write_source="guessed") for t in meta.tools]
    return ApiDescription(name=meta.class_name, description=meta.description, tools=tools,
                          source="metadata", source_path=str(path))


def _object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    out = dict(schema)
    out.setdefault("type", "object")
    out.setdefault("properties", {})
    out.setdefault("required", [])
    return out


# -- OpenAPI -------------------------------------------------------------------------------

def from_openapi(path: Path) -> ApiDescription:
    """An OpenAPI 3 document (JSON or YAML): one tool per operation, named by its
    `operationId` (else method + path); path/query parameters and a JSON request body's
    properties become the arguments; the first 2xx JSON response is the return schema;
    GET/HEAD/OPTIONS are reads."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        import yaml

        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise DescriptionError(f"{path}: neither JSON nor YAML ({e})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("paths"), dict):
        raise DescriptionError(f"{path}: not an OpenAPI document (no 'paths' object)")
    info = doc.get("info") or {}
    title = str(info.get("title") or Path(path).stem)
    tools: list[ToolDescription] = []
    for route, item in doc["paths"].items():
        if not isinstance(item, dict):
            raise DescriptionError(f"{path}: paths.{route} is not an object")
        shared = item.get("parameters") or []
        for method, op in item.items():
            if method not in ("get", "post", "put", "patch", "delete", "head", "options"):
                continue
            if not isinstance(op, dict):
                raise DescriptionError(f"{path}: paths.{route}.{method} is not an object")
            tools.append(_operation(doc, route, method, op, shared))
    if not tools:
        raise DescriptionError(f"{path}: the document has no operations under 'paths'")
    name = re.sub(r"\W+", "", title.title()) or "Api"
    return ApiDescription(name=name, description=str(info.get("description") or title),
                          tools=tools, source="openapi", source_path=str(path))


def _operation(doc: dict[str, Any], route: str, method: str, op: dict[str, Any],
               shared: list[Any]) -> ToolDescription:
    name = op.get("operationId") or f"{method}_{route}"
    name = re.sub(r"\W+", "_", name).strip("_")
    properties: dict[str, Any] = {}
    required: list[str] = []
    for raw in [*shared, *(op.get("parameters") or [])]:
        param = ref_target(doc, raw)
        if not isinstance(param, dict) or param.get("in") not in ("path", "query"):
            continue
        schema = dict(ref_target(doc, param.get("schema") or {"type": "string"}))
        if param.get("description"):
            schema["description"] = param["description"]
        properties[param["name"]] = schema
        if param.get("required") or param.get("in") == "path":
            required.append(param["name"])
    body = _json_content(doc, op.get("requestBody"))
    if body:
        properties.update(body.get("properties") or {})
        required += [r for r in body.get("required") or [] if r not in required]
    returns = None
    for code, response in sorted((op.get("responses") or {}).items()):
        if str(code).startswith("2"):
            returns = _json_content(doc, response) or None
            break
    return ToolDescription(
        name=name, description=str(op.get("summary") or op.get("description") or name),
        parameters={"type": "object", "properties": properties, "required": required},
        returns=returns, write=method not in READ_METHODS, write_source="declared")


def _json_content(doc: dict[str, Any], holder: Any) -> dict[str, Any]:
    holder = ref_target(doc, holder or {})
    content = (holder.get("content") or {}) if isinstance(holder, dict) else {}
    media = content.get("application/json") or {}
    return inline_refs(media.get("schema") or {}, root=doc, titles=True)


# -- sketch --------------------------------------------------------------------------------

_SIMPLE = {"str": "string", "int": "integer", "float": "number", "bool": "boolean",
           "dict": "object", "list": "array", "Any": None, "None": "null"}


def from_sketch(path: Path) -> ApiDescription:
    """A search-agent sketch: one class `<Name>Sketch` whose methods have typed parameters,
    return annotations, Google-style docstrings and `...` bodies; a `# write` comment on
    the def line marks a write. Parsed with `ast`, never executed."""
    source = Path(path).read_text(encoding="utf-8")
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as e:
        raise DescriptionError(f"{path}: line {e.lineno}: not valid Python ({e.msg})") from None
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name.endswith("Sketch")]
    if len(classes) != 1:
        raise DescriptionError(f"{path}: expected one class named <Name>Sketch, found "
                               f"{len(classes)}")
    cls = classes[0]
    lines = source.splitlines()
    tools = []
    for node in cls.body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        try:
            tools.append(_sketch_tool(node, lines))
        except DescriptionError as e:
            raise DescriptionError(f"{path}: {cls.name}.{node.name}: {e}") from None
    if not tools:
        raise DescriptionError(f"{path}: {cls.name} has no public methods")
    return ApiDescription(name=cls.name.removesuffix("Sketch") or cls.name,
                          description=ast.get_docstring(cls) or cls.name, tools=tools,
                          source="sketch", source_path=str(path))


def _sketch_tool(node: ast.FunctionDef, lines: list[str]) -> ToolDescription:
    doc = ast.get_docstring(node) or ""
    summary, arg_docs, returns_doc = _google_doc(doc)
    args = node.args.args[1:] if node.args.args and node.args.args[0].arg == "self" else \
        node.args.args
    defaults = dict(zip([a.arg for a in args][len(args) - len(node.args.defaults):],
                        node.args.defaults, strict=True))
    properties: dict[str, Any] = {}
    required = []
    for arg in [*args, *node.args.kwonlyargs]:
        if arg.annotation is None:
            raise DescriptionError(f"parameter {arg.arg!r} has no type hint")
        schema = _annotation_schema(arg.annotation)
        if arg.arg in arg_docs:
            schema["description"] = arg_docs[arg.arg]
        properties[arg.arg] = schema
        kw_default = None
        if arg in node.args.kwonlyargs:
            kw_default = node.args.kw_defaults[node.args.kwonlyargs.index(arg)]
        default = defaults.get(arg.arg, kw_default)
        if default is None:
            required.append(arg.arg)
        elif isinstance(default, ast.Constant):
            schema["default"] = default.value
    returns = None
    if node.returns is not None and not (isinstance(node.returns, ast.Constant)
                                         and node.returns.value is None):
        returns = _annotation_schema(node.returns)
        if returns_doc:
            returns["description"] = returns_doc
    end = node.body[0].lineno - 1 if node.body else node.lineno
    signature = "\n".join(lines[node.lineno - 1:max(end, node.lineno)])
    write = re.search(r"#\s*write\b", signature) is not None
    return ToolDescription(name=node.name, description=summary,
                           parameters={"type": "object", "properties": properties,
                                       "required": required},
                           returns=returns, write=write, write_source="declared")


def _annotation_schema(node: ast.expr) -> dict[str, Any]:
    """JSON schema of a type annotation written in a sketch (str, int, list[X], X | None,
    Optional[X], Literal[...], dict[str, X]); anything else is an unconstrained value."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _annotation_schema(ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return {}
    if isinstance(node, ast.Constant) and node.value is None:
        return {"type": "null"}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([node.left, node.right])
    if isinstance(node, ast.Name | ast.Attribute):
        name = node.id if isinstance(node, ast.Name) else node.attr
        kind = _SIMPLE.get(name)
        return {"type": kind} if kind else {}
    if isinstance(node, ast.Subscript):
        base = node.value.id if isinstance(node.value, ast.Name) else \
            node.value.attr if isinstance(node.value, ast.Attribute) else ""
        items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base in ("list", "List", "Sequence", "set", "tuple"):
            return {"type": "array", "items": _annotation_schema(items[0])}
        if base in ("dict", "Dict", "Mapping"):
            return {"type": "object", "additionalProperties": _annotation_schema(items[-1])}
        if base == "Optional":
            return _union([items[0], ast.Constant(value=None)])
        if base == "Union":
            return _union(items)
        if base == "Literal":
            values = [i.value for i in items if isinstance(i, ast.Constant)]
            kinds = {type(v) for v in values}
            schema: dict[str, Any] = {"enum": values}
            if kinds == {str}:
                schema["type"] = "string"
            elif kinds == {int}:
                schema["type"] = "integer"
            return schema
    return {}


def _union(members: list[ast.expr]) -> dict[str, Any]:
    flat: list[ast.expr] = []
    for m in members:
        if isinstance(m, ast.BinOp) and isinstance(m.op, ast.BitOr):
            flat += [m.left, m.right]
        else:
            flat.append(m)
    return {"anyOf": [_annotation_schema(m) for m in flat]}


def _google_doc(doc: str) -> tuple[str, dict[str, str], str]:
    """(summary, {arg: description}, returns text) of a Google-style docstring."""
    summary: list[str] = []
    args: dict[str, str] = {}
    returns: list[str] = []
    section, current = "summary", None
    for line in doc.splitlines():
        stripped = line.strip()
        header = re.fullmatch(r"(Args|Arguments|Parameters|Returns|Raises|Examples?):", stripped)
        if header:
            section = {"Arguments": "Args", "Parameters": "Args"}.get(header.group(1),
                                                                        header.group(1))
            continue
        if section == "summary":
            summary.append(stripped)
        elif section == "Args":
            m = re.match(r"^(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$", stripped)
            if m:
                current = m.group(1)
                args[current] = m.group(2)
            elif current and stripped:
                args[current] += " " + stripped
        elif section == "Returns" and stripped:
            returns.append(stripped)
    return "\n".join(summary).strip(), args, " ".join(returns)


def load_description(path: Path) -> ApiDescription:
    """Any description file: `*.py` is a sketch, a JSON/YAML document with `paths` is
    OpenAPI, a JSON object with `class_name` is EnvFactory metadata."""
    path = Path(path)
    if not path.is_file():
        raise DescriptionError(f"{path}: no such file")
    try:
        if path.suffix == ".py":
            return from_sketch(path)
        if path.suffix in (".yaml", ".yml"):
            return from_openapi(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise DescriptionError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") \
                from None
        if isinstance(data, dict) and "paths" in data:
            return from_openapi(path)
        if isinstance(data, dict) and "class_name" in data:
            return from_metadata(path)
    except ValidationError as e:
        first = e.errors()[0]
        raise DescriptionError(f"{path}: field {'.'.join(map(str, first['loc']))!r}: "
                               f"{first['msg']}") from None
    except DescriptionError:
        raise
    except ValueError as e:  # load_metadata's errors already name the file and field
        raise DescriptionError(str(e)) from None
    raise DescriptionError(f"{path}: not an EnvFactory metadata file (no 'class_name'), an "
                           "OpenAPI document (no 'paths') or a sketch (*.py)")
