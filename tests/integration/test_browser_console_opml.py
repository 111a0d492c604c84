"""OPML in the console, in a real browser: a webmaster with several feeds imports them from a file at once.

The frontend alone on the embedded store (registrations collected instead of a bus; the
partner names resolve to 127.0.0.1 and are allowlisted, as in the console's unit tests),
headless Chromium (``test_browser_frontend.py`` drives it): sign in, choose the file in the
home page's import form, see each line's result (added, refused and why), import it again and
see every line unchanged, and find the feeds on the home page. A phone's 390 px hold the result.
Screenshots go to ``test-artifacts/browser/console-opml*.png``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from shared.clock import ManualClock
from shared.config import Settings
from shared.runtime.cube import Output
from shared.stores import open_stores
from tests.integration.console_browser import follow, serve_console, signed_in, verified_tenant
from tests.integration.test_browser_frontend import (  # the browser fixture and its helpers
    Cdp,
    _errors,
    _eval,
    _open,
    _shot,
    browser,
)
from tests.partners.fixtures import PartnerResolver

__all__ = ["browser"]  # re-exported: pytest finds the fixture in this module

pytestmark = pytest.mark.browser

HOST = "a.partner.test"
FEEDS = ["news.xml", "sport.xml", "blog/atom.xml", "shop.yml"]
OPML = (
    '<?xml version="1.0"?><opml version="2.0" xmlns:tc="https://turbocubes.dev/ns/opml/1"><head><title>mine</title>'
    "</head><body>"
    + "".join(f'<outline text="{f}" type="rss" xmlUrl="https://{HOST}/{f}"/>' for f in FEEDS)
    + '<outline text="not mine" type="rss" xmlUrl="https://b.partner.test/feed.xml"/></body></opml>'
)


@dataclass
class Console:
    url: str
    token: str
    file: Path


@pytest.fixture
async def console(tmp_path: Path) -> AsyncIterator[Console]:
    settings = Settings().replace(store={"url": f"sqlite:///{tmp_path}/store.db"}, http={"allowlist": ["127.0.0.1/32"]})
    stores = await open_stores(settings.store.url)
    _, token = await verified_tenant(stores, "the partner", HOST)
    published: list[Output] = []

    async def publish(outputs: Sequence[Output]) -> None:
        published.extend(outputs)

    file = tmp_path / "my-feeds.opml"
    file.write_text(OPML)
    async with serve_console(settings, stores, clock=ManualClock(), publish=publish, resolver=PartnerResolver()) as url:
        yield Console(url, token, file)
    await stores.close()


async def _choose(cdp: Cdp, session: str, file: Path) -> None:
    doc = await cdp.send("DOM.getDocument", {}, session)
    node = await cdp.send(
        "DOM.querySelector", {"nodeId": doc["root"]["nodeId"], "selector": "input[name=opml]"}, session
    )
    await cdp.send("DOM.setFileInputFiles", {"files": [str(file)], "nodeId": node["nodeId"]}, session)


_ROWS = "[...document.querySelectorAll('#import tbody tr')].map(r => r.cells[2].querySelector('span').innerText)"


async def test_a_webmaster_imports_their_feeds_from_a_file(console: Console, browser: Cdp) -> None:
    session = await signed_in(browser, console.url, console.token)
    for _ in range(2):
        await _choose(browser, session, console.file)
        await follow(browser, session, "document.querySelector('#opml-import').submit()")
        if _ == 0:
            assert await _eval(browser, session, "document.querySelector('#import-counts').innerText") == (
                "4 added · 1 refused"
            )
            assert await _eval(browser, session, _ROWS) == ["added"] * 4 + ["refused"]
            why = await _eval(browser, session, "document.querySelector('#import tbody tr:last-child').innerText")
            assert "b.partner.test" in why
            await _shot(browser, session, "console-opml")
            await follow(browser, session, "location.href = '/console'")
    assert await _eval(browser, session, _ROWS) == ["unchanged"] * 4 + ["refused"]
    await follow(browser, session, "location.href = '/console'")
    listed = await _eval(browser, session, "[...document.querySelectorAll('#feeds tbody tr a')].map(a => a.innerText)")
    assert sorted(listed) == sorted(f"https://{HOST}/{f}" for f in FEEDS)

    phone = await _open(browser, f"{console.url}/console", width=390, height=844, mobile=True, dark=True)
    await _choose(browser, phone, console.file)
    await follow(browser, phone, "document.querySelector('#opml-import').submit()")
    assert await _eval(browser, phone, "document.documentElement.scrollWidth") <= 390
    await _shot(browser, phone, "console-opml-phone-dark")
    assert _errors(browser) == []
