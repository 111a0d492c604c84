"""tests/data travels with the repository and no test reaches outside it (docs/architecture.md section 9).

A stranger's fresh clone has nothing beside it, so every fixture a test reads lives in
``tests/data``: small, copyable, each file's origin known (``tests/data/MANIFEST.md``).
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
#: the issue's budget for all fixtures together
MAX_BYTES = 10 * 1024 * 1024
#: the manifests of copied files: each folder's lines of its source's manifest, unchanged
MANIFESTS = ("feeds/MANIFEST.jsonl", "autoparser/MANIFEST.jsonl")
#: files that describe the folder rather than being fixtures
INDEX_FILES = {"MANIFEST.md", *MANIFESTS}
OURS_PREFIX = "turbocubes__"


def _manifest() -> dict[str, dict[str, object]]:
    rows: dict[str, dict[str, object]] = {}
    for manifest in MANIFESTS:
        folder = manifest.split("/", 1)[0]
        for row in map(orjson.loads, (DATA / manifest).read_bytes().splitlines()):
            rows[f"{folder}/{row['file']}"] = row
    return rows


def _files() -> list[str]:
    return sorted(p.relative_to(DATA).as_posix() for p in DATA.rglob("*") if p.is_file())


def test_fixtures_fit_the_budget() -> None:
    total = sum((DATA / f).stat().st_size for f in _files())
    assert 0 < total <= MAX_BYTES, f"tests/data holds {total:,} bytes, over {MAX_BYTES:,}"


def test_every_fixture_has_a_known_origin() -> None:
    """Copied files match their manifest line byte for byte; our own are named and described."""
    manifest = _manifest()
    described = (DATA / "MANIFEST.md").read_text()
    unknown, changed, undescribed = [], [], []
    for f in _files():
        if f in INDEX_FILES:
            continue
        name = f.rsplit("/", 1)[-1]
        if name.startswith(OURS_PREFIX):
            if f"`{f}`" not in described:
                undescribed.append(f)
            continue
        row = manifest.get(f)
        if row is None:
            unknown.append(f)
        elif hashlib.sha256((DATA / f).read_bytes()).hexdigest() != row["sha256"]:
            changed.append(f)
    assert unknown == [], f"fixtures without an origin in one of {MANIFESTS}"
    assert changed == [], "copied fixtures that no longer match their origin's sha256"
    assert undescribed == [], "our own fixtures missing from tests/data/MANIFEST.md"
    assert not [f for f in manifest if not (DATA / f).is_file()], "manifest lines for files not here"


def test_every_copied_source_carries_its_licence() -> None:
    manifest = _manifest()
    repos = {row["repo"] for row in manifest.values()}
    licensed = {row["repo"] for row in manifest.values() if row["role"] == "license"}
    assert repos == licensed


def _reaches_shared(tree: ast.AST) -> list[int]:
    """Lines that build a path into ../shared: ``x / "shared"`` joins, or a "../shared" / "shared/data" literal."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    lines = []
    for node in ast.walk(tree):
        joins_shared = (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Div)
            and isinstance(node.right, ast.Constant)
            and node.right.value == "shared"
        )
        names_shared = (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and ("../shared" in node.value or "shared/data" in node.value)
        )
        if joins_shared or names_shared:
            lines.append(getattr(node, "lineno", 0))
    return lines


def test_no_test_reads_outside_the_repository() -> None:
    offenders = {}
    for path in sorted((REPO / "tests").rglob("*.py")):
        if path == Path(__file__).resolve():
            continue  # this file names the pattern it looks for
        hits = _reaches_shared(ast.parse(path.read_text(), str(path)))
        if hits:
            offenders[path.relative_to(REPO).as_posix()] = hits
    assert offenders == {}


def test_the_guard_sees_the_old_fixture() -> None:
    """The check above would have caught the conftest this file replaced."""
    old = 'REPO = Path(__file__).parent\nSHARED_DATA = REPO.parent / "shared" / "data"\n'
    assert _reaches_shared(ast.parse(old)) == [2]
    assert _reaches_shared(ast.parse('p = Path("../shared/data/feeds")')) == [1]
    assert _reaches_shared(ast.parse('"""Reads ../shared/data? No: a docstring saying so is fine."""')) == []
