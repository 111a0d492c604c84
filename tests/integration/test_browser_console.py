"""A webmaster's whole path in a real browser (sign up to a page and its problems).

Every cube runs in this process (``run_up`` on the embedded engines), with a partner site of the
test's own on 127.0.0.1 (a home page, a feed, images; one image answers 404) and a DNS server of
its own (no real DNS). Headless Chromium, over the DevTools protocol (the helpers of
``test_browser_frontend``):

1. the webmaster signs up through the API (``POST /api/v1/signup``): a tenant and a token;
2. signs in to the console with it, claims the site by its URL (its own port), publishes the
   meta tag and verifies the host;
3. adds the feed, and sees its pages appear in the console and opens one;
4. sees the broken image reported: on the feed (``image.not_found`` with its hint, and the page
   it holds back: ``page.incomplete``), and in the host's failing count;
5. fixes the feed (the image's URL) and presses "fetch now": the fetch goes through the host's
   lane, the feed's page shows that very fetch, and the page no longer lost anything.

Screenshots go to ``test-artifacts/browser/console-*.png``.
"""

from __future__ import annotations

import asyncio
import io
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from PIL import Image

from cubes.launcher import run_up
from shared.config import Settings
from tests.integration.test_browser_frontend import (  # the browser fixture and its helpers
    ARTIFACTS,
    STEP_TIMEOUT,
    Cdp,
    _errors,
    _eval,
    _open,
    _shot,
    browser,
)
from tests.partners.dns import DnsServer

__all__ = ["browser"]

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: how long the pipeline may take for one step on a loaded 2-core machine
PIPELINE_S = 90.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _png(color: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (640, 360), color).save(out, "PNG")
    return out.getvalue()


@dataclass
class Site:
    """The webmaster's own site: what it serves can be changed while the test runs."""

    port: int = 0
    meta: str = ""
    egret_image: str = "/img/egret-missing.png"
    hits: list[str] = field(default_factory=list)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def feed(self) -> bytes:
        o = self.origin
        return (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel>'
            "<title>Lake birds</title>"
            f"<link>{o}/</link>"
            f"<item><title>Herons come back to the lake</title><link>{o}/herons</link>"
            f'<content:encoded><![CDATA[<p>The herons are back.</p><img src="{o}/img/heron.png" alt="A heron">'
            "<p>Twelve nests this spring.</p>]]></content:encoded></item>"
            f"<item><title>Egrets at dawn</title><link>{o}/egrets</link>"
            f'<content:encoded><![CDATA[<p>Egrets fish at dawn.</p><img src="{o}{self.egret_image}" alt="An egret">'
            "<p>They leave at noon.</p>]]></content:encoded></item>"
            "</channel></rss>"
        ).encode()

    def app(self) -> web.Application:
        images = {"/img/heron.png": _png((90, 120, 160)), "/img/egret.png": _png((230, 230, 220))}

        async def handle(request: web.Request) -> web.StreamResponse:
            self.hits.append(request.path)
            if request.path == "/":
                return web.Response(
                    text=f"<html><head>{self.meta}</head><body>Lake birds</body></html>", content_type="text/html"
                )
            if request.path == "/feed.xml":
                return web.Response(body=self.feed(), content_type="application/rss+xml")
            if request.path in images:
                return web.Response(body=images[request.path], content_type="image/png")
            return web.Response(status=404, text="not here")

        app = web.Application()
        app.router.add_get("/{tail:.*}", handle)
        return app


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    s = Site()
    runner = web.AppRunner(s.app(), access_log=None)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    s.port = runner.addresses[0][1]
    yield s
    await runner.cleanup()


@pytest.fixture
def dns() -> Iterator[DnsServer]:
    server = DnsServer()
    server.start()
    yield server
    server.stop()


async def _submit(cdp: Cdp, session: str, js: str) -> None:
    """Run ``js`` (which submits a form or follows a link) and wait for the next page to load."""
    loaded = cdp.expect(lambda e: e.get("sessionId") == session and e["method"] == "Page.loadEventFired")
    await _eval(cdp, session, js)
    await asyncio.wait_for(loaded, STEP_TIMEOUT)


