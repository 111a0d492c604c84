"""The ``turbocubes`` command imports what its command needs (docs/architecture.md section 8).

``cubes/cli.py`` imported the renderer, the sanitizer, the parser's handler and jinja2 for every
command: ``turbocubes parse FILE`` spent about 2 s of CPU before it read a byte (parsing the file
took 5 ms), ``--help`` as much. Each check runs in a fresh interpreter, so what it sees loaded is
what the command loaded. ``bench/cli.py`` measures the CPU itself.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FEED = ROOT / "tests" / "data" / "feeds" / "turbo" / "turbocubes__blog__turbo.xml"

#: what no command needs before it runs: engines' clients, the renderer, models, the web stack
_HEAVY = (
    "aiohttp",
    "aiokafka",
    "asyncpg",
    "boto3",
    "catboost",
    "feedparser",
    "jinja2",
    "nh3",
    "numpy",
    "cubes.kvwriter.render",
    "cubes.parser.handler",
    "shared.pages.safehtml",
    "shared.stores",
)
#: what a command that runs no event loop (``--help``, ``parse FILE``) does not load: asyncio brings the
#: network stack (ssl, socket, subprocess, concurrent.futures), a sixth of ``parse FILE``'s CPU
_LOOP = ("asyncio", "ssl", "subprocess", "concurrent.futures")
#: ... and what building the parser (``--help``) needs least of all
_NOT_FOR_HELP = (*_HEAVY, *_LOOP, "lxml", "orjson", "pydantic", "shared.config", "shared.messages")


def _loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code`` (in the repository's root)."""
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, check=True, capture_output=True, text=True, timeout=120
    ).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


def test_building_the_command_line_loads_no_cube_and_no_engine() -> None:
    loaded = _loaded_after("from cubes.cli import build_parser\nbuild_parser()")
    assert not sorted(m for m in _NOT_FOR_HELP if m in loaded)
    cubes = sorted(m for m in loaded if m.startswith("cubes.") and m.count(".") >= 2)
    assert all(m.endswith(".commands") for m in cubes), f"only the cubes' commands modules: {cubes}"


def test_parse_loads_the_parser_and_nothing_it_does_not_use() -> None:
    code = (
        "import contextlib, io\nfrom cubes.cli import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()):\n    assert main(['parse', {str(FEED)!r}]) == 0"
    )
    loaded = _loaded_after(code)
    assert "cubes.parser.parse_file" in loaded  # it did run
    # it sanitizes each item as the parser cube does: the safe-HTML policy is the one heavy module it needs
    needs = {"nh3", "shared.pages.safehtml"}
    assert not sorted(m for m in _HEAVY if m in loaded and m not in needs)
    assert not sorted(m for m in _LOOP if m in loaded), "a file is parsed without an event loop"


@pytest.mark.parametrize(
    ("module", "name", "enum"),
    [
        ("cubes.crawler.commands", "_KINDS", "shared.messages.CrawlKind"),
        ("cubes.api.commands", "_FEED_FORMATS", "shared.messages.FeedFormat"),
        ("cubes.api.commands", "_FULL_TEXT", "shared.webmaster.feed_options.FullText"),
    ],
)
def test_the_choices_written_in_the_commands_are_the_models_values(module: str, name: str, enum: str) -> None:
    import importlib

    written = getattr(importlib.import_module(module), name)
    home, _, cls = enum.rpartition(".")
    assert set(written) == {v.value for v in getattr(importlib.import_module(home), cls)}
