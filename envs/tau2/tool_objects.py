"""The tool objects the official τ² harness offers each model, as data.

What a model reads about a tool (name, description, parameter schema, order) is part of
the benchmark, so it comes from the pinned release, never from our docstrings:

1. `<data dir>/tools/<toolkit>.json` when present (`TAU2_DATA_DIR`, or the cache): a list
   of OpenAI chat-completions tool objects `{"type": "function", "function": {name,
   description, parameters}}` in the order offered;
2. otherwise derived from the release's tool modules and the data-model modules they
   import (`TAU2_SOURCE_DIR`, an extracted release tree, or downloaded at the pinned
   commit into the cache), then written to the cache as in 1.

Derivation reads the sources with `ast` and never executes them. It rebuilds what
upstream's `Tool`/`as_tool` build (`tau2/environment/tool.py`): for each `@is_tool`
method of the toolkit class, in definition order, a Pydantic model named `parameters`
with one field per argument (annotation, default, and the Google-style docstring's
argument text as description, parsed with `docstring_parser` as upstream does), whose
`model_json_schema()` is the parameter schema; the description is the docstring's short
description, plus a blank line and the long description when there is one. Annotations,
defaults and the data models they name (fields, `Field(...)` metadata, `model_config`,
enums) are evaluated from their syntax trees over a closed set of constructs, so the
nested models come out with the same `$defs`, titles and key order.
"""

from __future__ import annotations

import ast
import builtins
import enum
import json
import os
import typing
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import docstring_parser
import pydantic
from pydantic import BaseModel, ConfigDict, Field, create_model

from envs.tau2 import data

__all__ = ["TOOLKITS", "SourceTree", "derive_tool_objects", "official_tools"]

#: toolkit name (the JSON file's stem) -> the release module defining it
TOOLKITS = {
    "airline": "tau2.domains.airline.tools",
    "retail": "tau2.domains.retail.tools",
    "telecom": "tau2.domains.telecom.tools",
    "telecom_user": "tau2.domains.telecom.user_tools",
}

_BUILTINS = {name: getattr(builtins, name)
             for name in ("str", "int", "float", "bool", "dict", "list", "tuple", "set",
                          "bytes", "object")} | {"None": None}
_TYPING = {name: getattr(typing, name)
           for name in ("Any", "Dict", "List", "Literal", "Optional", "Tuple", "Union",
                        "Annotated", "Set", "Sequence", "Mapping")}
#: what the data models import from outside the release, by module
_EXTERNAL: dict[str, dict[str, Any]] = {
    "typing": _TYPING,
    "typing_extensions": _TYPING,
    "pydantic": {"BaseModel": BaseModel, "Field": Field, "ConfigDict": ConfigDict},
    "enum": {"Enum": enum.Enum, "StrEnum": enum.StrEnum},
}
_CALLS: dict[Any, Callable[..., Any]] = {Field: Field, ConfigDict: ConfigDict}


class SourceTree:
    """The release's `src/` files: a local extracted tree, or the release's cache
    (`data.TAU2.source_path` downloads each module at the pinned commit the first time)."""

    def __init__(self, root: Path, download: bool) -> None:
        self.root = root
        self.download = download

    @classmethod
    def default(cls) -> SourceTree:
        local = os.environ.get("TAU2_SOURCE_DIR")
        if local:
            return cls(Path(local), download=False)
        return cls(data.TAU2.source_root(), download=True)

    def read(self, module: str) -> str:
        relative = "src/" + module.replace(".", "/") + ".py"
        if self.download:
            return data.TAU2.source_text(relative)
        path = self.root / relative
        if not path.exists():
            raise FileNotFoundError(f"{path} missing from TAU2_SOURCE_DIR={self.root}")
        return path.read_text(encoding="utf-8")


class _Unsupported(ValueError):
    """A construct outside what the derivation evaluates (a release we do not know)."""


class _Modules:
    """The release modules read so far, and the values their top-level names evaluate to."""

    def __init__(self, tree: SourceTree) -> None:
        self.tree = tree
        self.modules: dict[str, _Module] = {}

    def module(self, name: str) -> _Module:
        if name not in self.modules:
            self.modules[name] = _Module(self, name, ast.parse(self.tree.read(name)))
        return self.modules[name]

    def imported(self, module: str, name: str) -> Any:
        if module.startswith("tau2."):
            return self.module(module).value(name)
        if module in _EXTERNAL and name in _EXTERNAL[module]:
            return _EXTERNAL[module][name]
        raise _Unsupported(f"{module}.{name}")


