"""Every Turbo element, from the feed to a phone's screen, in headless Chromium.

``tests/data/feeds/turbo/turbocubes__every-element.xml`` (every element of Turbo's RSS markup) goes
the pipeline's way: the parser (``parse_feed`` + ``prepare_items``: blocks made static, the safe-HTML
policy), the media cube's rewrite (``MediaDoc``, with images really in the file CDN and the sizes the
CDN measured), the kvwriter, the frontend. Chromium opens the page on a 390-px phone screen, light
and dark, and asserts:

* every block is there as the page shows it (details, scroll-snap galleries, buttons, stars ...);
* no script runs and nothing is wider than the screen;
* every request goes to the frontend itself, except the allowlisted video players, which load in
  sandboxed iframes -- those requests are answered by the test (``Fetch`` interception: no network);
* nothing is logged as an error (a CSP violation would be).

Screenshots go to ``test-artifacts/browser/turbo-elements-*.png``. With ``CI=true`` a missing
Chromium fails the test; locally it is skipped.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import orjson
import pytest
from aiohttp import web

from cubes.frontend.app import create_app
from cubes.kvwriter.handler import KvwriterHandler
from cubes.parser.documents import Candidate, prepare_items, to_document
from cubes.parser.feed import parse_feed
from shared.blobs import open_blobs
from shared.blobs.base import BlobStore
from shared.config import Settings
from shared.images.media import MediaDoc
from shared.messages import SourceKind, SourceRef
from shared.stores import open_stores
from tests.integration.test_browser_frontend import (  # the browser fixture and the CDP helpers
    STEP_TIMEOUT,
    Cdp,
    _errors,
    _eval,
    _navigate,
    _requests,
    _shot,
    browser,  # noqa: F401 - a fixture, used by name
)

pytestmark = pytest.mark.browser

PAGE = "https://turbo.example/2026/11/every-element"
ENGLISH = "https://turbo.example/en/2026/11/dawn"
PLAYERS = ("www.youtube.com", "player.vimeo.com", "rutube.ru", "vk.com")
T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
#: what an intercepted player request gets: a page that draws a dark box (no script, no request)
_PLAYER = b"<!doctype html><body style='margin:0;background:#202124;color:#fff;font:14px sans-serif'>player</body>"


def _picture(width: int, height: int, hue: int) -> bytes:
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (width, height), (hue, 120, 255 - hue))
    draw = ImageDraw.Draw(img)
    for x in range(0, width, 40):
        draw.line([(x, 0), (x + height // 2, height)], fill=(255 - hue, 200, hue), width=6)
    out = io.BytesIO()
    img.save(out, "PNG")
    return out.getvalue()


async def _publish(cands: list[Candidate], kind: SourceKind, cdn: BlobStore, writer: KvwriterHandler) -> None:
    """The rest of the pipeline for parsed candidates: the media cube's rewrite (images really in the
    file CDN, with the size the cdn cube would measure), then the kvwriter."""
    for n, cand in enumerate(cands):
        doc = to_document(cand, source=SourceRef(kind=kind, id="feed-every"), version=1, seen_at=T0, parsed_at=T0)
        media = MediaDoc(doc)
        cdn_urls: dict[str, str] = {}
        sizes: dict[str, tuple[int, int]] = {}
        for i, url in enumerate(media.refs):
            name = url.rsplit("/", 1)[1]
            video = name.endswith(".mp4")
            key = f"{'vid' if video else 'img'}/{n}{i:02d}/{name}"
            size = (96, 96) if "avatar" in name else (1200, 675)
            await cdn.put(key, b"\x00" * 64 if video else _picture(*size, hue=(40 * i + 60 * n) % 256))
            cdn_urls[url] = f"/cdn/{key}"
            sizes[url] = size
        await writer.handle(media.rewrite(cdn_urls, sizes=sizes, media_ready_at=T0))


SHOP = b"""<?xml version="1.0" encoding="UTF-8"?><yml_catalog date="2026-11-30 10:00"><shop><name>Posuda</name>
<url>https://shop.example/</url><currencies><currency id="RUR" rate="1"/></currencies>
<categories><category id="1">Kitchen</category><category id="7" parentId="1">Kettles</category></categories>
<offers>
<offer id="42"><url>https://shop.example/p/kettle</url><price>1990</price><oldprice>2490</oldprice>
<currencyId>RUR</currencyId><categoryId>7</categoryId><picture>https://shop.example/i/kettle.jpg</picture>
<name>Kettle "Dawn", 1.7 l</name><vendor>Kettly</vendor><vendorCode>KT-17</vendorCode>
<sales_notes>Cash or card on delivery</sales_notes><delivery>true</delivery><pickup>true</pickup>
<delivery-options><option cost="300" days="1-3"/></delivery-options>
<description><![CDATA[<p>Boils a litre in three minutes.</p>]]></description>
<param name="Volume" unit="l">1.7</param><param name="Colour">white</param></offer>
<offer id="43"><url>https://shop.example/p/kettle-mini</url><price>1490</price><currencyId>RUR</currencyId>
<categoryId>7</categoryId><picture>https://shop.example/i/mini.jpg</picture><name>Kettle mini, 0.8 l</name></offer>
</offers></shop></yml_catalog>"""


@pytest.fixture
async def frontend(tmp_path: Path, data_dir: Path) -> AsyncIterator[str]:
    settings = Settings().replace(
        store={"url": f"sqlite:///{tmp_path}/store.db"}, cdn={"url": f"file://{tmp_path}/cdn"}
    )
    stores = await open_stores(settings.store.url)
    cdn = await open_blobs(settings.cdn.url, public_base_url=settings.cdn.public_base_url)
    writer = KvwriterHandler(stores.pages, settings)
    body = (data_dir / "feeds" / "turbo" / "turbocubes__every-element.xml").read_bytes()
    result = parse_feed(body, url="https://turbo.example/turbo.xml")
    cands, refused = prepare_items(result.items, feed_host="turbo.example")
    assert refused == []
    await _publish(cands, SourceKind.turbo, cdn, writer)
    shop = parse_feed(SHOP, url="https://shop.example/yml.xml")
    cands, refused = prepare_items([*shop.items, *shop.listings], feed_host="shop.example")
    assert refused == []
    await _publish(cands, SourceKind.yml, cdn, writer)
    runner = web.AppRunner(create_app(settings, stores, cdn), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    yield f"http://{host}:{port}"
    await runner.cleanup()
    await stores.close()


async def _answer_players(cdp: Cdp, session: str) -> None:
    """Fulfil the paused requests of the video players (``Fetch.requestPaused``) with ``_PLAYER``.

    The next event is awaited *before* the log is scanned, so a request paused while one is being
    answered is never missed.
    """

    def paused(e: dict[str, Any]) -> bool:
        return bool(e.get("sessionId") == session and e["method"] == "Fetch.requestPaused")

    answered: set[str] = set()
    while True:
        more = cdp.expect(paused)
        for event in [e for e in cdp.events if paused(e)]:
            request_id = event["params"]["requestId"]
            if request_id in answered:
                continue
            answered.add(request_id)
            await cdp.send(
                "Fetch.fulfillRequest",
                {
                    "requestId": request_id,
                    "responseCode": 200,
                    "responseHeaders": [{"name": "Content-Type", "value": "text/html"}],
                    "body": base64.b64encode(_PLAYER).decode(),
                },
                session,
            )
        await more


async def _open_phone(cdp: Cdp, url: str, *, dark: bool = False) -> tuple[str, asyncio.Task[None]]:
    """A 390 x 844 phone tab (device scale 2) with the players intercepted; waits for network idle."""
    target = (await cdp.send("Target.createTarget", {"url": "about:blank"}))["targetId"]
    session = (await cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True}))["sessionId"]
    for domain in ("Page", "Network", "Runtime", "Log"):
        await cdp.send(f"{domain}.enable", session=session)
    patterns = [{"urlPattern": f"https://{host}/*"} for host in PLAYERS]
    await cdp.send("Fetch.enable", {"patterns": patterns}, session)
    players = asyncio.create_task(_answer_players(cdp, session))
    await cdp.send("Page.setLifecycleEventsEnabled", {"enabled": True}, session=session)
    await cdp.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True},
        session=session,
    )
    scheme = "dark" if dark else "light"
    await cdp.send(
        "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]}, session
    )
    await _navigate(cdp, session, target, url)
    return session, players


async def _stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


#: scroll the page through, a frame per step, so that lazy images and players load (as a reader's
#: scrolling would), then wait for every image to decode and every player to load; JSON of what loaded
_SCROLL_AND_LOAD = """(async () => {
  const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  for (let y = 0; y < document.documentElement.scrollHeight; y += 400) { window.scrollTo(0, y); await frame(); }
  window.scrollTo(0, 0);
  // a player's frame has loaded once its resource timing entry exists (load events may be past already)
  const frames = document.querySelectorAll('iframe').length;
  const done = () => performance.getEntriesByType('resource').filter(e => e.initiatorType === 'iframe').length;
  const deadline = performance.now() + %d;
  while (done() < frames && performance.now() < deadline) { await frame(); }
  await Promise.all([...document.images].map(i => i.decode().catch(() => null)));
  return JSON.stringify({players: done(), images: [...document.images].map(i => i.naturalWidth)});
})()"""


async def _load_everything(cdp: Cdp, session: str) -> dict[str, Any]:
    expr = _SCROLL_AND_LOAD % int(STEP_TIMEOUT * 1000 / 2)
    out = await cdp.send("Runtime.evaluate", {"expression": expr, "awaitPromise": True, "returnByValue": True}, session)
    loaded: dict[str, Any] = orjson.loads(out["result"]["value"])
    return loaded


def _count(selector: str) -> str:
    return f"document.querySelectorAll({selector!r}).length"


async def test_every_turbo_element_on_a_phone(frontend: str, browser: Cdp) -> None:  # noqa: F811
    turbo = f"{frontend}/turbo?url={quote(PAGE, safe='')}"
    session, players = await _open_phone(browser, turbo)
    try:
        loaded = await _load_everything(browser, session)
        assert loaded["players"] == len(PLAYERS)  # each player's frame loaded (from the interception)
        assert loaded["images"]
        assert all(width > 0 for width in loaded["images"]), loaded  # every image of the page rendered

        async def ev(js: str) -> Any:
            return await _eval(browser, session, js)

        assert await ev("document.documentElement.lang") == "ru"
        assert await ev("document.scripts.length") == 0
        assert await ev("document.documentElement.scrollWidth") <= 390  # nothing wider than the phone
        # header: the title once, the subtitle, the menu and breadcrumbs
        assert await ev(_count("h1")) == 1
        assert await ev(_count(".tc-head h2")) == 1
        assert await ev(_count("nav.tc-menu a")) == 3
        assert await ev(_count("nav.tc-crumbs a")) == 3
        # the byline's date in Russian, at the source's +03:00
        assert await ev("document.querySelector('.by time').textContent") == "30 ноября 2026, 10:30 (UTC+03:00)"
        # images: every one from the CDN, rendered, with the box the CDN measured
        images: list[list[Any]] = await ev(
            "[...document.images].map(i => [i.getAttribute('src'), i.getAttribute('width'), i.naturalWidth])"
        )
        assert images
        assert all(src.startswith("/cdn/img/") and width for src, width, _ in images), images
        # video: plays with the browser's own controls, poster from the figure
        assert await ev("document.querySelector('figure.tc-video video').controls") is True
        assert (await ev("document.querySelector('figure.tc-video video').poster")).startswith(frontend + "/cdn/img/")
        # the four players, sandboxed; the ad iframe left out
        frames = await ev("[...document.querySelectorAll('iframe')].map(f => [new URL(f.src).host, f.sandbox.value])")
        assert sorted(h for h, _ in frames) == sorted(PLAYERS)
        assert all(s == "allow-scripts allow-same-origin allow-presentation" for _, s in frames)
        # each player has a visible title and a "watch on <site>" link under it: readable without the player
        embeds = await ev(
            "[...document.querySelectorAll('.tc-embed')].map(e => [e.querySelector('iframe').title,"
            " e.querySelector('.tc-cap').innerText, e.querySelector('.tc-sub a').innerText,"
            " e.querySelector('.tc-sub a').href, e.querySelector('.tc-sub a').getBoundingClientRect().height > 0,"
            " e.querySelector('.tc-sub').getBoundingClientRect().top >= e.querySelector('iframe')"
            ".getBoundingClientRect().bottom])"
        )
        assert embeds == [
            ["Рассвет над озером: таймлапс", "Рассвет над озером: таймлапс", "Смотреть на youtube.com",
             "https://www.youtube.com/watch?v=dQw4w9WgXcQ", True, True],
            ["Видео на Vimeo", "Видео на Vimeo", "Смотреть на vimeo.com", "https://vimeo.com/76979871", True, True],
            ["Видео на Rutube", "Видео на Rutube", "Смотреть на rutube.ru",
             "https://rutube.ru/video/1234567890abcdef/", True, True],
            ["Видео на VK", "Видео на VK", "Смотреть на vk.com", "https://vk.com/video-1_456239017", True, True],
        ]  # fmt: skip
        # gallery and carousel scroll sideways by CSS scroll-snap
        assert await ev("getComputedStyle(document.querySelector('.tc-gallery')).scrollSnapType") == "x mandatory"
        assert await ev(_count(".tc-slider .tc-slide")) >= 3
        # accordion: titles kept, the expanded item open, others closed
        assert await ev("[...document.querySelectorAll('details.tc-acc')].map(d => d.open)") == [False, True, False]
        assert await ev("document.querySelector('details.tc-acc summary').textContent") == "Когда лучше приезжать?"
        # buttons: call, write, URL, and a disabled one that links nowhere
        hrefs = await ev("[...document.querySelectorAll('a.tc-btn')].map(a => a.getAttribute('href'))")
        assert {"tel:+74951234567", "mailto:news@turbo.example", "https://turbo.example/subscribe"} <= set(hrefs)
        assert await ev(_count("span.tc-btn.tc-off")) == 1
        assert await ev(_count(".tc-share a.tc-share-link")) == 5
        assert await ev(_count("section.tc-feedback")) == 2
        assert await ev("document.querySelector('.tc-rating .tc-stars').textContent") == "★★★★☆"
        assert await ev(_count(".tc-comments article.tc-comment")) == 3
        assert await ev(_count(".tc-replies article.tc-comment")) == 1
        assert await ev(_count(".tc-related a.tc-card")) == 2
        assert await ev(_count("table tr")) >= 3
        assert await ev(_count("blockquote")) == 1
        # an in-page anchor: "see part two" jumps to the heading on this page
        assert await ev("document.querySelector('a[href=\"#c-chast-2\"]') !== null") is True
        await _shot(browser, session, "turbo-elements-phone")
    finally:
        await _stop(players)

    session, players = await _open_phone(browser, turbo, dark=True)
    try:
        await _load_everything(browser, session)
        await _shot(browser, session, "turbo-elements-phone-dark")
    finally:
        await _stop(players)

    english = f"{frontend}/turbo?url={quote(ENGLISH, safe='')}"
    session, players = await _open_phone(browser, english)
    try:
        assert await _eval(browser, session, "document.documentElement.lang") == "en"
        text = await _eval(browser, session, "document.body.innerText")
        assert "Share:" in text
        assert "Contact us" in text
        await _shot(browser, session, "turbo-elements-english-phone")
    finally:
        await _stop(players)

    assert _errors(browser) == []
    # data: URLs are Chromium's own (its media controls' icons): nothing goes over the network for them
    local = (frontend + "/", "about:blank", "data:")
    foreign = [u for u in _requests(browser) if not u.startswith(local)]
    # the only requests that left the frontend: the allowlisted players, in their sandboxed iframes
    assert {urlsplit(u).hostname for u in foreign} <= set(PLAYERS), foreign


async def test_shop_pages_sell_on_a_phone(frontend: str, browser: Cdp) -> None:  # noqa: F811
    """A shop page has breadcrumbs, a formatted price and a buy button; its category lists it."""
    product = f"{frontend}/turbo?url={quote('https://shop.example/p/kettle', safe='')}"
    session, players = await _open_phone(browser, product)
    try:
        await _load_everything(browser, session)

        async def ev(js: str) -> Any:
            return await _eval(browser, session, js)

        assert await ev("[...document.querySelectorAll('nav.tc-crumbs a')].map(a => a.textContent)") == [
            "Kitchen",
            "Kettles",
        ]
        price = await ev("document.querySelector('.price').textContent")
        assert price == "1\u00a0990\u00a0₽2\u00a0490\u00a0₽ \u221220%"  # the price, the old one, the discount
        assert await ev("document.querySelector('a.buy').getAttribute('href')") == "https://shop.example/p/kettle"
        assert await ev("document.querySelector('a.buy').textContent") == "Buy at Posuda"
        text = await ev("document.body.innerText")
        assert "In stock" in text
        assert "Delivery: 300\u00a0₽, 1-3 days · Pickup" in text
        assert "Cash or card on delivery" in text
        assert "KT-17" in text
        assert await ev("document.documentElement.scrollWidth") <= 390
        await _shot(browser, session, "turbo-shop-product-phone")
        kettles = await ev("document.querySelectorAll('nav.tc-crumbs a')[1].href")
    finally:
        await _stop(players)

    session, players = await _open_phone(browser, kettles)
    try:
        await _load_everything(browser, session)

        async def ev(js: str) -> Any:
            return await _eval(browser, session, js)

        assert await ev("document.querySelector('h1').textContent") == "Kettles"
        cards = await ev(
            "[...document.querySelectorAll('a.tc-card')].map(a => [a.textContent, a.getAttribute('href')])"
        )
        assert cards == [
            ['Kettle "Dawn", 1.7 l1\u00a0990\u00a0₽', "/turbo?url=https%3A%2F%2Fshop.example%2Fp%2Fkettle"],
            ["Kettle mini, 0.8 l1\u00a0490\u00a0₽", "/turbo?url=https%3A%2F%2Fshop.example%2Fp%2Fkettle-mini"],
        ]
        await _shot(browser, session, "turbo-shop-category-phone")
    finally:
        await _stop(players)
    assert _errors(browser) == []
