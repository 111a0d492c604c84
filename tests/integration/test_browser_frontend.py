"""A real browser opens the frontend (docs/architecture.md section 9).

Headless Debian Chromium (installed by ``ops/browser/install``) is driven over
the Chrome DevTools Protocol on its websocket (aiohttp's client). It opens a
Turbo page with a CDN image, the search page and the home page from a frontend
on 127.0.0.1:0, saves screenshots to ``test-artifacts/browser/`` and asserts:

* every request the page made went to the frontend itself (``Network.requestWillBeSent``);
* nothing was logged as an error (``Runtime.consoleAPICalled``, ``Log.entryAdded``,
  ``Runtime.exceptionThrown``): a CSP violation would show up here too;
* the CDN image really rendered (its ``naturalWidth``).

With ``CI=true`` a missing Chromium fails the test; locally it is skipped.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import itertools
import os
import shutil
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import orjson
import pytest
from aiohttp import ClientSession, WSMsgType, web

from cubes.frontend.app import create_app
from cubes.kvwriter.handler import KvwriterHandler
from shared.blobs import open_blobs
from shared.config import Settings
from shared.messages import DocKind, Document, Media, Product, ProductParam, SourceKind, SourceRef
from shared.stores import Feed, open_stores
from tests.ci import missing

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "browser"
CHROMIUM = os.environ.get("TURBOCUBES_CHROMIUM", "/usr/bin/chromium")
T0 = datetime(2026, 11, 30, 7, 30, tzinfo=UTC)
STORY = "https://news.example/2026/11/30/rocket-launch"
#: generous: the first start of a cold Chromium on a busy CI runner takes seconds
STEP_TIMEOUT = 30.0

Event = dict[str, Any]


def _chromium() -> str:
    if shutil.which(CHROMIUM) or Path(CHROMIUM).is_file():
        return CHROMIUM
    missing(f"Chromium not installed at {CHROMIUM} (run ops/browser/install)")


def _picture() -> bytes:
    """A 1200x675 PNG (a dusk sky with a rising trail) for the page's CDN image."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (1200, 675))
    draw = ImageDraw.Draw(img)
    for y in range(675):
        t = y / 675
        draw.line([(0, y), (1200, y)], fill=(int(20 + 200 * t), int(30 + 90 * t), int(90 + 40 * (1 - t))))
    draw.polygon([(560, 675), (640, 675), (612, 180), (588, 180)], fill=(255, 240, 220))
    draw.ellipse([(570, 120), (630, 200)], fill=(255, 120, 60))
    out = io.BytesIO()
    img.save(out, "PNG")
    return out.getvalue()


def _doc(url: str, title: str, body: str, minutes: int, **kw: Any) -> Document:
    return Document.model_validate(
        {
            "url": url,
            "host": urlsplit(url).hostname,
            "source": SourceRef(kind=SourceKind.turbo, id="feed-demo"),
            "title": title,
            "content_html": body,
            "content_hash": f"h-{abs(hash(url))}",
            "version": 1,
            "seen_at": T0 + timedelta(minutes=minutes),
            "parsed_at": T0 + timedelta(minutes=minutes),
            **kw,
        }
    )


STORY_BODY = (
    "<p>The rocket lifted off at dawn from the pad by the lake, carrying a small weather satellite "
    "and two student experiments. Spectators lined the shore to watch the launch.</p>"
    '<figure><img src="https://news.example/img/launch.png" alt="The launch">'
    "<figcaption>The trail over the lake, seconds after lift-off.</figcaption></figure>"
    "<h2>What it carries</h2><ul><li>A weather satellite</li><li>Two student experiments</li></ul>"
    "<blockquote>It was the quietest launch I have seen, and the most beautiful.</blockquote>"
    '<p>Read the <a href="/2026/11/29/preview">preview</a> from yesterday. '
    '<img src="https://tracker.example/pixel.gif" alt=""><script>alert("x")</script></p>'
)


