"""The store packages' layout: no import cycle, floors that only look up.

Every ``import`` counts, also those inside functions and under ``TYPE_CHECKING``:
a cycle broken only by a late import is still a cycle for the reader.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import shared.stores
from tests.imports import cycles, import_graph, modules_under

ROLES = (
    "pages",
    "shop",
    "hashes",
    "images",
    "delay",
    "feeds",
    "tenants",
    "notices",
    "notify",
    "tasks",
    "status",
    "problems",
    "sessions",
    "team",
    "lanes",
    "search",
    "wordstat",
    "autoparser",
)
#: the package as imported (this repository's, never a path built beside it)
STORES = Path(shared.stores.__path__[0])


def _modules() -> dict[str, Path]:
    return modules_under(["shared.stores"])


def _graph() -> dict[str, set[str]]:
    return import_graph(_modules())


def test_the_cycle_finder_finds_a_late_import_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_shared_stores() -> None:
    assert cycles(_graph()) == []


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


def test_every_role_has_its_contract_and_the_docstrings_name_every_role() -> None:
    """The role lists of the docstrings once left out autoparser, lanes, search and wordstat."""
    contracts = {p.stem for p in STORES.glob("*.py")} - {"__init__", "base", "codec", "migrations"}
    contracts = {c for c in contracts if not c.startswith("migrations_") and not c.endswith("_schema")}  # migrations
    assert contracts == set(ROLES), "a new role: add it to ROLES and to shared/stores/__init__.py's list"
    front = importlib.import_module("shared.stores").__doc__ or ""
    assert [r for r in ROLES if r not in front] == []
    for engine in ("sqlite", "postgres"):
        doc = importlib.import_module(f"shared.stores.{engine}").__doc__ or ""
        own = sorted(p.name for p in (STORES / engine).glob("*.py") if p.stem in ROLES or p.stem.startswith("search_"))
        assert [m for m in own if f"``{m}``" not in doc] == [], f"shared/stores/{engine}/__init__.py: its own plans"
