"""HTML is made one way: templates of ``shared/pages/templates.py``, which escape every value.

The published Turbo page was f-strings with a hand ``escape()`` around each value, the console
Jinja2 with autoescape, ``turbocubes render`` and the API docs a Jinja2 set-up each, the frontend's home, search and
Wordstat pages Python string templates with ``html.escape``: five ways, one of them a
forgotten call away from an XSS hole. These keep it one: only ``shared/pages/templates.py`` makes a
Jinja2 environment, and the modules that make our pages never escape by hand.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: the modules that make the pages we serve or write
_PAGE_MAKERS = ("cubes/kvwriter", "cubes/render.py", "cubes/frontend", "cubes/api/docs.py")


def _modules(*where: str) -> list[Path]:
    out: list[Path] = []
    for w in where:
        p = ROOT / w
        out += [p] if p.suffix == ".py" else sorted(p.rglob("*.py"))
    return out


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
    return names


def test_only_shared_templates_makes_a_jinja_environment() -> None:
    makers = [
        p.relative_to(ROOT).as_posix()
        for p in _modules("cubes", "shared", "demo")
        if "jinja2.Environment" in _imports(p) or "jinja2" in _imports(p)
    ]
    assert makers == ["shared/pages/templates.py"]


def test_the_page_makers_never_escape_by_hand() -> None:
    bad = []
    for p in _modules(*_PAGE_MAKERS):
        name = p.relative_to(ROOT).as_posix()
        hand = {"html.escape", "markupsafe.escape", "html"} & _imports(p)
        if hand:
            bad.append(f"{name}: {sorted(hand)}")
    assert not bad, "make the markup a template of shared/pages/templates.py instead:\n" + "\n".join(bad)
