"""The store packages' layout (issue 20, item 2): no import cycle, floors that only look up.

Every ``import`` counts, also those inside functions and under ``TYPE_CHECKING``:
a cycle broken only by a late import is still a cycle for the reader.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import shared.stores

#: the package itself, found through its import (this checkout, whatever the working directory)
STORES = Path(shared.stores.__file__).resolve().parent
ROOT = STORES.parents[1]
ROLES = ("pages", "hashes", "images", "delay", "feeds", "tenants", "tasks", "status")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(STORES.rglob("*.py"))}


def _imports(path: Path, name: str, known: set[str]) -> set[str]:
    """The ``shared.stores`` modules ``path`` imports (``from pkg import sub`` counts as ``pkg.sub``)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else base)
    return {m for m in found if m in known and m != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(path, name, known) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
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
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_finds_a_late_import_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_shared_stores() -> None:
    assert _cycles(_graph()) == []


def test_nothing_in_the_stores_imports_the_package_front() -> None:
    """Callers import ``shared.stores``; the stores import the module that owns a name."""
    graph = _graph()
    assert [m for m, deps in graph.items() if "shared.stores" in deps] == []


def _floor(module: str) -> str:
    """``sql``, ``sqlite`` or ``postgres`` for a module of those packages, else ``contract``."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[2] in ("sql", "sqlite", "postgres") else "contract"


@pytest.mark.parametrize("role", ROLES)
def test_a_contract_module_imports_no_engine_and_no_sql(role: str) -> None:
    assert sorted(d for d in _graph()[f"shared.stores.{role}"] if _floor(d) != "contract") == []


def test_the_portable_floor_imports_no_engine() -> None:
    offenders = [
        (m, d)
        for m, deps in _graph().items()
        for d in deps
        if _floor(m) == "sql" and _floor(d) in ("sqlite", "postgres")
    ]
    assert offenders == []


def test_the_engines_do_not_import_each_other() -> None:
    crossing = [
        (m, d) for m, deps in _graph().items() for d in deps if {_floor(m), _floor(d)} == {"sqlite", "postgres"}
    ]
    assert crossing == []


def test_every_role_has_its_contract_module() -> None:
    modules = _modules()
    assert [r for r in ROLES if f"shared.stores.{r}" not in modules] == []


@pytest.mark.parametrize("module", sorted(_modules()))
def test_every_module_imports(module: str) -> None:
    importlib.import_module(module)
