"""The shape of the tree: no import cycle in ``cubes/``, ``shared/`` and ``demo/``
-- imports inside functions included -- no module over 500 lines there (but the known debts listed
below), no class holding more than ``MAX_ATTRIBUTES`` attributes (docs/conventions.md rule 19),
``shared/`` never imports ``cubes/``, and no cube imports another.

Imports are read from the source (``ast``), not by importing, so an import inside a function counts
as much as one at the top. Imports under ``if TYPE_CHECKING:`` count too: a cycle that only the type
checker sees is still two modules that cannot be understood one without the other.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.imports import cycles, import_graph, modules_under

PACKAGES = ("cubes", "shared", "demo")
MAX_LINES = 500
#: past ~20 attributes a class holds concepts that want classes of their own (docs/conventions.md rule
#: 19): a commit tracker, a failure router, a lane dispatcher. Records -- dataclasses, pydantic models,
#: named tuples: a row or a message is its fields -- are not held to it. (A line cap on the runner's
#: module measured the wrong thing: one function was kept flat on purpose to stay under it.)
MAX_ATTRIBUTES = 20
#: bases that make a class a record
_RECORD_BASES = {"BaseModel", "Message", "Section", "NamedTuple", "TypedDict", "Protocol", "Enum", "StrEnum"}
#: modules over MAX_LINES when this test was written, each a debt of its area, reported to the lead
#: to be split, then struck from this list. A module not listed here fails at 501 lines.
#: Empty since the last three (the embedded log, the autoparser's segment and features) were split.
OVER_500_KNOWN: frozenset[str] = frozenset()


def _modules() -> dict[str, Path]:
    return modules_under(PACKAGES)


def test_no_import_cycle_in_cubes_and_shared() -> None:
    found = cycles(import_graph(_modules()))
    assert found == [], f"{len(found)} import cycle(s): " + "; ".join(" <-> ".join(c) for c in found)


def test_the_cycle_finder_sees_a_cycle_through_a_function_level_import() -> None:
    # the finder itself, on a graph with one circle of three and a tail: one cycle, the tail outside it
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    source = "def f():\n    from shared import clock\n"
    tree = ast.parse(source)
    assert any(isinstance(n, ast.ImportFrom) for n in ast.walk(tree))  # ast.walk reaches into functions


def test_no_module_over_500_lines() -> None:
    long = {
        name: n
        for name, path in _modules().items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    new = {name: n for name, n in long.items() if name not in OVER_500_KNOWN}
    assert new == {}, f"modules over {MAX_LINES} lines (split them; docs/conventions.md rule 15): {new}"
    paid = sorted(OVER_500_KNOWN - long.keys())
    assert paid == [], f"no longer over {MAX_LINES} lines: strike {paid} from OVER_500_KNOWN"


def _is_record(cls: ast.ClassDef) -> bool:
    def name(node: ast.expr) -> str:
        node = node.func if isinstance(node, ast.Call) else node
        return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""

    return any(name(d) == "dataclass" for d in cls.decorator_list) or any(name(b) in _RECORD_BASES for b in cls.bases)


def attributes(cls: ast.ClassDef) -> set[str]:
    """The attributes a class holds: ``self.x`` assigned in any of its methods, and its annotated fields."""
    names = {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    for node in ast.walk(cls):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign | ast.AugAssign)
            else []
        )
        for target in targets:
            for e in ast.walk(target):
                if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
                    names.add(e.attr)
    return names


def test_no_class_holds_more_than_twenty_attributes() -> None:
    crowded = {}
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ClassDef)
                and not _is_record(node)
                and len(held := attributes(node)) > MAX_ATTRIBUTES
            ):
                crowded[f"{name}.{node.name}"] = len(held)
    assert crowded == {}, (
        f"classes over {MAX_ATTRIBUTES} attributes (give their concepts classes of their own): {crowded}"
    )


def test_the_attribute_count_sees_every_kind_of_assignment() -> None:
    source = (
        "class C:\n    a: int\n    def __init__(self):\n        self.b = 1\n        self.c: int = 2\n"
        "    def m(self):\n        self.d += 1\n        self.e, self.f = 1, 2\n        other.g = 3\n"
    )
    (cls,) = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef)]
    assert attributes(cls) == {"a", "b", "c", "d", "e", "f"}
    assert not _is_record(cls)
    assert _is_record(ast.parse("@dataclass(frozen=True)\nclass R:\n    x: int\n").body[0])  # type: ignore[arg-type]


def test_shared_and_the_demo_never_import_cubes_and_no_cube_imports_another() -> None:
    graph = import_graph(_modules())
    # the demo partner site is composed by the launcher; it uses shared/ only, like any partner of the API
    upward = sorted(
        f"{m} -> {d}"
        for m, deps in graph.items()
        if m.startswith(("shared", "demo"))
        for d in deps
        if d.startswith("cubes")
    )
    assert upward == []

    def cube_of(module: str) -> str | None:
        parts = module.split(".")
        return parts[1] if parts[0] == "cubes" and len(parts) > 2 else None  # cubes.<cube>.<module>

    across = sorted(
        f"{m} -> {d}"
        for m, deps in graph.items()
        if (mine := cube_of(m)) is not None
        for d in deps
        if (theirs := cube_of(d)) is not None and theirs != mine
    )
    assert across == []


#: shared/'s rooms of content, lowest first: a room imports the ones before it, never one after it, and
#: the infrastructure (the flat modules, bus, blobs, config, http, runtime, stores, search, wordstat,
#: and problems below them all) imports none of them: it serves the rooms and does not know them.
CONTENT_ROOMS = ("images", "pages", "webmaster")


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in CONTENT_ROOMS) else ""


def arrows_back_up(graph: dict[str, set[str]]) -> list[str]:
    """Imports of a content room from infrastructure or from a room below it."""
    back = []
    for a, targets in graph.items():
        for b in targets:
            ra, rb = _room(a), _room(b)
            if not b.startswith("shared.") or rb not in CONTENT_ROOMS or ra == rb:
                continue
            if ra not in CONTENT_ROOMS or CONTENT_ROOMS.index(ra) < CONTENT_ROOMS.index(rb):
                back.append(f"{a} -> {b}")
    return sorted(back)


def test_shared_rooms_import_only_downwards() -> None:
    back = arrows_back_up(import_graph(modules_under(("shared",))))
    assert back == [], "arrows back up between shared/'s rooms: " + "; ".join(back)


def test_the_room_check_sees_an_arrow_back_up() -> None:
    graph = {
        "shared.webmaster.feeds": {"shared.pages.state", "shared.images.media", "shared.clock"},
        "shared.pages.state": {"shared.images.media", "shared.stores"},
        "shared.images.media": {"shared.pages.safehtml"},  # up
        "shared.stores.sql.tenants": {"shared.webmaster.rights"},  # infrastructure knowing a room
        "shared.clock": {"shared.webmaster"},  # a flat module knowing a room
    }
    assert arrows_back_up(graph) == [
        "shared.clock -> shared.webmaster",
        "shared.images.media -> shared.pages.safehtml",
        "shared.stores.sql.tenants -> shared.webmaster.rights",
    ]
