"""A summary-only feed produces full pages: the demo's columns in a real browser.

``turbocubes up --demo`` on embedded engines, every cube in this process. The columns' feed gives
one sentence and "Read more…" per item; each item's page is fetched through the host's lane and
its Turbo page carries the whole column (the feed's title and date, the page's article and
picture). Headless Chromium opens one at phone width and a screenshot is saved to
``test-artifacts/browser/full-text-column.png``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import quote

import pytest

from cubes.launcher import run_up
from demo.columns import COLUMNS
from shared.stores import open_stores
from tests.integration.test_browser_frontend import (  # the browser fixture and its helpers
    Cdp,
    _errors,
    _eval,
    _open,
    _shot,
    browser,
)
from tests.integration.test_demo_e2e import _demo_site, _settings
from tests.polling import eventually

__all__ = ["browser"]  # the fixture, re-exported for pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]


async def test_a_summary_only_feed_produces_full_pages(tmp_path: Path, browser: Cdp) -> None:
    settings = _settings(tmp_path)
    front = settings.frontend.public_url
    stores = await open_stores(settings.store.url)
    stop = asyncio.Event()
    task = asyncio.create_task(run_up(settings, demo=True, stop_event=stop))
    try:
        found = []

        async def registered() -> bool:
            site = await _demo_site(stores)
            if site is not None:
                found.append(site)
            return site is not None

        await eventually("the demo feeds to be registered", registered, task)
        (columns,) = [s for s in found[-1].sources if s.key == "columns-rss"]

        async def written() -> bool:
            pages = [await stores.pages.get(url) for url in columns.pages]
            return all(p is not None and p.text for p in pages)

        await eventually("the columns' pages to be written", written, task)
        column = COLUMNS[0]
        stored = await stores.pages.get(columns.pages[0])
        assert stored is not None
        assert stored.source_kind == "rss"  # the feed's page: the feed stays its source
        for paragraph in column.paragraphs:  # the whole column, where the feed had one sentence
            assert paragraph in stored.text

        session = await _open(
            browser, f"{front}/turbo?url={quote(columns.pages[0], safe='')}", width=390, height=900, mobile=True
        )
        shown = await _eval(browser, session, "document.body.innerText")
        assert column.title in shown
        for paragraph in column.paragraphs:
            assert " ".join(paragraph.split()) in " ".join(shown.split())
        assert "Read more" not in shown
        pictures = await _eval(browser, session, "[...document.images].filter(i => i.naturalWidth > 0).length")
        assert pictures >= 1  # the column's picture, from our CDN
        await _shot(browser, session, "full-text-column")
        assert _errors(browser) == []
    finally:
        stop.set()
        await asyncio.wait_for(task, 60)
        await stores.close()