@pytest.fixture
async def frontend(tmp_path: Path) -> AsyncIterator[str]:
    settings = Settings().replace(
        store={"url": f"sqlite:///{tmp_path}/store.db"}, cdn={"url": f"file://{tmp_path}/cdn"}
    )
    stores = await open_stores(settings.store.url)
    cdn = await open_blobs(settings.cdn.url, public_base_url=settings.cdn.public_base_url)
    await cdn.put("img/9f/launch.png", _picture())
    writer = KvwriterHandler(stores.pages, settings)
    docs = [
        _doc(
            STORY,
            "A rocket lights up the dawn over the lake",
            STORY_BODY,
            10,
            author="Mira Stone",
            published_at=T0,
            media=[Media(url="https://news.example/img/launch.png", cdn_url="/cdn/img/9f/launch.png")],
        ),
        _doc(
            "https://news.example/2026/11/29/preview",
            "Rocket launch preview: what to watch for",
            "<p>Tomorrow's rocket launch is set for dawn; here is where to stand by the lake.</p>",
            5,
            author="Mira Stone",
            published_at=T0 - timedelta(days=1),
        ),
        _doc(
            "https://shop.example/p/rocket-lamp",
            "Rocket night lamp",
            "<p>A warm night light shaped like a rocket. USB powered.</p>",
            2,
            kind=DocKind.product,
            product=Product(
                offer_id="42",
                price="1990",
                old_price="2490",
                currency="RUR",
                vendor="Lumo",
                params=[ProductParam(name="Height", value="24", unit="cm")],
            ),
        ),
        _doc(
            "https://blog.example/lake-birds",
            "Birds of the lake in November",
            "<p>Herons and grebes stay late this year.</p>",
            1,
        ),
    ]
    for d in docs:
        await writer.handle(d)
    await stores.index_queue.catch_up()  # searchable, as the indexer cube makes them within its period
    # something for the status page: feeds of two hosts (one failing) and a parked document
    for feed_id, url, fmt in (
        ("news-rss", "https://news.example/rss.xml", "turbo"),
        ("news-sport", "https://news.example/sport.xml", "rss"),
        ("shop-yml", "https://shop.example/catalog.yml", "yml"),
    ):
        await stores.feeds.upsert_feed(Feed(feed_id=feed_id, url=url, host=urlsplit(url).hostname or "", format=fmt))
        await stores.feeds.update_schedule(feed_id, fetch_result="ok", last_fetch_at=T0)
        await stores.feeds.update_parse_status(feed_id, parse_result="parsed", items=12)
    await stores.feeds.update_schedule("news-sport", fetch_result="http_5xx", consecutive_failures=3)
    await stores.delay.park(
        "https://news.example/2026/11/30/late", 1, b"{}", ["https://news.example/img/late.jpg"],
        T0 + timedelta(minutes=10), host="news.example",
    )  # fmt: skip
    runner = web.AppRunner(create_app(settings, stores, cdn), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    yield f"http://{host}:{port}"
    await runner.cleanup()
    await stores.close()


class Cdp:
    """A minimal Chrome DevTools Protocol client: commands by id, events to waiters and a log."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.events: list[Event] = []
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Event]] = {}
        self._waiters: list[tuple[Callable[[Event], bool], asyncio.Future[Event]]] = []
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for msg in self.ws:
            if msg.type is not WSMsgType.TEXT:
                continue
            data = orjson.loads(msg.data)
            if "id" in data:
                fut = self._pending.pop(data["id"], None)
                if fut and not fut.done():
                    if "error" in data:
                        fut.set_exception(RuntimeError(f"CDP error: {data['error']}"))
                    else:
                        fut.set_result(data.get("result", {}))
                continue
            self.events.append(data)
            for pred, fut in list(self._waiters):
                if not fut.done() and pred(data):
                    fut.set_result(data)
                    self._waiters.remove((pred, fut))

    async def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Event:
        msg_id = next(self._ids)
        fut: asyncio.Future[Event] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = fut
        payload: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if session:
            payload["sessionId"] = session
        await self.ws.send_str(orjson.dumps(payload).decode())
        return await asyncio.wait_for(fut, STEP_TIMEOUT)

    def expect(self, pred: Callable[[Event], bool]) -> asyncio.Future[Event]:
        """A future for the first event matching ``pred``; register it before causing the event."""
        fut: asyncio.Future[Event] = asyncio.get_running_loop().create_future()
        self._waiters.append((pred, fut))
        return fut

    async def close(self) -> None:
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader


@pytest.fixture
async def browser(tmp_path: Path) -> AsyncIterator[Cdp]:
    exe = _chromium()
    profile = tmp_path / "chromium-profile"
    profile.mkdir()
    proc = await asyncio.create_subprocess_exec(
        exe,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--mute-audio",
        f"--user-data-dir={profile}",
        "--remote-debugging-port=0",
        "about:blank",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        # Chromium says "DevTools listening on ws://..." once DevToolsActivePort is written
        async def listening() -> None:
            assert proc.stderr is not None
            async for line in proc.stderr:
                if b"DevTools listening on" in line:
                    return
            raise RuntimeError("chromium exited before DevTools was listening")

        await asyncio.wait_for(listening(), STEP_TIMEOUT)
        port, path = await _active_port(profile / "DevToolsActivePort")
        async with ClientSession() as http, http.ws_connect(f"ws://127.0.0.1:{port}{path}", max_msg_size=0) as ws:
            # keep draining stderr so Chromium never blocks on a full pipe
            drain = asyncio.create_task(_drain(proc))
            cdp = Cdp(ws)
            yield cdp
            await cdp.close()
            drain.cancel()
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()


def _words(path: Path) -> list[str]:
    return path.read_text().split() if path.is_file() else []


async def _active_port(path: Path) -> tuple[str, str]:
    """Port and browser path from DevToolsActivePort. Chromium announces "listening" on stderr a moment
    before it renames the file into place, so wait (bounded) for the complete file."""
    deadline = asyncio.get_running_loop().time() + STEP_TIMEOUT
    while True:
        lines = _words(path)
        if len(lines) >= 2:
            return lines[0], lines[1]
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"{path} did not appear")
        await asyncio.sleep(0.02)  # a file has no event to await; poll under the deadline


async def _drain(proc: asyncio.subprocess.Process) -> None:
    assert proc.stderr is not None
    while await proc.stderr.read(65536):
        pass


async def _open(cdp: Cdp, url: str, *, width: int, height: int, mobile: bool, dark: bool = False) -> str:
    """Open ``url`` in a fresh tab, wait until the network is idle; returns the tab's session id."""
    target = (await cdp.send("Target.createTarget", {"url": "about:blank"}))["targetId"]
    session: str = (await cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True}))["sessionId"]
    for domain in ("Page", "Network", "Runtime", "Log"):
        await cdp.send(f"{domain}.enable", session=session)
    await cdp.send("Page.setLifecycleEventsEnabled", {"enabled": True}, session=session)
    await cdp.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 2 if mobile else 1, "mobile": mobile},
        session=session,
    )
    scheme = "dark" if dark else "light"
    await cdp.send(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
        session=session,
    )
    await _navigate(cdp, session, target, url)
    return session