class _Module:
    """One module's top level: imports, classes and assignments, evaluated on demand."""

    def __init__(self, modules: _Modules, name: str, tree: ast.Module) -> None:
        self.modules = modules
        self.name = name
        self.imports: dict[str, tuple[str, str | None]] = {}
        self.definitions: dict[str, ast.stmt] = {}
        self.values: dict[str, Any] = {}
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module is not None:
                source = _absolute(name, node.module, node.level)
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (source, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (alias.name, None)
            elif isinstance(node, ast.ClassDef):
                self.definitions[node.name] = node
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name):
                self.definitions[node.targets[0].id] = node
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                    and node.value is not None:
                self.definitions[node.target.id] = node

    def value(self, name: str) -> Any:
        if name in self.values:
            return self.values[name]
        value: Any
        if name in self.definitions:
            node = self.definitions[name]
            if isinstance(node, ast.ClassDef):
                value = self._class(node)
            else:
                assert isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None
                value = self.eval(node.value)
        elif name in self.imports:
            module, attr = self.imports[name]
            value = _ModuleRef(self.modules, module) if attr is None \
                else self.modules.imported(module, attr)
        elif name in _BUILTINS:
            value = _BUILTINS[name]
        else:
            raise _Unsupported(f"name {name!r} in {self.name}")
        self.values[name] = value
        return value

    def eval(self, node: ast.expr) -> Any:
        """The value of an annotation, default or `Field(...)` expression."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.value(node.id)
        if isinstance(node, ast.Attribute):
            owner = self.eval(node.value)
            if isinstance(owner, _ModuleRef):
                return owner.attribute(node.attr)
            if isinstance(owner, type) and issubclass(owner, enum.Enum):
                return owner[node.attr]
            raise _Unsupported(ast.unparse(node))
        if isinstance(node, ast.Subscript):
            origin = self.eval(node.value)
            if not (origin in _TYPING.values() or origin in (dict, list, tuple, set)):
                raise _Unsupported(ast.unparse(node))
            index = node.slice
            args = tuple(self.eval(e) for e in index.elts) if isinstance(index, ast.Tuple) \
                else self.eval(index)
            return origin[args]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self.eval(node.left) | self.eval(node.right)
        if isinstance(node, ast.Tuple | ast.List):
            items = [self.eval(e) for e in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Call):
            function = self.eval(node.func)
            if function not in _CALLS:
                raise _Unsupported(ast.unparse(node))
            args = [self.eval(a) for a in node.args]
            kwargs = {k.arg: self.eval(k.value) for k in node.keywords if k.arg is not None}
            return _CALLS[function](*args, **kwargs)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.eval(node.operand)
        raise _Unsupported(ast.unparse(node))

    def _class(self, node: ast.ClassDef) -> type:
        bases = tuple(self.eval(b) for b in node.bases)
        doc = ast.get_docstring(node, clean=False)
        if any(isinstance(b, type) and issubclass(b, enum.Enum) for b in bases):
            return self._enum(node, bases, doc)
        if not all(isinstance(b, type) and issubclass(b, BaseModel) for b in bases):
            raise _Unsupported(f"class {node.name} in {self.name}")
        namespace: dict[str, Any] = {"__module__": self.name, "__qualname__": node.name,
                                     "__annotations__": {}}
        if doc is not None:
            namespace["__doc__"] = doc
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                namespace["__annotations__"][stmt.target.id] = self.eval(stmt.annotation)
                if stmt.value is not None:
                    namespace[stmt.target.id] = self.eval(stmt.value)
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name) \
                    and stmt.targets[0].id == "model_config":
                namespace["model_config"] = self.eval(stmt.value)
        return type(node.name, bases, namespace)

    def _enum(self, node: ast.ClassDef, bases: tuple[Any, ...], doc: str | None) -> type:
        members = [(stmt.targets[0].id, self.eval(stmt.value)) for stmt in node.body
                   if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                   and isinstance(stmt.targets[0], ast.Name)]
        mixins = tuple(b for b in bases if not issubclass(b, enum.Enum))
        made = enum.Enum(node.name, members, module=self.name, qualname=node.name,  # type: ignore[misc]
                         type=mixins[0] if mixins else None)
        if doc is not None:
            made.__doc__ = doc
        return made


class _ModuleRef:
    """A name bound by `import x` (e.g. `pydantic.Field`)."""

    def __init__(self, modules: _Modules, name: str) -> None:
        self.modules = modules
        self.name = name

    def attribute(self, attr: str) -> Any:
        return self.modules.imported(self.name, attr)


def _absolute(module: str, target: str, level: int) -> str:
    if not level:
        return target
    package = module.rsplit(".", level)[0]
    return f"{package}.{target}" if target else package


def _toolkit(module: _Module) -> ast.ClassDef:
    """The module's toolkit class: the one whose methods are marked `@is_tool`."""
    classes = [node for node in module.definitions.values()
               if isinstance(node, ast.ClassDef) and _tool_methods(node)]
    if len(classes) != 1:
        raise _Unsupported(f"{module.name}: expected one toolkit class, found "
                           f"{[c.name for c in classes]}")
    bases = [ast.unparse(b) for b in classes[0].bases]
    if bases != ["ToolKitBase"]:  # inherited tools would follow the class's own
        raise _Unsupported(f"{module.name}.{classes[0].name} derives from {bases}")
    return classes[0]


