"""A home page registered as a feed, in a real browser: the console names the feeds it links and offers them.

The frontend alone on the embedded store (the fetch report is the one the parser makes of the
page), headless Chromium (``test_browser_frontend.py`` drives it). The webmaster opens the feed
and sees ``feed.not_a_feed`` with each feed the page names, each with *Add this feed* and *Check
it*; a phone's 390 px hold them. Screenshots go to ``test-artifacts/browser/console-not-a-feed*.png``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cubes.parser.feed import parse_feed
from cubes.parser.problems import to_problems
from shared.clock import ManualClock
from shared.config import Settings
from shared.problems import counts_by_code
from shared.stores import Feed, FetchReport, open_stores
from tests.integration.console_browser import Console, follow, serve_console, signed_in, verified_tenant
from tests.integration.test_browser_frontend import (  # the browser fixture and its helpers
    Cdp,
    _errors,
    _eval,
    _open,
    _shot,
    browser,
)

__all__ = ["browser"]  # re-exported: pytest finds the fixture in this module

pytestmark = pytest.mark.browser

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
HOST = "shop.example"
HOME = (
    b"<!DOCTYPE html><html><head><title>The elephant shop</title>"
    b'<link rel="alternate" type="application/rss+xml" title="News" href="/news.xml">'
    b'<link rel="alternate" type="application/atom+xml" title="Blog" href="/blog/atom.xml"></head>'
    b"<body><p>Elephants<br>of every size</body></html>"
)


@pytest.fixture
async def console(tmp_path: Path) -> AsyncIterator[Console]:
    settings = Settings().replace(store={"url": f"sqlite:///{tmp_path}/store.db"})
    stores = await open_stores(settings.store.url)
    tenant_id, token = await verified_tenant(stores, "the elephant shop", HOST)
    await stores.feeds.upsert_feed(Feed("home", f"https://{HOST}/", HOST, "auto", tenant_id=tenant_id))
    problems = tuple(to_problems(parse_feed(HOME, url=f"https://{HOST}/").errors, feed="home"))
    await stores.problems.add_report(
        FetchReport("home", NOW, "parse_error", 200, 0, problems=problems, counts=counts_by_code(problems))
    )
    async with serve_console(settings, stores, clock=ManualClock(NOW.timestamp())) as url:
        yield Console(url, token)
    await stores.close()


_OFFERS = "[...document.querySelectorAll('.offers li')].map(li => li.innerText.replace(/\\s+/g, ' ').trim())"


async def test_the_feeds_a_home_page_names_are_offered(console: Console, browser: Cdp) -> None:
    session = await signed_in(browser, console.url, console.token)
    await follow(browser, session, "document.querySelector('a[href=\"/console/feeds/home\"]').click()")
    offers = await _eval(browser, session, _OFFERS)
    assert offers == [
        f"https://{HOST}/news.xml Add this feed Check it",
        f"https://{HOST}/blog/atom.xml Add this feed Check it",
    ]
    await _eval(browser, session, "document.querySelector('.offers').scrollIntoView({block: 'center'})")
    await _shot(browser, session, "console-not-a-feed")

    phone = await _open(browser, f"{console.url}/console/feeds/home", width=390, height=844, mobile=True, dark=True)
    assert await _eval(browser, phone, "document.documentElement.scrollWidth") <= 390
    assert len(await _eval(browser, phone, _OFFERS)) == 2
    await _eval(browser, phone, "document.querySelector('.offers').scrollIntoView({block: 'center'})")
    await _shot(browser, phone, "console-not-a-feed-phone-dark")
    assert _errors(browser) == []
