"""Our modules' import graph, read from the source (``ast``), for the tests of the tree's shape.

Every ``import`` counts, also those inside functions and under ``TYPE_CHECKING``: a cycle broken
only by a late import is still two modules that cannot be understood one without the other.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["ROOT", "cycles", "import_graph", "modules_under"]

ROOT = Path(__file__).resolve().parents[1]


def modules_under(packages: Iterable[str]) -> dict[str, Path]:
    """Module name -> file, for every ``.py`` below these packages (``a.b`` is ``a/b``)."""
    out: dict[str, Path] = {}
    for package in packages:
        for path in sorted((ROOT / package.replace(".", "/")).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """The modules among ``modules`` that ``name`` imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in modules:
                    yield sub  # `from pkg import module`
                elif base in modules:
                    yield base  # `from module import name`


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Each module -> the other modules of ``modules`` it imports."""
    return {name: set(_imports(name, path, modules)) - {name} for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)
