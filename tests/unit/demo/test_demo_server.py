"""The demo site serves well-formed feeds, real images and the same bytes on every start."""

from __future__ import annotations

import io
import re
from collections.abc import AsyncIterator

import aiohttp
import pytest
from lxml import etree
from multidict import CIMultiDict
from PIL import Image
from protego import Protego

from cubes.parser.feed import parse_feed
from demo.content import Resource, draw_pictures
from demo.feeds import CONTENT_NS, TURBO_NS
from demo.server import DemoServer

SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
CONTENT = {"content": "http://purl.org/rss/1.0/modules/content/"}


@pytest.fixture(scope="module")
def pictures() -> dict[str, Resource]:
    return draw_pictures()


@pytest.fixture
async def server(pictures: dict[str, Resource]) -> AsyncIterator[DemoServer]:
    srv = DemoServer(pictures)
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


async def _get(url: str, **headers: str) -> tuple[int, str, bytes, CIMultiDict[str]]:
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers) as resp:
        return resp.status, resp.headers.get("Content-Type", ""), await resp.read(), resp.headers.copy()


async def test_rss_feed_has_full_text_and_images(server: DemoServer) -> None:
    assert server.site is not None
    status, ctype, body, _ = await _get(server.site.base + "/news/rss.xml")
    assert status == 200
    assert ctype.startswith("application/rss+xml")
    items = etree.fromstring(body).findall("channel/item")
    assert len(items) == 12
    for item in items:
        html = item.findtext(f"{{{CONTENT_NS}}}encoded") or ""
        assert html.count("<p>") >= 3
        assert 1 <= html.count("<img ") <= 2
        assert item.find("enclosure").get("type") == "image/jpeg"
    titles = [i.findtext("title") for i in items]
    assert len(set(titles)) == 12  # varied, not one template repeated


async def test_turbo_feed_items_have_header_h1_and_figure(server: DemoServer) -> None:
    assert server.site is not None
    _, _, body, _ = await _get(server.site.base + "/news/turbo.xml")
    items = etree.fromstring(body).findall("channel/item")
    assert len(items) == 8
    for item in items:
        assert item.get("turbo") == "true"
        content = item.findtext(f"{{{TURBO_NS}}}content") or ""
        assert content.startswith("<header><h1>")
        assert "<figure><img " in content.split("</header>")[0]


async def test_yml_catalog_has_offers_with_pictures_prices_params(server: DemoServer) -> None:
    assert server.site is not None
    _, ctype, body, _ = await _get(server.site.base + "/shop/catalog.yml")
    assert ctype.startswith("application/xml")
    root = etree.fromstring(body)
    categories = {c.get("id") for c in root.findall("shop/categories/category")}
    offers = root.findall("shop/offers/offer")
    assert len(offers) == 20
    for offer in offers:
        assert offer.findall("picture")
        assert int(offer.findtext("price") or "0") > 0
        assert offer.findtext("categoryId") in categories
        assert offer.findall("param")
    # and the project's own parser reads all of them without an error
    result = parse_feed(body, url=server.site.base + "/shop/catalog.yml", declared_format="yml")
    assert len(result.items) == 20
    assert not result.errors


async def test_blog_sitemap_listing_and_robots(server: DemoServer) -> None:
    assert server.site is not None
    base = server.site.base
    _, _, body, _ = await _get(base + "/blog/sitemap.xml")
    locs = [u.findtext(f"{SITEMAP}loc") for u in etree.fromstring(body).findall(f"{SITEMAP}url")]
    assert len(locs) == 8
    assert all(loc and loc.startswith(base + "/blog/2026/") for loc in locs)
    status, _, listing, _ = await _get(base + "/blog/")
    assert status == 200
    assert all(loc.removeprefix(base).encode() in listing for loc in locs if loc)
    for loc in locs:
        assert loc is not None
        status, ctype, page, _ = await _get(loc)
        assert status == 200
        assert ctype.startswith("text/html")
        assert b"<article>" in page
    _, _, robots, _ = await _get(base + "/robots.txt")
    rules = Protego.parse(robots.decode())
    assert rules.can_fetch(base + "/img/x.png", "TurbocubesBot")
    assert rules.can_fetch(locs[0], "TurbocubesBot")


async def test_every_picture_is_a_real_image_of_its_content_type(server: DemoServer) -> None:
    assert server.site is not None
    paths = [p for p in server.site.resources if p.startswith("/img/")]
    assert len(paths) >= 60
    for path in paths:
        status, ctype, body, _ = await _get(server.site.base + path)
        assert status == 200
        assert 1_000 < len(body) < 60_000
        with Image.open(io.BytesIO(body)) as img:
            img.verify()
            assert Image.MIME[img.format or ""] == ctype


