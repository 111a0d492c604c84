"""The Wordstat page and Russian search in a real browser.

Headless Chromium (``test_browser_frontend.py`` drives it) opens the Wordstat
page of a seasonal query counted over a year, and a Russian search: the chart
is server-side SVG (no script runs), its bars match the counted months, counts
under the privacy threshold have no number, and nothing is fetched from
elsewhere. Screenshots go to ``test-artifacts/browser/`` to be looked at.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest
from aiohttp import web

from cubes.frontend.app import create_app
from cubes.kvwriter.handler import KvwriterHandler
from cubes.wordstat.handler import counted
from shared.clock import ManualClock
from shared.config import Settings
from shared.messages import Device, Document, SearchQueryEvent, SourceKind, SourceRef
from shared.stores import open_stores
from shared.stores.wordstat import Privacy
from tests.integration.test_browser_frontend import (  # the browser fixture and its helpers
    Cdp,
    _errors,
    _eval,
    _open,
    _requests,
    _shot,
    browser,
)

__all__ = ["browser"]  # re-exported: pytest finds the fixture in this module

pytestmark = pytest.mark.browser

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
#: searches of "ёлка" by month (2025-12 .. 2026-11): a December peak, a summer of almost nothing
SEASON = {202512: 90, 202601: 30, 202602: 12, 202603: 6, 202604: 3, 202605: 0, 202606: 2, 202607: 0,
          202608: 0, 202609: 4, 202610: 14, 202611: 40}  # fmt: skip


def _events(query: str, month: int, n: int, **fields: object) -> list[SearchQueryEvent]:
    at = datetime(month // 100, month % 100, 10, tzinfo=UTC)
    return [
        SearchQueryEvent(event_id=uuid.uuid4().hex, query=query, at=at, **fields)  # type: ignore[arg-type]
        for _ in range(n)
    ]


@pytest.fixture
async def frontend(tmp_path: Path) -> AsyncIterator[str]:
    settings = Settings().replace(store={"url": f"sqlite:///{tmp_path}/store.db"})
    stores = await open_stores(settings.store.url)
    batch: list[SearchQueryEvent] = []
    for month, n in SEASON.items():
        batch += _events("купить ёлку", month, n * 2 // 3, device=Device.mobile, region="moscow")
        batch += _events("живая ёлка", month, n - n * 2 // 3, region="spb")
    batch += _events("ёлка своими руками", 202611, 3)  # under the threshold: never listed
    await stores.wordstat.count([counted(e) for e in batch], now=NOW, privacy=Privacy(threshold=5))
    writer = KvwriterHandler(stores.pages, settings)
    await writer.handle(
        Document(
            url="https://vesti.example/novyj-most",
            host="vesti.example",
            source=SourceRef(kind=SourceKind.turbo, id="f"),
            title="В Приморске открыли пешеходный мост",
            content_html="<p>Новый мост соединил набережную со старым парком. Мосты такого типа строят из стали.</p>",
            content_hash="h",
            version=1,
            seen_at=NOW,
            parsed_at=NOW,
            published_at=NOW,
            extra={"language": "ru"},
        )
    )
    # the page write only queues the page; the indexer cube makes it searchable (within its period)
    assert await stores.index_queue.catch_up() == 1
    runner = web.AppRunner(create_app(settings, stores, clock=ManualClock(NOW.timestamp())), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    yield f"http://{host}:{port}"
    await runner.cleanup()
    await stores.close()


async def test_wordstat_chart_and_russian_search_in_a_real_browser(frontend: str, browser: Cdp) -> None:
    url = f"{frontend}/wordstat?q={quote('ёлка')}&months=12"
    session = await _open(browser, url, width=1280, height=900, mobile=False)
    text = await _eval(browser, session, "document.body.innerText")
    # the year's published cells (each month's two cells of at least 5 searches) sum to 182, shown rounded;
    # the cells under the threshold (4 of them in February, the summer's) and the 3 "ёлка своими руками"
    # are in no number
    published = {m: sum(k for k in (n * 2 // 3, n - n * 2 // 3) if k >= 5) for m, n in SEASON.items()}
    assert sum(published.values()) == 182
    assert "180 searches for “ёлка” the last 12 months" in text.replace("\u202f", "")  # as typed
    # one bar per month with a published cell, and nothing for the others (not even a pale "some")
    bars = await _eval(browser, session, "[...document.querySelectorAll('svg.chart rect.bar')].length")
    low = await _eval(browser, session, "[...document.querySelectorAll('svg.chart rect.low')].length")
    assert bars == sum(1 for n in published.values() if n > 0) == 5
    assert low == 0
    tips = await _eval(
        browser, session, "[...document.querySelectorAll('svg.chart rect title')].map(t => t.textContent)"
    )
    assert "Dec 2025: 90" in tips
    assert not any(t.startswith("Apr 2026") for t in tips)
    # the tallest bar is December's, and the chart fits its box
    heights = await _eval(
        browser, session, "[...document.querySelectorAll('svg.chart rect.bar')].map(r => r.getBBox().height)"
    )
    assert max(heights) == heights[0]
    assert await _eval(browser, session, "document.scripts.length") == 0
    assert "ёлка своими руками" not in text
    await _shot(browser, session, "wordstat")

    session = await _open(browser, url, width=390, height=844, mobile=True, dark=True)
    assert await _eval(browser, session, "document.documentElement.scrollWidth") <= 390
    await _shot(browser, session, "wordstat-phone-dark")

    session = await _open(browser, f"{frontend}/search?q={quote('мостами')}", width=1280, height=900, mobile=False)
    marked = await _eval(browser, session, "[...document.querySelectorAll('.hit mark')].map(m => m.textContent)")
    assert marked == ["мост", "мост", "Мосты"]
    await _shot(browser, session, "search-russian")

    assert _errors(browser) == []
    # everything came from the frontend (data: URLs are Chromium's own icons, such as the date picker's)
    foreign = [u for u in _requests(browser) if not u.startswith((frontend, "about:blank", "data:"))]
    assert foreign == []