async def _navigate(cdp: Cdp, session: str, target: str, url: str) -> None:
    """Navigate the tab to ``url`` and wait until the network is idle for THIS navigation (its loaderId):
    the tab's about:blank has lifecycle events of its own, and under load its networkIdle (half a second
    after its load) came after the navigation began, so a page was read before its results were there
    (a search of 0 hits)."""
    navigation: dict[str, Any] = {}

    def idle_after(e: Event) -> bool:
        return (
            e.get("sessionId") == session
            and e["method"] == "Page.lifecycleEvent"
            and e["params"]["name"] == "networkIdle"
            and e["params"].get("frameId") == target
            and e["params"].get("loaderId") == navigation.get("loaderId")
        )

    idle = cdp.expect(idle_after)
    navigation.update(await cdp.send("Page.navigate", {"url": url}, session=session))
    assert not navigation.get("errorText"), navigation
    assert navigation.get("loaderId"), navigation
    if not idle.done() and any(idle_after(e) for e in cdp.events):  # came before navigate's answer
        idle.set_result({})
    await asyncio.wait_for(idle, STEP_TIMEOUT)


async def _shot(cdp: Cdp, session: str, name: str) -> Path:
    data = await cdp.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    path.write_bytes(base64.b64decode(data["data"]))
    return path


async def _eval(cdp: Cdp, session: str, expression: str) -> Any:
    out = await cdp.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
    return out["result"].get("value")