async def test_every_linked_page_and_picture_exists(server: DemoServer) -> None:
    assert server.site is not None
    base = server.site.base
    for source in server.site.sources:
        for url in source.pages:
            assert url.removeprefix(base) in server.site.resources, url
    link = re.compile(re.escape(base) + r"(/[^\s\"<]*)|(?:href|src)=\"(/[^\"]*)\"")
    checked = 0
    for path, res in server.site.resources.items():
        if res.content_type.startswith("image/"):
            continue
        for m in link.finditer(res.body.decode()):
            target = m.group(1) or m.group(2)
            assert target in server.site.resources, f"{path} links to {target}, which is not served"
            checked += 1
    assert checked > 500


async def test_etag_gives_304_and_unknown_path_404(server: DemoServer) -> None:
    assert server.site is not None
    url = server.site.base + "/news/rss.xml"
    status, _, _, headers = await _get(url)
    assert status == 200
    status, _, body, _ = await _get(url, **{"If-None-Match": headers["ETag"]})
    assert status == 304
    assert body == b""
    status, _, _, _ = await _get(server.site.base + "/no/such/page")
    assert status == 404


async def test_two_starts_on_one_port_serve_the_same_bytes() -> None:
    first = DemoServer(draw_pictures())
    site1 = await first.start()
    port = first.port
    bodies = {path: res.body for path, res in site1.resources.items()}
    await first.stop()
    second = DemoServer(draw_pictures())  # drawn again from scratch
    try:
        site2 = await second.start(preferred_port=port)
        assert second.port == port
        assert {path: res.body for path, res in site2.resources.items()} == bodies
        _, _, served, _ = await _get(site2.base + "/shop/catalog.yml")
        assert served == bodies["/shop/catalog.yml"]
    finally:
        await second.stop()


async def test_a_busy_preferred_port_falls_back_to_another(server: DemoServer) -> None:
    other = DemoServer({})
    try:
        await other.start(preferred_port=server.port)
        assert other.port != server.port
    finally:
        await other.stop()


async def test_the_site_to_own_publishes_its_claimants_tokens_and_its_picture_can_be_put_back(
    server: DemoServer,
) -> None:
    """A newcomer needed a web server of their own to verify anything: the demo site had no token file,
    meta tag or DNS. Now it publishes the tokens of whoever claimed it, and its missing picture can be put
    back at the same URL from its own page."""
    assert server.site is not None
    base = server.site.base
    owners = [("tok-verified", True), ("tok-first", False), ("tok-newest", False)]

    async def claims() -> list[tuple[str, bool]]:
        return owners

    assert (await _get(base + "/.well-known/turbocubes-verify.txt"))[0] == 404  # nobody claimed it yet
    server.owners = claims
    status, _, home, _ = await _get(base + "/")
    assert status == 200
    head = home.split(b"</head>", 1)[0]
    for token, _ in owners:  # one tag per claim: any number of newcomers at once
        assert f'<meta name="turbocubes-verification" content="{token}">'.encode() in head
    status, _, file, _ = await _get(base + "/.well-known/turbocubes-verify.txt")
    assert (status, file.strip()) == (200, b"tok-newest")  # a file holds one token: the newest waiting
    status, _, feed, _ = await _get(base + "/yours/feed.xml")
    assert status == 200
    posts = etree.fromstring(feed).xpath("//item/content:encoded/text()", namespaces=CONTENT)
    pictures = re.findall(r'src="([^"]+)"', "".join(posts))
    assert pictures == [base + "/yours/img/pond.png", base + "/yours/img/heron.png"]
    assert (await _get(base + "/yours/img/heron.png"))[0] == 404
    async with aiohttp.ClientSession() as session:
        async with session.post(base + "/yours/fix", allow_redirects=False) as r:
            assert (r.status, r.headers["Location"]) == (303, "/yours/")
        status, ctype, png, _ = await _get(base + "/yours/img/heron.png")
        assert (status, ctype) == (200, "image/png")
        assert Image.open(io.BytesIO(png)).size == (480, 270)
        assert b"picture is back" in (await _get(base + "/yours/"))[2]
        async with session.post(base + "/yours/break", allow_redirects=False) as r:
            assert r.status == 303
    assert (await _get(base + "/yours/img/heron.png"))[0] == 404
