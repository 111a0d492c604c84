"""A catalog's first load is judged by its progress, not by a fixed total (docs/architecture.md section 4).

The parser cube runs on the real runtime and the embedded engines, with a clock that runs
``FACTOR`` times as fast as the real one: to the runtime's watchdog the parser is that many times
slower. ``FACTOR`` is chosen so that the load of ``OFFERS`` offers takes, on the watchdog's clock,
what a 1,000,000-offer catalog takes with the parser slowed to a fifth of its speed (5 x
1,000,000 / ``OFFERS``): far past the parser's 120 s ``handler_timeout_s``, while each of its
1,000-offer batches stays well within it (and is slowed 5 x 1,000,000 / ``OFFERS`` times, harsher
than a fifth). With a fixed total the load timed out on every attempt (a 100,000-offer catalog did,
on a busy machine) and a million offers were dead-lettered; now it loads at the first attempt.

``TURBOCUBES_TEST_CATALOG_OFFERS=1000000`` runs the million offers themselves (FACTOR 5; minutes of CPU).
"""

from __future__ import annotations

import asyncio
import gzip
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cubes.parser.cube import build
from shared.clock import at
from shared.config import Settings
from shared.messages import CrawlKind, CrawlResult, FetchStatus
from shared.runtime import Output, ensure_topics, open_deps, run_cube
from shared.stores import Feed

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

OFFERS = int(os.environ.get("TURBOCUBES_TEST_CATALOG_OFFERS", "100000"))
#: the watchdog sees the load of OFFERS offers as long as a million offers at a fifth of the speed
FACTOR = 5 * 1_000_000 / OFFERS


class FastClock:
    """The real clock, running ``factor`` times as fast (a ``shared.clock.Clock``): work looks slower."""

    def __init__(self, factor: float) -> None:
        self.factor = factor
        self._m0 = time.monotonic()
        self._w0 = time.time()

    def monotonic(self) -> float:
        return self._m0 + (time.monotonic() - self._m0) * self.factor

    def now(self) -> datetime:
        return at(self.time())

    def time(self) -> float:
        return self._w0 + (time.monotonic() - self._m0) * self.factor

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds) / self.factor)


def _catalog(n: int) -> bytes:
    """A gzipped YML catalog of ``n`` offers (as a shop serves a big one)."""
    head = (
        '<?xml version="1.0" encoding="UTF-8"?><yml_catalog date="2026-01-01 10:00"><shop><categories>'
        '<category id="1">Things</category></categories><offers>\n'
    )
    offers = (
        f'<offer id="o{i}"><url>https://shop.test/p/{i}</url><price>{i + 1}</price><currencyId>RUR</currencyId>'
        f"<categoryId>1</categoryId><picture>https://shop.test/i/{i}.jpg</picture><name>Product {i}</name>"
        f"<description>About product {i}.</description></offer>\n"
        for i in range(n)
    )
    body = head + "".join(offers) + "</offers></shop></yml_catalog>"
    return gzip.compress(body.encode(), compresslevel=1)


async def test_a_big_catalog_slowed_down_loads_at_the_first_attempt(tmp_path: Path) -> None:
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        runtime={"metrics_port": 0},
    )
    limit_s = settings.parser.handler_timeout_s
    clock = FastClock(FACTOR)
    deps = await open_deps(settings, clock=clock)
    try:
        await ensure_topics(deps, ["parser"])
        stores = await deps.stores()
        feed = Feed(feed_id="shop", url="https://shop.test/yml.xml", host="shop.test", format="yml")
        await stores.feeds.upsert_feed(feed)
        await (await deps.blobs()).put("feeds/shop", _catalog(OFFERS))
        msg = CrawlResult(
            kind=CrawlKind.feed,
            url="https://shop.test/yml.xml",
            host="shop.test",
            status=FetchStatus.ok,
            feed_id="shop",
            body_ref="feeds/shop",
            fetched_at=datetime.now(UTC),
        )
        await deps.publish([Output("crawl.feeds", msg)])
        cube = await build(settings, deps)
        t0 = clock.monotonic()
        stats = await run_cube(cube, deps, group="parser-deadline", max_messages=1, idle_timeout=60.0)
        seen_s = clock.monotonic() - t0
        # the load took, on the watchdog's clock, far longer than the limit a fixed total would impose
        assert seen_s > 2 * limit_s, f"the load looked like {seen_s:.0f} s: not slowed enough to show anything"
        assert (stats.processed, stats.retried, stats.dead_lettered) == (1, 0, 0), stats
        published = sum((await deps.bus.end_offsets("documents.parsed")).values())
        assert published == OFFERS + 1  # every offer, and the one category's listing page
        print(f"{OFFERS:,} offers loaded; to the watchdog {seen_s:,.0f} s (limit {limit_s:.0f} s a step)")
    finally:
        await deps.close()