def _requests(cdp: Cdp) -> list[str]:
    return [e["params"]["request"]["url"] for e in cdp.events if e["method"] == "Network.requestWillBeSent"]


def _errors(cdp: Cdp) -> list[str]:
    out = []
    for e in cdp.events:
        p = e.get("params", {})
        if e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append(f"console: {p.get('args')}")
        elif e["method"] == "Log.entryAdded" and p["entry"].get("level") == "error":
            out.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        elif e["method"] == "Runtime.exceptionThrown":
            out.append(f"exception: {p.get('exceptionDetails')}")
    return out


def _is_local(url: str, origin: str) -> bool:
    # data: URLs are no request to any host: Chromium draws its own widgets with them (the calendar
    # icon of an <input type="date"> is a data:image/svg+xml)
    return url.startswith((origin + "/", "data:")) or url in (origin, "about:blank")


def _assert_only_frontend(cdp: Cdp, origin: str) -> None:
    foreign = [u for u in _requests(cdp) if not _is_local(u, origin)]
    assert foreign == [], f"requests left for other hosts: {foreign}"


async def test_turbo_and_search_pages_in_a_real_browser(frontend: str, browser: Cdp) -> None:
    turbo = f"{frontend}/turbo?url={quote(STORY, safe='')}"

    session = await _open(browser, turbo, width=390, height=844, mobile=True)
    assert await _eval(browser, session, "document.title") == "A rocket lights up the dawn over the lake · news.example"
    # the CDN image really rendered; the tracker pixel and the script never made it
    widths = await _eval(browser, session, "[...document.images].map(i => [i.getAttribute('src'), i.naturalWidth])")
    assert widths == [["/cdn/img/9f/launch.png", 1200]]
    assert await _eval(browser, session, "document.scripts.length") == 0
    # phone layout: nothing wider than the screen
    assert await _eval(browser, session, "document.documentElement.scrollWidth") <= 390
    await _shot(browser, session, "turbo-phone")

    session = await _open(browser, turbo, width=1280, height=900, mobile=False, dark=True)
    await _shot(browser, session, "turbo-desktop-dark")

    session = await _open(browser, f"{frontend}/search?q=rocket", width=1280, height=900, mobile=False)
    hits = await _eval(browser, session, "document.querySelectorAll('.hit').length")
    assert hits == 3
    assert await _eval(browser, session, "document.querySelectorAll('.hit .badge svg').length") == 3
    await _shot(browser, session, "search")

    session = await _open(browser, f"{frontend}/search?q=rocket", width=390, height=844, mobile=True, dark=True)
    await _shot(browser, session, "search-phone-dark")

    product = f"{frontend}/turbo?url={quote('https://shop.example/p/rocket-lamp', safe='')}"
    session = await _open(browser, product, width=390, height=844, mobile=True)
    assert "In stock" in await _eval(browser, session, "document.body.innerText")
    await _shot(browser, session, "turbo-product-phone")

    session = await _open(browser, f"{frontend}/status", width=1280, height=900, mobile=False)
    # pipeline aggregates only: feeds by last result (ok, http_5xx), no host or feed of a tenant
    assert await _eval(browser, session, "document.querySelectorAll('#results tbody tr').length") == 2
    assert "news.example" not in await _eval(browser, session, "document.body.innerText")
    await _shot(browser, session, "status")

    session = await _open(browser, f"{frontend}/", width=1280, height=900, mobile=False)
    assert await _eval(browser, session, "document.querySelectorAll('.hit').length") == 4
    await _shot(browser, session, "home")

    assert _errors(browser) == []
    nope = f"{frontend}/turbo?url=https%3A%2F%2Fnews.example%2Fnope"
    session = await _open(browser, nope, width=1280, height=900, mobile=False)
    assert "No Turbo page" in await _eval(browser, session, "document.body.innerText")
    await _shot(browser, session, "not-found")
    # the browser reports the 404 of the page itself (and only that) as a failed load
    assert all("status of 404" in e and nope in e for e in _errors(browser)), _errors(browser)

    requested = _requests(browser)
    assert any("/cdn/img/9f/launch.png" in u for u in requested), requested
    _assert_only_frontend(browser, frontend)
    assert len(list(ARTIFACTS.glob("*.png"))) >= 8
