"""Notifications in a real browser, through the real pipeline: a webmaster imports the feeds from OPML, sets a
webhook and an e-mail address, the partner's feed breaks -- the webhook receiver gets a signed event and the
SMTP server a message, the console shows the problem as new -- the feed is fixed, and it shows resolved.

Nothing is written into a store by the test but the verified tenant it signs in as. The cubes run in an OS
process of their own (``cubeproc.CubeProcess``: frontend with the console, api with its notifier timer,
scheduler, crawler, parser, media, cdn, delay, kvwriter) on the engines ``ops/`` starts: Apache Kafka (a fresh
topic prefix), PostgreSQL (a fresh schema) and SeaweedFS S3 (a fresh bucket, the CDN of the feed's picture).
The partner is a real aiohttp server on 127.0.0.1 (``tests/partners``; ``*.partner.test`` resolves to it in
the cube process); the webhook receiver is another, the SMTP server aiosmtpd; the browser is headless
Chromium (``test_browser_frontend.py`` drives it).

The feed changes at each build (its ``lastBuildDate``), so the scheduler polls it at its minimum interval and
finds the break within seconds. The broken answer says it stays fresh for an hour (``Cache-Control``), as a
cached error page does: no scheduled fetch comes before the webmaster's own *Fetch now* (check again) once
the feed is fixed, so the occurrence the console shows is the one fetch's (``new``), and the fix is found by
the check the webmaster asked for. Screenshots: ``test-artifacts/browser/console-notify*.png``.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson
import pytest
from aiohttp import web
from aiosmtpd.controller import Controller

from shared.blobs import open_blobs
from shared.notify.signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify
from shared.secretbox import new_key
from shared.stores import DeliveryStatus, Stores, open_stores
from tests.integration.console_browser import follow, signed_in, verified_tenant
from tests.integration.cubeproc import CubeProcess, write_config
from tests.integration.test_browser_frontend import Cdp, _errors, _eval, _open, _shot, browser
from tests.partners.server import PartnerServer

__all__ = ["browser"]  # re-exported: pytest finds the fixture in this module

pytestmark = [
    pytest.mark.browser,
    pytest.mark.kafka,
    pytest.mark.postgres,
    pytest.mark.s3,
    pytest.mark.slow,
    pytest.mark.timeout(240),
]

HOST = "a.partner.test"
PATH = "/news.xml"
CUBES = ("frontend", "api", "scheduler", "crawler", "parser", "media", "cdn", "delay", "kvwriter")
#: the scheduler's bounds: a changing feed is polled every MIN_S; an answer fresh for an hour waits MAX_S
MIN_S, MAX_S = 2.0, 600.0
#: the longest any one state may take to show: Kafka's first group joins and topic creation, under load
WAIT_S = 60.0
STATES = "[...document.querySelectorAll('#occurrences tbody tr')].map(r => r.innerText.replace(/\\s+/g, ' ').trim())"
HISTORY = "[...document.querySelectorAll('#history tbody tr')].map(r => r.innerText.replace(/\\s+/g, ' ').trim())"
#: the feed cut off while it was being written, before its first item
BROKEN = b'<?xml version="1.0"?>\n<rss version="2.0">\n<channel><title>Partner news</title><descr'


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _feed(base: str, build: int) -> bytes:
    """The partner's healthy feed: two full posts, one with a picture; the channel's build date moves."""
    posts = "".join(
        f"<item><title>Post {n}</title><link>{base}/page/{n}</link><guid>{base}/page/{n}</guid>"
        f"<pubDate>Wed, 02 Dec 2026 0{n}:00:00 GMT</pubDate><description>Post {n} in short.</description>"
        f"<content:encoded><![CDATA[<p>{f'The whole of post {n}, as the site prints it. ' * 12}</p>"
        f"{picture}]]></content:encoded></item>"
        for n, picture in ((1, f'<img src="{base}/img/lighthouse.jpg" alt="A lighthouse">'), (2, ""))
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0" '
        'xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>Partner news</title>'
        f"<link>{base}/</link><description>News of the partner</description>"
        f"<lastBuildDate>Wed, 02 Dec 2026 10:{build // 60 % 60:02d}:{build % 60:02d} GMT</lastBuildDate>"
        f"{posts}</channel></rss>"
    ).encode()


class _Mailbox:
    def __init__(self, into: list[Message]) -> None:
        self.into = into

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.into.append(message_from_bytes(envelope.content))
        return "250 OK"


@dataclass
class World:
    front: str
    token: str
    tenant: str
    stores: Stores
    partner: PartnerServer
    proc: CubeProcess
    hook: str
    opml: Path
    got: list[tuple[dict[str, str], bytes]]
    mail: list[Message]
    feed: dict[str, Any] = field(default_factory=lambda: {"broken": False, "builds": 0})

    @property
    def feed_url(self) -> str:
        return self.partner.url(HOST, PATH)

    async def until(self, what: str, check: Callable[[], Awaitable[bool]], within: float = WAIT_S) -> None:
        """Poll ``check`` until true; fail after ``within`` or at once if the cube process ended."""
        deadline = time.monotonic() + within
        while not await check():
            assert self.proc.proc is not None
            if self.proc.proc.returncode is not None:
                pytest.fail(f"the cubes exited {self.proc.proc.returncode} before {what}:\n{self.proc.tail()}")
            if time.monotonic() > deadline:
                told = [orjson.loads(body) for _, body in self.got]
                mails = [m["Subject"] for m in self.mail]
                pytest.fail(
                    f"timed out after {within:.0f} s waiting for {what} (told {told}, mailed {mails}):\n"
                    + self.proc.tail()
                )
            await asyncio.sleep(0.2)  # a poll interval, not a synchronization

    def events(self, secret: str) -> list[dict[str, Any]]:
        """Every webhook call so far, each checked against its signature (and its timestamp: no replay)."""
        out = []
        for headers, body in self.got:
            assert verify(secret, headers[TIMESTAMP_HEADER], headers[SIGNATURE_HEADER], body, now=time.time())
            assert not verify(secret + "x", headers[TIMESTAMP_HEADER], headers[SIGNATURE_HEADER], body, now=time.time())
            out.append(orjson.loads(body))
        return out


@pytest.fixture
async def world(tmp_path: Path, kafka_url: str, postgres_url: str, s3_url: str, uid: str) -> AsyncIterator[World]:
    got: list[tuple[dict[str, str], bytes]] = []

    async def receive(request: web.Request) -> web.Response:
        got.append((dict(request.headers), await request.read()))
        return web.Response(text="ok")

    hooks = web.Application()
    hooks.router.add_post("/hook", receive)
    receiver = web.AppRunner(hooks, access_log=None)
    await receiver.setup()
    await web.TCPSite(receiver, "127.0.0.1", 0).start()
    hook = f"http://127.0.0.1:{receiver.addresses[0][1]}/hook"
    mail: list[Message] = []
    smtp_port = _free_port()
    smtp = Controller(_Mailbox(mail), hostname="127.0.0.1", port=smtp_port)
    smtp.start()
    partner = await PartnerServer().start()

    endpoint = parse_qs(urlsplit(s3_url).query)["endpoint"][0]
    cdn_url = f"s3://notify-{uid}?endpoint={endpoint}"
    store_url = f"{postgres_url}{'&' if '?' in postgres_url else '?'}schema=notify_{uid}"
    front_port = _free_port()
    front = f"http://127.0.0.1:{front_port}"
    config = write_config(
        tmp_path / "turbocubes.toml",
        {
            "bus": {"url": f"{kafka_url}{'&' if '?' in kafka_url else '?'}prefix=notify{uid}."},
            "store": {"url": store_url, "pool_size": 4},
            "cdn": {"url": cdn_url, "public_base_url": f"{endpoint}/notify-{uid}"},
            "blobs": {"url": f"file://{tmp_path}/blobs"},
            "http": {"allowlist": ["127.0.0.1/32"]},
            "secrets": {"key": new_key()},
            "runtime": {"metrics_port": 0, "shutdown_timeout_s": 5.0},
            "api": {"port": 0},
            "frontend": {"port": front_port, "public_url": front},
            "scheduler": {
                "min_interval_s": MIN_S,
                "max_interval_s": MAX_S,
                "jitter": 0.0,
                "tick_s": 0.5,
                "host_gap_s": 0.0,
                "websub_port": 0,
            },
            "notify": {
                "sweep_s": 0.5,
                "smtp_host": "127.0.0.1",
                "smtp_port": smtp_port,
                "mail_from": "turbocubes@example.com",
            },
        },
    )
    cdn = await open_blobs(cdn_url, public_base_url=f"{endpoint}/notify-{uid}")
    stores = await open_stores(store_url)
    origin = partner.url(HOST, "").rstrip("/")
    tenant, token = await verified_tenant(stores, "the partner", HOST, origin=origin)
    proc = CubeProcess(config, *CUBES, log=tmp_path / "cubes.log")
    opml = tmp_path / "my-feeds.opml"
    w = World(front, token, tenant, stores, partner, proc, hook, opml, got, mail)

    async def news(request: web.Request) -> web.Response:
        if w.feed["broken"]:
            # a half-written file, kept by the partner's cache for an hour
            return web.Response(
                body=BROKEN, content_type="application/rss+xml", headers={"Cache-Control": "max-age=3600"}
            )
        w.feed["builds"] += 1
        return web.Response(body=_feed(origin, w.feed["builds"]), content_type="application/rss+xml")

    partner.set_handler(HOST, PATH, news)
    opml.write_text(
        '<?xml version="1.0"?><opml version="2.0"><head><title>mine</title></head><body>'
        f'<outline text="news" type="rss" xmlUrl="{w.feed_url}"/></body></opml>'
    )
    try:
        await proc.start()
        await proc.ready()
        yield w
    finally:
        rc = await proc.stop()
        await stores.close()
        destroy = getattr(cdn, "destroy", None)
        if destroy is not None:
            await destroy()
        await cdn.close()
        await partner.stop()
        smtp.stop()
        await receiver.cleanup()
    assert rc == 0, proc.tail()


async def test_a_feed_that_breaks_is_told_by_webhook_and_mail_then_resolved(world: World, browser: Cdp) -> None:
    w = world
    started = time.monotonic()
    session = await signed_in(browser, w.front, w.token)

    # the feeds, from OPML
    doc = await browser.send("DOM.getDocument", {}, session)
    node = await browser.send(
        "DOM.querySelector", {"nodeId": doc["root"]["nodeId"], "selector": "input[name=opml]"}, session
    )
    await browser.send("DOM.setFileInputFiles", {"files": [str(w.opml)], "nodeId": node["nodeId"]}, session)
    await follow(browser, session, "document.querySelector('#opml-import').submit()")
    imported = await _eval(browser, session, "document.querySelector('#import').innerText")
    assert await _eval(browser, session, "document.querySelector('#import-counts').innerText") == "1 added", imported
    feed_href = await _eval(browser, session, "document.querySelector('#import a').getAttribute('href')")
    assert feed_href.startswith("/console/feeds/")

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

    # the pipeline publishes the feed's two posts, the picture through the S3 CDN
    posts = [w.partner.url(HOST, f"/page/{n}") for n in (1, 2)]

    async def published() -> bool:
        return all([await w.stores.pages.get(u) is not None for u in posts])

    await w.until("the feed's two posts on Turbo", published)
    page = await w.stores.pages.get(posts[0])
    assert page is not None
    assert "/notify-" in page.html, "the post's picture is not in the S3 CDN"
    await follow(browser, session, f"location.href = {feed_href!r}")
    assert await _eval(browser, session, "document.querySelector('#live').innerText") == "2"
    assert not w.got, "told of something before the feed broke"

    # the feed breaks: the receiver gets signed events, the SMTP server a message
    w.feed["broken"] = True

    def told(kinds: set[str], mails: int) -> Callable[[], Awaitable[bool]]:
        async def check() -> bool:
            return kinds <= {e["kind"] for e in w.events(secret)} and len(w.mail) >= mails

        return check

    await w.until("the webhook and the mail of the broken feed", told({"problem.new", "feed.failing"}, 2))
    events = w.events(secret)
    assert sorted(e["kind"] for e in events) == ["feed.failing", "problem.new"]
    new = next(e for e in events if e["kind"] == "problem.new")
    assert (new["code"], new["state"], new["subject"]) == ("xml.malformed", "new", w.feed_url)
    assert len(w.mail) == 2
    assert all(m["To"] == "webmaster@a.partner.test" for m in w.mail)
    assert any("xml.malformed" in m["Subject"] for m in w.mail)

    await follow(browser, session, "location.reload()")
    [row] = await _eval(browser, session, STATES)
    assert row.startswith("xml.malformed new"), row
    assert "not well-formed" in await _eval(browser, session, "document.querySelector('#problems').innerText")
    await _eval(browser, session, "document.querySelector('#occurrences').scrollIntoView({block: 'center'})")
    await _shot(browser, session, "console-notify-new")

    # the partner fixes it, the webmaster checks again (Fetch now): resolved, and told so
    w.feed["broken"] = False
    await follow(browser, session, "document.querySelector('form[action$=\"/fetch\"]').requestSubmit()")
    await w.until("the webhook and the mail of the fix", told({"problem.resolved", "feed.recovered"}, 4))
    kinds = [e["kind"] for e in w.events(secret)]
    assert sorted(kinds[2:]) == ["feed.recovered", "problem.resolved"]
    assert len(w.mail) == 4
    assert any("resolved" in m["Subject"] or "recovered" in m["Subject"] for m in w.mail[2:])
    await follow(browser, session, "location.reload()")
    [row] = await _eval(browser, session, STATES)
    assert row.startswith("xml.malformed resolved"), row
    # newest first: the fetch after the broken one is the webmaster's (the next scheduled one was an hour away)
    history = await _eval(browser, session, HISTORY)
    broken = next(i for i, r in enumerate(history) if "Cannot be read" in r)
    assert broken > 0, history
    assert "you pressed Fetch now" in history[broken - 1], history
    assert " Read " in history[broken - 1], history
    await _eval(browser, session, "document.querySelector('#occurrences').scrollIntoView({block: 'center'})")
    await _shot(browser, session, "console-notify-resolved")

    # the delivery log says each was delivered (the notifier records it once the endpoint has answered)
    async def recorded() -> bool:
        log = await w.stores.notify.deliveries(w.tenant)
        return len(log) == 8 and all(d.status is DeliveryStatus.delivered for d in log)

    await w.until("the notifier to record its eight deliveries", recorded)
    await follow(browser, session, "location.href = '/console/notifications'")
    results = await _eval(
        browser,
        session,
        "[...document.querySelectorAll('#deliveries tbody tr td:nth-child(3) span')].map(s => s.innerText)",
    )
    assert results == ["delivered"] * 8
    await _shot(browser, session, "console-notify-log")
    phone = await _open(browser, f"{w.front}/console/notifications", width=390, height=844, mobile=True, dark=True)
    assert await _eval(browser, phone, "document.documentElement.scrollWidth") <= 390
    await _shot(browser, phone, "console-notify-phone-dark")
    assert _errors(browser) == []
    print(f"\nthe walk took {time.monotonic() - started:.1f} s after the cubes were up")
