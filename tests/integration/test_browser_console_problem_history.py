"""A feed's problems over time in a real browser: a broken image shows as new, then, once fixed, as resolved.

The frontend alone on the embedded store (the fetch reports written as the parser writes them,
through the problem store that keeps the history), headless Chromium (``test_browser_frontend.py``
drives it). Screenshots go to ``test-artifacts/browser/console-problem-history*.png``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from shared.clock import ManualClock
from shared.config import Settings
from shared.problems import problem
from shared.stores import Feed, FetchReport, Stores, open_stores
from tests.integration.console_browser import Console, follow, serve_console, signed_in, verified_tenant
from tests.integration.test_browser_frontend import Cdp, _errors, _eval, _open, _shot, browser

__all__ = ["browser"]  # re-exported: pytest finds the fixture in this module

pytestmark = pytest.mark.browser

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
HOST = "shop.example"
STATES = "[...document.querySelectorAll('#occurrences tbody tr')].map(r => r.innerText.replace(/\\s+/g, ' ').trim())"


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    yield s
    await s.close()


@pytest.fixture
async def console(stores: Stores, tmp_path: Path) -> AsyncIterator[Console]:
    tenant_id, token = await verified_tenant(stores, "the elephant shop", HOST)
    await stores.feeds.upsert_feed(Feed("news", f"https://{HOST}/news.xml", HOST, "rss", tenant_id=tenant_id))
    settings = Settings().replace(store={"url": f"sqlite:///{tmp_path}/store.db"})
    async with serve_console(settings, stores, clock=ManualClock(NOW.timestamp())) as url:
        yield Console(url, token)


async def _fetched(stores: Stores, minutes: int, broken: bool) -> None:
    lost = problem("image.not_found", f"image https://{HOST}/elephant.jpg answered 404", feed="news")
    kept = (lost,) if broken else ()
    await stores.problems.add_report(
        FetchReport(
            "news",
            NOW - timedelta(minutes=minutes),
            "parsed",
            200,
            1,
            problems=kept,
            counts={p.code: 1 for p in kept},
        )
    )


async def test_a_problem_is_new_then_resolved(console: Console, stores: Stores, browser: Cdp) -> None:
    await _fetched(stores, 30, broken=True)
    session = await signed_in(browser, console.url, console.token)
    await follow(browser, session, "location.href = '/console/feeds/news'")
    [row] = await _eval(browser, session, STATES)
    assert row.startswith("image.not_found new")
    await _eval(browser, session, "document.querySelector('#occurrences').scrollIntoView({block: 'center'})")
    await _shot(browser, session, "console-problem-history-new")

    await _fetched(stores, 20, broken=True)
    await _fetched(stores, 10, broken=False)  # the image is back: the next fetch no longer finds it
    await follow(browser, session, "location.reload()")
    [row] = await _eval(browser, session, STATES)
    assert row.startswith("image.not_found resolved")
    assert row.endswith(" 2")  # found by two fetches
    await _eval(browser, session, "document.querySelector('#occurrences').scrollIntoView({block: 'center'})")
    await _shot(browser, session, "console-problem-history-resolved")

    phone = await _open(browser, f"{console.url}/console/feeds/news", width=390, height=844, mobile=True, dark=True)
    assert await _eval(browser, phone, "document.documentElement.scrollWidth") <= 390
    await _eval(browser, phone, "document.querySelector('#occurrences').scrollIntoView({block: 'center'})")
    await _shot(browser, phone, "console-problem-history-phone-dark")
    assert _errors(browser) == []
