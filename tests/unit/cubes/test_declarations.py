"""Each cube is declared once, in its ``cube.py``; everything that knows about cubes reads that.

``CUBE = Cube(name, inputs, outputs, replicable)`` is the one statement of a cube's topics and of
whether several processes may run it (``cubes/registry.py``). Once the cube list was written three
times (the registry, the workers' replicable list, a test) and the topics twice; here: every
package with a ``cube.py`` is a registered cube, every topic it names is in the catalog, its
built form keeps its declaration, its handler takes exactly the models of its input topics, and
docs/architecture.md's table of cubes says what the declarations say.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cubes import registry
from shared import contracts
from shared.config import Settings
from shared.runtime import open_deps
from shared.runtime.cube import Cube
from shared.runtime.deps import Deps

ROOT = Path(__file__).resolve().parents[3]


def test_every_cube_package_is_registered_and_declared() -> None:
    packages = sorted(p.parent.name for p in (ROOT / "cubes").glob("*/cube.py"))
    assert packages == sorted(registry.CUBE_NAMES), "add the cube's name to cubes/registry.py CUBE_NAMES"
    for name in registry.CUBE_NAMES:
        cube = registry.declared(name)
        assert cube.name == name
        assert cube.handler is None, f"{name}: CUBE declares; build() adds the handler"


@pytest.mark.parametrize("name", registry.CUBE_NAMES)
def test_every_declared_topic_is_in_the_catalog(name: str) -> None:
    cube = registry.declared(name)
    for topic in (*cube.inputs, *cube.outputs):
        assert topic in contracts.catalog(), f"{name}: {topic} is not in schemas/topics.toml"
    assert len(set(cube.inputs)) == len(cube.inputs), f"{name}: an input named twice"


@pytest.fixture
async def deps(tmp_path: Path) -> AsyncIterator[Deps]:
    tmp = tmp_path
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp}/bus.db"},
        store={"url": f"sqlite:///{tmp}/store.db"},
        cdn={"url": f"file://{tmp}/cdn"},
        blobs={"url": f"file://{tmp}/blobs"},
        runtime={"metrics_port": 0},
    )
    opened = await open_deps(settings)
    try:
        yield opened
    finally:
        await opened.close()


def _models(annotation: object) -> set[object]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return set(typing.get_args(annotation))
    return {annotation}


@pytest.mark.parametrize("name", registry.CUBE_NAMES)
async def test_the_built_cube_keeps_its_declaration_and_takes_its_topics_models(name: str, deps: Deps) -> None:
    cube = await registry.build(name, deps.settings, deps)  # raises if build() changed a declared fact
    if not cube.inputs:
        assert cube.handler is None, f"{name} has a handler but no input"
        return
    assert cube.handler is not None, f"{name} has inputs but no handler"
    first = next(iter(inspect.signature(cube.handler).parameters))
    hints = typing.get_type_hints(cube.handler)
    takes = _models(hints[first])
    expected = {contracts.topic(t).model for t in cube.inputs}
    assert takes == expected, (
        f"{name}'s handler takes {sorted(map(str, takes))}, its inputs carry {sorted(map(str, expected))}"
    )


async def test_a_build_that_changes_its_declaration_is_refused(monkeypatch: pytest.MonkeyPatch, deps: Deps) -> None:
    module = registry.cube_module("delay")
    real = module.build

    async def drifted(settings: Settings, d: Deps) -> Cube:
        cube: Cube = await real(settings, d)
        return Cube(name=cube.name, inputs=cube.inputs, outputs=(), handler=cube.handler)  # forgot an output

    monkeypatch.setattr(module, "build", drifted)
    with pytest.raises(TypeError, match="changed its CUBE's outputs, replicable"):
        await registry.build("delay", deps.settings, deps)


def _architecture_table() -> dict[str, tuple[set[str], set[str]]]:
    """Section 3's table: cube -> (the catalog topics it consumes, the ones it produces)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("\n## 3. ", 1)[1].split("\n## 4. ", 1)[0]
    topics = set(contracts.catalog())
    rows: dict[str, tuple[set[str], set[str]]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] in registry.CUBE_NAMES:
            named = [set(re.findall(r"[a-z]+\.[a-z.]+[a-z]", c)) & topics for c in cells[1:3]]
            rows[cells[0]] = (named[0], named[1])
    return rows


def test_the_architecture_lists_every_cube_with_its_declared_topics() -> None:
    table = _architecture_table()
    assert set(table) == set(registry.CUBE_NAMES), "docs/architecture.md section 3 lists every cube"
    for name, (consumes, produces) in table.items():
        cube = registry.declared(name)
        assert consumes == set(cube.inputs), f"docs/architecture.md section 3: {name} consumes"
        assert produces == set(cube.outputs), f"docs/architecture.md section 3: {name} produces"
