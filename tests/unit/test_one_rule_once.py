"""Small rules written once (docs/conventions.md rule 18): each has its owner, and nobody else spells it.

Two copies of a rule drift apart: the wall clock was read 26 times as
``datetime.fromtimestamp(clock.time(), UTC)`` beside 8 identical ``_now()`` methods, while
``utcnow()`` bypassed the injected clock in 9 places (a test that moved its clock did not move
those stamps). Each test here names the owner of one rule and fails where code spells it again.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _sources(*folders: str) -> dict[str, str]:
    names = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *folders],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return {n: (ROOT / n).read_text(encoding="utf-8") for n in names if n.endswith(".py") and (ROOT / n).is_file()}


def _offenders(pattern: str, sources: dict[str, str], *, owner: str) -> list[str]:
    rx = re.compile(pattern)
    return [
        f"{name}:{i}: {line.strip()}"
        for name, text in sources.items()
        if name != owner
        for i, line in enumerate(text.splitlines(), 1)
        if rx.search(line)
    ]


def test_the_wall_clock_is_read_through_a_clock() -> None:
    """``clock.now()`` / ``shared.clock.at(ts)`` (``shared/clock.py``), never the datetime module's own."""
    product = _sources("cubes", "shared", "demo")
    bad = _offenders(r"datetime\.(now|utcnow|fromtimestamp)\(|\butcnow\(|def _now\(", product, owner="shared/clock.py")
    bad += _offenders(r"\butcnow\(", _sources("tests", "bench"), owner="tests/unit/test_one_rule_once.py")
    assert not bad, "ask the injected clock (clock.now()) or shared.clock.at(ts):\n" + "\n".join(bad)


def test_one_header_look_up() -> None:
    """ "The first header called X" is ``shared.bus.base.header`` (it was written three times)."""
    loop = re.compile(r"for (\w+), \w+ in [^\n]*headers[^\n]*:\n\s+if \1 == ")
    bad = [
        n for n, text in _sources("cubes", "shared", "demo").items() if n != "shared/bus/base.py" and loop.search(text)
    ]
    assert not bad, f"use shared.bus.base.header(headers, name): {bad}"


def test_one_doubling_backoff() -> None:
    """A capped exponential backoff is ``shared.runtime.retry`` (``backoff_s``, ``next_backoff_s``).

    The runtime's outage waits, its bus waits, the crawler's throttle pauses, the scheduler's failing
    feeds and the frontend's event publisher each doubled and capped a wait of their own.
    """
    doubling = r"\b2(\.0)?\s*\*\*|\b\w*(delay|wait|backoff|pause)\w*\s*\*\s*2\b"
    bad = _offenders(doubling, _sources("cubes", "shared", "demo"), owner="shared/runtime/retry.py")
    assert not bad, "use shared.runtime.retry.backoff_s / next_backoff_s:\n" + "\n".join(bad)


def test_one_way_to_open_the_bus_from_settings() -> None:
    """``shared.bus.open_configured(settings.bus)``: every ``[bus]`` key reaches the engine.

    ``turbocubes dlq replay`` opened the URL alone, so its Kafka producer ignored ``bus.compression``,
    ``client_id`` and ``linger_ms``.
    """
    from shared.bus import open_configured
    from shared.bus.kafka import KafkaBus
    from shared.config import BusConfig

    bus = open_configured(BusConfig(url="kafka://127.0.0.1:9", compression="none", client_id="ops", linger_ms=7))
    assert isinstance(bus, KafkaBus)
    assert (bus.compression, bus.client_id, bus.linger_ms) == (None, "ops", 7)
    bad = _offenders(r"\bopen_bus\(", _sources("cubes", "shared", "demo"), owner="shared/bus/__init__.py")
    assert not bad, "open the bus with shared.bus.open_configured(settings.bus):\n" + "\n".join(bad)


def test_one_toml_writer() -> None:
    """TOML is written by ``shared/config/toml.py`` only (``tests/integration/cubeproc.py`` had its own)."""
    writer = r"""['"]true['"] if \w+ else ['"]false['"]"""
    sources = _sources("cubes", "shared", "demo", "tests", "bench", "ops")
    bad = _offenders(writer, sources, owner="shared/config/toml.py")
    assert not bad, "write TOML with shared.config.toml:\n" + "\n".join(bad)


def test_one_image_look_up() -> None:
    """The media and delay cubes make their image look-up with ``LookupBatcher.from_settings``."""
    bad = _offenders(r"LookupBatcher\(", _sources("cubes", "shared", "demo"), owner="shared/images/lookups.py")
    assert not bad, "build it with LookupBatcher.from_settings(images, settings.media):\n" + "\n".join(bad)


def test_one_search_hit_decoder() -> None:
    """A listing's ``SearchHit`` is decoded by ``shared/stores/sql/pages.py`` (both engines had their own)."""
    bad = [
        n
        for n, text in _sources("shared/stores").items()
        if n != "shared/stores/sql/pages.py" and re.search(r"SearchHit\(\s*url=r\[", text)
    ]
    assert not bad, f"decode with shared.stores.sql.pages.recent_hit: {bad}"
