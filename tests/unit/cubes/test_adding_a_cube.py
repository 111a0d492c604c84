"""docs/adding-a-cube.md, followed word for word: its files make a cube that runs.

The page's code blocks that name a file (```python file=cubes/mirror/cube.py) are written into a
temporary package; its topic row is read as the catalog reads ``schemas/topics.toml``; the name
goes into ``CUBE_NAMES`` as its step 4 says. Then the cube passes what every cube must (its
declaration, its handler's types), runs in ``turbocubes up``'s launcher on the embedded engines,
and the page's own tests pass. A page that drifted from the code fails here.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import re
import sys
import textwrap
import typing
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

import cubes
from cubes import registry
from cubes.cli import build_parser
from cubes.launcher import run_cubes
from shared import contracts
from shared.config import Settings
from shared.messages import Document, SourceKind, SourceRef
from shared.runtime import Output, ensure_topics, open_deps

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "adding-a-cube.md"
_BLOCK = re.compile(r"^([ \t]*)```(\w+) file=(\S+)\n(.*?)^\1```", re.M | re.S)
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _files() -> dict[str, str]:
    """The page's code blocks that name their file: path -> text (dedented)."""
    blocks = {m.group(3): textwrap.dedent(m.group(4)) for m in _BLOCK.finditer(PAGE.read_text(encoding="utf-8"))}
    assert {"cubes/mirror/cube.py", "cubes/mirror/handler.py", "schemas/topics.toml"} <= set(blocks)
    return blocks


@pytest.fixture
def mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The page's cube, installed as its steps say, in a temporary package; gone afterwards."""
    files = _files()
    root = tmp_path / "checkout"
    for name, text in files.items():
        if name.endswith(".py"):
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    # step 1: the topic row, read as the catalog reads it
    rows = contracts.topics_from_toml(files["schemas/topics.toml"])
    assert set(rows) == {"documents.mirrored"}
    for t in rows.values():
        contracts.register_topic(t)
    # the package under cubes/ (a temporary folder of the cubes package) and step 4: its name in the list
    monkeypatch.setattr(cubes, "__path__", [*cubes.__path__, str(root / "cubes")])
    names = list(registry.CUBE_NAMES)
    names.insert(names.index("kvwriter") + 1, "mirror")
    monkeypatch.setattr(registry, "CUBE_NAMES", tuple(names))
    yield root
    for module in [m for m in sys.modules if m == "cubes.mirror" or m.startswith("cubes.mirror.")]:
        del sys.modules[module]


def _settings(tmp_path: Path) -> Settings:
    return Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        cdn={"url": f"file://{tmp_path}/cdn"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        runtime={"metrics_port": 0},
    )


def test_the_page_s_cube_is_declared_as_every_cube_must_be(mirror: Path) -> None:
    cube = registry.declared("mirror")
    assert (cube.inputs, cube.outputs, cube.replicable) == (("documents.ready",), ("documents.mirrored",), True)
    assert "mirror" in registry.replicable()  # up --workers runs it in every process
    for topic in (*cube.inputs, *cube.outputs):
        assert contracts.topic(topic).model is Document
    args = build_parser().parse_args(["cube", "mirror"])  # `turbocubes cube mirror`
    assert args.name == "mirror"
    handler = importlib.import_module("cubes.mirror.handler").MirrorHandler().handle
    first = next(iter(inspect.signature(handler).parameters))
    assert typing.get_type_hints(handler)[first] is Document  # the models of its inputs, exactly


def test_the_page_s_compose_service_is_a_cube_service(mirror: Path) -> None:
    service = yaml.safe_load(_files()["docker-compose.yml"].replace("<<: *cube", "image: turbocubes:local"))
    assert service == {"mirror": {"image": "turbocubes:local", "command": ["cube", "mirror"]}}
    assert "\n  cdn:\n    <<: *cube\n" in (ROOT / "docker-compose.yml").read_text(encoding="utf-8")  # the same shape


async def test_the_page_s_cube_runs_in_the_launcher(mirror: Path, tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    doc = Document(
        url="https://news.example/a",
        host="news.example",
        source=SourceRef(kind=SourceKind.rss, id="feed-1"),
        title="A story",
        content_html="<p>Text</p>",
        content_hash="h1",
        version=1,
        seen_at=T0,
        parsed_at=T0,
    )
    deps = await open_deps(settings)
    await ensure_topics(deps, ["mirror"])  # as `turbocubes topics create` would (the launcher does it too)
    await deps.publish([Output("documents.ready", doc)])
    stop = asyncio.Event()
    task = asyncio.create_task(run_cubes(settings, ["mirror"], stop_event=stop))
    try:
        partitions = contracts.topic("documents.mirrored").partitions

        async def mirrored() -> list[bytes]:
            return [r.value for p in range(partitions) for r in await deps.bus.read("documents.mirrored", p, 0, 10)]

        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30.0
        while not (found := await mirrored()):
            assert not task.done(), f"the launcher ended (rc={task.result()}) before the document was mirrored"
            assert loop.time() < deadline, "no document on documents.mirrored within 30 s"
            await asyncio.sleep(0.1)  # a poll interval, not a synchronization
        assert [contracts.decode("documents.mirrored", v) for v in found] == [doc]
    finally:
        stop.set()
        assert await asyncio.wait_for(task, 30.0) == 0
        await deps.close()


async def test_the_page_s_own_tests_pass(mirror: Path, tmp_path: Path) -> None:
    path = mirror / "tests" / "unit" / "cubes" / "mirror" / "test_mirror.py"
    spec = importlib.util.spec_from_file_location("_page_test_mirror", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tests = [(n, f) for n, f in vars(module).items() if n.startswith("test_") and inspect.iscoroutinefunction(f)]
    assert len(tests) == 2
    for n, test in tests:
        params = inspect.signature(test).parameters
        await test(**({"tmp_path": tmp_path / n} if "tmp_path" in params else {}))