async def _reload_until(cdp: Cdp, session: str, what: str, js: str, task: asyncio.Task[int]) -> None:
    """Reload the page until ``js`` is true in it (the webmaster pressing F5), under ``PIPELINE_S``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PIPELINE_S
    while not await _eval(cdp, session, js):
        if task.done():
            pytest.fail(f"run_up ended before {what}")
        if loop.time() > deadline:
            text = await _eval(cdp, session, "document.body.textContent")
            pytest.fail(f"timed out waiting for {what}; the page says:\n{text[:3000]}")
        await asyncio.sleep(0.5)  # a person's reload interval, not a synchronization
        await _submit(cdp, session, "location.reload()")


def _form(selector: str, **values: str) -> str:
    sets = "".join(f"f.querySelector('[name={k}]').value = {v!r};" for k, v in values.items())
    return f"(() => {{ const f = document.querySelector({selector!r}); {sets} f.requestSubmit(); }})()"


async def test_a_webmaster_signs_up_verifies_adds_a_feed_and_fixes_a_broken_image(
    tmp_path: Path, browser: Cdp, site: Site, dns: DnsServer
) -> None:
    front_port, api_port = _free_port(), _free_port()
    front, api = f"http://127.0.0.1:{front_port}", f"http://127.0.0.1:{api_port}"
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        cdn={"url": f"file://{tmp_path}/cdn"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        runtime={"metrics_port": 0, "shutdown_timeout_s": 5.0},
        http={"allowlist": ["127.0.0.1/32"]},
        api={"port": api_port, "public_url": api, "dns_servers": [dns.address]},
        frontend={"port": front_port, "public_url": front},
    )
    stop = asyncio.Event()
    task = asyncio.create_task(run_up(settings, stop_event=stop))
    try:
        async with aiohttp.ClientSession() as http:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + PIPELINE_S
            while True:  # the API and the frontend listen once their cubes have started
                try:
                    async with http.get(f"{api}/docs") as r1, http.get(f"{front}/healthz") as r2:
                        if r1.status == r2.status == 200:
                            break
                except aiohttp.ClientConnectionError:
                    pass
                assert not task.done(), "run_up ended early"
                assert loop.time() < deadline, "the API and the frontend did not start"
                await asyncio.sleep(0.2)  # polling a port that is not open yet
            # 1. sign up through the API: the token is shown this once
            async with http.post(f"{api}/api/v1/signup", json={"name": "Lake birds"}) as r:
                assert r.status == 201, await r.text()
                token = (await r.json())["token"]

        # 2. sign in, claim the site by its URL, verify it by the meta tag on its own port
        session = await _open(browser, f"{front}/console", width=1280, height=900, mobile=False)
        await _shot(browser, session, "console-sign-in")
        await _submit(browser, session, _form("form[action='/console/login']", token=token))
        assert "My console" in await _eval(browser, session, "document.body.textContent")
        await _submit(browser, session, _form("form[action='/console/hosts']", url=f"{site.origin}/"))
        text = await _eval(browser, session, "document.body.textContent")
        assert "not verified yet" in text
        secret = text.split("Publish your verification token ", 1)[1].split()[0]
        assert f"{site.origin}/.well-known/turbocubes-verify.txt" in text  # the host's own port
        # a claim without a right shows the claim and nothing else (shared/webmaster/rights.py)
        assert await _eval(
            browser, session, "!document.querySelector('#lane') && !!document.querySelector('#claim-only')"
        )
        await _shot(browser, session, "console-host-claimed")
        site.meta = f'<meta name="turbocubes-verification" content="{secret}">'
        await _submit(browser, session, "document.querySelector('form[action$=\"/verify\"]').requestSubmit()")
        text = await _eval(browser, session, "document.body.textContent")
        assert "Verified by meta." in text, text[:2000]
        await _shot(browser, session, "console-host-verified")

        # 3. add the feed; its pages appear (the home page tells the right granted, shared/webmaster/rights.py)
        await _submit(browser, session, "location.href = '/console'")
        notices = await _eval(browser, session, "document.querySelector('#notices').textContent")
        assert f"Your right on {site.origin} is in force" in notices, notices
        await _shot(browser, session, "console-home-notice")
        await _submit(browser, session, _form("form[action='/console/feeds']", url=f"{site.origin}/feed.xml"))
        feed_path = await _eval(browser, session, "location.pathname")
        assert feed_path.startswith("/console/feeds/")
        # the page whose image is broken is held back, not published without it (shared/pages/completeness.py)
        await _reload_until(
            browser,
            session,
            "one page published, the other listed",
            "document.querySelectorAll('#pages .page').length === 2"
            " && document.querySelectorAll('#pages .page a').length === 1",
            task,
        )
        # 4. the broken image is reported, with its fix, and the page it holds back
        await _reload_until(
            browser, session, "the broken image reported", "!!document.querySelector('#page-problems .problem')", task
        )
        problems = await _eval(browser, session, "document.querySelector('#page-problems').textContent")
        assert "Held back" in problems
        listed = await _eval(browser, session, "document.querySelector('#pages').textContent")
        assert "Held back" in listed
        assert "Not published: it lost images or tables" in listed
        assert "page.incomplete" in problems
        assert "image.not_found" in problems
        assert f"{site.origin}/img/egret-missing.png" in problems
        assert "How to fix:" in problems
        await _shot(browser, session, "console-feed-broken-image")
        host_page = f"{front}/console/hosts/127.0.0.1"
        await _submit(browser, session, f"location.href = {host_page!r}")
        assert await _eval(browser, session, "document.querySelector('#failing').textContent") == "1"
        assert "image.not_found" in await _eval(browser, session, "document.querySelector('#rollup').textContent")
        await _shot(browser, session, "console-host-failing")

        # a published page opens
        await _submit(browser, session, f"location.href = {front + feed_path!r}")
        title = await _eval(browser, session, "document.querySelector('#pages .page a').textContent")
        await _submit(browser, session, "document.querySelector('#pages .page a').click()")
        assert await _eval(browser, session, "location.pathname") == "/turbo"
        assert title in await _eval(browser, session, "document.title")
        await _shot(browser, session, "console-turbo-page")

        # 5. the fix, then "fetch now": that fetch's outcome, and the page whole again
        site.egret_image = "/img/egret.png"
        await _submit(browser, session, f"location.href = {front + feed_path!r}")
        fetches_before = site.hits.count("/feed.xml")
        await _submit(browser, session, "document.querySelector('form[action$=\"/fetch\"]').requestSubmit()")
        assert "fetch=" in await _eval(browser, session, "location.search")
        await _reload_until(
            browser,
            session,
            "the ordered fetch to be reported and the page rebuilt with its image",
            "document.body.textContent.includes('the last fetch below is the one you ordered')"
            " && !document.querySelector('#page-problems .problem')"
            " && document.querySelectorAll('#pages .page a').length === 2",
            task,
        )
        assert site.hits.count("/feed.xml") > fetches_before  # fetched again, not served from memory
        assert "No problems" in await _eval(browser, session, "document.querySelector('#problems').innerText")
        assert await _eval(browser, session, "document.querySelectorAll('#pages .page a').length") == 2  # published
        await _shot(browser, session, "console-feed-fixed")
        await _submit(browser, session, f"location.href = {host_page!r}")
        assert await _eval(browser, session, "document.querySelector('#failing').textContent") == "0"

        phone = await _open(browser, f"{front}{feed_path}", width=390, height=844, mobile=True)
        wide = await _eval(
            browser,
            phone,
            "[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 391"
            " && !e.closest('.scroll')).map(e => e.tagName + '.' + e.className + ' ' + e.textContent.slice(0, 40))",
        )
        assert wide == [], wide  # nothing wider than the phone but the tables, which scroll in their box
        await _shot(browser, phone, "console-feed-phone")
        assert _errors(browser) == []
        assert len(list(ARTIFACTS.glob("console-*.png"))) >= 6
    finally:
        stop.set()
        await asyncio.wait_for(task, 60)
