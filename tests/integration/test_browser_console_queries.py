"""The console's searches of a host in a real browser (the queries that showed its pages).

The frontend alone on the embedded store (the searches counted through the real
store), headless Chromium (``test_browser_frontend.py`` drives it): the webmaster
signs in with their token, opens their verified host and sees the searches that
showed its pages, most frequent first, each a link to its Wordstat page, with the
rarer ones only counted; the other periods are links. Screenshots go to
``test-artifacts/browser/console-queries*.png`` to be looked at.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest
from aiohttp import web

from cubes.frontend.app import create_app
from cubes.wordstat.handler import counted
from shared.clock import ManualClock
from shared.config import Settings
from shared.messages import SearchQueryEvent
from shared.stores import open_stores
from shared.stores.wordstat import Privacy
from tests.integration.test_browser_frontend import (  # the browser fixture and its helpers
    STEP_TIMEOUT,
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
HOST = "shop.example"
#: searches that showed HOST's pages this month
SHOWN = {"купить слона": 40, "слон игрушка": 15, "plush elephant": 10, "слоны в зоопарке": 5, "слон из бумаги": 3}


@dataclass
class Console:
    url: str
    token: str


@pytest.fixture
async def console(tmp_path: Path) -> AsyncIterator[Console]:
    settings = Settings().replace(store={"url": f"sqlite:///{tmp_path}/store.db"})
    stores = await open_stores(settings.store.url)
    tenant = await stores.tenants.create_tenant("the elephant shop")
    await stores.tenants.add_host(tenant.tenant_id, HOST)
    await stores.tenants.set_verified(tenant.tenant_id, HOST)
    token = await stores.tenants.issue_token(tenant.tenant_id)
    events = [
        SearchQueryEvent(
            event_id=uuid.uuid4().hex,
            query=q,
            at=NOW,
            hosts=[HOST, "other.example"],
            origins=[f"https://{HOST}", "https://other.example"],
        )
        for q, n in SHOWN.items()
        for _ in range(n)
    ]
    events += [
        SearchQueryEvent(
            event_id=uuid.uuid4().hex,
            query="чужой слон",
            at=NOW,
            hosts=["other.example"],
            origins=["https://other.example"],
        )
    ] * 8
    await stores.wordstat.count([counted(e) for e in events], now=NOW, privacy=Privacy(threshold=5))
    runner = web.AppRunner(create_app(settings, stores, clock=ManualClock(NOW.timestamp())), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    yield Console(f"http://{host}:{port}", token)
    await runner.cleanup()
    await stores.close()


async def _follow(cdp: Cdp, session: str, js: str) -> None:
    """Run ``js`` (a form's submit, a link's click) and wait for the next page to load."""
    loaded = cdp.expect(lambda e: e.get("sessionId") == session and e["method"] == "Page.loadEventFired")
    await _eval(cdp, session, js)
    await asyncio.wait_for(loaded, STEP_TIMEOUT)


async def test_a_webmaster_sees_the_searches_that_showed_their_pages(console: Console, browser: Cdp) -> None:
    session = await _open(browser, f"{console.url}/console", width=1280, height=900, mobile=False)
    await _follow(
        browser,
        session,
        f"document.querySelector('input[name=token]').value = {console.token!r};"
        "document.querySelector('form[action=\"/console/login\"]').submit()",
    )
    await _follow(browser, session, f"document.querySelector('a[href=\"/console/hosts/{HOST}\"]').click()")
    rows = await _eval(
        browser,
        session,
        "[...document.querySelectorAll('#searches tbody tr')].map(r => [...r.cells].map(c => c.innerText))",
    )
    listed = [(q, n) for q, n in SHOWN.items() if n >= 5]
    assert rows == [[q, str(n)] for q, n in listed]
    assert await _eval(browser, session, "document.querySelector('#searches-hidden')") is None  # nor counted
    note = await _eval(browser, session, "document.querySelector('#searches-privacy').innerText")
    assert note.startswith("Searches that showed the site's pages fewer than about 5 times are not listed nor counted")
    text = await _eval(browser, session, "document.body.innerText")
    assert "слон из бумаги" not in text
    assert "чужой слон" not in text
    links = await _eval(browser, session, "[...document.querySelectorAll('#searches a')].map(a => a.href)")
    assert links[0] == f"{console.url}/wordstat?q={quote('купить слона')}"
    await _eval(browser, session, "document.querySelector('#searches-title').scrollIntoView()")
    await _shot(browser, session, "console-queries")

    phone = await _open(browser, f"{console.url}/console/hosts/{HOST}", width=390, height=844, mobile=True, dark=True)
    assert await _eval(browser, phone, "document.documentElement.scrollWidth") <= 390
    assert len(await _eval(browser, phone, "[...document.querySelectorAll('#searches tbody tr')]")) == len(listed)
    await _shot(browser, phone, "console-queries-phone-dark")

    assert _errors(browser) == []
    assert [u for u in _requests(browser) if not u.startswith((console.url, "about:blank", "data:"))] == []