def _tool_methods(node: ast.ClassDef) -> list[ast.FunctionDef]:
    def marked(decorator: ast.expr) -> bool:
        call = decorator.func if isinstance(decorator, ast.Call) else decorator
        return isinstance(call, ast.Name) and call.id == "is_tool"

    return [f for f in node.body
            if isinstance(f, ast.FunctionDef) and any(marked(d) for d in f.decorator_list)]


def _tool_object(module: _Module, method: ast.FunctionDef) -> dict[str, Any]:
    arguments = method.args
    if arguments.vararg or arguments.kwarg or arguments.posonlyargs:
        raise _Unsupported(f"{method.name}: *args, **kwargs or positional-only arguments")
    doc = docstring_parser.parse(ast.get_docstring(method, clean=False) or "")
    described = {p.arg_name: p.description for p in doc.params}
    positional = arguments.args[1:]  # a bound method: `self` is not a parameter
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults))
    defaults += arguments.defaults
    params: dict[str, Any] = {}
    for arg, default_node in [*zip(positional, defaults, strict=True),
                              *zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)]:
        if arg.annotation is None:
            raise _Unsupported(f"{method.name}: argument {arg.arg} has no annotation")
        default: Any = ... if default_node is None else module.eval(default_node)
        if arg.arg in described:
            default = Field(default, description=described[arg.arg])
        params[arg.arg] = (module.eval(arg.annotation), default)
    model = create_model("parameters", **params)
    short, long = doc.short_description or "", doc.long_description or ""
    description = (short + "\n\n" + long if long else short) if short else method.name
    return {"type": "function",
            "function": {"name": method.name, "description": description,
                         "parameters": model.model_json_schema()}}


def derive_tool_objects(toolkit: str, tree: SourceTree) -> list[dict[str, Any]]:
    """The tool objects of one toolkit, built from the release's sources in `tree`."""
    module = _Modules(tree).module(TOOLKITS[toolkit])
    try:
        return [_tool_object(module, m) for m in _tool_methods(_toolkit(module))]
    except (_Unsupported, pydantic.PydanticUserError) as e:
        raise ValueError(f"cannot derive the τ² {toolkit} tools from the {data.RELEASE} "
                         f"sources at {tree.root}: unsupported construct {e}") from e


@cache
def official_tools(toolkit: str) -> tuple[dict[str, Any], ...]:
    """The tool objects the official harness offers for `toolkit` (see the module doc)."""
    if toolkit not in TOOLKITS:
        raise ValueError(f"unknown τ² toolkit {toolkit!r}; known: {', '.join(TOOLKITS)}")
    for root in dict.fromkeys((data.data_dir(), data.cache_dir())):
        path = root / "tools" / f"{toolkit}.json"
        if path.exists():
            return tuple(json.loads(path.read_text(encoding="utf-8")))
    objects = derive_tool_objects(toolkit, SourceTree.default())
    path = data.cache_dir() / "tools" / f"{toolkit}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.part")
    partial.write_text(json.dumps(objects, indent=2, ensure_ascii=False), encoding="utf-8")
    partial.replace(path)
    return tuple(objects)
