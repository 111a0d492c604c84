"""Notifications in a real browser, as a webmaster lives them: import the feeds from OPML, set a webhook and an
e-mail address, a feed breaks -- the webhook receiver (a real aiohttp server) gets a signed event and the SMTP
server (aiosmtpd) a message, the console shows the problem as new -- the feed is fixed, and it shows resolved.

The frontend alone on the embedded store (registrations collected instead of a bus; the partner names resolve
to 127.0.0.1 and are allowlisted), the fetch reports written as the parser writes them (through the problem
store, which adds the events), the notifier run as the api cube's timer runs it, headless Chromium
(``test_browser_frontend.py`` drives it). Screenshots go to ``test-artifacts/browser/console-notify*.png``.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email import message_from_bytes
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiosmtpd.controller import Controller

from shared.clock import ManualClock
from shared.config import Settings
from shared.notify.notifier import Notifier
from shared.notify.signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify
from shared.problems import problem
from shared.runtime.cube import Output
from shared.secretbox import new_key
from shared.stores import FetchReport, Stores, open_stores
from tests.integration.console_browser import follow, serve_console, signed_in, verified_tenant
from tests.integration.test_browser_frontend import Cdp, _errors, _eval, _open, _shot, browser
from tests.partners.fixtures import PartnerResolver

__all__ = ["browser"]  # re-exported: pytest finds the fixture in this module

pytestmark = pytest.mark.browser

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
HOST = "a.partner.test"
FEED = f"https://{HOST}/news.xml"
OPML = (
    '<?xml version="1.0"?><opml version="2.0"><head><title>mine</title></head><body>'
    f'<outline text="news" type="rss" xmlUrl="{FEED}"/></body></opml>'
)
STATES = "[...document.querySelectorAll('#occurrences tbody tr')].map(r => r.innerText.replace(/\\s+/g, ' ').trim())"


@dataclass
class World:
    url: str
    token: str
    tenant: str
    stores: Stores
    settings: Settings
    clock: ManualClock
    hook: str
    got: list[tuple[dict[str, str], bytes]]
    mail: list[Any]
    file: Path
    published: list[Output] = field(default_factory=list)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class _Mailbox:
    def __init__(self, into: list[Any]) -> None:
        self.into = into

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.into.append(message_from_bytes(envelope.content))
        return "250 OK"


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    got: list[tuple[dict[str, str], bytes]] = []

    async def receive(request: web.Request) -> web.Response:
        got.append((dict(request.headers), await request.read()))
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_post("/hook", receive)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    hook = f"http://127.0.0.1:{runner.addresses[0][1]}/hook"
    mail: list[Any] = []
    smtp_port = _free_port()
    controller = Controller(_Mailbox(mail), hostname="127.0.0.1", port=smtp_port)
    controller.start()
    settings = Settings().replace(
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        http={"allowlist": ["127.0.0.1/32"]},
        secrets={"key": new_key()},
        notify={"smtp_host": "127.0.0.1", "smtp_port": smtp_port, "mail_from": "turbocubes@example.com"},
    )
    stores = await open_stores(settings.store.url)
    tenant, token = await verified_tenant(stores, "the partner", HOST)
    clock = ManualClock(NOW.timestamp())
    file = tmp_path / "my-feeds.opml"
    file.write_text(OPML)
    published: list[Output] = []

    async def publish(outputs: Sequence[Output]) -> None:
        published.extend(outputs)

    try:
        async with serve_console(settings, stores, clock=clock, publish=publish, resolver=PartnerResolver()) as url:
            yield World(url, token, tenant, stores, settings, clock, hook, got, mail, file, published)
    finally:
        await stores.close()
        controller.stop()
        await runner.cleanup()


async def _report(w: World, feed_id: str, minutes: int, *, broken: bool) -> None:
    bad = problem("xml.malformed", "line 3, column 9: mismatched tag", feed=feed_id) if broken else None
    await w.stores.problems.add_report(
        FetchReport(
            feed_id,
            NOW + timedelta(minutes=minutes),
            "parse_error" if broken else "parsed",
            200,
            None if broken else 3,
            changed=0 if broken else 3,
            problems=(bad,) if bad else (),
            counts={"xml.malformed": 1} if broken else {},
        )
    )


def _events(w: World, secret: str) -> list[dict[str, Any]]:
    out = []
    for headers, body in w.got:
        assert verify(secret, headers[TIMESTAMP_HEADER], headers[SIGNATURE_HEADER], body, now=w.clock.time())
        out.append(orjson.loads(body))
    return out


async def test_a_broken_feed_is_told_by_webhook_and_mail_then_resolved(world: World, browser: Cdp) -> None:
    w = world
    session = await signed_in(browser, w.url, w.token)
    # the feeds, from OPML
    doc = await browser.send("DOM.getDocument", {}, session)
    node = await browser.send(
        "DOM.querySelector", {"nodeId": doc["root"]["nodeId"], "selector": "input[name=opml]"}, session
    )
    await browser.send("DOM.setFileInputFiles", {"files": [str(w.file)], "nodeId": node["nodeId"]}, session)
    await follow(browser, session, "document.querySelector('#opml-import').submit()")
    assert await _eval(browser, session, "document.querySelector('#import-counts').innerText") == "1 added"
    [feed] = [f for f in await w.stores.feeds.list(w.tenant) if not f.deleted]

    # a webhook and an e-mail address, from the console's page
    await follow(browser, session, "location.href = '/console'")
    await follow(browser, session, "document.querySelector('#notifications-link').click()")
    await follow(
        browser,
        session,
        f"document.querySelector('input[name=webhook_url]').value = {w.hook!r};"
        "document.querySelector('input[name=email]').value = 'webmaster@a.partner.test';"
        "document.querySelector('#notify-form').submit()",
    )
    secret = await _eval(browser, session, "document.querySelector('#secret code').innerText")
    assert secret.startswith("whsec_")
    await _shot(browser, session, "console-notify-settings")

    # the feed breaks: the receiver gets signed events, the SMTP server a message
    notifier = Notifier.from_settings(w.settings, w.stores.notify, w.clock, resolver=PartnerResolver())
    await _report(w, feed.feed_id, 1, broken=True)
    await notifier.sweep()
    told = _events(w, secret)
    assert sorted(e["kind"] for e in told) == ["feed.failing", "problem.new"]
    new = next(e for e in told if e["kind"] == "problem.new")
    assert (new["code"], new["state"], new["subject"]) == ("xml.malformed", "new", FEED)
    assert len(w.mail) == 2
    assert all(m["To"] == "webmaster@a.partner.test" for m in w.mail)
    assert any("xml.malformed" in m["Subject"] for m in w.mail)
    await follow(browser, session, f"location.href = '/console/feeds/{feed.feed_id}'")
    [row] = await _eval(browser, session, STATES)
    assert row.startswith("xml.malformed new")
    await _eval(browser, session, "document.querySelector('#occurrences').scrollIntoView({block: 'center'})")
    await _shot(browser, session, "console-notify-new")

    # fixed: resolved, told again
    await _report(w, feed.feed_id, 6, broken=False)
    await notifier.sweep()
    kinds = [e["kind"] for e in _events(w, secret)]
    assert sorted(kinds[2:]) == ["feed.recovered", "problem.resolved"]
    assert len(w.mail) == 4
    await follow(browser, session, "location.reload()")
    [row] = await _eval(browser, session, STATES)
    assert row.startswith("xml.malformed resolved")
    await _eval(browser, session, "document.querySelector('#occurrences').scrollIntoView({block: 'center'})")
    await _shot(browser, session, "console-notify-resolved")

    # the delivery log says each was delivered
    await follow(browser, session, "location.href = '/console/notifications'")
    results = await _eval(
        browser,
        session,
        "[...document.querySelectorAll('#deliveries tbody tr td:nth-child(3) span')].map(s => s.innerText)",
    )
    assert results == ["delivered"] * 8
    await _shot(browser, session, "console-notify-log")
    phone = await _open(browser, f"{w.url}/console/notifications", width=390, height=844, mobile=True, dark=True)
    assert await _eval(browser, phone, "document.documentElement.scrollWidth") <= 390
    await _shot(browser, phone, "console-notify-phone-dark")
    await notifier.close()
    assert _errors(browser) == []
