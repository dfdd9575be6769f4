"""No import circles between the project's modules.

A circle is found on the whole import graph, with the imports a function makes, those
under `TYPE_CHECKING` and `importlib.import_module("a.constant")` all counted: an import
moved into a function to get past a circle is still the circle. `from pkg import name`
depends on `pkg` itself (its `__init__`, which may re-export `name`), and on `pkg.name`
when that is a module. Where a circle shows up, make the dependency go one way (move the
shared piece down, or hand the upper piece in as a parameter) instead of hiding the edge.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("envs", "harness", "tasks", "synthesis", "training", "leaderboard", "envfactory",
           "benchmarks", "testkit")


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the product folders."""
    found = {}
    for folder in PRODUCT:
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imported(name: str, path: Path) -> Iterator[str]:
    """Every dotted name `path` (module `name`) imports, anywhere in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield module
            yield from (f"{module}.{alias.name}" for alias in node.names)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant)):
            yield str(node.args[0].value)


def import_graph() -> dict[str, set[str]]:
    files = module_files()
    return {name: {target for target in imported(name, path)
                   if target in files and target != name}
            for name, path in files.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative: the graph is deeper than Python's recursion limit allows)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            child = next(edges, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_finder_finds_a_circle_and_its_members() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e", "d"}}
    assert circles(graph) == [["a", "b", "c"]]


def test_no_module_imports_itself_back() -> None:
    graph = import_graph()
    assert len(graph) > 100 and graph["envs.world"]  # the walk found the tree
    assert circles(graph) == []
