"""The rules a search-agent sketch must follow before it is saved, checked with `ast` only.

A sketch is the interface of an API to build, not code: one class `<Name>Sketch` with a
docstring, and public methods with typed parameters, a return annotation, a Google-style
docstring naming every parameter, and `...` as the whole body; `# write` on a def line
marks a tool that changes state. It is model-written and never imported or executed, so
everything is judged on the syntax tree. Every problem is reported at once, each with its
line, so the agent can fix a sketch in one more try.
"""

from __future__ import annotations

import ast
import re

__all__ = ["SketchError", "check_sketch"]

#: modules a sketch may import names from (type annotations only)
ALLOWED_IMPORTS = frozenset({"__future__", "typing", "typing_extensions", "collections.abc"})
_CLASS_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*Sketch$")
_METHOD_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class SketchError(ValueError):
    """A sketch that breaks the rules; `problems` lists each one ("line N: ...")."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def check_sketch(source: str) -> str:
    """The sketch class's name if `source` follows the rules, else `SketchError`."""
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise SketchError([f"line {e.lineno}: not valid Python ({e.msg})"]) from None
    problems: list[str] = []
    sketches: list[ast.ClassDef] = []
    for i, node in enumerate(tree.body):
        if i == 0 and _is_docstring(node):
            continue
        if isinstance(node, ast.ImportFrom) and node.module in ALLOWED_IMPORTS and not node.level:
            continue
        if isinstance(node, ast.Import) and all(a.name in ALLOWED_IMPORTS for a in node.names):
            continue
        if isinstance(node, ast.ClassDef) and node.name.endswith("Sketch"):
            sketches.append(node)
        elif isinstance(node, ast.ClassDef):
            problems += _record_class(node)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            problems.append(f"line {node.lineno}: only imports from "
                            f"{', '.join(sorted(ALLOWED_IMPORTS))} are allowed")
        else:
            problems.append(f"line {node.lineno}: only imports and classes may appear at the "
                            f"top level, not {type(node).__name__}")
    if len(sketches) != 1:
        problems.insert(0, f"expected exactly one class named <Name>Sketch, found "
                           f"{len(sketches)}")
        raise SketchError(problems)
    problems += _sketch_class(sketches[0])
    if problems:
        raise SketchError(problems)
    return sketches[0].name


def _is_docstring(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def _is_ellipsis(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and node.value.value is Ellipsis)


def _record_class(node: ast.ClassDef) -> list[str]:
    """A helper record type (a TypedDict-like class used in annotations): a docstring and
    annotated fields without values, nothing else."""
    problems = []
    for stmt in node.body:
        if _is_docstring(stmt) or _is_ellipsis(stmt):
            continue
        if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
            continue
        problems.append(f"line {stmt.lineno}: class {node.name} may hold only annotated "
                        "fields (name: type) and a docstring")
    return problems


def _sketch_class(cls: ast.ClassDef) -> list[str]:
    problems = []
    if not _CLASS_NAME.match(cls.name) or cls.name == "Sketch":
        problems.append(f"line {cls.lineno}: class name {cls.name!r} must be CamelCase "
                        "ending in Sketch (e.g. CalendarSketch)")
    if cls.decorator_list:
        problems.append(f"line {cls.lineno}: class {cls.name} must not be decorated")
    if not ast.get_docstring(cls):
        problems.append(f"line {cls.lineno}: class {cls.name} needs a docstring saying "
                        "what the API is for")
    methods = 0
    for i, stmt in enumerate(cls.body):
        if i == 0 and _is_docstring(stmt):
            continue
        if isinstance(stmt, ast.FunctionDef):
            methods += 1
            problems += _method(stmt)
        elif isinstance(stmt, ast.AsyncFunctionDef):
            problems.append(f"line {stmt.lineno}: {stmt.name} must not be async")
        else:
            problems.append(f"line {stmt.lineno}: class {cls.name} may contain only its "
                            f"docstring and methods, not {type(stmt).__name__}")
    if not methods:
        problems.append(f"line {cls.lineno}: class {cls.name} has no methods (one per tool)")
    return problems


def _method(fn: ast.FunctionDef) -> list[str]:
    where = f"line {fn.lineno}: {fn.name}"
    problems = []
    if not _METHOD_NAME.match(fn.name):
        problems.append(f"{where}: a tool name is snake_case and public")
    if fn.decorator_list:
        problems.append(f"{where}: no decorators (mark writes with a '# write' comment)")
    args = fn.args
    if not args.args or args.args[0].arg != "self":
        problems.append(f"{where}: the first parameter must be self")
    if args.vararg or args.kwarg or args.posonlyargs:
        problems.append(f"{where}: no *args, **kwargs or positional-only parameters")
    params = [a for a in [*args.args[1:], *args.kwonlyargs]]
    for a in params:
        if a.annotation is None:
            problems.append(f"{where}: parameter {a.arg!r} needs a type hint")
    if fn.returns is None:
        problems.append(f"{where}: needs a return annotation (-> None if it returns nothing)")
    doc = ast.get_docstring(fn)
    if not doc:
        problems.append(f"{where}: needs a Google-style docstring")
    else:
        documented = _documented_args(doc)
        missing = [a.arg for a in params if a.arg not in documented]
        if missing:
            problems.append(f"{where}: the docstring's Args: section must describe "
                            f"{', '.join(missing)}")
    body = fn.body[1:] if fn.body and _is_docstring(fn.body[0]) else fn.body
    if len(body) != 1 or not _is_ellipsis(body[0]):
        problems.append(f"{where}: the body must be only the docstring and `...` (a sketch "
                        "has no implementation)")
    return problems


def _documented_args(doc: str) -> set[str]:
    """Names described in a Google-style `Args:` section."""
    names: set[str] = set()
    inside = False
    indent = None
    for line in doc.splitlines():
        stripped = line.strip()
        if re.fullmatch(r"(Args|Arguments|Parameters):", stripped):
            inside, indent = True, None
            continue
        if re.fullmatch(r"[A-Z][A-Za-z ]*:", stripped):
            inside = False
            continue
        if inside and stripped:
            here = len(line) - len(line.lstrip())
            indent = here if indent is None else indent
            m = re.match(r"^(\w+)\s*(\([^)]*\))?\s*:", stripped)
            if m and here == indent:
                names.add(m.group(1))
    return names
